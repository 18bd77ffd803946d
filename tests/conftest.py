"""Settings shared by every layer of the tests.

Hypothesis's per-example deadline (200 ms by default) is a timing assertion: on a busy machine
an example that takes 5 ms when quiet took 529 ms and failed the suite as "flaky". The tests
never assert on time (the developers' guide), so the deadline is off for every property test;
how long the examples take is measured in ``bench/``, not here."""

from hypothesis import settings

settings.register_profile("deid", deadline=None)
settings.load_profile("deid")
