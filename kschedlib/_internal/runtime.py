"""The runtime that runs one profile's plugins at each extension point.

This is the one place where a plugin's exception becomes an ``ERROR`` status
and where codes a point does not accept are turned into errors, with
kube-scheduler's wording (reference §2.1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, NamedTuple, cast, final

from kschedlib._internal.profile import BuiltProfile
from kschedlib.framework.cycle_state import CycleState
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
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.results import NodeScore, PostFilterResult, PreFilterResult, Wait
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["FilterRunner", "PreFilterOutcome", "ProfileRuntime", "ScoreTable"]

_SUCCESS: Final = Code.SUCCESS
_ERROR: Final = Code.ERROR
_REJECTED: Final = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})
MAX_PERMIT_TIMEOUT: Final = 15 * 60.0

FilterRunner = Callable[[CycleState, Pod, NodeInfo], Status]


class PreFilterOutcome(NamedTuple):
    """The merged node narrowing (``None`` = all nodes) and the status to act on."""

    result: PreFilterResult | None
    status: Status


class ScoreTable(NamedTuple):
    """Weighted scores: ``plugins[i]`` gave ``scores[i][j]`` to node ``j``; ``totals[j]`` sums them."""

    plugins: tuple[str, ...]
    scores: tuple[list[int], ...]
    totals: list[int]


def _error(message: str, plugin: str) -> Status:
    return Status(Code.ERROR, (message,), plugin)


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _slice(names: Sequence[str]) -> str:
    return "[" + " ".join(names) + "]"


@final
class ProfileRuntime:
    """One profile's plugins, ready to run; built once per scheduler."""

    def __init__(self, profile: BuiltProfile) -> None:
        self.profile = profile
        self.scheduler_name = profile.scheduler_name
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

    @property
    def percentage_of_nodes_to_score(self) -> int | None:
        return self.profile.percentage_of_nodes_to_score

    # --- queue --------------------------------------------------------------------------------

    def run_pre_enqueue(self, pod: Pod) -> Status:
        """The first non-success PreEnqueue status (with its plugin), or success."""
        for name, plugin in self.pre_enqueue:
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as exc:
                return _error(f"running PreEnqueue plugin {_go_quote(name)}: {exc}", name)
            if status.code is not _SUCCESS:
                return status.with_plugin(name)
        return Status.success()

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self.queue_sort.less(a, b)

    # --- filtering ----------------------------------------------------------------------------

    def run_pre_filter(self, state: CycleState, pod: Pod) -> PreFilterOutcome:
        """PreFilter with kube-scheduler's merge, skip and early-return rules."""
        result: PreFilterResult | None = None
        narrowing: list[str] = []
        returned: Status = Status.success()
        skipped: set[str] = set()
        for name, plugin in self.pre_filter:
            try:
                outcome = plugin.pre_filter(state, pod)
            except Exception as exc:
                return PreFilterOutcome(None, _error(f"running PreFilter plugin {_go_quote(name)}: {exc}", name))
            if isinstance(outcome, PreFilterResult):
                status, narrowed = Status.success(), outcome
            else:
                status, narrowed = outcome, None
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
                return PreFilterOutcome(result, Status.unresolvable(message))
        state.skip_filter_plugins = frozenset(skipped)
        return PreFilterOutcome(result, returned)

    def filter_runner(self, state: CycleState) -> FilterRunner:
        """A function running the non-skipped Filter plugins on one node; first failure wins."""
        active = tuple((name, plugin.filter) for name, plugin in self.filter
                       if name not in state.skip_filter_plugins)
        success = Status.success()

        def run(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
            for name, check in active:
                try:
                    status = check(state, pod, node_info)
                except Exception as exc:
                    return _error(f"running {_go_quote(name)} filter plugin: {exc}", name)
                code = status.code
                if code is not _SUCCESS:
                    if code in _REJECTED:
                        return status if status.plugin == name else status.with_plugin(name)
                    return _error(f"running {_go_quote(name)} filter plugin: {status.message()}", name)
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
                status = (ext.add_pod if add else ext.remove_pod)(state, pod, pod_info, node_info)
            except Exception as exc:
                return _error(f"running {verb} on PreFilter plugin {_go_quote(name)}: {exc}", name)
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
                result = plugin.post_filter(state, pod, statuses)
            except Exception as exc:
                return PostFilterResult(_error(str(exc), name))
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
                status = plugin.pre_score(state, pod, nodes)
            except Exception as exc:
                return _error(f"running PreScore plugin {_go_quote(name)}: {exc}", name)
            if status.code is Code.SKIP:
                skipped.add(name)
            elif status.code is not _SUCCESS:
                return _error(f"running PreScore plugin {_go_quote(name)}: {status.message()}", name)
        state.skip_score_plugins = frozenset(skipped)
        return Status.success()

    def run_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> ScoreTable | Status:
        """Score, normalize, range-check and weight; an ERROR status on any failure."""
        names: list[str] = []
        columns: list[list[int]] = []
        totals = [0] * len(nodes)
        for name, plugin in self.score:
            if name in state.skip_score_plugins:
                continue
            raw = self._score_one(state, pod, nodes, name, plugin)
            if isinstance(raw, Status):
                return raw
            weight = self.weights[name]
            for index, value in enumerate(raw):
                if not 0 <= value <= 100:
                    return _error(
                        f"applying score defaultWeights on Score plugins: plugin {_go_quote(name)} returns an "
                        f"invalid score {value}, it should in the range of [0, 100] after normalizing", name)
                weighted = value * weight
                raw[index] = weighted
                totals[index] += weighted
            names.append(name)
            columns.append(raw)
        return ScoreTable(tuple(names), tuple(columns), totals)

    def _score_one(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], name: str, plugin: ScorePlugin
    ) -> list[int] | Status:
        score = plugin.score
        try:
            raw = [score(state, pod, node) for node in nodes]
        except Exception as exc:
            return _error(f"running Score plugins: plugin {_go_quote(name)} failed with: {exc}", name)
        if not isinstance(plugin, ScoreExtensions):
            return raw
        entries = [NodeScore(node.name, value) for node, value in zip(nodes, raw, strict=True)]
        try:
            status = plugin.normalize_score(state, pod, entries)
        except Exception as exc:
            status = Status.from_error(str(exc))
        if status.code is not _SUCCESS:
            return _error(f"running Normalize on Score plugins: plugin {_go_quote(name)} failed with: "
                          f"{status.message()}", name)
        return [entry.score for entry in entries]

    # --- reserve, permit, binding -------------------------------------------------------------

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for name, plugin in self.reserve:
            try:
                status = plugin.reserve(state, pod, node_name)
            except Exception as exc:
                return _error(f"running Reserve plugin {_go_quote(name)}: {exc}", name)
            if status.code is not _SUCCESS:
                if status.code in _REJECTED:
                    return status.with_plugin(name)
                return _error(f"running Reserve plugin {_go_quote(name)}: {status.message()}", name)
        return Status.success()

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
                outcome = plugin.permit(state, pod, node_name)
            except Exception as exc:
                return _error(f"running Permit plugin {_go_quote(name)}: {exc}", name)
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
        for name, plugin in self.pre_bind:
            try:
                status = plugin.pre_bind(state, pod, node_name)
            except Exception as exc:
                return _error(f"running PreBind plugin {_go_quote(name)}: {exc}", name)
            if status.code is not _SUCCESS:
                if status.code in _REJECTED:
                    return status.with_plugin(name)
                return _error(f"running PreBind plugin {_go_quote(name)}: {status.message()}", name)
        return Status.success()

    def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind plugins in order until one does not skip; SKIP when all skip."""
        for name, plugin in self.bind:
            try:
                status = plugin.bind(state, pod, node_name)
            except Exception as exc:
                return _error(f"running Bind plugin {_go_quote(name)}: {exc}", name)
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
