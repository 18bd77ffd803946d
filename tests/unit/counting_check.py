"""A cancellation check for the tests of cooperative cancellation (imported as
``counting_check``): it counts its calls and cancels from a chosen call on, so a test decides
exactly where the work it watches is stopped."""

from __future__ import annotations

from deid_core.errors import Cancelled


class CountingCheck:
    """A cancellation check that counts its calls and cancels from call ``stop_at`` on."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.calls, self.stop_at = 0, stop_at

    def __call__(self) -> None:
        self.calls += 1
        if self.stop_at is not None and self.calls >= self.stop_at:
            raise Cancelled("the session ended")
