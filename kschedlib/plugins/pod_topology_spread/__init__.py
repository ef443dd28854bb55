"""PodTopologySpread: spread matching pods evenly across topology domains (zones, hosts, ...).

A ``DoNotSchedule`` constraint filters: placing the pod in a domain must not
make that domain hold more than ``maxSkew`` matching pods above the least
loaded domain.  A ``ScheduleAnyway`` constraint scores: domains with fewer
matching pods win (see :mod:`kschedlib.plugins.pod_topology_spread.scoring`).
Pods without constraints get the configured default constraints, selecting
the pods that share the pod's Services and controller.

PreFilter counts matching pods per domain once per cycle and keeps, per
topology key, kube-scheduler's two "critical paths" (the two least loaded
domains).  The counts are carried over from earlier cycles (see
:mod:`kschedlib.plugins.pod_topology_spread.tally`): only the nodes replaced
since are recounted.  AddPod/RemovePod maintain the paths with
kube-scheduler's update rule, which is approximate after several updates and
reproduced as is.  Filter is then one or two dictionary reads per constraint.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import ClassVar, Final

from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ActionType, ClusterEventWithHint, EnqueueExtensions, node_events, pod_events
from kschedlib.framework.extension_points import (
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import LabelKeyedFilter
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Status
from kschedlib.model.objects import Node, Pod
from kschedlib.plugins.pod_topology_spread.args import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
    decode_args,
    validate_args,
)
from kschedlib.plugins.pod_topology_spread.common import (
    NodeInclusion,
    SpreadConstraint,
    default_selector,
    has_all_keys,
    spread_constraints,
    with_selector,
)
from kschedlib.plugins.pod_topology_spread.counting import CountCache
from kschedlib.plugins.pod_topology_spread.hints import SpreadHints, SpreadHintsV130
from kschedlib.plugins.pod_topology_spread.scoring import (
    PRE_SCORE_KEY,
    build_pre_score_state,
    normalized_spread_scores,
    score_node,
)
from kschedlib.plugins.pod_topology_spread.tally import TallyStore, count_domains

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "decode_args",
]

ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
# attributed already, so that the runtime need not copy them for every rejected node
_SKEW: Final = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin="PodTopologySpread")
_MISSING_LABEL: Final = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH, plugin="PodTopologySpread")
_FITS: Final = Status.success()
_MAX_INT32: Final = 2**31 - 1


@typing.final
class CriticalPaths:
    """kube-scheduler's two "critical paths" of one topology key: ``first_count`` is the minimum.

    Exact after PreFilter; AddPod/RemovePod keep it with kube-scheduler's update
    rule, which tracks only these two domains (good enough for one node's
    nominated pods or victims, and what must be reproduced).
    """

    __slots__ = ("first_count", "first_value", "second_count", "second_value")

    def __init__(self) -> None:
        self.first_value, self.first_count = "", _MAX_INT32
        self.second_value, self.second_count = "", _MAX_INT32

    def update(self, value: str, count: int) -> None:
        """Record that domain ``value`` now holds ``count`` matching pods."""
        if value in (self.first_value, self.second_value):
            if value == self.first_value:
                self.first_count = count
            else:
                self.second_count = count
            if self.first_count > self.second_count:
                self.first_value, self.first_count, self.second_value, self.second_count = (
                    self.second_value, self.second_count, self.first_value, self.first_count)
        elif count < self.first_count:
            self.second_value, self.second_count = self.first_value, self.first_count
            self.first_value, self.first_count = value, count
        elif count < self.second_count:
            self.second_value, self.second_count = value, count

    def copy(self) -> CriticalPaths:
        twin = CriticalPaths()
        twin.first_value, twin.first_count = self.first_value, self.first_count
        twin.second_value, twin.second_count = self.second_value, self.second_count
        return twin


_Check = tuple[str, dict[str, int] | None, int]
"""Per hard constraint: key, domain counts (``None``: no domain), most matching pods a domain may hold."""


@typing.final
class PreFilterState:
    """Hard constraints and matching-pod counts per (topology key, value); AddPod/RemovePod mutate it.

    Constraints with the same key share one count per domain.  ``domains`` (the
    number of domains per key) is fixed at PreFilter, and a key without any
    domain is absent from it.
    """

    __slots__ = ("checks", "constraints", "counts", "domains", "inclusion", "paths", "self_match")

    def __init__(
        self,
        inclusion: NodeInclusion,
        counts: dict[str, dict[str, int]],
        domains: dict[str, int],
        paths: dict[str, CriticalPaths],
        self_match: tuple[int, ...],
    ) -> None:
        self.inclusion = inclusion
        self.constraints = inclusion.constraints
        self.counts = counts
        self.domains = domains
        self.paths = paths
        self.self_match = self_match
        self.checks = self._checks()

    def _checks(self) -> tuple[_Check, ...]:
        """Per constraint, the ceiling a domain's count must not exceed for the pod to fit there.

        It is maxSkew - self-match + the global minimum (0 while fewer than
        ``minDomains`` domains exist); computed once here so Filter only compares.
        """
        domains, paths = self.domains, self.paths
        return tuple(
            (
                c.topology_key,
                self.counts[c.topology_key] if c.topology_key in domains else None,
                c.max_skew - matched
                + (paths[c.topology_key].first_count if domains.get(c.topology_key, 0) >= c.min_domains else 0),
            )
            for c, matched in zip(self.constraints, self.self_match, strict=True)
        )

    def clone(self) -> PreFilterState:
        counts = {key: dict(by_value) for key, by_value in self.counts.items()}
        paths = {key: p.copy() for key, p in self.paths.items()}
        return PreFilterState(self.inclusion, counts, self.domains, paths, self.self_match)

    def update(self, pod_to_schedule: Pod, pod: Pod, node: Node | None, delta: int) -> None:
        """Count ``pod`` on ``node`` (``delta`` +1) or stop counting it (-1), as AddPod/RemovePod do.

        Unlike PreFilter's count, this ignores ``deletionTimestamp`` and lets ``{}`` select the pod.
        """
        if node is None or pod.namespace != pod_to_schedule.namespace:
            return
        labels = node.labels
        if not has_all_keys(labels, (c.topology_key for c in self.constraints)):
            return
        eligible = self.inclusion.eligible(self.inclusion.standing(node))
        changed = False
        for i in eligible:
            c = self.constraints[i]
            if c.selects(pod.labels):
                by_value = self.counts[c.topology_key]
                value = labels[c.topology_key]
                count = by_value[value] = by_value.get(value, 0) + delta
                self.paths[c.topology_key].update(value, count)
                changed = True
        if changed:
            self.checks = self._checks()


PRE_FILTER_KEY: Final[StateKey[PreFilterState]] = StateKey("PreFilterPodTopologySpread")


def build_pre_filter_state(
    pod: Pod, constraints: tuple[SpreadConstraint, ...], snapshot: Snapshot, tallies: TallyStore
) -> PreFilterState:
    """Count matching pods per domain over every node that has all keys, for the constraints it counts for.

    Each domain a counted node belongs to exists even with 0 pods.  When several
    constraints share a key, a node contributes the count of the last one it counts for.
    """
    inclusion = NodeInclusion(pod, constraints)
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    tallied = count_domains(tallies, snapshot, pod.namespace, constraints, inclusion, keys, last_per_key=True)
    counts = {key: dict(tallied[key]) for key in keys}
    paths = {key: CriticalPaths() for key in keys}
    for key, by_value in counts.items():
        for value, n in by_value.items():
            paths[key].update(value, n)
    domains = {key: len(by_value) for key, by_value in counts.items() if by_value}
    self_match = tuple(int(c.selects(pod.labels)) for c in constraints)
    return PreFilterState(inclusion, counts, domains, paths, self_match)


def filter_node(state: PreFilterState, node: Node) -> Status:
    """Check every hard constraint on ``node``, in order.

    A node without the constraint's key is UnschedulableAndUnresolvable; a key
    without any domain is skipped; otherwise the node fails when its domain's
    count + self-match - global minimum exceeds maxSkew (the minimum reads 0
    while fewer than ``minDomains`` domains exist).
    """
    labels = node.labels
    for key, by_value, ceiling in state.checks:
        value = labels.get(key)
        if value is None:
            return _MISSING_LABEL
        if by_value is not None and by_value.get(value, 0) > ceiling:
            return _SKEW
    return _FITS


def _missing(key: StateKey[typing.Any]) -> str:
    return f'reading "{key.name}" from cycleState: not found'


@typing.final
class PodTopologySpread(
    PreFilterPlugin, PreFilterExtensions, FilterPlugin, LabelKeyedFilter, PreScorePlugin, ScorePlugin, ScoreExtensions,
    EnqueueExtensions,
):
    """Filters on ``DoNotSchedule`` constraints and scores on ``ScheduleAnyway`` ones."""

    name: ClassVar[str] = "PodTopologySpread"
    __slots__ = ("_cache", "_default_hard", "_default_soft", "_handle", "_system_defaulted", "_tallies")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (v1.30's or v1.36's)."""
        node_actions = ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
        if not self._handle.switches.narrow_queueing_hints:
            old = SpreadHintsV130(self._hard_constraints)
            return (pod_events(ActionType.ALL, old.after_pod_change), node_events(node_actions, old.after_node_change))
        hints = SpreadHints(self._hard_constraints)
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATION
        pod_actions |= ActionType.DELETE
        return (pod_events(pod_actions, hints.after_pod_change), node_events(node_actions, hints.after_node_change))

    def __init__(self, args: PodTopologySpreadArgs | None, handle: Handle) -> None:
        args = args if args is not None else PodTopologySpreadArgs()
        validate_args(args)
        self._handle = handle
        self._cache = CountCache()
        self._tallies = TallyStore()
        self._system_defaulted = args.defaulting_type == SYSTEM_DEFAULTING
        defaults = SYSTEM_DEFAULT_CONSTRAINTS if self._system_defaulted else args.default_constraints
        self._default_hard = spread_constraints(defaults, {}, DO_NOT_SCHEDULE)
        self._default_soft = spread_constraints(defaults, {}, SCHEDULE_ANYWAY)

    def _hard_constraints(self, pod: Pod) -> tuple[SpreadConstraint, ...]:
        """The constraints Filter judges the pod by: its own DoNotSchedule ones, else the defaults."""
        return self._constraints(pod, DO_NOT_SCHEDULE, self._default_hard)

    def _constraints(
        self, pod: Pod, action: str, defaults: tuple[SpreadConstraint, ...]
    ) -> tuple[SpreadConstraint, ...]:
        """The pod's own constraints for ``action``, else the defaults with the owners' selector."""
        if pod.topology_spread_constraints:
            return spread_constraints(pod.topology_spread_constraints, pod.labels, action)
        if not defaults:
            return ()
        selector = default_selector(pod, self._handle.owner_selectors(pod.namespace))
        return with_selector(defaults, selector) if selector is not None else ()

    # --- PreFilter / Filter ------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Count per domain for the hard constraints; Skip (at once) for a pod that has none."""
        if not pod.topology_spread_constraints and not self._default_hard:
            return Status.skip()
        constraints = self._constraints(pod, DO_NOT_SCHEDULE, self._default_hard)
        if not constraints:
            return Status.skip()
        snapshot = self._handle.snapshot
        state.write(PRE_FILTER_KEY, build_pre_filter_state(pod, constraints, snapshot, self._tallies))
        return Status.success()

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        return self._update(state, pod, pod_info_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._update(state, pod, pod_info_to_remove, node_info, -1)

    def _update(self, state: CycleState, pod: Pod, other: PodInfo, node_info: NodeInfo, delta: int) -> Status:
        """AddPod/RemovePod: the state was cloned for this evaluation, so it is updated in place."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.from_error(_missing(PRE_FILTER_KEY))
        s.update(pod, other.pod, node_info.node, delta)
        return Status.success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.from_error(_missing(PRE_FILTER_KEY))
        node = node_info.node
        if node is None:
            return Status.from_error("node not found")
        return filter_node(s, node)

    def filter_label_keys(self, state: CycleState, pod: Pod) -> tuple[str, ...] | None:
        """The hard constraints' topology keys: Filter reads nothing else of a node (see :func:`filter_node`)."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return None
        return tuple(dict.fromkeys(key for key, _, _ in s.checks))

    # --- PreScore / Score / NormalizeScore ---------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Count per domain for the soft constraints; Skip without any (or without nodes)."""
        snapshot = self._handle.snapshot
        if not snapshot.num_nodes:
            return Status.skip()
        if not pod.topology_spread_constraints and not self._default_soft:
            return Status.skip()
        constraints = self._constraints(pod, SCHEDULE_ANYWAY, self._default_soft)
        if not constraints:
            return Status.skip()
        require_all = bool(pod.topology_spread_constraints) or not self._system_defaulted
        prepared = build_pre_score_state(pod, constraints, require_all, nodes, snapshot, self._cache, self._tallies,
                                         per_constraint=self._handle.switches.topology_spread_per_constraint)
        state.write(PRE_SCORE_KEY, prepared)
        return Status.success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            raise LookupError("error " + _missing(PRE_SCORE_KEY))
        return score_node(s, node_info)

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            raise LookupError("error " + _missing(PRE_SCORE_KEY))
        return normalized_spread_scores(s, nodes, scores)
