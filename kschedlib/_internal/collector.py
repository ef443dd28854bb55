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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ["YOUNG_THRESHOLD", "fewer_collections"]

YOUNG_THRESHOLD: Final = 20_000
"""Allocations between young-generation collections while scheduling (CPython's default: 700)."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the young generation's threshold to :data:`YOUNG_THRESHOLD` inside the block."""
    before = gc.get_threshold()
    if before[0] >= YOUNG_THRESHOLD or before[0] == 0 or not gc.isenabled():
        yield
        return
    gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        now = gc.get_threshold()
        if now == (YOUNG_THRESHOLD, *before[1:]):  # nobody changed it meanwhile
            gc.set_threshold(*before)
