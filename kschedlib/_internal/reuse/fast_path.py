"""The reuse layer's interface: filter plans, memoized filter runners, the column search, local score views.

kube-scheduler keeps its own result reuse beside the plugin runner (``runtime/batch.go``,
``signature.go``), not inside ``Run*Plugins``; :class:`Reuse` is that place here.  It only ever
returns what running the plugins would: verdicts and raw scores of plugins that promised
(:mod:`kschedlib.framework.memo`) to depend on their key and the NodeInfo alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any, Final, NamedTuple, cast, final

from kschedlib._internal.plugin_errors import (
    FilterRunner,
    OutOfRange,
    PluginFailure,
    WrongScore,
    bound_filter_runner,
    plain_filter_runner,
)
from kschedlib._internal.reuse.columns import FilterColumn, ScoreColumn, SearchResult, search_column
from kschedlib._internal.reuse.domains import DomainStore
from kschedlib._internal.reuse.memo import Memo, MemoizedFilter, memo_key
from kschedlib._internal.reuse.nominated import NominatedNodeInfos
from kschedlib._internal.reuse.spans import take
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import FilterPlugin, ScoreExtensions, ScorePlugin
from kschedlib.framework.memo import ExternalNodeState, LabelKeyedFilter, NodeLocalFilter, NodeLocalScore, PureNormalize
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["FilterPlan", "LocalView", "Reuse"]


class FilterPlan(NamedTuple):
    """The Filter plugins a cycle runs, and how many of them, from the first, are node-local.

    ``key`` identifies the node-local prefix's verdicts (one key per plugin in it); ``external``
    are the prefix's plugins whose verdicts also read outside state (kept per position only).
    """

    active: tuple[tuple[str, FilterRunner], ...]
    local: int
    key: tuple[object, ...]
    external: tuple[ExternalNodeState, ...] = ()
    run: FilterRunner | None = None
    """:func:`plain_filter_runner` of ``active``, when it is shared by every cycle skipping the same plugins."""


class _FilterShape(NamedTuple):
    """What a set of skipped Filter plugins leaves to run, worked out once per such set."""

    active: tuple[tuple[str, FilterRunner], ...]
    run: FilterRunner
    leading: tuple[tuple[str, Callable[[CycleState, Pod], object], ExternalNodeState | None], ...]
    """The leading node-local plugins of ``active``: name, key function, outside state (if read)."""


class _ScoreShape(NamedTuple):
    """What a set of skipped Score plugins leaves to run, worked out once per such set."""

    active: list[tuple[str, ScorePlugin]]
    """Shared by every cycle with this set: read, never changed."""
    reusable: tuple[tuple[int, str, Callable[[CycleState, Pod], object]], ...]
    """The node-local ones among ``active``: index, name, key function."""
    scorers: dict[tuple[int, ...], _Scorers]
    """Per set of reusable indexes (those whose key was not ``None``), what scores them."""


class _Scorers(NamedTuple):
    """What :meth:`Reuse._local_scorer` runs per node, for one list of reusable plugins."""

    calls: list[tuple[str, Callable[[CycleState, Pod, NodeInfo], int]]]
    """Each plugin's name and Score method."""
    summed: list[tuple[int, str, int]]
    """Position, name and weight of those that do not normalize (summed into the partial)."""
    tallied: list[int]
    """Positions of those that normalize purely (their columns count each raw score)."""


class LocalView(NamedTuple):
    """The reusable Score plugins' results for the nodes being scored, in their order."""

    totals: list[int]
    """Per node, the weighted sum of the reusable plugins that do not normalize."""
    raw: Callable[[int], list[int]]
    """The raw scores of the ``j``-th reusable plugin, per node."""
    uniform: Callable[[int], int | None]
    """The raw score of the ``j``-th reusable plugin when it is the same on every node (known for the
    plugins that normalize purely, when their column says so), else ``None``."""


_SHAPES: Final = 64
"""Shapes kept per extension point (one per distinct set of skipped plugins; a handful in practice)."""


_SCORE_FAILURES: Final = (PluginFailure, OutOfRange)
"""What a node's scoring raises when a plugin fails (the column raises it again for the node asked first)."""
_name: Final = attrgetter("name")


def _unknown(j: int) -> None:
    return None


@final
class Reuse:
    """One profile's reusable results: what the runtime asks before running node-local plugins."""

    def __init__(self, filters: Sequence[tuple[str, FilterPlugin]], scores: Sequence[tuple[str, ScorePlugin]],
                 weights: Mapping[str, int]) -> None:
        self._filters = tuple(filters)
        self.weights = weights
        # what each plugin implements, looked up by name in every cycle (cheaper than ABC checks)
        self._node_local_filters = frozenset(name for name, p in filters if isinstance(p, NodeLocalFilter))
        self._outside_state = {name: p for name, p in filters
                               if isinstance(p, NodeLocalFilter) and isinstance(p, ExternalNodeState)}
        self._node_local_scores = frozenset(name for name, p in scores if isinstance(p, NodeLocalScore))
        self._normalizing = frozenset(name for name, p in scores if isinstance(p, ScoreExtensions))
        self.pure_normalizing = frozenset(name for name, p in scores
                                          if isinstance(p, ScoreExtensions) and isinstance(p, PureNormalize))
        """Plugins whose NormalizeScore reads the raw scores alone (their uniform columns are tallied)."""
        self._scores = tuple(scores)
        self._filter_shapes: dict[frozenset[str], _FilterShape] = {}
        self._score_shapes: dict[frozenset[str], _ScoreShape] = {}
        self._memo = Memo()
        self._domains = DomainStore({name: p for name, p in filters if isinstance(p, LabelKeyedFilter)})
        self._nominated = NominatedNodeInfos()

    def memoized(self, plan: FilterPlan, run: FilterRunner) -> FilterRunner:
        """``run`` (the plan's plugins), reusing verdicts per NodeInfo when every plugin is node-local
        (and none reads outside state: a NodeInfo alone does not tell when those change)."""
        if plan.local < len(plan.active) or plan.external:
            return run
        return MemoizedFilter(run, self._memo.table(plan.key))

    def nominated_infos(self, run: FilterRunner, listening: bool) -> NominatedNodeInfos | None:
        """The NodeInfos composed with nominated pods, when ``run`` profits from getting the same one
        again (it reuses verdicts per NodeInfo) and no PreFilter extension ``listening`` must hear
        of the pods added; else ``None``."""
        return self._nominated if isinstance(run, MemoizedFilter) and not listening else None

    def filter_plan(self, state: CycleState, pod: Pod) -> FilterPlan:
        """The non-skipped Filter plugins, with the key of their leading :class:`NodeLocalFilter` run."""
        skipped = state.skip_filter_plugins
        shape = self._filter_shapes.get(skipped)
        if shape is None:
            shape = self._filter_shape(skipped)
        keys: list[object] = ["filter"]
        external: list[ExternalNodeState] = []
        for name, key_of, outside in shape.leading:
            key = memo_key(key_of, state, pod)
            if key is None:
                break
            keys.append((name, key))
            if outside is not None:
                external.append(outside)
        return FilterPlan(shape.active, len(keys) - 1, tuple(keys), tuple(external), shape.run)

    def _filter_shape(self, skipped: frozenset[str]) -> _FilterShape:
        active = tuple((name, plugin.filter) for name, plugin in self._filters if name not in skipped)
        leading = []
        for name, plugin in self._filters:
            if name in skipped:
                continue
            if name not in self._node_local_filters:
                break
            leading.append((name, cast(NodeLocalFilter, plugin).filter_key, self._outside_state.get(name)))
        if len(self._filter_shapes) >= _SHAPES:
            self._filter_shapes.clear()
        shape = self._filter_shapes[skipped] = _FilterShape(active, plain_filter_runner(active), tuple(leading))
        return shape

    def score_plugins(self, skipped: frozenset[str]) -> list[tuple[str, ScorePlugin]]:
        """The Score plugins not in ``skipped``, in order (one shared list per set: never to be changed)."""
        shape = self._score_shapes.get(skipped)
        if shape is None:
            shape = self._score_shape(skipped)
        return shape.active

    def _score_shape(self, skipped: frozenset[str]) -> _ScoreShape:
        active = [(name, plugin) for name, plugin in self._scores if name not in skipped]
        reusable = tuple((index, name, cast(NodeLocalScore, plugin).score_key)
                         for index, (name, plugin) in enumerate(active) if name in self._node_local_scores)
        if len(self._score_shapes) >= _SHAPES:
            self._score_shapes.clear()
        shape = self._score_shapes[skipped] = _ScoreShape(active, reusable, {})
        return shape

    def search_columns(
        self, plan: FilterPlan, state: CycleState, pod: Pod, snapshot: Snapshot, start: int, to_find: int,
        special: Mapping[int, Callable[[NodeInfo], Status]] | None = None, check: FilterRunner | None = None,
    ) -> SearchResult | None:
        """The node search over the memo column of the plan's node-local plugins.

        ``special`` positions are judged by their own function (see :func:`search_column`); ``check``
        is the cycle's filter runner, reused when every plugin is node-local.
        ``None`` when there is no node-local plugin to build on, or the column is not built yet.
        """
        if plan.local == 0 and plan.active:
            return None
        nodes = snapshot._nodes
        column = self._memo.column(("column", *plan.key), FilterColumn, len(nodes), to_find)
        if column is None:
            return None
        verdict: FilterRunner
        if isinstance(check, MemoizedFilter) and plan.local == len(plan.active):
            verdict = check  # the same verdicts under the same key
        elif plan.external:
            verdict = plain_filter_runner(plan.active[:plan.local])  # the column is the only memory
        else:
            verdict = MemoizedFilter(plain_filter_runner(plan.active[:plan.local]), self._memo.table(plan.key))
        column.sync(snapshot, lambda info: verdict(state, pod, info), plan.external)
        if plan.local == len(plan.active):
            return search_column(column, nodes, start, to_find, None, special)
        rest = bound_filter_runner(plan.active[plan.local:], state, pod)
        grouped = self._domains.verdicts([name for name, _ in plan.active[plan.local:]], state, pod, snapshot, rest)
        return search_column(column, nodes, start, to_find, rest, special, grouped)

    def local_score_plugins(
        self, state: CycleState, pod: Pod, active: Sequence[tuple[str, ScorePlugin]]
    ) -> tuple[list[int], tuple[object, ...]]:
        """Indexes of the active plugins whose scores can be reused, and the table key for them."""
        shape = self._score_shapes.get(state.skip_score_plugins)
        if shape is None or shape.active is not active:
            reusable: Sequence[tuple[int, str, Callable[[CycleState, Pod], object]]] = [
                (index, name, cast(NodeLocalScore, plugin).score_key)
                for index, (name, plugin) in enumerate(active) if name in self._node_local_scores]
        else:
            reusable = shape.reusable
        local: list[int] = []
        keys: list[object] = ["score"]
        for index, name, key_of in reusable:
            key = memo_key(key_of, state, pod)
            if key is not None:
                local.append(index)
                keys.append((name, key))
        return local, tuple(keys)

    def _scorers(self, state: CycleState, active: Sequence[tuple[str, ScorePlugin]], local: Sequence[int]) -> _Scorers:
        """The lists the reusable plugins are run and summed by: kept per shape, else built for this cycle."""
        shape = self._score_shapes.get(state.skip_score_plugins)
        cached = shape is not None and shape.active is active
        if cached:
            assert shape is not None
            found = shape.scorers.get(tuple(local))
            if found is not None:
                return found
        built = _Scorers(
            [(active[i][0], active[i][1].score) for i in local],
            [(position, active[i][0], self.weights[active[i][0]]) for position, i in enumerate(local)
             if active[i][0] not in self._normalizing],
            [j for j, i in enumerate(local) if active[i][0] in self.pure_normalizing])
        if cached:
            assert shape is not None
            if len(shape.scorers) >= _SHAPES:
                shape.scorers.clear()
            shape.scorers[tuple(local)] = built
        return built

    def _local_scorer(
        self, state: CycleState, pod: Pod, active: Sequence[tuple[str, ScorePlugin]], local: Sequence[int],
    ) -> Callable[[NodeInfo], tuple[tuple[int, ...], int]]:
        """Scores one node with the reusable plugins: their raw scores and the weighted sum of those
        that do not normalize (range-checked here, since that sum is all that is kept of them)."""
        scorers, summed, _ = self._scorers(state, active, local)

        def score(node: NodeInfo) -> tuple[tuple[int, ...], int]:
            values = []  # each plugin's raw score (a failure names the plugin); runs per node re-scored
            for name, call in scorers:
                try:
                    value = call(state, pod, node)
                except Exception as exc:
                    raise PluginFailure(name, exc) from exc
                if type(value) is not int:
                    raise PluginFailure(name, WrongScore(value))
                values.append(value)
            raw = tuple(values)
            partial = 0
            for position, name, weight in summed:
                value = raw[position]
                if not 0 <= value <= 100:
                    raise OutOfRange(name, value)
                partial += value * weight
            return raw, partial

        return score

    def local_view(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], active: Sequence[tuple[str, ScorePlugin]],
        local: Sequence[int], keys: tuple[object, ...], positions: Sequence[int] | None, snapshot: Snapshot | None,
    ) -> LocalView:
        """The reusable plugins' results for ``nodes``: from the key's column when positions are known,
        else from its node table."""
        score = self._local_scorer(state, pod, active, local)
        if positions is not None and snapshot is not None:
            tallied = self._scorers(state, active, local).tallied
            column = self._memo.column(("column", *keys), lambda: ScoreColumn(len(local), tallied),
                                       snapshot.num_nodes, len(positions))
            if column is not None:
                return self._column_view(column, snapshot, positions, score)
        table = self._memo.table(keys)
        entries: list[Any] = list(map(table.get, map(_name, nodes)))
        for i, (entry, node) in enumerate(zip(entries, nodes, strict=True)):
            if entry is None or entry[0] is not node:
                raw, partial = score(node)
                entries[i] = table[node.name] = (node, raw, partial)
        return LocalView([entry[2] for entry in entries], lambda j: [entry[1][j] for entry in entries], _unknown)

    @staticmethod
    def _column_view(
        column: ScoreColumn, snapshot: Snapshot, positions: Sequence[int],
        score: Callable[[NodeInfo], tuple[tuple[int, ...], int]],
    ) -> LocalView:
        column.sync(snapshot)
        column.gather(snapshot, positions, score, _SCORE_FAILURES)
        raw = column.raw
        return LocalView(take(column.partial, positions), lambda j: take(raw[j], positions), column.uniform)
