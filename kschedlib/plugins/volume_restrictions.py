"""VolumeRestrictions: inline disks that cannot be shared, and ReadWriteOncePod claims (kube-scheduler v1.30).

Two rules.  An inline GCE PD, AWS EBS, iSCSI or RBD disk of the pod conflicts
with the same disk mounted by a pod already on the node (read-only on both
sides is fine, except for EBS).  A claim with the ``ReadWriteOncePod`` access
mode that any pod in the cluster already uses makes *every* node fail: the
count is cluster-wide (the snapshot's used-PVC set), and only preemption,
through AddPod/RemovePod, can change it.

PreFilter looks every ``persistentVolumeClaim`` up first, so a missing claim
fails here (kube's first volume plugin), before VolumeBinding sees it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import FilterPlugin, PreFilterExtensions, PreFilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod, Volume
from kschedlib.plugins._helpers import volume_hints as _volume_hints
from kschedlib.plugins._helpers.inline_disks import inline_disks, is_volume_conflict, needs_restrictions_check
from kschedlib.plugins._helpers.volumes import READ_WRITE_ONCE_POD, pvc_not_found

if TYPE_CHECKING:
    from kschedlib.model.storage import PersistentVolumeSource

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "ERR_REASON_RWOP_IN_USE",
    "VolumeRestrictions",
    "satisfies_volume_conflicts",
]

ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: Final = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)

_DISK_CONFLICT: Final = Status.unschedulable(ERR_REASON_DISK_CONFLICT)
ERR_REASON_RWOP_IN_USE: Final = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)
"""The ReadWriteOncePod reason from v1.34 on (``rwop_in_use_reason``)."""
_RWOP_CONFLICT: Final = Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
_RWOP_IN_USE: Final = Status.unschedulable(ERR_REASON_RWOP_IN_USE)


def satisfies_volume_conflicts(disks: Sequence[PersistentVolumeSource], node_info: NodeInfo) -> bool:
    """kube's ``satisfyVolumeConflicts``: none of the pod's inline ``disks`` is in use on the node."""
    if not disks:
        return True
    for disk in disks:
        for existing in node_info.pods:
            if existing.pod.volumes and is_volume_conflict(disk, existing.pod):
                return False
    return True


def _rwop_claims_in(claims: frozenset[str], volumes: Iterable[Volume]) -> int:
    """How many ``persistentVolumeClaim`` volumes name one of ``claims`` (names only, namespaces not compared)."""
    return sum(1 for v in volumes if v.claim_name is not None and v.claim_name in claims)


@final
@attrs.define(slots=True, eq=False, repr=False)
class PreFilterState(FieldsRepr):
    """The pod's inline disks, its ReadWriteOncePod claim names, and how many uses of them exist.

    ``conflicts`` changes under AddPod/RemovePod, so ``clone`` copies.
    """

    disks: tuple[PersistentVolumeSource, ...]
    rwop_claims: frozenset[str]
    conflicts: int

    def clone(self) -> PreFilterState:
        return PreFilterState(self.disks, self.rwop_claims, self.conflicts)


PRE_FILTER_KEY: Final[StateKey[PreFilterState]] = StateKey("PreFilterVolumeRestrictions")


@final
class VolumeRestrictions(PreFilterPlugin, PreFilterExtensions, FilterPlugin, EnqueueExtensions):
    """Rejects nodes with a conflicting inline disk, and every node while a ReadWriteOncePod claim is in use."""

    name: ClassVar[str] = "VolumeRestrictions"
    __slots__ = ("_handle", "_rwop_conflict")

    def __init__(self, args: None, handle: Handle) -> None:
        """No args; the claims come from ``handle.storage``, the used claims from the snapshot."""
        self._handle = handle
        self._rwop_conflict = _RWOP_IN_USE if handle.switches.rwop_in_use_reason else _RWOP_CONFLICT

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Every event with hints off (v1.30); v1.36's registrations and hints with them on."""
        return _volume_hints.watched(self._handle, _volume_hints.restrictions_events)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Look up every claim (missing: UnschedulableAndUnresolvable), count ReadWriteOncePod conflicts;
        Skip when there is no inline disk and no conflict."""
        volumes = pod.volumes
        if not volumes:
            return Status.SKIP
        storage = self._handle.storage
        rwop: set[str] = set()
        for volume in volumes:
            claim = volume.claim_name
            if claim is None:
                continue
            pvc = storage.get_pvc(pod.namespace, claim)
            if pvc is None:
                return Status.unresolvable(pvc_not_found(claim))
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(pvc.name)
        snapshot = self._handle.snapshot
        conflicts = sum(1 for claim in rwop if snapshot.is_pvc_used_by_pods(f"{pod.namespace}/{claim}"))
        if conflicts == 0 and not any(needs_restrictions_check(v) for v in volumes):
            return Status.SKIP
        state.write(PRE_FILTER_KEY, PreFilterState(inline_disks(pod), frozenset(rwop), conflicts))
        return Status.SUCCESS

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        """A nominated pod joins: its uses of the pod's ReadWriteOncePod claims count."""
        return self._update(state, pod_info_to_add, 1)

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        """A preemption victim leaves: its uses of the pod's ReadWriteOncePod claims no longer count."""
        return self._update(state, pod_info_to_remove, -1)

    @staticmethod
    def _update(state: CycleState, pod_info: PodInfo, sign: int) -> Status:
        data = state.get(PRE_FILTER_KEY)
        if data is None:
            return Status.from_error(f'cannot read "{PRE_FILTER_KEY.name}" from cycleState')
        if data.rwop_claims:
            data.conflicts += sign * _rwop_claims_in(data.rwop_claims, pod_info.pod.volumes)
        return Status.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Disk conflicts on this node first, then the cluster-wide ReadWriteOncePod count."""
        data = state.get(PRE_FILTER_KEY)
        disks = data.disks if data is not None else inline_disks(pod)
        if not satisfies_volume_conflicts(disks, node_info):
            return _DISK_CONFLICT
        if data is None:
            return Status.from_error(f'cannot read "{PRE_FILTER_KEY.name}" from cycleState')
        return self._rwop_conflict if data.conflicts > 0 else Status.SUCCESS
