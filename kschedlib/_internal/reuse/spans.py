"""Feasible positions kept as the runs they form, so per-node values are taken as slices.

The column search finds feasible nodes a whole run of positions at a time (every node between two
rejected ones).  A cycle then needs, per feasible node, its NodeInfo, its name and its reused
scores: taken position by position that is a Python loop per node and per list, where a run is
one slice copied in C.  :class:`Spans` is the sequence of positions (what every caller may read)
held as runs; the list of positions is only built when something reads them one by one (most
positions are ints above 256, each a new object).  :func:`take`, :func:`take_names` and
:func:`among` give exactly what reading the positions one by one would.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from itertools import chain
from typing import Final, TypeVar, final, overload

__all__ = ["Spans", "among", "take", "take_names"]

_T = TypeVar("_T")

_MIN_RUN: Final = 8
"""Below this mean run length, slicing run by run is no faster than a comprehension."""


@final
class Spans(Sequence[int]):
    """Positions in search order, held as runs ``(low, high)`` while they are only added whole.

    A position appended one by one (:meth:`append`, :meth:`extend`) ends the runs: from then on
    the positions are a plain list.
    """

    __slots__ = ("_count", "_listed", "_runs")

    def __init__(self) -> None:
        self._runs: list[tuple[int, int]] | None = []
        self._listed: list[int] | None = None
        """The positions one by one, once something asked for them (or the runs ended)."""
        self._count = 0

    def add_run(self, low: int, high: int) -> None:
        """Append the positions ``low .. high - 1``."""
        if high <= low:
            return
        self._count += high - low
        if self._listed is not None:
            self._listed.extend(range(low, high))
        runs = self._runs
        if runs is None:
            return
        if runs and runs[-1][1] == low:
            runs[-1] = (runs[-1][0], high)
        else:
            runs.append((low, high))

    def add(self, position: int) -> None:
        """Append one position, keeping the runs."""
        self.add_run(position, position + 1)

    def append(self, position: int) -> None:
        """Append one position (the runs end here)."""
        self._list().append(position)
        self._runs = None
        self._count += 1

    def extend(self, positions: Iterable[int]) -> None:
        """Append positions one by one (the runs end here)."""
        listed = self._list()
        listed.extend(positions)
        self._runs = None
        self._count = len(listed)

    def sliceable(self) -> list[tuple[int, int]] | None:
        """The runs, when taking by slices pays (few, long runs); else ``None``."""
        runs = self._runs
        if runs is None or len(runs) * _MIN_RUN > self._count:
            return None
        return runs

    def _list(self) -> list[int]:
        listed = self._listed
        if listed is None:
            assert self._runs is not None
            listed = self._listed = list(chain.from_iterable(range(low, high) for low, high in self._runs))
        return listed

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> list[int]: ...
    def __getitem__(self, index: int | slice) -> int | list[int]:
        return self._list()[index]

    def __iter__(self) -> Iterator[int]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Spans):
            return self._list() == other._list()
        return self._list() == other

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"Spans({self._list()!r})"


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


def among(candidates: Collection[int], positions: Sequence[int]) -> set[int]:
    """The ``candidates`` that are in ``positions`` (``set(candidates) & set(positions)``).

    Few candidates (the positions changed since a column last synced) against many positions:
    with runs, each candidate is checked against the runs instead of listing every position.
    """
    runs = positions.sliceable() if type(positions) is Spans else None
    if runs is None or len(candidates) > len(positions):
        return set(candidates).intersection(positions)
    if len(runs) == 1:
        low, high = runs[0]
        return {p for p in candidates if low <= p < high}
    return {p for p in candidates if any(low <= p < high for low, high in runs)}
