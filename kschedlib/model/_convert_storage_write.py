"""Writing the storage objects back as Kubernetes v1 dicts (the inverse of :mod:`._convert_storage`).

API defaults and empty fields are left out, so reading the result back gives
the same model object for every object that was itself read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kschedlib.model._convert_base import format_timestamp
from kschedlib.model._convert_storage import StorageObject
from kschedlib.model.labels import LabelSelector, NodeSelector, NodeSelectorRequirement
from kschedlib.model.storage import (
    VOLUME_FILESYSTEM,
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CinderVolumeSource,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    CSIVolumeSource,
    GCEPersistentDiskVolumeSource,
    ISCSIVolumeSource,
    OtherVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSource,
    RBDVolumeSource,
    StorageClass,
    VolumeAttachment,
)

__all__ = [
    "csi_driver_to_dict",
    "csi_node_to_dict",
    "csi_storage_capacity_to_dict",
    "pv_to_dict",
    "pvc_to_dict",
    "storage_class_to_dict",
    "storage_object_to_dict",
    "volume_source_to_dict",
]


JsonDict = dict[str, Any]
_STORAGE_API: Final = "storage.k8s.io/v1"


def _put(out: JsonDict, key: str, value: object) -> None:
    """Set ``key`` unless ``value`` is empty (``None``, ``""``, ``0``/``False``, ``{}``, ``[]``)."""
    if value:
        out[key] = value


def _metadata(name: str, namespace: str | None, **fields: object) -> JsonDict:
    meta: JsonDict = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    for key, value in fields.items():
        _put(meta, key, value)
    return meta


def _timestamp(seconds: float | None) -> str | None:
    return None if seconds is None else format_timestamp(seconds)


def _requirements(reqs: tuple[NodeSelectorRequirement, ...]) -> list[JsonDict]:
    out = []
    for req in reqs:
        item: JsonDict = {"key": req.key, "operator": req.operator}
        _put(item, "values", list(req.values))
        out.append(item)
    return out


def _node_selector(selector: NodeSelector) -> JsonDict:
    terms = []
    for term in selector.terms:
        item: JsonDict = {}
        _put(item, "matchExpressions", _requirements(term.match_expressions))
        _put(item, "matchFields", _requirements(term.match_fields))
        terms.append(item)
    return {"nodeSelectorTerms": terms}


def _label_selector(selector: LabelSelector) -> JsonDict:
    out: JsonDict = {}
    _put(out, "matchLabels", dict(selector.match_labels))
    _put(out, "matchExpressions", [
        {"key": req.key, "operator": req.operator, **({"values": list(req.values)} if req.values else {})}
        for req in selector.match_expressions
    ])
    return out


def volume_source_to_dict(source: PersistentVolumeSource) -> tuple[str, JsonDict]:
    """``(kind, fields)`` of a volume source, API defaults left out."""
    out: JsonDict = {}
    if isinstance(source, OtherVolumeSource):
        return source.kind, dict(source.fields)
    if isinstance(source, CSIVolumeSource):
        out = {"driver": source.driver, "volumeHandle": source.volume_handle}
    elif isinstance(source, GCEPersistentDiskVolumeSource):
        out = {"pdName": source.pd_name}
        _put(out, "partition", source.partition)
    elif isinstance(source, AWSElasticBlockStoreVolumeSource):
        out = {"volumeID": source.volume_id}
        _put(out, "partition", source.partition)
    elif isinstance(source, AzureDiskVolumeSource):
        out = {"diskName": source.disk_name, "diskURI": source.disk_uri}
        if source.caching_mode != "ReadWrite":
            out["cachingMode"] = source.caching_mode
        if source.kind != "Shared":
            out["kind"] = source.kind
        if source.fs_type != "ext4":
            out["fsType"] = source.fs_type
    elif isinstance(source, CinderVolumeSource):
        out = {"volumeID": source.volume_id}
    elif isinstance(source, ISCSIVolumeSource):
        out = {"targetPortal": source.target_portal, "iqn": source.iqn, "lun": source.lun}
    elif isinstance(source, RBDVolumeSource):
        out = {"monitors": list(source.monitors), "image": source.image}
        if source.pool != "rbd":
            out["pool"] = source.pool
    else:
        out = {"path": source.path}
        if source.fs_type is not None:
            out["fsType"] = source.fs_type
        return source.source_kind, out
    if not isinstance(source, AzureDiskVolumeSource | ISCSIVolumeSource | RBDVolumeSource):
        _put(out, "fsType", source.fs_type)
    _put(out, "readOnly", source.read_only)
    return source.source_kind, out


def pv_to_dict(pv: PersistentVolume) -> JsonDict:
    """A v1 PersistentVolume."""
    spec: JsonDict = {}
    if pv.source is not None:
        kind, fields = volume_source_to_dict(pv.source)
        spec[kind] = fields
    _put(spec, "capacity", {name: str(q) for name, q in pv.capacity.items()})
    _put(spec, "accessModes", list(pv.access_modes))
    _put(spec, "storageClassName", pv.storage_class_name)
    if pv.volume_mode != VOLUME_FILESYSTEM:
        spec["volumeMode"] = pv.volume_mode
    _put(spec, "volumeAttributesClassName", pv.volume_attributes_class_name)
    if pv.node_affinity is not None:
        spec["nodeAffinity"] = {"required": _node_selector(pv.node_affinity)}
    if pv.claim_ref is not None:
        ref: JsonDict = {"kind": "PersistentVolumeClaim", "name": pv.claim_ref.name}
        _put(ref, "namespace", pv.claim_ref.namespace)
        _put(ref, "uid", pv.claim_ref.uid)
        spec["claimRef"] = ref
    meta = _metadata(pv.name, None, labels=dict(pv.labels), annotations=dict(pv.annotations), uid=pv.uid,
                     deletionTimestamp=_timestamp(pv.deletion_timestamp))
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec,
            "status": {"phase": pv.phase}}


def pvc_to_dict(pvc: PersistentVolumeClaim) -> JsonDict:
    """A v1 PersistentVolumeClaim."""
    spec: JsonDict = {}
    _put(spec, "accessModes", list(pvc.access_modes))
    if pvc.selector is not None:
        spec["selector"] = _label_selector(pvc.selector)
    if pvc.requests:
        spec["resources"] = {"requests": {name: str(q) for name, q in pvc.requests.items()}}
    if pvc.storage_class_name is not None:
        spec["storageClassName"] = pvc.storage_class_name
    _put(spec, "volumeName", pvc.volume_name)
    if pvc.volume_mode != VOLUME_FILESYSTEM:
        spec["volumeMode"] = pvc.volume_mode
    _put(spec, "volumeAttributesClassName", pvc.volume_attributes_class_name)
    owners = [{"apiVersion": o.api_version, "kind": o.kind, "name": o.name, "uid": o.uid,
               **({"controller": True} if o.controller else {})} for o in pvc.owner_references]
    meta = _metadata(pvc.name, pvc.namespace, uid=pvc.uid, labels=dict(pvc.labels),
                     annotations=dict(pvc.annotations), ownerReferences=owners,
                     deletionTimestamp=_timestamp(pvc.deletion_timestamp))
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": pvc.phase}}


def storage_class_to_dict(sc: StorageClass) -> JsonDict:
    """A storage.k8s.io/v1 StorageClass."""
    out: JsonDict = {"apiVersion": _STORAGE_API, "kind": "StorageClass", "metadata": _metadata(sc.name, None),
                     "provisioner": sc.provisioner}
    if sc.volume_binding_mode is not None:
        out["volumeBindingMode"] = sc.volume_binding_mode
    _put(out, "allowedTopologies", [
        {"matchLabelExpressions": [{"key": e.key, "values": list(e.values)} for e in term.match_label_expressions]}
        for term in sc.allowed_topologies
    ])
    _put(out, "parameters", dict(sc.parameters))
    return out


def csi_node_to_dict(node: CSINode) -> JsonDict:
    """A storage.k8s.io/v1 CSINode."""
    drivers = []
    for driver in node.drivers:
        item: JsonDict = {"name": driver.name, "nodeID": driver.node_id}
        if driver.allocatable_count is not None:
            item["allocatable"] = {"count": driver.allocatable_count}
        _put(item, "topologyKeys", list(driver.topology_keys))
        drivers.append(item)
    return {"apiVersion": _STORAGE_API, "kind": "CSINode",
            "metadata": _metadata(node.name, None, annotations=dict(node.annotations)),
            "spec": {"drivers": drivers}}


def csi_driver_to_dict(driver: CSIDriver) -> JsonDict:
    """A storage.k8s.io/v1 CSIDriver."""
    spec: JsonDict = {"attachRequired": driver.attach_required, "storageCapacity": driver.storage_capacity}
    return {"apiVersion": _STORAGE_API, "kind": "CSIDriver", "metadata": _metadata(driver.name, None), "spec": spec}


def csi_storage_capacity_to_dict(capacity: CSIStorageCapacity) -> JsonDict:
    """A storage.k8s.io/v1 CSIStorageCapacity."""
    out: JsonDict = {"apiVersion": _STORAGE_API, "kind": "CSIStorageCapacity",
                     "metadata": _metadata(capacity.name, capacity.namespace),
                     "storageClassName": capacity.storage_class_name}
    if capacity.capacity is not None:
        out["capacity"] = str(capacity.capacity)
    if capacity.maximum_volume_size is not None:
        out["maximumVolumeSize"] = str(capacity.maximum_volume_size)
    if capacity.node_topology is not None:
        out["nodeTopology"] = _label_selector(capacity.node_topology)
    return out


def volume_attachment_to_dict(attachment: VolumeAttachment) -> JsonDict:
    """A storage.k8s.io/v1 VolumeAttachment."""
    source: JsonDict = {}
    if attachment.persistent_volume_name is not None:
        source["persistentVolumeName"] = attachment.persistent_volume_name
    return {"apiVersion": _STORAGE_API, "kind": "VolumeAttachment", "metadata": _metadata(attachment.name, None),
            "spec": {"attacher": attachment.attacher, "nodeName": attachment.node_name, "source": source}}


_WRITERS: Final[dict[type, Callable[[Any], JsonDict]]] = {
    PersistentVolume: pv_to_dict,
    PersistentVolumeClaim: pvc_to_dict,
    StorageClass: storage_class_to_dict,
    CSINode: csi_node_to_dict,
    CSIDriver: csi_driver_to_dict,
    CSIStorageCapacity: csi_storage_capacity_to_dict,
    VolumeAttachment: volume_attachment_to_dict,
}


def storage_object_to_dict(obj: StorageObject) -> JsonDict:
    """Any storage object as its v1 dict (the inverse of reading it)."""
    return _WRITERS[type(obj)](obj)
