"""Feasible positions that remember the runs they form, so per-node values are taken as slices.

The column search finds feasible nodes a whole run of positions at a time (every node between two
rejected ones).  A cycle then needs, per feasible node, its NodeInfo, its name and its reused
scores: taken position by position that is a Python loop per node and per list, where a run is
one slice copied in C.  :class:`Spans` is the list of positions (what every caller reads) with the
runs beside it; :meth:`Spans.take` and :meth:`Spans.take_names` give exactly the values a
comprehension over the positions would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar, final

__all__ = ["Spans", "take", "take_names"]

_T = TypeVar("_T")

_MIN_RUN: Final = 8
"""Below this mean run length, slicing run by run is no faster than a comprehension."""


@final
class Spans(list[int]):
    """Positions in search order, and the runs ``(low, high)`` they form in the same order.

    Positions appended any other way (``append``, ``extend``) are not in ``runs``: then the runs no
    longer cover the list, which :meth:`sliceable` notices, and the positions alone count.
    """

    __slots__ = ("_covered", "runs")

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[tuple[int, int]] = []
        self._covered = 0

    def add_run(self, low: int, high: int) -> None:
        """Append the positions ``low .. high - 1``."""
        if high <= low:
            return
        self.extend(range(low, high))
        self._covered += high - low
        runs = self.runs
        if runs and runs[-1][1] == low:
            runs[-1] = (runs[-1][0], high)
        else:
            runs.append((low, high))

    def add(self, position: int) -> None:
        """Append one position."""
        self.add_run(position, position + 1)

    def sliceable(self) -> list[tuple[int, int]] | None:
        """The runs, when they cover every position and taking by slices pays (few, long runs); else ``None``."""
        runs = self.runs
        if self._covered != len(self) or len(runs) * _MIN_RUN > len(self):
            return None
        return runs


def take(values: Sequence[_T], positions: Sequence[int]) -> list[_T]:
    """``[values[p] for p in positions]``, by slices when ``positions`` are :class:`Spans` with long runs."""
    runs = positions.sliceable() if type(positions) is Spans else None
    if runs is None:
        return [values[p] for p in positions]
    if len(runs) == 1:
        low, high = runs[0]
        chunk = values[low:high]
        return chunk if type(chunk) is list else list(chunk)
    out: list[_T] = []
    for low, high in runs:
        out.extend(values[low:high])
    return out


def take_names(names: tuple[str, ...], positions: Sequence[int]) -> tuple[str, ...]:
    """``tuple(names[p] for p in positions)``, by slices when ``positions`` are :class:`Spans` with long runs."""
    runs = positions.sliceable() if type(positions) is Spans else None
    if runs is None:
        return tuple([names[p] for p in positions])
    if len(runs) == 1:
        low, high = runs[0]
        return names[low:high]
    if len(runs) == 2:
        (low, high), (low2, high2) = runs
        return names[low:high] + names[low2:high2]
    return tuple(name for low, high in runs for name in names[low:high])
