"""Fewer young-generation collections while scheduling.

A cycle allocates a few hundred container objects, and the results an embedder keeps (outcomes,
feasible names, totals) survive.  With CPython's default threshold (700) the collector runs every
few cycles and promotes those survivors on to full collections that walk the whole cluster; a
larger threshold for the duration of the loop lets most of that work fall away.  The embedder's
own setting comes back when the loop ends, unless it changed it meanwhile; a threshold already at
least as large, or a disabled collector, is left alone.  Which objects are freed never depends on
it, so decisions cannot either.
"""

from __future__ import annotations

import gc
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Final, final

__all__ = ["YOUNG_THRESHOLD", "fewer_collections", "raised_threshold"]

YOUNG_THRESHOLD: Final = 20_000
"""Allocations between young-generation collections while scheduling (CPython's default: 700)."""

_LEFT_ALONE: Final[AbstractContextManager[None]] = nullcontext()
"""The guard when there is nothing to raise: every ``schedule_one`` inside ``run_until_idle`` gets it."""


@final
class _Raised(AbstractContextManager[None]):
    """Restores the thresholds seen before on leaving, unless somebody changed them meanwhile.

    A class rather than a generator context manager: it is entered once per scheduling cycle.
    """

    __slots__ = ("_before",)

    def __init__(self, before: tuple[int, int, int]) -> None:
        self._before = before

    def __enter__(self) -> None:
        gc.set_threshold(YOUNG_THRESHOLD, *self._before[1:])

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        before = self._before
        if gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:]):  # nobody changed it meanwhile
            gc.set_threshold(*before)


def raised_threshold() -> AbstractContextManager[None] | None:
    """:func:`fewer_collections`, or ``None`` when it would leave the threshold alone (a caller entered once per
    cycle, inside a loop that raised it already, then needs no ``with`` block)."""
    before = gc.get_threshold()
    if before[0] >= YOUNG_THRESHOLD or before[0] == 0 or not gc.isenabled():
        return None
    return _Raised(before)


def fewer_collections() -> AbstractContextManager[None]:
    """Raise the young generation's threshold to :data:`YOUNG_THRESHOLD` inside the ``with`` block."""
    guard = raised_threshold()
    return guard if guard is not None else _LEFT_ALONE
