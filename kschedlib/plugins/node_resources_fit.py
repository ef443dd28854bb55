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

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final, NamedTuple, Self, final

import attrs

from kschedlib.dra._extended import dra_backed_resources
from kschedlib.errors import ConfigError
from kschedlib.framework._config_fields import expect_type as _expect
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ActionType, ClusterEventWithHint, EnqueueExtensions, node_events, pod_events
from kschedlib.framework.extension_points import (
    MAX_NODE_SCORE,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalFilter, NodeLocalScore
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Resources,
    accounting_for,
    is_extended_resource,
    is_scalar_resource,
    pod_requests,
)
from kschedlib.plugins import _fit_hints
from kschedlib.plugins._helpers.normalize import truncating_div
from kschedlib.plugins._helpers.validation import qualified_name_errors

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

REASON_TOO_MANY_PODS: Final = "Too many pods"
REASON_INSUFFICIENT_CPU: Final = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
_STRATEGIES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE: Final = 10
_MAX_UTILIZATION: Final = 100


# --- args -------------------------------------------------------------------------------------


class ResourceSpec(NamedTuple):
    """A resource to score and its weight (``scoringStrategy.resources[i]``)."""

    name: str
    weight: int = 1


class ShapePoint(NamedTuple):
    """A point of the RequestedToCapacityRatio shape: utilization 0..100 -> score 0..10."""

    utilization: int
    score: int


DEFAULT_RESOURCES: Final = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


@final
@attrs.frozen(slots=True)
class ScoringStrategy:
    """``scoringStrategy``: the type, the weighted resources and (for RTCR) the shape points."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: tuple[ShapePoint, ...] | None = None
    """``requestedToCapacityRatio.shape``; ``None`` when ``requestedToCapacityRatio`` is absent."""


@final
@attrs.frozen(slots=True)
class NodeResourcesFitArgs:
    """NodeResourcesFitArgs with kube's defaults (LeastAllocated over cpu and memory, weight 1)."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()


def _strings(raw: Any, field: str) -> tuple[str, ...]:
    items = _expect(raw if raw is not None else [], list, field)
    return tuple(_expect(item, str, f"{field}[{i}]") for i, item in enumerate(items))


def decode_resources(raw: Any, field: str) -> tuple[ResourceSpec, ...]:
    """A ``resources`` list with kube's defaulting: empty => cpu+memory, weight 0/missing => 1."""
    items = _expect(raw if raw is not None else [], list, field)
    if not items:
        return DEFAULT_RESOURCES
    specs = []
    for i, item in enumerate(items):
        entry = _expect(item, Mapping, f"{field}[{i}]")
        name = _expect(entry.get("name") or "", str, f"{field}[{i}].name")
        weight = _expect(entry.get("weight") or 0, int, f"{field}[{i}].weight")
        specs.append(ResourceSpec(name, weight or 1))
    return tuple(specs)


def _shape(raw: Any, field: str) -> tuple[ShapePoint, ...] | None:
    if raw is None:
        return None
    param = _expect(raw, Mapping, field)
    points = _expect(param.get("shape") or [], list, f"{field}.shape")
    shape = []
    for i, item in enumerate(points):
        point = _expect(item, Mapping, f"{field}.shape[{i}]")
        utilization = _expect(point.get("utilization") or 0, int, f"{field}.shape[{i}].utilization")
        score = _expect(point.get("score") or 0, int, f"{field}.shape[{i}].score")
        shape.append(ShapePoint(utilization, score))
    return tuple(shape)


def decode_args(raw: Mapping[str, Any] | None) -> NodeResourcesFitArgs:
    """Decode and validate ``NodeResourcesFitArgs`` (JSON field names); ``None`` gives the defaults."""
    raw = _expect(raw if raw is not None else {}, Mapping, "args")
    strategy = ScoringStrategy()
    if raw.get("scoringStrategy") is not None:
        s = _expect(raw["scoringStrategy"], Mapping, "scoringStrategy")
        strategy = ScoringStrategy(
            _expect(s.get("type") or "", str, "scoringStrategy.type"),
            decode_resources(s.get("resources"), "scoringStrategy.resources"),
            _shape(s.get("requestedToCapacityRatio"), "scoringStrategy.requestedToCapacityRatio"),
        )
    args = NodeResourcesFitArgs(
        _strings(raw.get("ignoredResources"), "ignoredResources"),
        _strings(raw.get("ignoredResourceGroups"), "ignoredResourceGroups"),
        strategy,
    )
    validate_args(args)
    return args


# --- validation (kube's ValidateNodeResourcesFitArgs; the first error is raised) ---------------

def validate_resources(resources: Sequence[ResourceSpec], field: str) -> None:
    """Every weight must be in (0, 100]."""
    for i, (name, weight) in enumerate(resources):
        if weight <= 0 or weight > 100:
            raise ConfigError(f"resource weight of {name} not in valid range (0, 100]",
                              field=f"{field}[{i}].weight", value=weight)


def validate_shape(shape: Sequence[ShapePoint], field: str) -> None:
    """At least one point, strictly increasing utilization, utilization in [0, 100], score in [0, 10]."""
    if not shape:
        raise ConfigError("at least one point must be specified", field=field)
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            raise ConfigError("utilization values must be sorted in increasing order",
                              field=f"{field}[{i}].utilization", value=shape[i].utilization)
    for i, (utilization, score) in enumerate(shape):
        if not 0 <= utilization <= _MAX_UTILIZATION:
            raise ConfigError("not in valid range [0, 100]", field=f"{field}[{i}].utilization",
                              value=utilization)
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ConfigError("not in valid range [0, 10]", field=f"{field}[{i}].score", value=score)


def validate_args(args: NodeResourcesFitArgs) -> None:
    """Raise :class:`ConfigError` for the first problem kube's validation would report.

    Kube reports shape errors under ``scoringStrategy.shape`` (not
    ``...requestedToCapacityRatio.shape``); that path is kept.  A
    RequestedToCapacityRatio strategy without ``requestedToCapacityRatio``
    makes kube-scheduler crash at start-up; here it is a ConfigError.
    """
    for i, name in enumerate(args.ignored_resources):
        errors = qualified_name_errors(name)
        if errors:
            raise ConfigError(errors[0], field=f"ignoredResources[{i}]", value=name)
    for i, group in enumerate(args.ignored_resource_groups):
        errors = qualified_name_errors(group)
        if "/" in group:
            errors.insert(0, "resource group name can't contain '/'")
        if errors:
            raise ConfigError(errors[0], field=f"ignoredResourceGroups[{i}]", value=group)
    strategy = args.scoring_strategy
    if strategy.type not in _STRATEGIES:
        supported = ", ".join(f'"{s}"' for s in _STRATEGIES)
        raise ConfigError(f'Unsupported value: "{strategy.type}": supported values: {supported}',
                          field="scoringStrategy.type", value=strategy.type)
    validate_resources(strategy.resources, "scoringStrategy.resources")
    if strategy.requested_to_capacity_ratio is not None:
        validate_shape(strategy.requested_to_capacity_ratio, "scoringStrategy.shape")
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        raise ConfigError("Required value", field="scoringStrategy.requestedToCapacityRatio")


# --- Filter -----------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class InsufficientResource:
    """One shortfall: which resource, the reason string, and the numbers behind it."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int

    @property
    def exceeds_allocatable(self) -> bool:
        """The request alone exceeds the node's allocatable: freeing room cannot help (kube v1.34+).

        The pod count never is: kube leaves its shortfall resolvable.
        """
        return self.resource_name != PODS and self.requested > self.capacity


def _checked_scalars(
    request: Resources, ignored_resources: Collection[str], ignored_groups: Collection[str]
) -> tuple[tuple[str, int], ...]:
    """The scalar requests Filter compares, sorted by name (Go's map order is unspecified)."""
    checked = []
    for name, amount in request.scalar.items():
        if amount == 0:
            continue
        if is_extended_resource(name) and (
            name in ignored_resources or (ignored_groups and name.split("/", 1)[0] in ignored_groups)
        ):
            continue
        checked.append((name, amount))
    checked.sort()
    return tuple(checked)


def _insufficient(
    request: Resources, scalars: tuple[tuple[str, int], ...], node_info: NodeInfo
) -> list[InsufficientResource]:
    """The per-node part of fitsRequest; ``scalars`` comes from :func:`_checked_scalars`."""
    out: list[InsufficientResource] = []
    alloc = node_info.allocatable
    used = node_info.requested
    count = len(node_info.pods)
    if count + 1 > alloc.allowed_pod_number:
        out.append(InsufficientResource(PODS, REASON_TOO_MANY_PODS, 1, count, alloc.allowed_pod_number))
    if not (request.milli_cpu or request.memory or request.ephemeral_storage or scalars):
        return out  # requests nothing (only a shortcut: every check below needs a positive request)
    cpu = request.milli_cpu
    if cpu > 0 and cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(InsufficientResource(CPU, REASON_INSUFFICIENT_CPU, cpu, used.milli_cpu, alloc.milli_cpu))
    memory = request.memory
    if memory > 0 and memory > alloc.memory - used.memory:
        out.append(InsufficientResource(MEMORY, REASON_INSUFFICIENT_MEMORY, memory, used.memory,
                                        alloc.memory))
    storage = request.ephemeral_storage
    if storage > 0 and storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(InsufficientResource(EPHEMERAL_STORAGE, REASON_INSUFFICIENT_EPHEMERAL_STORAGE, storage,
                                        used.ephemeral_storage, alloc.ephemeral_storage))
    for name, amount in scalars:
        capacity = alloc.scalar.get(name, 0)
        in_use = used.scalar.get(name, 0)
        if amount > capacity - in_use:
            out.append(InsufficientResource(name, f"Insufficient {name}", amount, in_use, capacity))
    return out


def fits_request(
    pod_request: Resources,
    node_info: NodeInfo,
    ignored_resources: Collection[str] = frozenset(),
    ignored_resource_groups: Collection[str] = frozenset(),
) -> list[InsufficientResource]:
    """Kube's fitsRequest: every shortfall of ``pod_request`` on ``node_info``, in reason order.

    Ignored extended resources (by name, or by the ``group`` of ``group/name``)
    are not checked; an empty list means the pod fits.
    """
    scalars = _checked_scalars(pod_request, ignored_resources, ignored_resource_groups)
    return _insufficient(pod_request, scalars, node_info)


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Kube's Fits: :func:`fits_request` with the pod's effective requests and nothing ignored."""
    return fits_request(pod_requests(pod), node_info)


@final
@attrs.frozen(slots=True)
class PreFilterState:
    """The pod's effective requests and the scalar requests Filter must check."""

    requests: Resources
    scalars: tuple[tuple[str, int], ...]
    dra_backed: frozenset[str] = frozenset()
    """Extended resources a DeviceClass provides: DynamicResources allocates them on nodes without them."""

    def clone(self) -> Self:
        return self


# --- scoring ----------------------------------------------------------------------------------

_CPU_KIND, _MEMORY_KIND, _STORAGE_KIND, _SCALAR_KIND, _OTHER_KIND = range(5)
ResourceEntry = tuple[int, str, int, int]
"""(kind, resource name, weight, pod request) of a resource that may be scored for the pod."""


def _kind(name: str) -> int:
    if name == CPU:
        return _CPU_KIND
    if name == MEMORY:
        return _MEMORY_KIND
    if name == EPHEMERAL_STORAGE:
        return _STORAGE_KIND
    return _SCALAR_KIND if is_scalar_resource(name) else _OTHER_KIND


def pod_resource_entries(resources: Sequence[ResourceSpec], requests: Resources) -> tuple[ResourceEntry, ...]:
    """The configured resources the pod can be scored on, with its request for each.

    Dropped: scalar resources the pod does not request, and names that are
    neither native nor scalar (kube finds no allocatable for them).
    """
    entries = []
    for name, weight in resources:
        kind = _kind(name)
        amount = requests.get(name)
        if kind == _OTHER_KIND or (kind == _SCALAR_KIND and amount == 0):
            continue
        entries.append((kind, name, weight, amount))
    return tuple(entries)


def node_amounts(
    entries: tuple[ResourceEntry, ...], node_info: NodeInfo, use_requested: bool
) -> list[tuple[int, int, int]]:
    """(allocatable, requested including the pod, weight) of each entry the node can be scored on.

    cpu and memory count ``non_zero_requested`` unless ``use_requested``;
    ephemeral-storage and scalars always count ``requested``.  Resources with
    zero allocatable (or scalars the node does not list) are left out.
    """
    alloc = node_info.allocatable
    requested = node_info.requested
    used = requested if use_requested else node_info.non_zero_requested
    out = []
    for kind, name, weight, pod_request in entries:
        if kind == _CPU_KIND:
            capacity, amount = alloc.milli_cpu, used.milli_cpu + pod_request
        elif kind == _MEMORY_KIND:
            capacity, amount = alloc.memory, used.memory + pod_request
        elif kind == _STORAGE_KIND:
            capacity, amount = alloc.ephemeral_storage, requested.ephemeral_storage + pod_request
        else:
            capacity = alloc.scalar.get(name, 0)
            amount = requested.scalar.get(name, 0) + pod_request
        if capacity != 0:
            out.append((capacity, amount, weight))
    return out


def least_requested_score(requested: int, capacity: int) -> int:
    """Unused share of ``capacity`` on 0..100; 0 when over-committed."""
    if capacity == 0 or requested > capacity:
        return 0
    return truncating_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    """Used share of ``capacity`` on 0..100 (requests beyond capacity count as full)."""
    if capacity == 0:
        return 0
    return truncating_div(min(requested, capacity) * MAX_NODE_SCORE, capacity)


def broken_linear(shape: Sequence[ShapePoint], p: int) -> int:
    """The piecewise-linear function through ``shape`` at ``p``, Go's truncating arithmetic."""
    for i, (utilization, score) in enumerate(shape):
        if p <= utilization:
            if i == 0:
                return score
            prev_u, prev_s = shape[i - 1]
            return prev_s + truncating_div((score - prev_s) * (p - prev_u), utilization - prev_u)
    return shape[-1].score


_Scorer = Callable[[tuple[ResourceEntry, ...], NodeInfo], int]


def _weighted_scorer(per_resource: Callable[[int, int], int]) -> _Scorer:
    """LeastAllocated/MostAllocated: weighted mean (truncated) over resources with allocatable."""
    def score(entries: tuple[ResourceEntry, ...], node_info: NodeInfo) -> int:
        total = weights = 0
        for capacity, requested, weight in node_amounts(entries, node_info, False):
            total += per_resource(requested, capacity) * weight
            weights += weight
        return truncating_div(total, weights) if weights else 0
    return score


def _ratio_scorer(shape: Sequence[ShapePoint]) -> _Scorer:
    """RequestedToCapacityRatio: shape scores x10, weighted mean over positive scores, rounded half up."""
    scaled = tuple(ShapePoint(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape)

    def score(entries: tuple[ResourceEntry, ...], node_info: NodeInfo) -> int:
        total = weights = 0
        for capacity, requested, weight in node_amounts(entries, node_info, False):
            if requested > capacity:
                utilization = _MAX_UTILIZATION
            else:
                utilization = truncating_div(requested * _MAX_UTILIZATION, capacity)
            resource_score = broken_linear(scaled, utilization)
            if resource_score > 0:
                total += resource_score * weight
                weights += weight
        # Go's math.Round(float64(total)/float64(weights)); both are small and non-negative, so the
        # exact integer form rounds half away from zero identically.
        return (2 * total + weights) // (2 * weights) if weights else 0
    return score


def _scorer(strategy: ScoringStrategy) -> _Scorer:
    if strategy.type == LEAST_ALLOCATED:
        return _weighted_scorer(least_requested_score)
    if strategy.type == MOST_ALLOCATED:
        return _weighted_scorer(most_requested_score)
    return _ratio_scorer(strategy.requested_to_capacity_ratio or ())


@final
@attrs.frozen(slots=True)
class PreScoreState:
    """The pod's scoring requests (``calculatePodResourceRequest``) for the configured resources it can be scored on."""

    entries: tuple[ResourceEntry, ...]

    def clone(self) -> Self:
        return self


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
    __slots__ = ("_dra_extended", "_fit_requests", "_handle", "_ignored_groups", "_ignored_resources", "_resources",
                 "_scorer", "_scoring_requests", "_unresolvable_over_total")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (v1.30's or v1.36's)."""
        switches = self._handle.switches
        if not switches.narrow_queueing_hints:
            return (pod_events(ActionType.DELETE, _fit_hints.after_pod_event_v130),
                    node_events(ActionType.ADD | ActionType.UPDATE, _fit_hints.after_node_change_v130))
        pod_actions = ActionType.DELETE
        if switches.in_place_resize_requests:
            pod_actions |= ActionType.UPDATE_POD_SCALE_DOWN
        return (pod_events(pod_actions, _fit_hints.after_pod_event),
                node_events(ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE, _fit_hints.after_node_change))

    def __init__(self, args: NodeResourcesFitArgs | None, handle: Handle) -> None:
        args = args if args is not None else NodeResourcesFitArgs()
        validate_args(args)
        self._handle = handle
        self._ignored_resources = frozenset(args.ignored_resources)
        self._ignored_groups = frozenset(args.ignored_resource_groups)
        self._resources = args.scoring_strategy.resources
        self._scorer = _scorer(args.scoring_strategy)
        self._unresolvable_over_total = handle.switches.fit_unresolvable_over_allocatable
        self._dra_extended = handle.switches.dynamic_resources and handle.switches.dra_extended_resource
        accounting = accounting_for(handle.switches)
        self._fit_requests = accounting.fit_requests
        self._scoring_requests = accounting.scoring_requests

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Compute the effective requests and the scalars to check once per pod."""
        requests = self._fit_requests(pod)
        scalars = _checked_scalars(requests, self._ignored_resources, self._ignored_groups)
        dra_backed = dra_backed_resources(self._handle, scalars) if self._dra_extended and scalars else frozenset()
        state.write(PRE_FILTER_KEY, PreFilterState(requests, scalars, dra_backed))
        return Status.success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Unschedulable with one reason per shortfall, in kube's order."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.from_error(f'error reading "{PRE_FILTER_KEY.name}" from cycleState: not found')
        insufficient = _insufficient(s.requests, s.scalars, node_info)
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
        state.write(PRE_SCORE_KEY, PreScoreState(self._entries(pod)))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The strategy's score in [0, 100]; computes the requests itself if PreScore did not run."""
        if not self._resources:
            raise RuntimeError("resources not found")
        s = state.get(PRE_SCORE_KEY)
        entries = s.entries if s is not None else self._entries(pod)
        return self._scorer(entries, node_info)

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
