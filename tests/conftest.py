"""Settings shared by every layer of the tests.

Hypothesis's per-example deadline (200 ms by default) is a timing assertion: on a busy machine
an example that takes 5 ms when quiet took 529 ms and failed the suite as "flaky". The tests
never assert on time (the developers' guide), so the deadline is off for every property test;
how long the examples take is measured in ``bench/``, not here.

One BLAS thread per test process. OpenBLAS starts a thread per core; the suite already runs
in two processes (scripts/test.sh) on a 2-core machine, and the many tiny solves of the tests
(the population-uniques fits' L-BFGS-B on two parameters, small least squares) then spend most
of their time waking and waiting for the threads: one Pitman fit took 234 ms of wall time and
113 ms of CPU with two threads under load, 16 ms and 6 ms with one (bench/README.md found the
same for the report's fits). Set at run time on the two OpenBLAS libraries numpy and scipy
load (threadpoolctl), so processes the tests start (the browser tests' dashboard server) keep
their own settings."""

import numpy  # noqa: F401  (loads numpy's OpenBLAS, for threadpool_limits to set)
import scipy.linalg  # noqa: F401  (and scipy's)
from hypothesis import settings
from threadpoolctl import threadpool_limits

threadpool_limits(limits=1, user_api="blas")

settings.register_profile("deid", deadline=None)
settings.load_profile("deid")
