"""Per-position memo columns: node-local verdicts and scores for every node of a snapshot layout.

A column holds, for one memo key (one pod shape), the result of the node-local plugins
at every position of the snapshot's node order.  It is brought up to date from the
snapshot's change log, so a cycle re-evaluates only the nodes that changed since the
column was last used; the node search then skips from one rejected position to the
next instead of visiting every node, and scoring gathers precomputed sums by position.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence, Set
from itertools import compress
from typing import Final, final

from kschedlib._internal.reuse.domains import DomainVerdicts
from kschedlib._internal.reuse.spans import Spans, among
from kschedlib.framework.memo import ExternalNodeState
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import NodeCursor, Snapshot
from kschedlib.framework.status import Code, Status

__all__ = ["FilterColumn", "ScoreColumn", "SearchResult", "search_column", "search_nodes", "take_grouped"]

_SUCCESS: Final = Code.SUCCESS
_ERROR: Final = Code.ERROR
_NONE: Final[frozenset[int]] = frozenset()



@final
class FilterColumn:
    """The node-local Filter verdict at every position, and the sorted positions that reject.

    Errors are never kept: their positions are evaluated again at the next sync.  Verdicts of
    plugins with :class:`~kschedlib.framework.memo.ExternalNodeState` are also evaluated again at
    the positions of the nodes those plugins name.
    """

    __slots__ = ("cursor", "errors", "infos", "outside", "rejected", "statuses")

    def __init__(self) -> None:
        self.infos: list[NodeInfo] = []
        self.statuses: list[Status] = []
        self.rejected: list[int] = []
        self.errors: set[int] = set()
        self.cursor = NodeCursor()
        self.outside: list[object] = []
        """Per outside-state plugin, its position when this column last synced."""

    def sync(self, snapshot: Snapshot, verdict: Callable[[NodeInfo], Status],
             external: Sequence[ExternalNodeState] = ()) -> None:
        """Re-evaluate the positions whose NodeInfo (or, for ``external`` plugins, outside state)
        changed since the last sync."""
        nodes = snapshot._nodes
        changed = self.cursor.changes(snapshot, len(self.infos))
        forced = self._outside_changes(snapshot, external) if external else _NONE
        if len(self.infos) != len(nodes) or forced is None:
            self._rebuild(nodes, verdict)
        else:
            infos, errors = self.infos, self.errors
            redo = errors | forced if forced else errors
            stale: Iterable[int] = range(len(nodes)) if changed is None else changed
            for position in sorted(redo.union(stale)) if redo else stale:
                info = nodes[position]
                if info is not infos[position] or position in redo:
                    self._set(position, info, verdict(info))

    def _outside_changes(self, snapshot: Snapshot, external: Sequence[ExternalNodeState]) -> Set[int] | None:
        """The positions of the nodes whose outside state changed (``None``: every node), moving each
        plugin's position on.  A plugin that fails to answer counts as "every node"."""
        known = self.outside if len(self.outside) == len(external) else [None] * len(external)
        forced: set[int] | None = set()
        now: list[object] = []
        for plugin, since in zip(external, known, strict=True):
            try:
                position, names = plugin.node_state_changes(since)
            except Exception:
                position, names = None, None
            now.append(position)
            if names is None:
                forced = None
            elif forced is not None:
                forced.update(p for name in names if (p := snapshot.position_of(name)) is not None)
        self.outside = now
        return forced

    def _rebuild(self, nodes: Sequence[NodeInfo], verdict: Callable[[NodeInfo], Status]) -> None:
        self.infos = list(nodes)
        self.statuses = statuses = [verdict(info) for info in nodes]
        self.rejected = [p for p, status in enumerate(statuses) if status.code is not _SUCCESS]
        self.errors = {p for p in self.rejected if statuses[p].code is _ERROR}

    def _set(self, position: int, info: NodeInfo, status: Status) -> None:
        self.infos[position] = info
        was_ok = self.statuses[position].code is _SUCCESS
        self.statuses[position] = status
        is_ok = status.code is _SUCCESS
        if was_ok and not is_ok:
            insort(self.rejected, position)
        elif is_ok and not was_ok:
            del self.rejected[bisect_left(self.rejected, position)]
        if status.code is _ERROR:
            self.errors.add(position)
        else:
            self.errors.discard(position)


@final
class SearchResult:
    """What the sampled node search found: feasible positions in search order, rejections, the stop."""

    __slots__ = ("error", "feasible", "statuses", "stopped_at")

    def __init__(self) -> None:
        self.feasible = Spans()
        """Positions in search order; runs of them found whole are kept as runs (taken by slices)."""
        self.statuses: dict[str, Status] = {}
        self.stopped_at: str | None = None
        self.error: Status | None = None


def search_column(
    column: FilterColumn, nodes: Sequence[NodeInfo], start: int, to_find: int,
    rest: Callable[[NodeInfo], Status] | None = None,
    special: Mapping[int, Callable[[NodeInfo], Status]] | None = None,
    grouped: DomainVerdicts | None = None,
) -> SearchResult:
    """kube-scheduler's sampled search from ``start`` over a synced column.

    Runs of feasible positions between rejected ones are taken whole; ``rest`` (the Filter plugins
    that are not node-local, when there are any) is run node by node on the column's survivors.
    The positions in ``special`` (nodes with nominated pods) are judged by their own function
    alone.  ``grouped`` (when given) holds ``rest``'s verdicts per label domain, and runs are then
    taken by domain (:func:`take_grouped`).  Visits exactly the
    nodes, and reports exactly the statuses, of the node-by-node search (``start`` is taken modulo
    the node count, as kube-scheduler does: the cluster may have shrunk since the index was stored).
    """
    result = SearchResult()
    rejected, statuses, found = column.rejected, column.statuses, result.statuses
    marked = sorted(special) if special else []
    count = len(nodes)
    start = start % count if count else 0
    for low, high in ((start, count), (0, start)):
        index = bisect_left(rejected, low)
        mark = bisect_left(marked, low)
        cursor = low
        while cursor < high:
            stop = rejected[index] if index < len(rejected) and rejected[index] < high else high
            if mark < len(marked) and marked[mark] < stop:
                stop = marked[mark]
            if cursor < stop and (
                    _take_run(result, nodes, cursor, stop, to_find, rest) if grouped is None
                    else take_grouped(result, nodes, cursor, stop, to_find, grouped)):
                return result
            if stop == high:
                break
            if index < len(rejected) and rejected[index] == stop:
                index += 1
            if mark < len(marked) and marked[mark] == stop:
                mark += 1
                assert special is not None
                status = special[stop](nodes[stop])
                code = status.code
                if code is _SUCCESS:
                    if len(result.feasible) < to_find:
                        result.feasible.add(stop)  # as _visit would, keeping the runs
                        cursor = stop + 1
                        continue
                elif code is not _ERROR:  # a rejection: as _visit would
                    found[nodes[stop].name] = status
                    cursor = stop + 1
                    continue
            else:  # a rejection the column holds (never a success): _visit's other branches, inlined
                status = statuses[stop]
                if status.code is _ERROR:
                    result.error = status
                    return result
                found[nodes[stop].name] = status
                cursor = stop + 1
                continue
            if _visit(result, nodes[stop], stop, status, to_find):
                return result
            cursor = stop + 1
    return result


def search_nodes(
    nodes: Sequence[NodeInfo], start: int, to_find: int, check: Callable[[NodeInfo], Status]
) -> SearchResult:
    """The same search without a column: ``check`` every node from ``start`` (modulo their count) on."""
    result = SearchResult()
    count = len(nodes)
    for offset in range(count):
        position = (start + offset) % count
        info = nodes[position]
        if _visit(result, info, position, check(info), to_find):
            break
    return result


def _visit(result: SearchResult, info: NodeInfo, position: int, status: Status, to_find: int) -> bool:
    """Record one node's verdict; True when the search ends there (enough found, or an error)."""
    code = status.code
    if code is _SUCCESS:
        if len(result.feasible) >= to_find:
            result.stopped_at = info.name
            return True
        result.feasible.append(position)
    elif code is _ERROR:
        result.error = status
        return True
    else:
        result.statuses[info.name] = status
    return False


def _take_run(result: SearchResult, nodes: Sequence[NodeInfo], low: int, high: int, to_find: int,
              rest: Callable[[NodeInfo], Status] | None) -> bool:
    """Take the feasible positions ``[low, high)``; True when the search ends inside the run."""
    feasible = result.feasible
    if rest is None:
        room = to_find - len(feasible)
        if high - low > room:
            feasible.add_run(low, low + room)
            result.stopped_at = nodes[low + room].name
            return True
        feasible.add_run(low, high)
        return False
    statuses = result.statuses
    for position in range(low, high):  # _visit inlined: this loop is the hot path with non-local filters
        info = nodes[position]
        status = rest(info)
        code = status.code
        if code is _SUCCESS:
            if len(feasible) >= to_find:
                result.stopped_at = info.name
                return True
            feasible.append(position)
        elif code is _ERROR:
            result.error = status
            return True
        else:
            statuses[info.name] = status
    return False


def take_grouped(result: SearchResult, nodes: Sequence[NodeInfo], low: int, high: int, to_find: int,
                 verdicts: DomainVerdicts) -> bool:
    """Take positions ``[low, high)`` by their domains' verdicts; True when the search ends inside the run.

    The same feasible positions, statuses (in visiting order), stop and error as visiting every
    node in turn: the run is cut at its first erring node, its feasible positions are taken up to
    the room left, and the rejected ones before the stop get their domain's status.
    """
    index = verdicts.domain_of
    segment = index[low:high]
    end, error = high, None
    if verdicts.errs is not None:
        at = segment.translate(verdicts.errs).find(1)
        if at >= 0:
            end, error = low + at, verdicts.statuses[segment[at]]
            del segment[at:]
    found = list(compress(range(low, end), segment.translate(verdicts.fits)))
    feasible = result.feasible
    room = to_find - len(feasible)
    stop = None
    if len(found) > room:
        stop = found[room]
        del found[room:]
        del segment[stop - low:]
    feasible.extend(found)
    statuses, per_domain = result.statuses, verdicts.statuses
    rejected = segment.translate(verdicts.rejects)
    for position, domain in zip(compress(range(low, end), rejected), compress(segment, rejected), strict=True):
        statuses[nodes[position].name] = per_domain[domain]
    if stop is not None:
        result.stopped_at = nodes[stop].name
        return True
    if error is not None:
        result.error = error
        return True
    return False


@final
class ScoreColumn:
    """Raw scores of the node-local Score plugins at every position, and their weighted sums.

    ``raw[i][p]`` is plugin ``i``'s raw score at position ``p``; ``partial[p]`` sums the weighted
    raw scores of the plugins that do not normalize.  Positions are re-scored lazily: a sync only
    notes which may be out of date (``pending``), and :meth:`gather` scores those among the
    positions it is asked for.  A failure is raised only when its position is asked for, and is
    tried again next time.

    For the plugins in ``tallied`` it also counts how many positions hold each raw score, so that
    :meth:`uniform` can tell at once when every position holds the same one.
    """

    __slots__ = ("cursor", "infos", "partial", "pending", "raw", "tallies")

    def __init__(self, width: int, tallied: Collection[int] = ()) -> None:
        self.infos: list[NodeInfo | None] = []
        self.raw: list[list[int]] = [[] for _ in range(width)]
        self.partial: list[int] = []
        self.pending: set[int] = set()
        self.cursor = NodeCursor()
        self.tallies: list[dict[int, int] | None] = [{} if j in tallied else None for j in range(width)]

    def sync(self, snapshot: Snapshot) -> None:
        """Note the positions whose NodeInfo changed since the last sync."""
        nodes = snapshot._nodes
        changed = self.cursor.changes(snapshot, len(self.infos))
        if len(self.infos) != len(nodes):
            self.infos = [None] * len(nodes)
            self.partial = [0] * len(nodes)
            self.raw = [[0] * len(nodes) for _ in self.raw]
            self.tallies = [None if t is None else {0: len(nodes)} if nodes else {} for t in self.tallies]
            self.pending = set(range(len(nodes)))
        else:
            self.pending.update(range(len(nodes)) if changed is None else changed)

    def gather(
        self, snapshot: Snapshot, positions: Sequence[int], score: Callable[[NodeInfo], tuple[tuple[int, ...], int]],
        failures: tuple[type[Exception], ...],
    ) -> None:
        """Bring ``positions`` up to date; ``score`` gives a node's raw scores and their weighted
        partial sum, or raises one of ``failures``, which is raised again for the first failing
        position (in ``positions`` order) once the others are done."""
        if not self.pending:
            return
        due = among(self.pending, positions)
        if not due:
            return
        nodes, infos, raw, partials, tallies = snapshot._nodes, self.infos, self.raw, self.partial, self.tallies
        failed: dict[int, Exception] = {}
        for position in due:
            info = nodes[position]
            if info is not infos[position]:
                try:
                    values, partial = score(info)
                except failures as failure:
                    failed[position] = failure
                    continue
                infos[position] = info
                partials[position] = partial
                for column, tally, value in zip(raw, tallies, values, strict=True):
                    if tally is not None:
                        old = column[position]
                        if old != value:  # mostly equal (a node's new pod rarely moves these scores)
                            _retally(tally, old, value)
                    column[position] = value
        # A new set rather than discards: a set emptied in place keeps its table and its deleted
        # slots, and every later intersection probes through them (a few entries in a table sized
        # for every node)
        self.pending = self.pending.difference(due.difference(failed) if failed else due)
        if failed:
            raise next(failed[p] for p in positions if p in failed)

    def uniform(self, j: int) -> int | None:
        """The raw score every position holds for tallied plugin ``j``, or ``None`` (they differ, or
        ``j`` is not tallied).  Positions never scored hold 0, so a column of one real score besides
        them is not uniform; one that is holds that score at every position gathered."""
        tally = self.tallies[j]
        return next(iter(tally)) if tally is not None and len(tally) == 1 else None


def _retally(tally: dict[int, int], old: int, new: int) -> None:
    """Move one position's count from ``old`` to ``new`` (the caller has checked they differ)."""
    left = tally[old] - 1
    if left:
        tally[old] = left
    else:
        del tally[old]
    tally[new] = tally.get(new, 0) + 1
