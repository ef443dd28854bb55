"""The PodGroup bookkeeping behind Coscheduling: its checks, its two expiring caches, the group status.

scheduler-plugins' ``core.PodGroupManager`` at d250c4b9, on the injected clock:

* ``permitted``: groups that passed the ``minResources`` check, skipped on later
  members' PreFilter until ``permitWaitingTimeSeconds`` pass or a member fails;
* ``backed_off``: groups a member's PostFilter rejected, refused in PreFilter
  (``podGroup ns/name failed recently``) for ``podGroupBackoffSeconds``.

Assigned members are those the cycle's snapshot holds with a node (bound or assumed).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, final

import attrs

from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.model.objects import Pod
from kschedlib.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources, pod_requests
from kschedlib.model.scheduling_crds import POD_GROUP_LABEL, PodGroup
from kschedlib.plugins.batch._go_quantity import GoQuantity, go_map, parse

__all__ = [
    "ExpiringSet",
    "GoQuantity",
    "assigned_members",
    "cluster_resource_gap",
    "format_gap",
    "group_full_name",
    "min_resources_needed",
    "near_quorum",
    "reconcile_status",
]

DEFAULT_WAIT_SECONDS: Final = 60
_FINAL_PHASES: Final = frozenset({"Finished", "Failed"})


def group_full_name(pod: Pod) -> str:
    """``namespace/group`` of a member pod, ``""`` for a pod outside any group."""
    name = pod.labels.get(POD_GROUP_LABEL)
    return f"{pod.namespace}/{name}" if name else ""


@final
class ExpiringSet:
    """Names that expire at a clock time (go-cache with a per-entry TTL)."""

    __slots__ = ("_until",)

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def copy(self) -> ExpiringSet:
        other = ExpiringSet()
        other._until = dict(self._until)
        return other

    def add(self, name: str, until: float) -> None:
        self._until[name] = until

    def discard(self, name: str) -> None:
        self._until.pop(name, None)

    def holds(self, name: str, now: float) -> bool:
        until = self._until.get(name)
        if until is None:
            return False
        if now >= until:
            del self._until[name]
            return False
        return True


def assigned_members(snapshot: Snapshot, namespace: str, group: str) -> int:
    """How many pods of the group the snapshot holds on a node (bound or assumed)."""
    count = 0
    for info in snapshot.node_infos:
        for pod_info in info.pods:
            pod = pod_info.pod
            if pod.namespace == namespace and pod.node_name and pod.labels.get(POD_GROUP_LABEL) == group:
                count += 1
    return count


def _float32(value: float) -> float:
    packed: float = struct.unpack("f", struct.pack("f", value))[0]
    return packed


_TENTH: Final = _float32(0.1)


def near_quorum(min_member: int, assigned: int) -> bool:
    """Whether at most 10% of ``min_member`` is missing (computed in float32, as Go's PostFilter does)."""
    return _float32((min_member - assigned) / min_member) <= _TENTH


def _left_on_node(info: NodeInfo, full_name: str) -> dict[str, int]:
    """What the node has free once the group's own pods are taken off it (they would be counted twice)."""
    requested = info.requested
    pods = 0
    for pod_info in info.pods:
        if group_full_name(pod_info.pod) == full_name:
            requested = requested.subtract(pod_requests(pod_info.pod))
        else:
            pods += 1
    allocatable = info.allocatable
    left = {
        CPU: allocatable.milli_cpu - requested.milli_cpu,
        MEMORY: allocatable.memory - requested.memory,
        EPHEMERAL_STORAGE: allocatable.ephemeral_storage - requested.ephemeral_storage,
        PODS: allocatable.allowed_pod_number - pods,
    }
    for name, amount in allocatable.scalar.items():
        left[name] = amount - requested.scalar.get(name, 0)
    return left


_NONE: Final = GoQuantity(0, 0, "")
"""A resource the node does not list: Go's zero Quantity."""


def _node_quantity(name: str, left: Mapping[str, int]) -> GoQuantity:
    """A node's free amount as scheduler-plugins' ``util.ResourceList`` makes it (CPU in millis)."""
    if name not in left:
        return _NONE
    if name == CPU:
        return GoQuantity(left[name], -3, "DecimalSI")
    binary = name in (MEMORY, EPHEMERAL_STORAGE, PODS) or name.startswith("hugepages-")
    return GoQuantity(left[name], 0, "BinarySI" if binary else "DecimalSI")


def cluster_resource_gap(nodes: Iterable[NodeInfo], needed: Mapping[str, GoQuantity],
                         full_name: str) -> dict[str, GoQuantity]:
    """What of ``needed`` the nodes' free resources, taken in order, do not cover (empty: enough), as
    scheduler-plugins' ``CheckClusterResource`` leaves its ``ResourceList``."""
    gap = dict(needed)
    for info in nodes:
        left = _left_on_node(info, full_name)
        for name in list(gap):
            remaining = gap[name].minus(_node_quantity(name, left))
            if remaining.sign <= 0:
                del gap[name]
            else:
                gap[name] = remaining
        if not gap:
            break
    return gap


def min_resources_needed(group: PodGroup) -> dict[str, GoQuantity]:
    """``minResources`` as Go parsed them plus ``pods: minMember`` (a quantity Go would keep as a decimal
    is taken at its value, CPU in millis)."""
    needed = {}
    for name, quantity in (group.min_resources or {}).items():
        parsed = parse(quantity)
        if parsed is None:
            amount = Resources.from_resource_list({name: quantity}).get(name)
            parsed = GoQuantity(amount, -3 if name == CPU else 0, quantity.format)
        needed[name] = parsed
    needed[PODS] = GoQuantity(group.min_member, 0, "DecimalSI")
    return needed


def format_gap(gap: Mapping[str, GoQuantity]) -> str:
    """The gap as Go's ``%v`` prints the ResourceList: ``map[cpu:{{2000 -3} {<nil>}  DecimalSI}]``."""
    return go_map(dict(gap))


# --- the PodGroup controller's status ----------------------------------------------------------


def _counts(pods: Sequence[Pod]) -> tuple[int, int, int]:
    """(running, succeeded, failed) by the pods' phase, as the controller counts (a bound pod runs once its
    kubelet says so: ``status.phase: Running``)."""
    running = succeeded = failed = 0
    for pod in pods:
        if pod.phase == "Running":
            running += 1
        elif pod.phase == "Succeeded":
            succeeded += 1
        elif pod.phase == "Failed":
            failed += 1
    return running, succeeded, failed


def _occupied_by(pod: Pod) -> str:
    return ",".join(sorted(f"{pod.namespace}/{owner.name}" for owner in pod.owner_references))


def _reconcile_once(group: PodGroup, pods: Sequence[Pod]) -> PodGroup:
    phase = group.phase
    if phase in _FINAL_PHASES:
        return group
    if phase == "":
        return attrs.evolve(group, phase="Pending")
    if phase == "Pending":
        if pods and len(pods) >= group.min_member:
            return attrs.evolve(group, phase="Scheduling", occupied_by=_occupied_by(pods[0]) or group.occupied_by)
        return group
    running, succeeded, failed = _counts(pods)
    minimum = group.min_member
    if len(pods) < minimum:
        phase = "Pending"
    elif succeeded + running < minimum:
        phase = "Scheduling"
    else:
        phase = "Running"
    if len(pods) >= minimum and failed and failed + running + succeeded >= minimum:
        phase = "Failed"
    if len(pods) >= minimum and succeeded >= minimum:
        phase = "Finished"
    return attrs.evolve(group, phase=phase, running=running, succeeded=succeeded, failed=failed)


def reconcile_status(group: PodGroup, pods: Sequence[Pod]) -> PodGroup:
    """The group's status once the PodGroup controller has seen ``pods`` (every pod naming the group).

    The controller reconciles again after each of its own updates; this runs it until the status settles.
    """
    for _ in range(4):
        updated = _reconcile_once(group, pods)
        if updated == group:
            break
        group = updated
    return group

