"""The storage nouns the volume plugins read: volumes, claims, classes and CSI node facts.

Plain frozen data, like :mod:`kschedlib.model.objects`.  Only the fields
kube-scheduler's volume plugins (VolumeRestrictions, VolumeZone,
NodeVolumeLimits and the non-CSI limits, VolumeBinding) look at are kept.
Conversion from Kubernetes v1 dicts lives in :mod:`kschedlib.model.convert`.

A PersistentVolume's source is one of the typed sources below when the
plugins need its fields (CSI, the in-tree disks, iSCSI, RBD, local), or an
:class:`OtherVolumeSource` that keeps the kind and the fields as read; pod
inline volumes (:class:`~kschedlib.model.objects.Volume`) are read into the
same types by :func:`kschedlib.model.convert.volume_source_from_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.labels import LabelSelector, NodeSelector
from kschedlib.model.objects import OwnerReference, ResourceList, _empty_map
from kschedlib.model.quantity import Quantity

__all__ = [
    "AWSElasticBlockStoreVolumeSource",
    "AzureDiskVolumeSource",
    "CSINode",
    "CSINodeDriver",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "CSIVolumeSource",
    "CinderVolumeSource",
    "ClaimRef",
    "GCEPersistentDiskVolumeSource",
    "ISCSIVolumeSource",
    "LocalVolumeSource",
    "OtherVolumeSource",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PersistentVolumeSource",
    "RBDVolumeSource",
    "StorageClass",
    "TopologySelectorRequirement",
    "TopologySelectorTerm",
    "VOLUME_FILESYSTEM",
]

VOLUME_FILESYSTEM: Final = "Filesystem"
"""The volume mode an API server gives PersistentVolumes and claims that name none."""


def _empty_resources() -> ResourceList:
    return {}


def _empty_fields() -> Mapping[str, object]:
    return {}


# --- volume sources -------------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class CSIVolumeSource(FieldsRepr):
    """A volume of a CSI driver; ``driver`` + ``volume_handle`` identify it on a node."""

    driver: str
    volume_handle: str
    read_only: bool = False
    fs_type: str = ""

    @property
    def source_kind(self) -> str:
        return "csi"


@final
@attrs.frozen(slots=True, repr=False)
class GCEPersistentDiskVolumeSource(FieldsRepr):
    """A GCE persistent disk, identified by ``pd_name``."""

    pd_name: str
    fs_type: str = ""
    partition: int = 0
    read_only: bool = False

    @property
    def source_kind(self) -> str:
        return "gcePersistentDisk"


@final
@attrs.frozen(slots=True, repr=False)
class AWSElasticBlockStoreVolumeSource(FieldsRepr):
    """An AWS EBS volume; ``volume_id`` is ``vol-...`` or ``aws://<zone>/vol-...``."""

    volume_id: str
    fs_type: str = ""
    partition: int = 0
    read_only: bool = False

    @property
    def source_kind(self) -> str:
        return "awsElasticBlockStore"


@final
@attrs.frozen(slots=True, repr=False)
class AzureDiskVolumeSource(FieldsRepr):
    """An Azure data disk; the defaults are the API server's (``kind`` ``Shared`` cannot migrate to CSI)."""

    disk_name: str
    disk_uri: str
    caching_mode: str = "ReadWrite"
    fs_type: str = "ext4"
    read_only: bool = False
    kind: str = "Shared"

    @property
    def source_kind(self) -> str:
        return "azureDisk"


@final
@attrs.frozen(slots=True, repr=False)
class CinderVolumeSource(FieldsRepr):
    """An OpenStack Cinder volume."""

    volume_id: str
    fs_type: str = ""
    read_only: bool = False

    @property
    def source_kind(self) -> str:
        return "cinder"


@final
@attrs.frozen(slots=True, repr=False)
class ISCSIVolumeSource(FieldsRepr):
    """An iSCSI disk; two pods conflict on the same ``iqn`` unless both mount it read-only."""

    target_portal: str
    iqn: str
    lun: int = 0
    read_only: bool = False

    @property
    def source_kind(self) -> str:
        return "iscsi"


@final
@attrs.frozen(slots=True, repr=False)
class RBDVolumeSource(FieldsRepr):
    """A Ceph RBD image (``pool`` defaults to ``rbd``, as the API server sets it)."""

    monitors: tuple[str, ...]
    image: str
    pool: str = "rbd"
    read_only: bool = False

    @property
    def source_kind(self) -> str:
        return "rbd"


@final
@attrs.frozen(slots=True, repr=False)
class LocalVolumeSource(FieldsRepr):
    """A local volume (a disk or directory of one node; its PV's node affinity says which)."""

    path: str
    fs_type: str | None = None

    @property
    def source_kind(self) -> str:
        return "local"


@final
@attrs.frozen(slots=True, repr=False)
class OtherVolumeSource(FieldsRepr):
    """Any other source (``hostPath``, ``nfs``, ``azureFile``, ...): its kind and its fields as read."""

    kind: str
    fields: Mapping[str, object] = attrs.field(factory=_empty_fields)

    @property
    def source_kind(self) -> str:
        return self.kind


PersistentVolumeSource = (
    CSIVolumeSource
    | GCEPersistentDiskVolumeSource
    | AWSElasticBlockStoreVolumeSource
    | AzureDiskVolumeSource
    | CinderVolumeSource
    | ISCSIVolumeSource
    | RBDVolumeSource
    | LocalVolumeSource
    | OtherVolumeSource
)
"""Where a volume's data lives."""


# --- volumes and claims ---------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class ClaimRef(FieldsRepr):
    """A PersistentVolume's ``spec.claimRef``: the claim it is bound (or pre-bound) to.

    An empty ``uid`` matches any claim of that namespace and name.
    """

    name: str
    namespace: str = ""
    uid: str = ""


@final
@attrs.frozen(slots=True, repr=False)
class PersistentVolume(FieldsRepr):
    """A PersistentVolume (cluster-scoped).

    ``node_affinity`` is ``spec.nodeAffinity.required`` (``None``: any node).
    ``capacity`` holds ``spec.capacity`` (``storage``).  ``deletion_timestamp``
    is seconds since the epoch, or ``None``.
    """

    name: str
    labels: Mapping[str, str] = attrs.field(factory=_empty_map)
    annotations: Mapping[str, str] = attrs.field(factory=_empty_map)
    uid: str = ""
    capacity: ResourceList = attrs.field(factory=_empty_resources)
    access_modes: tuple[str, ...] = ()
    storage_class_name: str = ""
    volume_mode: str = VOLUME_FILESYSTEM
    node_affinity: NodeSelector | None = None
    claim_ref: ClaimRef | None = None
    source: PersistentVolumeSource | None = None
    phase: str = "Pending"
    deletion_timestamp: float | None = None
    volume_attributes_class_name: str = ""
    """``spec.volumeAttributesClassName`` ("" when absent)."""


@final
@attrs.frozen(slots=True, repr=False)
class PersistentVolumeClaim(FieldsRepr):
    """A PersistentVolumeClaim.

    ``storage_class_name`` of ``None`` means the field was absent (the
    ``volume.beta.kubernetes.io/storage-class`` annotation, when present,
    wins over it).  ``volume_name`` is ``spec.volumeName`` ("" when unbound);
    ``requests`` is ``spec.resources.requests``.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=_empty_map)
    annotations: Mapping[str, str] = attrs.field(factory=_empty_map)
    owner_references: tuple[OwnerReference, ...] = ()
    access_modes: tuple[str, ...] = ()
    selector: LabelSelector | None = None
    requests: ResourceList = attrs.field(factory=_empty_resources)
    storage_class_name: str | None = None
    volume_name: str = ""
    volume_mode: str = VOLUME_FILESYSTEM
    phase: str = "Pending"
    deletion_timestamp: float | None = None
    volume_attributes_class_name: str = ""
    """``spec.volumeAttributesClassName`` ("" when absent): from v1.34 an unbound claim only matches
    volumes of the same class."""

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"


@final
@attrs.frozen(slots=True, repr=False)
class TopologySelectorRequirement(FieldsRepr):
    """A StorageClass ``allowedTopologies`` expression: the node label ``key`` has one of ``values``."""

    key: str
    values: tuple[str, ...]


@final
@attrs.frozen(slots=True, repr=False)
class TopologySelectorTerm(FieldsRepr):
    """Expressions ANDed together; a term without expressions matches no node."""

    match_label_expressions: tuple[TopologySelectorRequirement, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class StorageClass(FieldsRepr):
    """A StorageClass (cluster-scoped).

    ``volume_binding_mode`` is ``Immediate`` or ``WaitForFirstConsumer``
    (``None`` only for hand-built objects: reading a dict applies the API
    server's default, ``Immediate``).
    """

    name: str
    provisioner: str = ""
    volume_binding_mode: str | None = "Immediate"
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()
    parameters: Mapping[str, str] = attrs.field(factory=_empty_map)


# --- CSI ------------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class CSINodeDriver(FieldsRepr):
    """A CSI driver installed on a node; ``allocatable_count`` caps its attached volumes."""

    name: str
    node_id: str = ""
    allocatable_count: int | None = None
    topology_keys: tuple[str, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class CSINode(FieldsRepr):
    """The CSI drivers of the node of the same name.

    Its annotation ``storage.alpha.kubernetes.io/migrated-plugins`` lists the
    in-tree plugins whose volumes the node serves through CSI.
    """

    name: str
    annotations: Mapping[str, str] = attrs.field(factory=_empty_map)
    drivers: tuple[CSINodeDriver, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class CSIDriver(FieldsRepr):
    """A CSI driver; with ``storage_capacity`` the scheduler checks CSIStorageCapacity objects.

    The defaults are the API server's.
    """

    name: str
    storage_capacity: bool = False
    attach_required: bool = True


@final
@attrs.frozen(slots=True, repr=False)
class CSIStorageCapacity(FieldsRepr):
    """Free capacity of one storage class in one topology segment.

    ``node_topology`` of ``None`` means the capacity is reachable from no node.
    """

    name: str
    namespace: str = "default"
    storage_class_name: str = ""
    capacity: Quantity | None = None
    maximum_volume_size: Quantity | None = None
    node_topology: LabelSelector | None = None


@final
@attrs.frozen(slots=True, repr=False)
class VolumeAttachment(FieldsRepr):
    """A storage.k8s.io/v1 VolumeAttachment: ``attacher`` attaches the PersistentVolume
    ``persistent_volume_name`` to the node ``node_name`` (NodeVolumeLimits counts it from v1.32,
    also while the volume is still detaching from a pod that is gone)."""

    name: str
    attacher: str = ""
    node_name: str = ""
    persistent_volume_name: str | None = None
