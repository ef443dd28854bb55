"""NodeResourcesFit's scoring: the resources a pod is scored on, and the three strategies' formulas.

Kube's ``resourceAllocationScorer`` is shared with NodeResourcesBalancedAllocation, which uses
:func:`pod_resource_entries` and :func:`node_amounts` from here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kschedlib.framework.extension_points import MAX_NODE_SCORE
from kschedlib.framework.node_info import NodeInfo
from kschedlib.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, Resources, is_scalar_resource
from kschedlib.plugins._helpers.normalize import truncating_div
from kschedlib.plugins.node_resources_fit.args import (
    LEAST_ALLOCATED,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    MOST_ALLOCATED,
    ResourceSpec,
    ScoringStrategy,
    ShapePoint,
)

__all__ = [
    "ResourceEntry",
    "Scorer",
    "broken_linear",
    "cpu_memory_request",
    "least_allocated_cpu_memory",
    "least_requested_score",
    "most_requested_score",
    "node_amounts",
    "pod_resource_entries",
    "scorer",
]

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


def cpu_memory_request(entries: tuple[ResourceEntry, ...]) -> tuple[int, int, int, int] | None:
    """(cpu request, memory request, cpu weight, memory weight) when ``entries`` are exactly cpu then
    memory with positive weights (the default resources), which :func:`least_allocated_cpu_memory`
    scores directly; else ``None``."""
    if len(entries) != 2:
        return None
    (kind0, _, weight0, cpu), (kind1, _, weight1, memory) = entries
    if kind0 != _CPU_KIND or kind1 != _MEMORY_KIND or weight0 <= 0 or weight1 <= 0:
        return None
    return cpu, memory, weight0, weight1


def least_allocated_cpu_memory(request: tuple[int, int, int, int], node_info: NodeInfo) -> int | None:
    """LeastAllocated's score for a :func:`cpu_memory_request`, read straight off the node's numbers.

    The same integers as the plain scorer (:func:`_weighted_scorer`) on a node with positive cpu and
    memory allocatable, without building the per-resource list; ``None`` on any other node.
    """
    cpu, memory, cpu_weight, memory_weight = request
    alloc = node_info.allocatable
    used = node_info.non_zero_requested
    cpu_capacity, memory_capacity = alloc.milli_cpu, alloc.memory
    if cpu_capacity <= 0 or memory_capacity <= 0:
        return None
    cpu_requested = used.milli_cpu + cpu
    memory_requested = used.memory + memory
    cpu_score = 0 if cpu_requested > cpu_capacity else (cpu_capacity - cpu_requested) * MAX_NODE_SCORE // cpu_capacity
    memory_score = (0 if memory_requested > memory_capacity
                    else (memory_capacity - memory_requested) * MAX_NODE_SCORE // memory_capacity)
    # both terms are non-negative (capacities are positive): flooring is the plain path's truncation
    return (cpu_score * cpu_weight + memory_score * memory_weight) // (cpu_weight + memory_weight)


def least_requested_score(requested: int, capacity: int) -> int:
    """Unused share of ``capacity`` on 0..100; 0 when over-committed."""
    if capacity == 0 or requested > capacity:
        return 0
    if capacity > 0:  # a non-negative share of a positive capacity: flooring is truncating (scored per node)
        return (capacity - requested) * MAX_NODE_SCORE // capacity
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


Scorer = Callable[[tuple[ResourceEntry, ...], NodeInfo], int]


def _weighted_scorer(per_resource: Callable[[int, int], int]) -> Scorer:
    """LeastAllocated/MostAllocated: weighted mean (truncated) over resources with allocatable."""
    def score(entries: tuple[ResourceEntry, ...], node_info: NodeInfo) -> int:
        total = weights = 0
        for capacity, requested, weight in node_amounts(entries, node_info, False):
            total += per_resource(requested, capacity) * weight
            weights += weight
        if weights > 0 and total >= 0:  # flooring is truncating here
            return total // weights
        return truncating_div(total, weights) if weights else 0
    return score


def _ratio_scorer(shape: Sequence[ShapePoint]) -> Scorer:
    """RequestedToCapacityRatio: shape scores x10, weighted mean over positive scores, rounded half up."""
    scaled = tuple(ShapePoint(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape)

    def score(entries: tuple[ResourceEntry, ...], node_info: NodeInfo) -> int:
        total = weights = 0
        for capacity, requested, weight in node_amounts(entries, node_info, False):
            if requested > capacity:
                utilization = MAX_UTILIZATION
            else:
                utilization = truncating_div(requested * MAX_UTILIZATION, capacity)
            resource_score = broken_linear(scaled, utilization)
            if resource_score > 0:
                total += resource_score * weight
                weights += weight
        # Go's math.Round(float64(total)/float64(weights)); both are small and non-negative, so the
        # exact integer form rounds half away from zero identically.
        return (2 * total + weights) // (2 * weights) if weights else 0
    return score


def scorer(strategy: ScoringStrategy) -> Scorer:
    if strategy.type == LEAST_ALLOCATED:
        return _weighted_scorer(least_requested_score)
    if strategy.type == MOST_ALLOCATED:
        return _weighted_scorer(most_requested_score)
    return _ratio_scorer(strategy.requested_to_capacity_ratio or ())

