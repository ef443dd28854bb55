"""Time as an injectable dependency.

Every timeout, backoff and permit wait in kschedlib reads a :class:`Clock`, so
tests and simulations run on a fake clock and take no wall-clock time.
"""

from __future__ import annotations

import time
from typing import Protocol, final, runtime_checkable

__all__ = ["Clock", "FakeClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """Anything with a monotonic ``now()`` in seconds."""

    def now(self) -> float:
        """Return the current time in seconds; never decreases."""
        ...


@final
class SystemClock:
    """The real monotonic clock."""

    __slots__ = ()

    def now(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def wall_time(self) -> float:
        """``time.time()``: for comparing with timestamps written in cluster objects (DRA's
        ``allocationTimestamp``), which are wall-clock times.  Optional for other clocks."""
        return time.time()


@final
class FakeClock:
    """A clock that moves only when told to; for tests and simulations."""

    __slots__ = ("_now",)

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        """The time the clock was last set or advanced to."""
        return self._now

    def wall_time(self) -> float:
        """The same as :meth:`now`, read as seconds since the epoch (``FakeClock(start)`` places a
        simulation at a date for the timestamps in cluster objects)."""
        return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (which must not be negative)."""
        if seconds < 0:
            raise ValueError(f"cannot move a clock backwards (got {seconds})")
        self._now += seconds

    def set(self, now: float) -> None:
        """Jump to ``now``, which must not be earlier than the current time."""
        self.advance(now - self._now)
