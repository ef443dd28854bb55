"""VolumeZone: a bound volume's zone and region labels must match the node's (kube-scheduler v1.30).

PreFilter follows each ``persistentVolumeClaim`` volume to its PersistentVolume
and records the zone/region labels it carries (a value may list several zones
joined by ``__``).  Filter then compares them with the node's labels: a node
without any zone or region label passes (single-zone clusters), and a beta
label on the volume may be matched by the node's GA twin, never the reverse.
Pods whose volumes carry no such label Skip the plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import FilterPlugin, PreFilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.framework.storage import StorageLister
from kschedlib.model.objects import Pod
from kschedlib.plugins._helpers import volume_hints as _volume_hints
from kschedlib.plugins._helpers.volume_topology import TOPOLOGY_LABELS, PVTopology, volume_topologies
from kschedlib.plugins._helpers.volumes import (
    WAIT_FOR_FIRST_CONSUMER,
    claim_class,
    pv_not_found,
    pvc_not_found,
    storage_class_not_found,
)

__all__ = ["ERR_REASON_CONFLICT", "VolumeZone", "fits"]

ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"

_CONFLICT: Final = Status.unresolvable(ERR_REASON_CONFLICT)


def _claim_problem(storage: StorageLister, namespace: str, claim: str) -> tuple[str | None, str | None]:
    """``(pv name, None)`` for a claim naming its volume; ``(None, None)`` for a claim to ignore
    (unbound, WaitForFirstConsumer); ``(None, reason)`` for one that fails the pod."""
    if not claim:
        return None, "PersistentVolumeClaim had no name"
    pvc = storage.get_pvc(namespace, claim)
    if pvc is None:
        return None, pvc_not_found(claim)
    if pvc.volume_name:
        return pvc.volume_name, None
    class_name = claim_class(pvc)
    if not class_name:
        return None, "PersistentVolumeClaim had no pv name and storageClass name"
    storage_class = storage.get_storage_class(class_name)
    if storage_class is None:
        return None, storage_class_not_found(class_name)
    mode = storage_class.volume_binding_mode
    if mode is None:
        return None, f'VolumeBindingMode not set for StorageClass "{class_name}"'
    if mode == WAIT_FOR_FIRST_CONSUMER:
        return None, None
    return None, "PersistentVolume had no name"


def pv_topologies(pod: Pod, storage: StorageLister) -> tuple[PVTopology, ...] | str:
    """The zone/region labels of the pod's bound volumes, or the UnschedulableAndUnresolvable reason."""
    found: list[PVTopology] = []
    for volume in pod.volumes:
        if volume.claim_name is None:
            continue
        pv_name, problem = _claim_problem(storage, pod.namespace, volume.claim_name)
        if problem is not None:
            return problem
        if pv_name is None:
            continue
        pv = storage.get_pv(pv_name)
        if pv is None:
            return pv_not_found(pv_name)
        found.extend(volume_topologies(pv))
    return tuple(found)


def fits(topologies: tuple[PVTopology, ...], labels: Mapping[str, str]) -> bool:
    """Whether a node with ``labels`` is in every recorded zone/region (a node without any such label is)."""
    if not any(key in labels for key in TOPOLOGY_LABELS):
        return True
    for topology in topologies:
        value = labels.get(topology.key)
        if value is None:
            value = labels.get(topology.ga_key)
        if value is None or value not in topology.values:
            return False
    return True


@final
@attrs.frozen(slots=True, repr=False)
class _PreFilterState(FieldsRepr):
    topologies: tuple[PVTopology, ...]

    def clone(self) -> _PreFilterState:
        return self


PRE_FILTER_KEY: Final[StateKey[_PreFilterState]] = StateKey("PreFilterVolumeZone")


@final
class VolumeZone(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    """Rejects nodes outside the zones/regions of the pod's bound volumes (UnschedulableAndUnresolvable)."""

    name: ClassVar[str] = "VolumeZone"
    __slots__ = ("_handle",)

    def __init__(self, args: None, handle: Handle) -> None:
        """No args; claims, volumes and classes come from ``handle.storage``."""
        self._handle = handle

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Every event with hints off (v1.30); v1.36's registrations and hints with them on."""
        return _volume_hints.watched(self._handle, _volume_hints.zone_events)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Record the bound volumes' zone/region labels; Skip when there are none."""
        if not pod.volumes:
            return Status.SKIP
        found = pv_topologies(pod, self._handle.storage)
        if isinstance(found, str):
            return Status.unresolvable(found)
        if not found:
            return Status.SKIP
        state.write(PRE_FILTER_KEY, _PreFilterState(found))
        return Status.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Compare the recorded labels with the node's (recomputed if PreFilter's state is missing, as kube does)."""
        if not pod.volumes:
            return Status.SUCCESS
        data = state.get(PRE_FILTER_KEY)
        if data is not None:
            topologies = data.topologies
        else:
            found = pv_topologies(pod, self._handle.storage)
            if isinstance(found, str):
                return Status.unresolvable(found)
            topologies = found
        node = node_info.node
        labels = node.labels if node is not None else {}
        return Status.SUCCESS if fits(topologies, labels) else _CONFLICT
