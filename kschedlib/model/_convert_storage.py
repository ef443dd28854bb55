"""Reading the storage objects (:mod:`kschedlib.model.storage`) from Kubernetes v1 dicts.

The API server's defaults are applied as it would have applied them before
kube-scheduler saw the object: a volume or claim without ``volumeMode`` is a
``Filesystem`` one, a PersistentVolume or claim without ``status.phase`` is
``Pending``, a StorageClass without ``volumeBindingMode`` binds ``Immediate``,
an RBD source reads pool ``rbd``, an Azure disk is a ``Shared`` ``ReadWrite``
``ext4`` disk unless it says otherwise, a CSIDriver requires attachment and
does not publish storage capacity.  Malformed fields raise
:class:`~kschedlib.errors.ManifestError` naming the object, the field and the value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kschedlib.errors import QuantityError
from kschedlib.model._convert_base import EMPTY, Json, Reader, join, label_selector, node_selector, open_object, section
from kschedlib.model._convert_spec import owner_references
from kschedlib.model.labels import NodeSelector
from kschedlib.model.quantity import Quantity, parse_quantity
from kschedlib.model.storage import (
    VOLUME_FILESYSTEM,
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CinderVolumeSource,
    ClaimRef,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    CSIVolumeSource,
    GCEPersistentDiskVolumeSource,
    ISCSIVolumeSource,
    LocalVolumeSource,
    OtherVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSource,
    RBDVolumeSource,
    StorageClass,
    TopologySelectorRequirement,
    TopologySelectorTerm,
    VolumeAttachment,
)

__all__ = [
    "PV_SOURCE_KINDS",
    "StorageObject",
    "csi_driver_from_dict",
    "csi_node_from_dict",
    "csi_storage_capacity_from_dict",
    "pv_from_dict",
    "pvc_from_dict",
    "storage_class_from_dict",
    "volume_attachment_from_dict",
    "volume_source_from_dict",
]

StorageObject = (
    PersistentVolume | PersistentVolumeClaim | StorageClass | CSINode | CSIDriver | CSIStorageCapacity
    | VolumeAttachment
)
"""What a storage object can be read as."""

ACCESS_MODES: Final = frozenset({"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"})
VOLUME_MODES: Final = frozenset({VOLUME_FILESYSTEM, "Block"})
PV_PHASES: Final = frozenset({"Pending", "Available", "Bound", "Released", "Failed"})
PVC_PHASES: Final = frozenset({"Pending", "Bound", "Lost"})
BINDING_MODES: Final = frozenset({"Immediate", "WaitForFirstConsumer"})
PV_SOURCE_KINDS: Final = frozenset({
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume",
    "flocker", "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs",
    "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume",
})
"""The ``spec`` keys of a PersistentVolume that name its source."""



def _choice(r: Reader, d: Json, key: str, path: str, allowed: frozenset[str], default: str) -> str:
    value = r.getstr(d, key, path) or default
    if value not in allowed:
        r.fail(join(path, key), f"must be one of {', '.join(sorted(allowed))}", value)
    return value


def _access_modes(r: Reader, d: Json, path: str) -> tuple[str, ...]:
    modes = r.strlist(d, "accessModes", path)
    for index, mode in enumerate(modes):
        if mode not in ACCESS_MODES:
            r.fail(f"{join(path, 'accessModes')}[{index}]", f"must be one of {', '.join(sorted(ACCESS_MODES))}", mode)
    return modes


def _quantity(r: Reader, d: Json, key: str, path: str) -> Quantity | None:
    """An optional single quantity; a bad one keeps the Kubernetes message and gains the path."""
    raw = d.get(key)
    if raw is None:
        return None
    try:
        return parse_quantity(raw)
    except QuantityError as err:
        raise QuantityError(err.message, obj=r.obj, field=join(path, key), value=raw) from err


# --- volume sources -------------------------------------------------------------------------


def _csi(r: Reader, d: Json, path: str) -> CSIVolumeSource:
    return CSIVolumeSource(
        driver=r.reqstr(d, "driver", path),
        volume_handle=r.reqstr(d, "volumeHandle", path),
        read_only=r.getbool(d, "readOnly", path),
        fs_type=r.getstr(d, "fsType", path),
    )


def _gce_pd(r: Reader, d: Json, path: str) -> GCEPersistentDiskVolumeSource:
    return GCEPersistentDiskVolumeSource(
        pd_name=r.reqstr(d, "pdName", path),
        fs_type=r.getstr(d, "fsType", path),
        partition=r.getint(d, "partition", path),
        read_only=r.getbool(d, "readOnly", path),
    )


def _aws_ebs(r: Reader, d: Json, path: str) -> AWSElasticBlockStoreVolumeSource:
    return AWSElasticBlockStoreVolumeSource(
        volume_id=r.reqstr(d, "volumeID", path),
        fs_type=r.getstr(d, "fsType", path),
        partition=r.getint(d, "partition", path),
        read_only=r.getbool(d, "readOnly", path),
    )


def _azure_disk(r: Reader, d: Json, path: str) -> AzureDiskVolumeSource:
    read_only = d.get("readOnly")
    return AzureDiskVolumeSource(
        disk_name=r.reqstr(d, "diskName", path),
        disk_uri=r.reqstr(d, "diskURI", path),
        caching_mode=r.getstr(d, "cachingMode", path, "ReadWrite"),
        fs_type=r.getstr(d, "fsType", path, "ext4"),
        read_only=False if read_only is None else r.getbool(d, "readOnly", path),
        kind=r.getstr(d, "kind", path, "Shared"),
    )


def _cinder(r: Reader, d: Json, path: str) -> CinderVolumeSource:
    return CinderVolumeSource(
        volume_id=r.reqstr(d, "volumeID", path),
        fs_type=r.getstr(d, "fsType", path),
        read_only=r.getbool(d, "readOnly", path),
    )


def _iscsi(r: Reader, d: Json, path: str) -> ISCSIVolumeSource:
    return ISCSIVolumeSource(
        target_portal=r.reqstr(d, "targetPortal", path),
        iqn=r.reqstr(d, "iqn", path),
        lun=r.getint(d, "lun", path),
        read_only=r.getbool(d, "readOnly", path),
    )


def _rbd(r: Reader, d: Json, path: str) -> RBDVolumeSource:
    monitors = r.strlist(d, "monitors", path)
    if not monitors:
        r.fail(join(path, "monitors"), "is required")
    return RBDVolumeSource(
        monitors=monitors,
        image=r.reqstr(d, "image", path),
        pool=r.getstr(d, "pool", path) or "rbd",
        read_only=r.getbool(d, "readOnly", path),
    )


def _local(r: Reader, d: Json, path: str) -> LocalVolumeSource:
    return LocalVolumeSource(path=r.reqstr(d, "path", path), fs_type=r.optstr(d, "fsType", path))


_SOURCE_READERS: Final[dict[str, Callable[[Reader, Json, str], PersistentVolumeSource]]] = {
    "csi": _csi,
    "gcePersistentDisk": _gce_pd,
    "awsElasticBlockStore": _aws_ebs,
    "azureDisk": _azure_disk,
    "cinder": _cinder,
    "iscsi": _iscsi,
    "rbd": _rbd,
    "local": _local,
}


def _source(r: Reader, kind: str, raw: object, path: str) -> PersistentVolumeSource:
    d = r.as_map(raw if raw is not None else EMPTY, path)
    read = _SOURCE_READERS.get(kind)
    if read is None:
        return OtherVolumeSource(kind, dict(d))
    return read(r, d, path)


def volume_source_from_dict(kind: str, raw: Mapping[str, Any], *, obj: str = "") -> PersistentVolumeSource:
    """A volume source of ``kind`` (``gcePersistentDisk``, ``csi``, ...) from its v1 fields.

    Used for PersistentVolumes and for pods' inline volumes alike; ``obj`` names
    the owner in errors.
    """
    return _source(Reader(obj or kind), kind, raw, kind)


# --- PersistentVolume -----------------------------------------------------------------------


def _claim_ref(r: Reader, spec: Json) -> ClaimRef | None:
    raw = r.getmap(spec, "claimRef", "spec")
    if raw is None:
        return None
    path = "spec.claimRef"
    return ClaimRef(
        name=r.getstr(raw, "name", path),
        namespace=r.getstr(raw, "namespace", path),
        uid=r.getstr(raw, "uid", path),
    )


def _pv_source(r: Reader, spec: Json) -> PersistentVolumeSource | None:
    kinds = sorted(key for key in spec if key in PV_SOURCE_KINDS and spec[key] is not None)
    if len(kinds) > 1:
        r.fail("spec", "may not specify more than one volume source", kinds)
    if not kinds:
        return None
    return _source(r, kinds[0], spec[kinds[0]], join("spec", kinds[0]))


def _pv_node_affinity(r: Reader, spec: Json) -> NodeSelector | None:
    affinity = r.getmap(spec, "nodeAffinity", "spec")
    if affinity is None:
        return None
    required = affinity.get("required")
    return None if required is None else node_selector(r, required, "spec.nodeAffinity.required")


def pv_from_dict(d: Mapping[str, Any]) -> PersistentVolume:
    """A v1 PersistentVolume (cluster-scoped), defaulted as an API server would."""
    r, meta, name, _ = open_object(d, "PersistentVolume", namespaced=False)
    spec = section(r, d, "spec")
    status = section(r, d, "status")
    return PersistentVolume(
        name=name,
        labels=r.strmap(meta, "labels", "metadata") or {},
        annotations=r.strmap(meta, "annotations", "metadata") or {},
        uid=r.getstr(meta, "uid", "metadata"),
        capacity=r.resources(spec, "capacity", "spec") or {},
        access_modes=_access_modes(r, spec, "spec"),
        storage_class_name=r.getstr(spec, "storageClassName", "spec"),
        volume_mode=_choice(r, spec, "volumeMode", "spec", VOLUME_MODES, VOLUME_FILESYSTEM),
        volume_attributes_class_name=r.getstr(spec, "volumeAttributesClassName", "spec"),
        node_affinity=_pv_node_affinity(r, spec),
        claim_ref=_claim_ref(r, spec),
        source=_pv_source(r, spec),
        phase=_choice(r, status, "phase", "status", PV_PHASES, "Pending"),
        deletion_timestamp=r.timestamp(meta, "deletionTimestamp", "metadata"),
    )


# --- PersistentVolumeClaim ------------------------------------------------------------------


def pvc_from_dict(d: Mapping[str, Any]) -> PersistentVolumeClaim:
    """A v1 PersistentVolumeClaim, defaulted as an API server would."""
    r, meta, name, namespace = open_object(d, "PersistentVolumeClaim", namespaced=True)
    spec = section(r, d, "spec")
    status = section(r, d, "status")
    resources = r.getmap(spec, "resources", "spec") or EMPTY
    return PersistentVolumeClaim(
        name=name,
        namespace=namespace,
        uid=r.getstr(meta, "uid", "metadata"),
        labels=r.strmap(meta, "labels", "metadata") or {},
        annotations=r.strmap(meta, "annotations", "metadata") or {},
        owner_references=owner_references(r, meta),
        access_modes=_access_modes(r, spec, "spec"),
        selector=label_selector(r, spec.get("selector"), "spec.selector"),
        requests=r.resources(resources, "requests", "spec.resources") or {},
        storage_class_name=r.optstr(spec, "storageClassName", "spec"),
        volume_name=r.getstr(spec, "volumeName", "spec"),
        volume_mode=_choice(r, spec, "volumeMode", "spec", VOLUME_MODES, VOLUME_FILESYSTEM),
        volume_attributes_class_name=r.getstr(spec, "volumeAttributesClassName", "spec"),
        phase=_choice(r, status, "phase", "status", PVC_PHASES, "Pending"),
        deletion_timestamp=r.timestamp(meta, "deletionTimestamp", "metadata"),
    )


# --- StorageClass ---------------------------------------------------------------------------


def _topology_requirement(r: Reader, raw: object, path: str) -> TopologySelectorRequirement:
    d = r.as_map(raw, path)
    values = r.strlist(d, "values", path)
    if not values:
        r.fail(join(path, "values"), "must specify as least one value")
    return TopologySelectorRequirement(r.reqstr(d, "key", path), values)


def _topology_term(r: Reader, raw: object, path: str) -> TopologySelectorTerm:
    d = r.as_map(raw, path)
    return TopologySelectorTerm(r.each(d, "matchLabelExpressions", path, _topology_requirement))


def storage_class_from_dict(d: Mapping[str, Any]) -> StorageClass:
    """A storage.k8s.io/v1 StorageClass; ``volumeBindingMode`` defaults to ``Immediate``."""
    r, _, name, _ = open_object(d, "StorageClass", namespaced=False)
    return StorageClass(
        name=name,
        provisioner=r.reqstr(d, "provisioner", ""),
        volume_binding_mode=_choice(r, d, "volumeBindingMode", "", BINDING_MODES, "Immediate"),
        allowed_topologies=r.each(d, "allowedTopologies", "", _topology_term),
        parameters=r.strmap(d, "parameters", "") or {},
    )


# --- CSI objects ----------------------------------------------------------------------------


def _csi_node_driver(r: Reader, raw: object, path: str) -> CSINodeDriver:
    d = r.as_map(raw, path)
    allocatable = r.getmap(d, "allocatable", path)
    count = None if allocatable is None else r.optint(allocatable, "count", join(path, "allocatable"))
    if count is not None and count < 0:
        r.fail(join(path, "allocatable.count"), "must be greater than or equal to 0", count)
    return CSINodeDriver(
        name=r.reqstr(d, "name", path),
        node_id=r.getstr(d, "nodeID", path),
        allocatable_count=count,
        topology_keys=r.strlist(d, "topologyKeys", path),
    )


def csi_node_from_dict(d: Mapping[str, Any]) -> CSINode:
    """A storage.k8s.io/v1 CSINode: the CSI drivers of the node of the same name."""
    r, meta, name, _ = open_object(d, "CSINode", namespaced=False)
    spec = section(r, d, "spec")
    return CSINode(
        name=name,
        annotations=r.strmap(meta, "annotations", "metadata") or {},
        drivers=r.each(spec, "drivers", "spec", _csi_node_driver),
    )


def csi_driver_from_dict(d: Mapping[str, Any]) -> CSIDriver:
    """A storage.k8s.io/v1 CSIDriver (``attachRequired`` defaults to true, ``storageCapacity`` to false)."""
    r, _, name, _ = open_object(d, "CSIDriver", namespaced=False)
    spec = section(r, d, "spec")
    attach = spec.get("attachRequired")
    return CSIDriver(
        name=name,
        storage_capacity=r.getbool(spec, "storageCapacity", "spec"),
        attach_required=True if attach is None else r.getbool(spec, "attachRequired", "spec"),
    )


def csi_storage_capacity_from_dict(d: Mapping[str, Any]) -> CSIStorageCapacity:
    """A storage.k8s.io/v1 CSIStorageCapacity (its fields are top-level, not under ``spec``)."""
    r, _, name, namespace = open_object(d, "CSIStorageCapacity", namespaced=True)
    return CSIStorageCapacity(
        name=name,
        namespace=namespace,
        storage_class_name=r.reqstr(d, "storageClassName", ""),
        capacity=_quantity(r, d, "capacity", ""),
        maximum_volume_size=_quantity(r, d, "maximumVolumeSize", ""),
        node_topology=label_selector(r, d.get("nodeTopology"), "nodeTopology"),
    )



def volume_attachment_from_dict(d: Mapping[str, Any]) -> VolumeAttachment:
    """A storage.k8s.io/v1 VolumeAttachment (only a PersistentVolume source is kept; inline ones count as none)."""
    r, _, name, _ = open_object(d, "VolumeAttachment", namespaced=False)
    spec = section(r, d, "spec")
    source = r.getmap(spec, "source", "spec") or {}
    return VolumeAttachment(
        name=name,
        attacher=r.getstr(spec, "attacher", "spec"),
        node_name=r.getstr(spec, "nodeName", "spec"),
        persistent_volume_name=r.optstr(source, "persistentVolumeName", "spec.source"),
    )
