"""The runtime that runs one profile's plugins at each extension point: their semantics only.

Here a plugin's exception becomes an ``ERROR`` status and codes a point does not accept are
turned into errors, in kube-scheduler's wording (``runtime/framework.go``: ``RunFilterPlugins``
and its siblings), written once in :mod:`~kschedlib._internal.plugin_errors`.  A return value of
the wrong type (``None``, a bool, a string, a float score) is an ``ERROR`` status too, naming the
plugin, the extension point and the value, checked where the value is used.  Reusing results
that did not change is the reuse layer's job (:mod:`~kschedlib._internal.reuse`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import add
from typing import Final, NamedTuple, cast, final

from kschedlib._internal.plugin_errors import (
    FilterRunner,
    OutOfRange,
    PluginFailure,
    WrongScore,
    WrongScores,
    error,
    go_quote,
    normalize_error,
    not_int,
    plain_filter_runner,
    point_error,
    range_error,
    score_error,
    wrong_return,
)
from kschedlib._internal.profile import BuiltProfile
from kschedlib._internal.reuse.fast_path import FilterPlan, Reuse
from kschedlib._internal.reuse.memo import memo_key
from kschedlib.framework._bounded import BoundedLRU
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
from kschedlib.framework.memo import BatchScore, PureNormalize
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.results import PostFilterResult, PreFilterResult, Wait
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import REJECTED_CODES, Code, Status
from kschedlib.model.objects import Pod
from kschedlib.plugins import priority_sort
from kschedlib.results import ScoreTable
from kschedlib.versions import Switches

__all__ = ["FilterRunner", "PreFilterOutcome", "ProfileRuntime"]

_SUCCESS: Final = Code.SUCCESS
_ERROR: Final = Code.ERROR
_SKIP: Final = Code.SKIP
_WAIT: Final = Code.WAIT
_UNSCHEDULABLE: Final = Code.UNSCHEDULABLE
_UNRESOLVABLE: Final = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
_REJECTED: Final = REJECTED_CODES
_SUCCESS_STATUS: Final = Status.success()
_SKIP_STATUS: Final = Status.skip()
MAX_PERMIT_TIMEOUT: Final = 15 * 60.0
_PLAIN_RUNNERS: Final = 64
"""Filter runners kept, one per set of Filter plugins a PreFilter skipped."""
_PURE_COLUMNS: Final = 4096
"""Normalized uniform columns kept (one per plugin, key, raw score and node count)."""
_SHARED_INTS: Final = 1 << 16
"""Distinct score totals remembered for sharing (totals are bounded by the plugins' weights)."""



_SHIFTS: Final = 64
"""Shift tables kept (one per sum of alike columns; a profile's weights bound how many there are)."""


@final
class _Shifted(dict[int, int]):
    """value -> the one shared int object of ``value + shift`` (filled on first look-up)."""

    __slots__ = ("_ints", "_shift")

    def __init__(self, shift: int, ints: dict[int, int]) -> None:
        super().__init__()
        self._shift = shift
        self._ints = ints

    def __missing__(self, value: int) -> int:
        total = value + self._shift
        shared = self[value] = self._ints.setdefault(total, total)
        return shared


class PreFilterOutcome(NamedTuple):
    """The merged node narrowing (``None`` = all nodes) and the status to act on."""

    result: PreFilterResult | None
    status: Status
    narrowing: tuple[str, ...] = ()
    """The plugins whose PreFilterResult named nodes (the plugins an absent node did not satisfy)."""


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
            return point_error(point, name, exc)
        if not isinstance(status, Status):
            return point_error(point, name, wrong_return(status))
        if status.code is not _SUCCESS:
            if status.code in _REJECTED:
                return status.with_plugin(name)
            return point_error(point, name, status.message())
    return Status.success()


@final
class ProfileRuntime:
    """One profile's plugins, ready to run; built once per scheduler."""

    def __init__(self, profile: BuiltProfile, extenders: Sequence[Extender] = (),
                 switches: Switches | None = None) -> None:
        self.profile = profile
        switches = switches if switches is not None else Switches()
        self.absent_nodes_in_fit_error = switches.absent_nodes_in_fit_error
        """Nodes left out by a PreFilterResult get an explicit status on a FitError (v1.32)."""
        self.prefilter_narrowing_rejects = switches.prefilter_narrowing_rejects
        """The plugins whose PreFilterResult narrowed the nodes count among a FitError's rejectors (v1.31)."""
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
        self.sort_key = priority_sort.sort_key if type(self.queue_sort) is priority_sort.PrioritySort else None
        """:meth:`less` as a key, for the in-tree PrioritySort (whose order it is exactly)."""
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
        self._normalizing = frozenset(name for name, p in self.score if isinstance(p, ScoreExtensions))
        self._batch = frozenset(name for name, p in self.score if isinstance(p, BatchScore))
        self.reuse = Reuse(self.filter, self.score, self.weights)
        """The reuse layer: memoized filter runners, the column search, local score views."""
        self._plain_runners: BoundedLRU[frozenset[str], FilterRunner] = BoundedLRU(_PLAIN_RUNNERS)
        self._ints: dict[int, int] = {}
        """One object per score total seen (see :meth:`_shared`)."""
        self._shifted: dict[int, _Shifted] = {}
        """Per shift, each total already seen -> the shared object of it plus the shift."""
        self._pure: dict[tuple[str, object, int, int], tuple[list[int], int | None]] = {}
        """Weighted columns of purely normalizing plugins for uniform raw scores (see :meth:`_pure_column`)."""

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
                return point_error("PreEnqueue", name, exc)
            if not isinstance(status, Status):
                return point_error("PreEnqueue", name, wrong_return(status))
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
                return PreFilterOutcome(None, point_error("PreFilter", name, exc))
            if outcome is _SKIP_STATUS:  # the shared statuses most plugins return: decided at once
                skipped.add(name)
                continue
            if outcome is _SUCCESS_STATUS:
                continue
            if isinstance(outcome, PreFilterResult):
                status, narrowed = Status.success(), outcome
            elif isinstance(outcome, Status):
                status, narrowed = outcome, None
            else:
                wrong = wrong_return(outcome, "a Status or a PreFilterResult")
                return PreFilterOutcome(None, point_error("PreFilter", name, wrong))
            code = status.code
            if code is _SKIP:
                skipped.add(name)
                continue
            if code is _UNRESOLVABLE:
                return PreFilterOutcome(None, status.with_plugin(name))
            if code is _UNSCHEDULABLE:
                returned = status.with_plugin(name)
                continue
            if code is not _SUCCESS:
                return PreFilterOutcome(None, point_error("PreFilter", name, status.message()))
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

    def filter_runner(self, state: CycleState, pod: Pod | None = None, plan: FilterPlan | None = None) -> FilterRunner:
        """A function running the non-skipped Filter plugins on one node; first failure wins.

        With ``pod`` given and every active plugin a :class:`NodeLocalFilter` with a key, verdicts
        are reused for NodeInfos already seen with the same keys.
        """
        if pod is None:
            skipped = state.skip_filter_plugins
            run = self._plain_runners.get(skipped)
            if run is None:
                run = plain_filter_runner(tuple((name, plugin.filter) for name, plugin in self.filter
                                                if name not in skipped))
                self._plain_runners.put(skipped, run)
            return run
        if plan is None:
            plan = self.reuse.filter_plan(state, pod)
        return self.reuse.memoized(plan, plan.run if plan.run is not None else plain_filter_runner(plan.active))

    def pre_filter_extensions_listen(self, state: CycleState) -> bool:
        """Whether AddPod/RemovePod reach any plugin in this cycle (one that did not skip PreFilter)."""
        skipped = state.skip_filter_plugins
        return any(name not in skipped for name, _ in self.pre_filter_extensions)

    def node_local_filter_key(self, state: CycleState, pod: Pod) -> object | None:
        """A key under which this cycle's Filter verdict on a node is a function of its NodeInfo alone.

        ``None`` unless every active Filter plugin is node-local with a key, none reads outside state
        and no PreFilter extension hears AddPod/RemovePod (adding or removing pods then changes
        nothing a verdict reads but the NodeInfo).
        """
        plan = self.reuse.filter_plan(state, pod)
        if plan.local < len(plan.active) or plan.external or self.pre_filter_extensions_listen(state):
            return None
        return plan.key

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
                return point_error(f"{verb} on PreFilter", name, exc)
            if not isinstance(status, Status):
                return point_error(f"{verb} on PreFilter", name, wrong_return(status))
            if status.code is not _SUCCESS:
                return point_error(f"{verb} on PreFilter", name, status.message())
        return Status.success()

    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> PostFilterResult | None:
        """PostFilter plugins in order (kube's ``RunPostFilterPlugins``); ``None`` when there are none."""
        if not self.post_filter:
            return None
        kept: PostFilterResult | None = None
        reasons: list[str] = []
        first_rejector = ""
        for name, plugin in self.post_filter:
            try:
                result: object = plugin.post_filter(state, pod, statuses)
            except Exception as exc:
                return PostFilterResult(error(str(exc), name))
            if not isinstance(result, PostFilterResult) or not isinstance(result.status, Status):
                wrong = wrong_return(result, "a PostFilterResult holding a Status")
                return PostFilterResult(point_error("PostFilter", name, wrong))
            status = result.status
            if status.code is _SUCCESS:
                return result
            if status.code is _UNRESOLVABLE:
                return PostFilterResult(status.with_plugin(name), result.nominated_node_name, result.victims)
            if status.code not in _REJECTED:
                return PostFilterResult(error(status.message(), name))
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
                return point_error("PreScore", name, exc)
            if status is _SUCCESS_STATUS:  # the shared statuses most plugins return: decided at once
                continue
            if status is _SKIP_STATUS:
                skipped.add(name)
                continue
            if not isinstance(status, Status):
                return point_error("PreScore", name, wrong_return(status))
            if status.code is _SKIP:
                skipped.add(name)
            elif status.code is not _SUCCESS:
                return point_error("PreScore", name, status.message())
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
        active = self.reuse.score_plugins(state.skip_score_plugins)
        local, keys = self.reuse.local_score_plugins(state, pod, active)
        try:
            view = self.reuse.local_view(state, pod, nodes, active, local, keys, positions, snapshot) if local else None
        except PluginFailure as failure:
            return score_error(failure.plugin, failure.error)
        except OutOfRange as bad:
            return range_error(bad.plugin, bad.value)
        totals = view.totals if view is not None else [0] * len(nodes)
        summed = False
        shift = 0  # the sum of columns alike on every node, added with the sharing pass at the end
        columns: dict[str, list[int]] = {}
        for index, (name, plugin) in enumerate(active):
            if index in local:
                assert view is not None
                if name not in self._normalizing:  # already in the totals
                    if detail:
                        weight = self.weights[name]
                        columns[name] = [value * weight for value in view.raw(local.index(index))]
                    continue
                j = local.index(index)
                value = view.uniform(j)
                pure = self._pure_column(state, pod, nodes, name, plugin, value) if value is not None else None
                if isinstance(pure, Status):
                    return pure
                if pure is not None:
                    column, alike = pure
                    if alike is None:
                        totals = list(map(add, totals, column))
                    else:
                        shift += alike
                    summed = summed or alike != 0
                    if detail:
                        columns[name] = list(column)
                    continue
                raw = view.raw(j)
            else:
                try:
                    raw = self._compute(state, pod, nodes, name, plugin)
                except PluginFailure as failure:
                    return score_error(name, failure.error)
            weighted = self._finish_column(state, pod, nodes, name, plugin, raw)
            if isinstance(weighted, Status):
                return weighted
            if any(weighted):  # a column of zeros (e.g. DynamicResources for a pod without claims) adds nothing
                totals = list(map(add, totals, weighted))
                summed = True
            if detail:
                columns[name] = weighted
        if summed:
            totals = self._shared(totals, shift)
        names = tuple(name for name, _ in active) if detail else ()
        return ScoreTable(names, tuple(columns[name] for name in names), totals)

    def _pure_column(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], name: str, plugin: ScorePlugin, value: int,
    ) -> tuple[list[int], int | None] | Status | None:
        """The weighted column of a plugin that normalizes purely (:class:`PureNormalize`) and scored every
        node ``value``, and its one value when it is the same everywhere.

        Normalized once per (normalize key, value, node count) and reused; ``None`` when the plugin
        gives no key for this pod.  An error is returned, never kept.
        """
        key = memo_key(cast(PureNormalize, plugin).normalize_key, state, pod)
        if key is None:
            return None
        entry = (name, key, value, len(nodes))
        found = self._pure.get(entry)
        if found is None:
            weighted = self._finish_column(state, pod, nodes, name, plugin, [value] * len(nodes))
            if isinstance(weighted, Status):
                return weighted
            first = weighted[0]
            found = (list(weighted), first if weighted.count(first) == len(weighted) else None)
            if len(self._pure) >= _PURE_COLUMNS:
                self._pure.clear()
            self._pure[entry] = found
        return found

    def _shared(self, totals: list[int], shift: int = 0) -> list[int]:
        """``totals`` each plus ``shift``, holding one int object per distinct value.

        Every result keeps its cycle's totals (hundreds of nodes each), and a sum is a new int object
        per node: sharing them keeps a long run's results to a pointer per node (ints are immutable,
        so nothing else can tell).  Each value's shifted and shared total is looked up in one pass
        (a table per shift), instead of one pass adding and another sharing.
        """
        if len(self._ints) > _SHARED_INTS:
            self._ints.clear()
            self._shifted.clear()
        table = self._shifted.get(shift)
        if table is None:
            if len(self._shifted) >= _SHIFTS:
                self._shifted.clear()
            table = self._shifted[shift] = _Shifted(shift, self._ints)
        return list(map(table.__getitem__, totals))

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
        first = raw[0]
        alike = raw.count(first) == len(raw)  # common: every node scored alike (the values are ints here)
        if not (0 <= first <= 100 if alike else min(raw) >= 0 and max(raw) <= 100):
            return range_error(name, next(v for v in raw if not 0 <= v <= 100))
        weight = self.weights[name]
        if weight == 1:
            return raw
        if alike:
            return [first * weight] * len(raw)
        return [value * weight for value in raw]

    def _compute(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], name: str,
                 plugin: ScorePlugin) -> list[int]:
        """The raw scores of ``nodes``: node by node, or in one call from a :class:`BatchScore` plugin."""
        if name in self._batch:
            try:
                batch: object = cast(BatchScore, plugin).score_nodes(state, pod, nodes)
            except Exception as exc:
                raise PluginFailure(name, exc) from exc
            if type(batch) is not list or len(batch) != len(nodes):
                raise PluginFailure(name, WrongScores(batch, len(nodes)))
            values: list[int] = batch
        else:
            score = plugin.score
            try:
                values = [score(state, pod, node) for node in nodes]
            except Exception as exc:
                raise PluginFailure(name, exc) from exc
        wrong = not_int(values)
        if wrong is not None:
            raise PluginFailure(name, WrongScore(wrong[0]))
        return values

    @staticmethod
    def _normalize(
        state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], name: str, plugin: ScoreExtensions, raw: list[int]
    ) -> list[int] | Status:
        try:
            values: object = plugin.normalize_score(state, pod, nodes, raw)
        except Exception as exc:
            return normalize_error(name, exc)
        if not isinstance(values, list) or len(values) != len(raw):
            return normalize_error(name, wrong_return(values, f"a list of {len(raw)} int scores"))
        wrong = not_int(values)
        if wrong is not None:
            return normalize_error(name, wrong_return(wrong[0], "an int score"))
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
                return point_error("Permit", name, exc)
            if not isinstance(outcome, Status | Wait):
                return point_error("Permit", name, wrong_return(outcome, "a Status or a Wait"))
            if isinstance(outcome, Wait):
                waits[name] = min(max(outcome.timeout, 0.0), MAX_PERMIT_TIMEOUT)
                continue
            if outcome.code is _WAIT:
                waits[name] = MAX_PERMIT_TIMEOUT
                continue
            if outcome.code is not _SUCCESS:
                if outcome.code in _REJECTED:
                    return outcome.with_plugin(name)
                return point_error("Permit", name, outcome.message())
        return waits if waits else Status.success()

    def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBind plugins in order; the first failure stops (rejections keep their code)."""
        return _first_failure("PreBind", [(name, p.pre_bind) for name, p in self.pre_bind], state, pod, node_name)

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success when some PreBind plugin will do work, Skip when none will, Error when one fails."""
        status = Status.skip()
        for name, plugin in self.pre_bind:
            try:
                outcome: object = plugin.pre_bind_pre_flight(state, pod, node_name)
            except Exception as exc:
                return error(f"running PreBindPreFlight {go_quote(name)}: {exc}", name)
            if not isinstance(outcome, Status):
                return error(f"running PreBindPreFlight {go_quote(name)}: {wrong_return(outcome)}", name)
            if outcome.code is _SUCCESS:
                status = outcome
            elif outcome.code in _REJECTED:
                return error(f"PreBindPreFlight {name} returned {go_quote(outcome.code.label)}, which is "
                              "unsupported. It is supposed to return Success, Skip, or Error status", name)
            elif outcome.code is not _SKIP:
                return error(f"running PreBindPreFlight {go_quote(name)}: {outcome.message()}", name)
        return status

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind plugins in order until one does not skip; SKIP when all skip."""
        for name, plugin in self.bind:
            try:
                status: object = plugin.bind(state, pod, node_name)
            except Exception as exc:
                return point_error("Bind", name, exc)
            if not isinstance(status, Status):
                return point_error("Bind", name, wrong_return(status))
            if status.code is _SKIP:
                continue
            if status.code is _SUCCESS:
                return status
            if status.code in _REJECTED:
                return status.with_plugin(name)
            return point_error("Bind", name, status.message())
        return Status.skip()

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for _name, plugin in self.post_bind:
            try:
                plugin.post_bind(state, pod, node_name)
            except Exception:
                continue
