"""EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits: in-tree disk attach limits (kube-scheduler v1.30).

Each plugin counts the unique disks of its own type a node would attach: inline
disks by ID, claims bound to a PersistentVolume of that type, and unbound
claims (or claims whose volume is missing) whose ``spec.storageClassName`` names
a class of the in-tree provisioner, one ID per claim.  A node with a CSINode
object has migrated these disks to CSI, where NodeVolumeLimits counts them, so
the plugin passes.  The limit is the node's allocatable
``attachable-volumes-<type>``, else ``KUBE_MAX_PD_VOLS``, else a per-type default.
EBSLimits, GCEPDLimits and AzureDiskLimits are in the v1.30 default profile;
CinderLimits is registered but not enabled by default.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ClassVar, Final, cast, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import FilterPlugin, PreFilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.framework.storage import StorageLister
from kschedlib.model.objects import Pod, Volume
from kschedlib.plugins._helpers.volumes import claim_of, inline_source
from kschedlib.plugins.node_volume_limits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, VolumeLookupError, lookup_claim

if TYPE_CHECKING:
    from kschedlib.model.storage import (
        AWSElasticBlockStoreVolumeSource,
        AzureDiskVolumeSource,
        CinderVolumeSource,
        GCEPersistentDiskVolumeSource,
        PersistentVolumeClaim,
        PersistentVolumeSource,
    )

__all__ = [
    "AzureDiskLimits",
    "CinderLimits",
    "EBSLimits",
    "ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED",
    "GCEPDLimits",
    "KUBE_MAX_PD_VOLS",
]

KUBE_MAX_PD_VOLS: Final = "KUBE_MAX_PD_VOLS"
DEFAULT_MAX_EBS_VOLUMES: Final = 39
DEFAULT_MAX_EBS_NITRO_VOLUMES: Final = 25
DEFAULT_MAX_GCE_PD_VOLUMES: Final = 16
DEFAULT_MAX_AZURE_DISK_VOLUMES: Final = 16
DEFAULT_MAX_CINDER_VOLUMES: Final = 256
_EBS_NITRO: Final = re.compile(r"^[cmr]5.*|t3|z1d")
_INSTANCE_TYPE_LABELS: Final = frozenset({"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"})
_ATOI: Final = re.compile(r"[+-]?[0-9]+")
_RANDOM_VOLUME_ID_PREFIX: Final = "kschedlib-unbound-claim-3a8e51f60c27"
_EXCEEDED: Final = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def max_ebs_volumes(instance_type: str) -> int:
    """25 for Nitro instance types (``^[cmr]5.*|t3|z1d`` found anywhere), else 39."""
    return DEFAULT_MAX_EBS_NITRO_VOLUMES if _EBS_NITRO.search(instance_type) else DEFAULT_MAX_EBS_VOLUMES


def _env_limit() -> int:
    """``KUBE_MAX_PD_VOLS`` when it is a positive integer (Go's Atoi), else -1."""
    raw = os.environ.get(KUBE_MAX_PD_VOLS, "")
    if raw and _ATOI.fullmatch(raw):
        value = int(raw)
        if value > 0:
            return value
    return -1


def _instance_type(labels: Mapping[str, str]) -> str:
    """The first instance-type label in label order (kube takes the first one its map iteration meets)."""
    return next((value for key, value in labels.items() if key in _INSTANCE_TYPE_LABELS), "")


@final
@attrs.frozen(slots=True, repr=False)
class VolumeFilter(FieldsRepr):
    """What one plugin counts: its source (the model class's name and the volume's source kind), in-tree
    provisioner, limit key and default limit.

    The source is named rather than held as a class so that the storage model is imported by the first
    storage object, not by the registry (these plugins are registered in every version).
    """

    source_class: str
    source_kind: str
    id_of: Callable[[PersistentVolumeSource], str]
    provisioner: str
    limit_key: str
    default_limit: Callable[[Mapping[str, str]], int]

    def volume_id(self, source: PersistentVolumeSource | None) -> str | None:
        return self.id_of(source) if source is not None and type(source).__name__ == self.source_class else None


def _ebs_id(source: PersistentVolumeSource) -> str:
    return cast("AWSElasticBlockStoreVolumeSource", source).volume_id


def _gce_id(source: PersistentVolumeSource) -> str:
    return cast("GCEPersistentDiskVolumeSource", source).pd_name


def _azure_id(source: PersistentVolumeSource) -> str:
    return cast("AzureDiskVolumeSource", source).disk_name


def _cinder_id(source: PersistentVolumeSource) -> str:
    return cast("CinderVolumeSource", source).volume_id


EBS_FILTER: Final = VolumeFilter("AWSElasticBlockStoreVolumeSource", "awsElasticBlockStore", _ebs_id,
                                 "kubernetes.io/aws-ebs", "attachable-volumes-aws-ebs",
                                 lambda labels: max_ebs_volumes(_instance_type(labels)))
GCE_PD_FILTER: Final = VolumeFilter("GCEPersistentDiskVolumeSource", "gcePersistentDisk", _gce_id,
                                    "kubernetes.io/gce-pd", "attachable-volumes-gce-pd",
                                    lambda labels: DEFAULT_MAX_GCE_PD_VOLUMES)
AZURE_DISK_FILTER: Final = VolumeFilter("AzureDiskVolumeSource", "azureDisk", _azure_id, "kubernetes.io/azure-disk",
                                        "attachable-volumes-azure-disk", lambda labels: DEFAULT_MAX_AZURE_DISK_VOLUMES)
CINDER_FILTER: Final = VolumeFilter("CinderVolumeSource", "cinder", _cinder_id, "kubernetes.io/cinder",
                                    "attachable-volumes-cinder", lambda labels: DEFAULT_MAX_CINDER_VOLUMES)


class _NonCSILimits(PreFilterPlugin, FilterPlugin):
    """The shared logic; each public subclass names one :class:`VolumeFilter`."""

    volume_filter: ClassVar[VolumeFilter]
    __slots__ = ("_handle",)

    def __init__(self, args: None, handle: Handle) -> None:
        """No args; claims, volumes, classes and CSINodes come from ``handle.storage``."""
        self._handle = handle

    def _inline_id(self, volume: Volume) -> str | None:
        if volume.source_kind != self.volume_filter.source_kind:
            return None
        return self.volume_filter.volume_id(inline_source(volume))

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Skip pods without an inline disk of this type, a claim or an ephemeral volume."""
        volumes = pod.volumes
        if not volumes:
            return Status.SKIP
        for volume in volumes:
            if volume.claim_name is not None or volume.ephemeral or self._inline_id(volume) is not None:
                return Status.SUCCESS
        return Status.SKIP

    def _matches_provisioner(self, pvc: PersistentVolumeClaim) -> bool:
        """Only ``spec.storageClassName`` is read here (not the beta annotation), as in kube."""
        if pvc.storage_class_name is None:
            return False
        storage_class = self._handle.storage.get_storage_class(pvc.storage_class_name)
        return storage_class is not None and storage_class.provisioner == self.volume_filter.provisioner

    def volume_ids(self, pod: Pod, storage: StorageLister, *, new_pod: bool, result: set[str]) -> None:
        """Add the IDs of ``pod``'s disks of this type to ``result`` (see the module docstring)."""
        for volume in pod.volumes:
            inline = self._inline_id(volume)
            if inline is not None:
                result.add(inline)
                continue
            claim = claim_of(pod, volume)
            if claim is None:
                continue
            pvc = lookup_claim(storage, pod, claim, new_pod=new_pod)
            if pvc is None:
                continue
            claim_id = f"{_RANDOM_VOLUME_ID_PREFIX}-{pod.namespace}/{claim[0]}"
            pv = storage.get_pv(pvc.volume_name) if pvc.volume_name else None
            if pv is None:
                if self._matches_provisioner(pvc):
                    result.add(claim_id)
                continue
            pv_id = self.volume_filter.volume_id(pv.source)
            if pv_id is not None:
                result.add(pv_id)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Unique existing IDs plus new ones not among them must stay within the node's limit."""
        if not pod.volumes:
            return Status.SUCCESS
        storage = self._handle.storage
        new: set[str] = set()
        try:
            self.volume_ids(pod, storage, new_pod=True, result=new)
        except VolumeLookupError as exc:
            return Status.unresolvable(str(exc)) if exc.unresolvable else Status.from_error(str(exc))
        if not new:
            return Status.SUCCESS
        if storage.get_csi_node(node_info.name) is not None:
            return Status.SUCCESS
        existing: set[str] = set()
        try:
            for info in node_info.pods:
                if info.pod.volumes:
                    self.volume_ids(info.pod, storage, new_pod=False, result=existing)
        except VolumeLookupError as exc:
            return Status.from_error(str(exc))
        node = node_info.node
        limit = self._limit(node.labels if node is not None else {}, node_info.allocatable.scalar)
        return _EXCEEDED if len(existing) + len(new - existing) > limit else Status.SUCCESS

    def _limit(self, labels: Mapping[str, str], allocatable: Mapping[str, int]) -> int:
        from_allocatable = allocatable.get(self.volume_filter.limit_key)
        if from_allocatable is not None:
            return from_allocatable
        from_env = _env_limit()
        return from_env if from_env > 0 else self.volume_filter.default_limit(labels)


@final
class EBSLimits(_NonCSILimits):
    """AWS EBS volumes per node (default 39, or 25 on Nitro instance types)."""

    name: ClassVar[str] = "EBSLimits"
    volume_filter: ClassVar[VolumeFilter] = EBS_FILTER
    __slots__ = ()


@final
class GCEPDLimits(_NonCSILimits):
    """GCE persistent disks per node (default 16)."""

    name: ClassVar[str] = "GCEPDLimits"
    volume_filter: ClassVar[VolumeFilter] = GCE_PD_FILTER
    __slots__ = ()


@final
class AzureDiskLimits(_NonCSILimits):
    """Azure data disks per node (default 16)."""

    name: ClassVar[str] = "AzureDiskLimits"
    volume_filter: ClassVar[VolumeFilter] = AZURE_DISK_FILTER
    __slots__ = ()


@final
class CinderLimits(_NonCSILimits):
    """OpenStack Cinder volumes per node (default 256); registered, not in the default profile."""

    name: ClassVar[str] = "CinderLimits"
    volume_filter: ClassVar[VolumeFilter] = CINDER_FILTER
    __slots__ = ()
