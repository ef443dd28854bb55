"""NodeResourcesFit's Filter predicate: does a request fit a node's free resources (kube's ``fitsRequest``)?

A pure function of the request and the NodeInfo, so preemption, admission checks and the queueing
hints reuse it without the plugin.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.node_info import NodeInfo
from kschedlib.model.objects import Pod
from kschedlib.model.resources import (
    CPU,
    EPHEMERAL_STORAGE,
    MEMORY,
    PODS,
    Resources,
    is_extended_resource,
    pod_requests,
)

__all__ = [
    "InsufficientResource",
    "REASON_INSUFFICIENT_CPU",
    "REASON_INSUFFICIENT_EPHEMERAL_STORAGE",
    "REASON_INSUFFICIENT_MEMORY",
    "REASON_TOO_MANY_PODS",
    "checked_scalars",
    "fits",
    "fits_request",
    "shortfalls",
]

REASON_TOO_MANY_PODS: Final = "Too many pods"
REASON_INSUFFICIENT_CPU: Final = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"

@final
@attrs.frozen(slots=True, repr=False)
class InsufficientResource(FieldsRepr):
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


def checked_scalars(
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


def shortfalls(
    request: Resources, scalars: tuple[tuple[str, int], ...], node_info: NodeInfo
) -> list[InsufficientResource]:
    """The per-node part of fitsRequest; ``scalars`` comes from :func:`checked_scalars`."""
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
    scalars = checked_scalars(pod_request, ignored_resources, ignored_resource_groups)
    return shortfalls(pod_request, scalars, node_info)


def fits(pod: Pod, node_info: NodeInfo) -> list[InsufficientResource]:
    """Kube's Fits: :func:`fits_request` with the pod's effective requests and nothing ignored."""
    return fits_request(pod_requests(pod), node_info)

