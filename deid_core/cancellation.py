"""Cooperative cancellation of long work in the core.

Long loops of the core (the search of local suppression, PRAM's draw level by level, the
report's sections...) call :func:`check_cancelled` between steps. Outside any
:func:`cancellable` block it does nothing; inside one it calls the check its caller set, which
raises :class:`~deid_core.errors.Cancelled` when the result is no longer wanted (the dashboard's
job runner sets one per job: the job went stale, its session ended, the user stopped it). The
check lives in a :class:`contextvars.ContextVar`, so each thread (each job, each page run) has
its own and the core never needs to know who is asking.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar

_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("deid_cancellation_check", default=None)


@contextlib.contextmanager
def cancellable(check: Callable[[], None]) -> Iterator[None]:
    """Within the block, :func:`check_cancelled` calls ``check`` (which raises
    :class:`~deid_core.errors.Cancelled` to stop the work); the previous check is restored on
    leaving it."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


def check_cancelled() -> None:
    """Call the current block's check (see :func:`cancellable`); nothing outside a block."""
    check = _CHECK.get()
    if check is not None:
        check()
