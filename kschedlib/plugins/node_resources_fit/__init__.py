"""NodeResourcesFit: does the pod's request fit the node's free resources, and how full would it be?

Filter compares the pod's effective requests (kube's ``resource.PodRequests``) with
``allocatable - requested`` and reports every shortfall; Score ranks nodes by
one of three strategies over configured resources (kube's ``noderesources/fit.go``).  The per-pod work
(requests, which scalar resources to check, the scoring vector) happens once
in PreFilter/PreScore, so the per-node methods are a few integer operations.

The resource bookkeeping shared with NodeResourcesBalancedAllocation
(:func:`pod_resource_entries`, :func:`node_amounts`) lives here,
as kube's ``resourceAllocationScorer`` is shared by both plugins.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import ClassVar, Final, Self, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.dra._extended import dra_backed_resources
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ActionType, ClusterEventWithHint, EnqueueExtensions, node_events, pod_events
from kschedlib.framework.extension_points import FilterPlugin, PreFilterPlugin, PreScorePlugin, ScorePlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalFilter, NodeLocalScore
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.model.resources import Resources, accounting_for
from kschedlib.plugins.node_resources_fit import hints
from kschedlib.plugins.node_resources_fit.args import (
    DEFAULT_RESOURCES,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    ShapePoint,
    decode_args,
    validate_args,
)
from kschedlib.plugins.node_resources_fit.fit import (
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
    InsufficientResource,
    checked_scalars,
    fits,
    fits_request,
    shortfalls,
)
from kschedlib.plugins.node_resources_fit.scoring import (
    ResourceEntry,
    cpu_memory_request,
    least_allocated_cpu_memory,
    pod_resource_entries,
    scorer,
)

__all__ = [
    "DEFAULT_RESOURCES",
    "InsufficientResource",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "NodeResourcesFit",
    "NodeResourcesFitArgs",
    "REASON_INSUFFICIENT_CPU",
    "REASON_INSUFFICIENT_EPHEMERAL_STORAGE",
    "REASON_INSUFFICIENT_MEMORY",
    "REASON_TOO_MANY_PODS",
    "REQUESTED_TO_CAPACITY_RATIO",
    "ResourceSpec",
    "ScoringStrategy",
    "ShapePoint",
    "decode_args",
    "fits",
    "fits_request",
    "validate_args",
]

@final
@attrs.frozen(slots=True, repr=False)
class PreFilterState(FieldsRepr):
    """The pod's effective requests and the scalar requests Filter must check."""

    requests: Resources
    scalars: tuple[tuple[str, int], ...]
    dra_backed: frozenset[str] = frozenset()
    """Extended resources a DeviceClass provides: DynamicResources allocates them on nodes without them."""
    cpu_memory: tuple[int, int] | None = None
    """(cpu, memory) of a request for nothing else Filter checks (the common case): a node with room for
    both and for one more pod is let through straight from its numbers."""

    def clone(self) -> Self:
        return self



@final
@attrs.frozen(slots=True, repr=False)
class PreScoreState(FieldsRepr):
    """The pod's scoring requests (``calculatePodResourceRequest``) for the configured resources it can be scored on."""

    entries: tuple[ResourceEntry, ...]
    cpu_memory: tuple[int, int, int, int] | None = None
    """The entries as :func:`~.scoring.cpu_memory_request` numbers when LeastAllocated scores them
    directly (a pod requesting only cpu and memory, the common case)."""

    def clone(self) -> Self:
        return self


_SUCCESS: Final = Status.success()
PRE_FILTER_KEY: Final[StateKey[PreFilterState]] = StateKey("PreFilterNodeResourcesFit")
PRE_SCORE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScoreNodeResourcesFit")


@final
class NodeResourcesFit(
    PreFilterPlugin,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    NodeLocalFilter,
    NodeLocalScore,
    EnqueueExtensions,
):
    """Filters nodes without room for the pod's requests; scores by the configured strategy."""

    name: ClassVar[str] = "NodeResourcesFit"
    __slots__ = ("_dra_extended", "_fit_requests", "_handle", "_ignored_groups", "_ignored_resources", "_least",
                 "_resources", "_scorer", "_scoring_requests", "_unresolvable_over_total")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (v1.30's or v1.36's)."""
        switches = self._handle.switches
        if not switches.narrow_queueing_hints:
            return (pod_events(ActionType.DELETE, hints.after_pod_event_v130),
                    node_events(ActionType.ADD | ActionType.UPDATE, hints.after_node_change_v130))
        pod_actions = ActionType.DELETE
        if switches.in_place_resize_requests:
            pod_actions |= ActionType.UPDATE_POD_SCALE_DOWN
        return (pod_events(pod_actions, hints.after_pod_event),
                node_events(ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE, hints.after_node_change))

    def __init__(self, args: NodeResourcesFitArgs | None, handle: Handle) -> None:
        args = args if args is not None else NodeResourcesFitArgs()
        validate_args(args)
        self._handle = handle
        self._ignored_resources = frozenset(args.ignored_resources)
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        self._resources = args.scoring_strategy.resources
        self._scorer = scorer(args.scoring_strategy)
        self._least = args.scoring_strategy.type == LEAST_ALLOCATED
        self._unresolvable_over_total = handle.switches.fit_unresolvable_over_allocatable
        self._dra_extended = handle.switches.dynamic_resources and handle.switches.dra_extended_resource
        accounting = accounting_for(handle.switches)
        self._fit_requests = accounting.fit_requests
        self._scoring_requests = accounting.scoring_requests

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Compute the effective requests and the scalars to check once per pod."""
        requests = self._fit_requests(pod)
        scalars = checked_scalars(requests, self._ignored_resources, self._ignored_groups)
        dra_backed = dra_backed_resources(self._handle, scalars) if self._dra_extended and scalars else frozenset()
        cpu_memory = (requests.milli_cpu, requests.memory) if not scalars and not requests.ephemeral_storage else None
        state.write(PRE_FILTER_KEY, PreFilterState(requests, scalars, dra_backed, cpu_memory))
        return Status.success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Unschedulable with one reason per shortfall, in kube's order."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.from_error(f'error reading "{PRE_FILTER_KEY.name}" from cycleState: not found')
        if s.cpu_memory is not None:  # no shortfall at all, read off the node's numbers (else the reasons below)
            cpu, memory = s.cpu_memory
            alloc, used = node_info.allocatable, node_info.requested
            if (len(node_info.pods) < alloc.allowed_pod_number
                    and (cpu <= 0 or cpu <= alloc.milli_cpu - used.milli_cpu)
                    and (memory <= 0 or memory <= alloc.memory - used.memory)):
                return _SUCCESS
        insufficient = shortfalls(s.requests, s.scalars, node_info)
        if insufficient and s.dra_backed:
            insufficient = [r for r in insufficient
                            if r.resource_name not in s.dra_backed or node_info.allocatable.scalar.get(r.resource_name)]
        if not insufficient:
            return Status.success()
        reasons = tuple(r.reason for r in insufficient)
        if self._unresolvable_over_total and any(r.exceeds_allocatable for r in insufficient):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
        return Status(Code.UNSCHEDULABLE, reasons)

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Compute the pod's scoring requests once; never skips."""
        entries = self._entries(pod)
        state.write(PRE_SCORE_KEY, PreScoreState(entries, cpu_memory_request(entries) if self._least else None))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The strategy's score in [0, 100]; computes the requests itself if PreScore did not run."""
        if not self._resources:
            raise RuntimeError("resources not found")
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return self._scorer(self._entries(pod), node_info)
        if s.cpu_memory is not None:
            direct = least_allocated_cpu_memory(s.cpu_memory, node_info)
            if direct is not None:
                return direct
        return self._scorer(s.entries, node_info)

    def _entries(self, pod: Pod) -> tuple[ResourceEntry, ...]:
        return pod_resource_entries(self._resources, self._scoring_requests(pod))

    def filter_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """The verdict depends only on the pod's requests (and the plugin's ignored resources)."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return None
        r = s.requests
        return (r.milli_cpu, r.memory, r.ephemeral_storage, tuple(sorted(r.scalar.items())), s.scalars,
                s.dra_backed)

    def score_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """The score depends only on the pod's scoring requests (and the plugin's strategy)."""
        s = state.get(PRE_SCORE_KEY)
        return s.entries if s is not None else None
