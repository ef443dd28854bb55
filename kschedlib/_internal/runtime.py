"""The runtime that runs one profile's plugins at each extension point.

This is the one place where a plugin's exception becomes an ``ERROR`` status
and where codes a point does not accept are turned into errors, with
kube-scheduler's wording (reference §2.1).  A return value of the wrong type
(``None``, a bool, a string, a float score) is an ``ERROR`` status too, naming the
plugin, the extension point and the value, checked where the value is used.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from operator import add
from typing import Any, Final, NamedTuple, TypeVar, cast, final

from kschedlib._internal.profile import BuiltProfile
from kschedlib._internal.reuse.columns import FilterColumn, ScoreColumn, ScoreFailure, SearchResult, search_column
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extender import Extender
from kschedlib.framework.extension_points import (
    BindPlugin,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kschedlib.framework.memo import NodeLocalFilter, NodeLocalScore
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.results import PostFilterResult, PreFilterResult, Wait
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.versions import Switches

__all__ = ["FilterPlan", "FilterRunner", "MemoizedFilter", "PreFilterOutcome", "ProfileRuntime", "ScoreTable"]

_SUCCESS: Final = Code.SUCCESS
_ERROR: Final = Code.ERROR
_REJECTED: Final = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})
MAX_PERMIT_TIMEOUT: Final = 15 * 60.0

FilterRunner = Callable[[CycleState, Pod, NodeInfo], Status]
_C = TypeVar("_C", FilterColumn, ScoreColumn)


class FilterPlan(NamedTuple):
    """The Filter plugins a cycle runs, and how many of them, from the first, are node-local.

    ``key`` identifies the node-local prefix's verdicts (one key per plugin in it).
    """

    active: tuple[tuple[str, FilterRunner], ...]
    local: int
    key: tuple[object, ...]


class PreFilterOutcome(NamedTuple):
    """The merged node narrowing (``None`` = all nodes) and the status to act on."""

    result: PreFilterResult | None
    status: Status
    narrowing: tuple[str, ...] = ()
    """The plugins whose PreFilterResult named nodes (the plugins an absent node did not satisfy)."""


class ScoreTable(NamedTuple):
    """Weighted scores: ``plugins[i]`` gave ``scores[i][j]`` to node ``j``; ``totals[j]`` sums them."""

    plugins: tuple[str, ...]
    scores: tuple[list[int], ...]
    totals: list[int]


def _memo_key(key_of: Callable[[CycleState, Pod], object], state: CycleState, pod: Pod) -> object:
    """A node-local plugin's memo key, or ``None`` when its results cannot be reused.

    A key that raises or cannot be hashed means no reuse: the plugin then runs on every node.
    """
    try:
        key = key_of(state, pod)
        hash(key)
    except Exception:
        return None
    return key


def _unexpected(status: Status, plugin: str) -> Status:
    """A Filter status that is neither success nor a rejection: kube-scheduler reports it as an error."""
    return _error(f"running {_go_quote(plugin)} filter plugin: {status.message()}", plugin)


def _error(message: str, plugin: str) -> Status:
    return Status(Code.ERROR, (message,), plugin)


def _shown(value: object) -> str:
    """A value and its type for an error message (the repr kept short)."""
    text = repr(value)
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{text} ({type(value).__name__})"


def _returned(value: object, expected: str = "a Status") -> str:
    """What a plugin wrongly returned, for its error message."""
    return f"returned {_shown(value)}, not {expected}"


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _slice(names: Sequence[str]) -> str:
    return "[" + " ".join(names) + "]"


def _first_failure(
    point: str,
    calls: Sequence[tuple[str, Callable[[CycleState, Pod, str], Status]]],
    state: CycleState,
    pod: Pod,
    node_name: str,
) -> Status:
    """Run ``calls`` in order until one fails: a rejection is returned as is, anything else as an error."""
    for name, call in calls:
        try:
            status: object = call(state, pod, node_name)
        except Exception as exc:
            return _error(f"running {point} plugin {_go_quote(name)}: {exc}", name)
        if not isinstance(status, Status):
            return _error(f"running {point} plugin {_go_quote(name)}: {_returned(status)}", name)
        if status.code is not _SUCCESS:
            if status.code in _REJECTED:
                return status.with_plugin(name)
            return _error(f"running {point} plugin {_go_quote(name)}: {status.message()}", name)
    return Status.success()


class _OutOfRange(Exception):
    """A Score plugin without normalization returned a score outside [0, 100]."""

    def __init__(self, plugin: str, value: int) -> None:
        super().__init__(plugin)
        self.plugin = plugin
        self.value = value


def _not_int(values: Sequence[object]) -> tuple[object] | None:
    """The first value that is not an int score (in a 1-tuple: it may be ``None``), or ``None``.

    The common all-int case is decided at C speed; a bool or a float is not a score.
    """
    if not values or (type(values[0]) is int and len(set(map(type, values))) == 1):
        return None
    return (next(value for value in values if type(value) is not int),)


class _WrongScore(Exception):
    """A Score plugin returned something other than an int (a bool or a float is not a score)."""

    def __init__(self, value: object) -> None:
        super().__init__(_returned(value, "an int score"))


def _range_error(plugin: str, value: int) -> Status:
    return _error(f"applying score defaultWeights on Score plugins: plugin {_go_quote(plugin)} returns an "
                  f"invalid score {value}, it should in the range of [0, 100] after normalizing", plugin)


class _PluginFailure(Exception):
    """A Score plugin raised, or returned a score that is not an int; carries its name to the error status."""

    def __init__(self, plugin: str, error: BaseException) -> None:
        super().__init__(plugin)
        self.plugin = plugin
        self.error = error


def _score_node(
    scorers: Sequence[tuple[str, Callable[[CycleState, Pod, NodeInfo], int]]],
    state: CycleState,
    pod: Pod,
    node: NodeInfo,
) -> list[int]:
    out = []
    for name, score in scorers:
        try:
            value = score(state, pod, node)
        except Exception as exc:
            raise _PluginFailure(name, exc) from exc
        if type(value) is not int:
            raise _PluginFailure(name, _WrongScore(value))
        out.append(value)
    return out


class _LocalView(NamedTuple):
    """The reusable Score plugins' results for the nodes being scored, in their order."""

    totals: list[int]
    """Per node, the weighted sum of the reusable plugins that do not normalize."""
    raw: Callable[[int], list[int]]
    """The raw scores of the ``j``-th reusable plugin, per node."""


@final
class _Memo:
    """Reusable node-local results by key: id tables and per-position columns.

    An id table maps NodeInfo id -> (NodeInfo, value); an entry is valid only while its NodeInfo
    object is the one being asked about.  A column (see :mod:`~kschedlib._internal.reuse.columns`)
    covers every position of the snapshot; it is only built for a key once its pods have asked
    about as many nodes as the snapshot has, so one-off pod shapes never pay for it.
    Keys are few (one per distinct pod shape) and bounded in number.
    """

    __slots__ = ("_tables", "_uses")
    MAX_TABLES: Final = 64
    MAX_ENTRIES: Final = 50_000
    MAX_COUNTED: Final = 4_096

    def __init__(self) -> None:
        self._tables: OrderedDict[object, Any] = OrderedDict()
        self._uses: dict[object, int] = {}

    def _store(self, key: object, value: Any) -> None:
        self._tables[key] = value
        if len(self._tables) > self.MAX_TABLES:
            self._tables.popitem(last=False)

    def table(self, key: object) -> dict[int, Any]:
        table: dict[int, Any] | None = self._tables.get(key)
        if table is None:
            table = {}
            self._store(key, table)
        else:
            self._tables.move_to_end(key)
            if len(table) > self.MAX_ENTRIES:
                table.clear()
        return table

    def column(self, key: object, factory: Callable[[], _C], nodes: int, wanted: int) -> _C | None:
        """The column of ``key``, or ``None`` while its uses have not yet covered ``nodes`` nodes."""
        column: _C | None = self._tables.get(key)
        if column is not None:
            self._tables.move_to_end(key)
            return column
        uses = self._uses.get(key, 0) + max(wanted, 1)
        if uses < nodes:
            if len(self._uses) >= self.MAX_COUNTED:
                self._uses.clear()
            self._uses[key] = uses
            return None
        self._uses.pop(key, None)
        column = factory()
        self._store(key, column)
        return column


@final
class MemoizedFilter:
    """A filter runner that reuses verdicts per NodeInfo; the node search reads ``table`` directly."""

    __slots__ = ("run", "table")

    def __init__(self, run: FilterRunner, table: dict[int, Any]) -> None:
        self.run = run
        self.table = table

    def __call__(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        entry = self.table.get(id(node_info))
        if entry is not None and entry[0] is node_info:
            cached: Status = entry[1]
            return cached
        status = self.run(state, pod, node_info)
        if status.code is not _ERROR:
            self.table[id(node_info)] = (node_info, status)
        return status


@final
class ProfileRuntime:
    """One profile's plugins, ready to run; built once per scheduler."""

    def __init__(self, profile: BuiltProfile, extenders: Sequence[Extender] = (),
                 switches: Switches | None = None) -> None:
        self.profile = profile
        switches = switches if switches is not None else Switches()
        self.absent_nodes_in_fit_error = switches.absent_nodes_in_fit_error
        """Nodes left out by a PreFilterResult get an explicit status on a FitError (v1.32)."""
        self.extender_status_replaces = switches.extender_status_replaces
        """An extender's verdict replaces a node's status instead of adding reasons (v1.32)."""
        self.scheduler_name = profile.scheduler_name
        self.extenders: tuple[Extender, ...] = tuple(extenders)
        """The scheduler's extenders (shared by all profiles), in the order they run."""
        plugins = profile.plugins
        points = profile.points

        def at(point: str) -> list[tuple[str, Plugin]]:
            return [(name, plugins[name]) for name in points[point]]

        self.pre_enqueue = cast(list[tuple[str, PreEnqueuePlugin]], at("preEnqueue"))
        self.queue_sort = cast(QueueSortPlugin, plugins[points["queueSort"][0]])
        self.pre_filter = cast(list[tuple[str, PreFilterPlugin]], at("preFilter"))
        self.filter = cast(list[tuple[str, FilterPlugin]], at("filter"))
        self.post_filter = cast(list[tuple[str, PostFilterPlugin]], at("postFilter"))
        self.pre_score = cast(list[tuple[str, PreScorePlugin]], at("preScore"))
        self.score = cast(list[tuple[str, ScorePlugin]], at("score"))
        self.reserve = cast(list[tuple[str, ReservePlugin]], at("reserve"))
        self.permit = cast(list[tuple[str, PermitPlugin]], at("permit"))
        self.pre_bind = cast(list[tuple[str, PreBindPlugin]], at("preBind"))
        self.bind = cast(list[tuple[str, BindPlugin]], at("bind"))
        self.post_bind = cast(list[tuple[str, PostBindPlugin]], at("postBind"))
        self.pre_filter_extensions = [
            (name, plugin) for name, plugin in self.pre_filter if isinstance(plugin, PreFilterExtensions)
        ]
        self.weights = dict(profile.score_weights)
        # what each plugin implements, looked up by name in every cycle (cheaper than ABC checks)
        self._node_local_filters = frozenset(name for name, p in self.filter if isinstance(p, NodeLocalFilter))
        self._node_local_scores = frozenset(name for name, p in self.score if isinstance(p, NodeLocalScore))
        self._normalizing = frozenset(name for name, p in self.score if isinstance(p, ScoreExtensions))
        self._memo = _Memo()
        self._plain_runners: dict[frozenset[str], FilterRunner] = {}

    @property
    def percentage_of_nodes_to_score(self) -> int | None:
        return self.profile.percentage_of_nodes_to_score

    # --- queue --------------------------------------------------------------------------------

    def run_pre_enqueue(self, pod: Pod) -> Status:
        """The first non-success PreEnqueue status (with its plugin), or success."""
        for name, plugin in self.pre_enqueue:
            try:
                status: object = plugin.pre_enqueue(pod)
            except Exception as exc:
                return _error(f"running PreEnqueue plugin {_go_quote(name)}: {exc}", name)
            if not isinstance(status, Status):
                return _error(f"running PreEnqueue plugin {_go_quote(name)}: {_returned(status)}", name)
            if status.code is not _SUCCESS:
                return status.with_plugin(name)
        return Status.success()

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """The QueueSort plugin's order; arrival order where it raises (the queue must stay a heap)."""
        try:
            return self.queue_sort.less(a, b)
        except Exception:
            return (a.timestamp, a.sequence) < (b.timestamp, b.sequence)

    # --- filtering ----------------------------------------------------------------------------

    def run_pre_filter(self, state: CycleState, pod: Pod) -> PreFilterOutcome:
        """PreFilter with kube-scheduler's merge, skip and early-return rules."""
        result: PreFilterResult | None = None
        narrowing: list[str] = []
        returned: Status = Status.success()
        skipped: set[str] = set()
        for name, plugin in self.pre_filter:
            try:
                outcome: object = plugin.pre_filter(state, pod)
            except Exception as exc:
                return PreFilterOutcome(None, _error(f"running PreFilter plugin {_go_quote(name)}: {exc}", name))
            if isinstance(outcome, PreFilterResult):
                status, narrowed = Status.success(), outcome
            elif isinstance(outcome, Status):
                status, narrowed = outcome, None
            else:
                wrong = _returned(outcome, "a Status or a PreFilterResult")
                return PreFilterOutcome(None, _error(f"running PreFilter plugin {_go_quote(name)}: {wrong}", name))
            code = status.code
            if code is Code.SKIP:
                skipped.add(name)
                continue
            if code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return PreFilterOutcome(None, status.with_plugin(name))
            if code is Code.UNSCHEDULABLE:
                returned = status.with_plugin(name)
                continue
            if code is not _SUCCESS:
                message = f"running PreFilter plugin {_go_quote(name)}: {status.message()}"
                return PreFilterOutcome(None, _error(message, name))
            if narrowed is None or narrowed.node_names is None:
                continue
            narrowing.append(name)
            result = narrowed if result is None else result.merge(narrowed)
            if not result.node_names:
                message = (f"node(s) didn't satisfy plugin {narrowing[0]}" if len(narrowing) == 1
                           else f"node(s) didn't satisfy plugin(s) {_slice(narrowing)} simultaneously")
                return PreFilterOutcome(result, Status.unresolvable(message), tuple(narrowing))
        state.skip_filter_plugins = frozenset(skipped)
        return PreFilterOutcome(result, returned, tuple(narrowing))

    def filter_plan(self, state: CycleState, pod: Pod) -> FilterPlan:
        """The non-skipped Filter plugins, with the key of their leading :class:`NodeLocalFilter` run."""
        active: list[tuple[str, FilterRunner]] = []
        keys: list[object] = ["filter"]
        local = 0
        for name, plugin in self.filter:
            if name in state.skip_filter_plugins:
                continue
            active.append((name, plugin.filter))
            if local == len(active) - 1 and name in self._node_local_filters:
                key = _memo_key(cast(NodeLocalFilter, plugin).filter_key, state, pod)
                if key is not None:
                    keys.append((name, key))
                    local += 1
        return FilterPlan(tuple(active), local, tuple(keys))

    def filter_runner(self, state: CycleState, pod: Pod | None = None, plan: FilterPlan | None = None) -> FilterRunner:
        """A function running the non-skipped Filter plugins on one node; first failure wins.

        With ``pod`` given and every active plugin a :class:`NodeLocalFilter` with a key, verdicts
        are reused for NodeInfos already seen with the same keys.
        """
        if pod is None:
            skipped = state.skip_filter_plugins
            run = self._plain_runners.get(skipped)
            if run is None:
                if len(self._plain_runners) >= 64:
                    self._plain_runners.clear()
                run = self._plain_runners[skipped] = self._plain_filter_runner(
                    tuple((name, plugin.filter) for name, plugin in self.filter if name not in skipped))
            return run
        if plan is None:
            plan = self.filter_plan(state, pod)
        run = self._plain_filter_runner(plan.active)
        if plan.local < len(plan.active):
            return run
        return MemoizedFilter(run, self._memo.table(plan.key))

    def search_columns(
        self, plan: FilterPlan, state: CycleState, pod: Pod, snapshot: Snapshot, start: int, to_find: int,
        special: Mapping[int, Callable[[NodeInfo], Status]] | None = None, check: FilterRunner | None = None,
    ) -> SearchResult | None:
        """The node search over the memo column of the plan's node-local plugins.

        ``special`` positions are judged by their own function (see :func:`search_column`); ``check``
        is the cycle's :meth:`filter_runner`, reused when every plugin is node-local.
        ``None`` when there is no node-local plugin to build on, or the column is not built yet.
        """
        if plan.local == 0 and plan.active:
            return None
        nodes = snapshot.node_infos
        column = self._memo.column(("column", *plan.key), FilterColumn, len(nodes), to_find)
        if column is None:
            return None
        if isinstance(check, MemoizedFilter) and plan.local == len(plan.active):
            verdict = check  # the same verdicts under the same key
        else:
            verdict = MemoizedFilter(self._plain_filter_runner(plan.active[:plan.local]), self._memo.table(plan.key))
        column.sync(snapshot, lambda info: verdict(state, pod, info))
        rest = self._bound_runner(plan.active[plan.local:], state, pod) if plan.local < len(plan.active) else None
        return search_column(column, nodes, start, to_find, rest, special)

    @classmethod
    def _bound_runner(
        cls, active: tuple[tuple[str, FilterRunner], ...], state: CycleState, pod: Pod
    ) -> Callable[[NodeInfo], Status]:
        """Filter plugins run on one node for this cycle's pod; one plugin is called without a loop."""
        if len(active) != 1:
            run = cls._plain_filter_runner(active)
            return lambda info: run(state, pod, info)
        ((name, check),) = active

        def run_one(info: NodeInfo) -> Status:
            try:
                status: object = check(state, pod, info)
            except Exception as exc:
                return _error(f"running {_go_quote(name)} filter plugin: {exc}", name)
            if not isinstance(status, Status):
                return _error(f"running {_go_quote(name)} filter plugin: {_returned(status)}", name)
            code = status.code
            if code is _SUCCESS or status.plugin == name:
                return status if code is _SUCCESS or code in _REJECTED else _unexpected(status, name)
            return status.with_plugin(name) if code in _REJECTED else _unexpected(status, name)

        return run_one

    @staticmethod
    def _plain_filter_runner(active: tuple[tuple[str, FilterRunner], ...]) -> FilterRunner:
        success = Status.success()

        def run(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
            for name, check in active:
                try:
                    status: object = check(state, pod, node_info)
                except Exception as exc:
                    return _error(f"running {_go_quote(name)} filter plugin: {exc}", name)
                if not isinstance(status, Status):
                    return _error(f"running {_go_quote(name)} filter plugin: {_returned(status)}", name)
                code = status.code
                if code is not _SUCCESS:
                    if code in _REJECTED:
                        return status if status.plugin == name else status.with_plugin(name)
                    return _unexpected(status, name)
            return success

        return run

    def run_pre_filter_extension(
        self, state: CycleState, pod: Pod, pod_info: PodInfo, node_info: NodeInfo, *, add: bool
    ) -> Status:
        """AddPod (``add``) or RemovePod on every non-skipped PreFilterExtensions plugin."""
        verb = "AddPod" if add else "RemovePod"
        for name, plugin in self.pre_filter_extensions:
            if name in state.skip_filter_plugins:
                continue
            ext = cast(PreFilterExtensions, plugin)
            try:
                status: object = (ext.add_pod if add else ext.remove_pod)(state, pod, pod_info, node_info)
            except Exception as exc:
                return _error(f"running {verb} on PreFilter plugin {_go_quote(name)}: {exc}", name)
            if not isinstance(status, Status):
                return _error(f"running {verb} on PreFilter plugin {_go_quote(name)}: {_returned(status)}", name)
            if status.code is not _SUCCESS:
                return _error(f"running {verb} on PreFilter plugin {_go_quote(name)}: {status.message()}", name)
        return Status.success()

    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> PostFilterResult | None:
        """PostFilter plugins in order (reference §2.1); ``None`` when there are none."""
        if not self.post_filter:
            return None
        kept: PostFilterResult | None = None
        reasons: list[str] = []
        first_rejector = ""
        for name, plugin in self.post_filter:
            try:
                result: object = plugin.post_filter(state, pod, statuses)
            except Exception as exc:
                return PostFilterResult(_error(str(exc), name))
            if not isinstance(result, PostFilterResult) or not isinstance(result.status, Status):
                wrong = _returned(result, "a PostFilterResult holding a Status")
                return PostFilterResult(_error(f"running PostFilter plugin {_go_quote(name)}: {wrong}", name))
            status = result.status
            if status.code is _SUCCESS:
                return result
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return PostFilterResult(status.with_plugin(name), result.nominated_node_name, result.victims)
            if status.code not in _REJECTED:
                return PostFilterResult(_error(status.message(), name))
            if result.nominated_node_name is not None:
                kept = result
            reasons.extend(status.all_reasons())
            first_rejector = first_rejector or name
        final = Status(Code.UNSCHEDULABLE, tuple(reasons), first_rejector)
        if kept is None:
            return PostFilterResult(final)
        return PostFilterResult(final, kept.nominated_node_name, kept.victims)

    # --- scoring ------------------------------------------------------------------------------

    def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """PreScore; records skipping plugins in the state."""
        skipped: set[str] = set()
        for name, plugin in self.pre_score:
            try:
                status: object = plugin.pre_score(state, pod, nodes)
            except Exception as exc:
                return _error(f"running PreScore plugin {_go_quote(name)}: {exc}", name)
            if not isinstance(status, Status):
                return _error(f"running PreScore plugin {_go_quote(name)}: {_returned(status)}", name)
            if status.code is Code.SKIP:
                skipped.add(name)
            elif status.code is not _SUCCESS:
                return _error(f"running PreScore plugin {_go_quote(name)}: {status.message()}", name)
        state.skip_score_plugins = frozenset(skipped)
        return Status.success()

    def run_score(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], *, detail: bool = True,
        positions: Sequence[int] | None = None, snapshot: Snapshot | None = None,
    ) -> ScoreTable | Status:
        """Score, normalize, range-check and weight; an ERROR status on any failure.

        Node-local plugins' raw scores are reused per NodeInfo, together with their weighted sum for
        the plugins that do not normalize; when ``positions`` (of ``nodes`` in ``snapshot``) are
        given they come from the key's memo column.  With ``detail=False`` only the totals are
        computed.
        """
        active = [(name, plugin) for name, plugin in self.score if name not in state.skip_score_plugins]
        local, keys = self._local_score_plugins(state, pod, active)
        try:
            view = self._local_view(state, pod, nodes, active, local, keys, positions, snapshot) if local else None
        except _PluginFailure as failure:
            return _error(f"running Score plugins: plugin {_go_quote(failure.plugin)} failed with: "
                          f"{failure.error}", failure.plugin)
        except _OutOfRange as bad:
            return _range_error(bad.plugin, bad.value)
        totals = view.totals if view is not None else [0] * len(nodes)
        columns: dict[str, list[int]] = {}
        for index, (name, plugin) in enumerate(active):
            if index in local:
                assert view is not None
                if name not in self._normalizing:  # already in the totals
                    if detail:
                        weight = self.weights[name]
                        columns[name] = [value * weight for value in view.raw(local.index(index))]
                    continue
                raw = view.raw(local.index(index))
            else:
                try:
                    raw = self._compute(state, pod, nodes, name, plugin)
                except _PluginFailure as failure:
                    return _error(f"running Score plugins: plugin {_go_quote(name)} failed with: "
                                  f"{failure.error}", name)
            weighted = self._finish_column(state, pod, nodes, name, plugin, raw)
            if isinstance(weighted, Status):
                return weighted
            totals = list(map(add, totals, weighted))
            if detail:
                columns[name] = weighted
        names = tuple(name for name, _ in active) if detail else ()
        return ScoreTable(names, tuple(columns[name] for name in names), totals)

    def _finish_column(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], name: str, plugin: ScorePlugin,
        raw: list[int],
    ) -> list[int] | Status:
        """Normalize (if the plugin does), range-check and weight one plugin's scores."""
        if name in self._normalizing:
            normalized = self._normalize(state, pod, nodes, name, cast(ScoreExtensions, plugin), raw)
            if isinstance(normalized, Status):
                return normalized
            raw = normalized
        if not raw:
            return raw
        if not (min(raw) >= 0 and max(raw) <= 100):
            return _range_error(name, next(v for v in raw if not 0 <= v <= 100))
        weight = self.weights[name]
        if weight == 1:
            return raw
        first = raw[0]
        if raw.count(first) == len(raw):  # common: every node scored alike
            return [first * weight] * len(raw)
        return [value * weight for value in raw]

    def _local_score_plugins(
        self, state: CycleState, pod: Pod, active: Sequence[tuple[str, ScorePlugin]]
    ) -> tuple[list[int], tuple[object, ...]]:
        """Indexes of the active plugins whose scores can be reused, and the table key for them."""
        local: list[int] = []
        keys: list[object] = ["score"]
        for index, (name, plugin) in enumerate(active):
            if name not in self._node_local_scores:
                continue
            key = _memo_key(cast(NodeLocalScore, plugin).score_key, state, pod)
            if key is not None:
                local.append(index)
                keys.append((name, key))
        return local, tuple(keys)

    def _local_scorer(
        self, state: CycleState, pod: Pod, active: Sequence[tuple[str, ScorePlugin]], local: Sequence[int],
    ) -> Callable[[NodeInfo], tuple[tuple[int, ...], int]]:
        """Scores one node with the reusable plugins: their raw scores and the weighted sum of those
        that do not normalize (range-checked here, since that sum is all that is kept of them)."""
        scorers = [(active[i][0], active[i][1].score) for i in local]
        summed = [(position, active[i][0], self.weights[active[i][0]]) for position, i in enumerate(local)
                  if active[i][0] not in self._normalizing]

        def score(node: NodeInfo) -> tuple[tuple[int, ...], int]:
            raw = tuple(_score_node(scorers, state, pod, node))
            partial = 0
            for position, name, weight in summed:
                value = raw[position]
                if not 0 <= value <= 100:
                    raise _OutOfRange(name, value)
                partial += value * weight
            return raw, partial

        return score

    def _local_view(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], active: Sequence[tuple[str, ScorePlugin]],
        local: Sequence[int], keys: tuple[object, ...], positions: Sequence[int] | None, snapshot: Snapshot | None,
    ) -> _LocalView:
        """The reusable plugins' results for ``nodes``: from the key's column when positions are known,
        else from its id table."""
        score = self._local_scorer(state, pod, active, local)
        if positions is not None and snapshot is not None:
            column = self._memo.column(("column", *keys), lambda: ScoreColumn(len(local)), snapshot.num_nodes,
                                       len(positions))
            if column is not None:
                return self._column_view(column, snapshot, positions, score)
        table = self._memo.table(keys)
        entries: list[Any] = list(map(table.get, map(id, nodes)))
        for i, (entry, node) in enumerate(zip(entries, nodes, strict=True)):
            if entry is None or entry[0] is not node:
                raw, partial = score(node)
                entries[i] = table[id(node)] = (node, raw, partial)
        return _LocalView([entry[2] for entry in entries], lambda j: [entry[1][j] for entry in entries])

    @staticmethod
    def _column_view(
        column: ScoreColumn, snapshot: Snapshot, positions: Sequence[int],
        score: Callable[[NodeInfo], tuple[tuple[int, ...], int]],
    ) -> _LocalView:
        def checked(node: NodeInfo) -> tuple[tuple[int, ...], int]:
            try:
                return score(node)
            except (_PluginFailure, _OutOfRange) as exc:
                raise ScoreFailure(exc) from exc

        column.sync(snapshot)
        try:
            column.gather(snapshot, positions, checked)
        except ScoreFailure as failure:
            raise failure.error from None
        raw = column.raw
        return _LocalView(list(map(column.partial.__getitem__, positions)),
                          lambda j: list(map(raw[j].__getitem__, positions)))

    @staticmethod
    def _compute(state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], name: str, plugin: ScorePlugin) -> list[int]:
        score = plugin.score
        try:
            values = [score(state, pod, node) for node in nodes]
        except Exception as exc:
            raise _PluginFailure(name, exc) from exc
        wrong = _not_int(values)
        if wrong is not None:
            raise _PluginFailure(name, _WrongScore(wrong[0]))
        return values

    @staticmethod
    def _normalize(
        state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], name: str, plugin: ScoreExtensions, raw: list[int]
    ) -> list[int] | Status:
        failed = f"running Normalize on Score plugins: plugin {_go_quote(name)} failed with: "
        try:
            values: object = plugin.normalize_score(state, pod, nodes, raw)
        except Exception as exc:
            return _error(f"{failed}{exc}", name)
        if not isinstance(values, list) or len(values) != len(raw):
            return _error(f"{failed}{_returned(values, f'a list of {len(raw)} int scores')}", name)
        wrong = _not_int(values)
        if wrong is not None:
            return _error(f"{failed}{_returned(wrong[0], 'an int score')}", name)
        return values

    # --- reserve, permit, binding -------------------------------------------------------------

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Reserve plugins in order; the first failure stops (rejections keep their code)."""
        return _first_failure("Reserve", [(name, p.reserve) for name, p in self.reserve], state, pod, node_name)

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve every Reserve plugin in reverse order; their exceptions are swallowed."""
        for _name, plugin in reversed(self.reserve):
            try:
                plugin.unreserve(state, pod, node_name)
            except Exception:
                continue

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | dict[str, float]:
        """Success, a rejection/error, or the plugins that asked to wait with their (capped) timeouts."""
        waits: dict[str, float] = {}
        for name, plugin in self.permit:
            try:
                outcome: object = plugin.permit(state, pod, node_name)
            except Exception as exc:
                return _error(f"running Permit plugin {_go_quote(name)}: {exc}", name)
            if not isinstance(outcome, Status | Wait):
                return _error(f"running Permit plugin {_go_quote(name)}: {_returned(outcome, 'a Status or a Wait')}",
                              name)
            if isinstance(outcome, Wait):
                waits[name] = min(max(outcome.timeout, 0.0), MAX_PERMIT_TIMEOUT)
                continue
            if outcome.code is Code.WAIT:
                waits[name] = MAX_PERMIT_TIMEOUT
                continue
            if outcome.code is not _SUCCESS:
                if outcome.code in _REJECTED:
                    return outcome.with_plugin(name)
                return _error(f"running Permit plugin {_go_quote(name)}: {outcome.message()}", name)
        return waits if waits else Status.success()

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBind plugins in order; the first failure stops (rejections keep their code)."""
        return _first_failure("PreBind", [(name, p.pre_bind) for name, p in self.pre_bind], state, pod, node_name)

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind plugins in order until one does not skip; SKIP when all skip."""
        for name, plugin in self.bind:
            try:
                status: object = plugin.bind(state, pod, node_name)
            except Exception as exc:
                return _error(f"running Bind plugin {_go_quote(name)}: {exc}", name)
            if not isinstance(status, Status):
                return _error(f"running Bind plugin {_go_quote(name)}: {_returned(status)}", name)
            if status.code is Code.SKIP:
                continue
            if status.code is _SUCCESS:
                return status
            if status.code in _REJECTED:
                return status.with_plugin(name)
            return _error(f"running Bind plugin {_go_quote(name)}: {status.message()}", name)
        return Status.skip()

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for _name, plugin in self.post_bind:
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:
                continue
