"""Storage objects: reading v1 PersistentVolumes, claims, StorageClasses and CSI objects, defaults,
errors that name the field, round trips, and the store that holds them."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib._internal.store import ObjectStore
from kschedlib.errors import ManifestError, QuantityError
from kschedlib.model import parse_quantity
from kschedlib.model.convert import (
    csi_driver_from_dict,
    csi_node_from_dict,
    csi_storage_capacity_from_dict,
    object_from_dict,
    object_to_dict,
    objects_from_document,
    pv_from_dict,
    pvc_from_dict,
    storage_class_from_dict,
    volume_source_from_dict,
)
from kschedlib.model.labels import LabelSelector, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.model.objects import OwnerReference
from kschedlib.model.storage import (
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
    RBDVolumeSource,
    StorageClass,
    TopologySelectorRequirement,
    TopologySelectorTerm,
)
from kschedlib.simulation.cluster import load_cluster

PV: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolume",
    "metadata": {"name": "pv-1", "labels": {"topology.kubernetes.io/zone": "zone-a"}, "uid": "u1",
                 "annotations": {"note": "x"}},
    "spec": {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
        "storageClassName": "fast",
        "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1", "fsType": "ext4"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]},
        ]}},
        "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data", "uid": "c1"},
        "persistentVolumeReclaimPolicy": "Delete",
    },
    "status": {"phase": "Bound"},
}
PVC: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "team", "uid": "c1",
                 "annotations": {"pv.kubernetes.io/bind-completed": "yes"},
                 "ownerReferences": [
                     {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pu", "controller": True},
                 ]},
    "spec": {
        "accessModes": ["ReadWriteOncePod"],
        "resources": {"requests": {"storage": "5Gi"}},
        "storageClassName": "fast",
        "volumeName": "pv-1",
        "selector": {"matchLabels": {"tier": "gold"}},
        "volumeMode": "Block",
    },
    "status": {"phase": "Bound"},
}
SC: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "fast"},
    "provisioner": "ebs.csi.aws.com",
    "volumeBindingMode": "WaitForFirstConsumer",
    "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}],
    "parameters": {"type": "gp3"},
}
CSI_NODE: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "CSINode",
    "metadata": {"name": "node-0",
                 "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"}},
    "spec": {"drivers": [
        {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}, "topologyKeys": ["zone"]},
        {"name": "other.csi", "nodeID": "n"},
    ]},
}
CSI_DRIVER: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                              "metadata": {"name": "ebs.csi.aws.com"}, "spec": {"storageCapacity": True}}
CAPACITY: dict[str, Any] = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "CSIStorageCapacity",
    "metadata": {"name": "cap-1", "namespace": "kube-system"},
    "storageClassName": "fast",
    "capacity": "100Gi",
    "maximumVolumeSize": "50Gi",
    "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": "a"}},
}


def _through_json(doc: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(doc))
    return result


# --- reading --------------------------------------------------------------------------------


def test_persistent_volume_reads_every_field() -> None:
    pv = pv_from_dict(PV)
    assert pv == PersistentVolume(
        "pv-1",
        labels={"topology.kubernetes.io/zone": "zone-a"},
        annotations={"note": "x"},
        uid="u1",
        capacity={"storage": parse_quantity("10Gi")},
        access_modes=("ReadWriteOnce", "ReadOnlyMany"),
        storage_class_name="fast",
        node_affinity=NodeSelector((NodeSelectorTerm((
            NodeSelectorRequirement("topology.kubernetes.io/zone", "In", ("zone-a",)),)),)),
        claim_ref=ClaimRef("data", "default", "c1"),
        source=CSIVolumeSource("ebs.csi.aws.com", "vol-1", fs_type="ext4"),
        phase="Bound",
    )


def test_persistent_volume_defaults() -> None:
    pv = pv_from_dict({"kind": "PersistentVolume", "metadata": {"name": "x"}, "spec": {"hostPath": {"path": "/d"}}})
    assert (pv.volume_mode, pv.phase, pv.storage_class_name, pv.node_affinity, pv.claim_ref) == (
        "Filesystem", "Pending", "", None, None)
    assert pv.source == OtherVolumeSource("hostPath", {"path": "/d"})
    assert pv_from_dict({"kind": "PersistentVolume", "metadata": {"name": "x"}}).source is None


def test_node_affinity_without_required_is_none() -> None:
    doc = copy.deepcopy(PV)
    doc["spec"]["nodeAffinity"] = {}
    assert pv_from_dict(doc).node_affinity is None


SOURCES = [
    pytest.param("gcePersistentDisk", {"pdName": "d", "readOnly": True, "partition": 2},
                 GCEPersistentDiskVolumeSource("d", partition=2, read_only=True), id="gce-pd"),
    pytest.param("awsElasticBlockStore", {"volumeID": "vol-9", "fsType": "xfs"},
                 AWSElasticBlockStoreVolumeSource("vol-9", fs_type="xfs"), id="aws-ebs"),
    pytest.param("azureDisk", {"diskName": "n", "diskURI": "u"},
                 AzureDiskVolumeSource("n", "u", caching_mode="ReadWrite", fs_type="ext4", read_only=False,
                                       kind="Shared"), id="azure-disk-api-defaults"),
    pytest.param("azureDisk", {"diskName": "n", "diskURI": "u", "kind": "Managed", "readOnly": True},
                 AzureDiskVolumeSource("n", "u", kind="Managed", read_only=True), id="azure-disk-managed"),
    pytest.param("cinder", {"volumeID": "c"}, CinderVolumeSource("c"), id="cinder"),
    pytest.param("iscsi", {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": 1},
                 ISCSIVolumeSource("10.0.0.1:3260", "iqn.x", 1), id="iscsi"),
    pytest.param("rbd", {"monitors": ["m1", "m2"], "image": "img"},
                 RBDVolumeSource(("m1", "m2"), "img", pool="rbd"), id="rbd-default-pool"),
    pytest.param("local", {"path": "/mnt/disk"}, LocalVolumeSource("/mnt/disk"), id="local"),
    pytest.param("nfs", {"server": "s", "path": "/"}, OtherVolumeSource("nfs", {"server": "s", "path": "/"}),
                 id="other-kept-as-read"),
]


@pytest.mark.parametrize(("kind", "raw", "expected"), SOURCES)
def test_volume_sources(kind: str, raw: dict[str, Any], expected: object) -> None:
    assert volume_source_from_dict(kind, raw) == expected
    doc = {"kind": "PersistentVolume", "metadata": {"name": "x"}, "spec": {kind: raw}}
    pv = pv_from_dict(doc)
    assert pv.source == expected
    assert pv.source is not None
    assert pv.source.source_kind == kind
    assert pv_from_dict(_through_json(object_to_dict(pv))) == pv


def test_claim_reads_every_field() -> None:
    pvc = pvc_from_dict(PVC)
    assert pvc == PersistentVolumeClaim(
        "data",
        namespace="team",
        uid="c1",
        annotations={"pv.kubernetes.io/bind-completed": "yes"},
        owner_references=(OwnerReference("Pod", "p", "pu", "v1", True),),
        access_modes=("ReadWriteOncePod",),
        selector=LabelSelector({"tier": "gold"}),
        requests={"storage": parse_quantity("5Gi")},
        storage_class_name="fast",
        volume_name="pv-1",
        volume_mode="Block",
        phase="Bound",
    )
    assert pvc.key == "team/data"


@pytest.mark.parametrize(("spec", "expected"), [
    pytest.param({}, None, id="absent"),
    pytest.param({"storageClassName": None}, None, id="null"),
    pytest.param({"storageClassName": ""}, "", id="empty"),
    pytest.param({"storageClassName": "x"}, "x", id="named"),
])
def test_claim_class_keeps_absent_apart_from_empty(spec: dict[str, Any], expected: str | None) -> None:
    pvc = pvc_from_dict({"kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": spec})
    assert pvc.storage_class_name == expected
    assert pvc_from_dict(_through_json(object_to_dict(pvc))) == pvc


def test_claim_defaults() -> None:
    pvc = pvc_from_dict({"kind": "PersistentVolumeClaim", "metadata": {"name": "c"}})
    assert (pvc.namespace, pvc.phase, pvc.volume_mode, pvc.volume_name, pvc.requests, pvc.selector) == (
        "default", "Pending", "Filesystem", "", {}, None)


def test_storage_class_reads_every_field_and_defaults_the_binding_mode() -> None:
    assert storage_class_from_dict(SC) == StorageClass(
        "fast", "ebs.csi.aws.com", "WaitForFirstConsumer",
        (TopologySelectorTerm((TopologySelectorRequirement("topology.kubernetes.io/zone", ("a", "b")),)),),
        {"type": "gp3"},
    )
    plain = storage_class_from_dict({"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p"})
    assert plain.volume_binding_mode == "Immediate"


def test_csi_objects() -> None:
    assert csi_node_from_dict(CSI_NODE) == CSINode(
        "node-0", {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"},
        (CSINodeDriver("ebs.csi.aws.com", "i-1", 25, ("zone",)), CSINodeDriver("other.csi", "n")),
    )
    assert csi_driver_from_dict(CSI_DRIVER) == CSIDriver("ebs.csi.aws.com", storage_capacity=True, attach_required=True)
    assert csi_driver_from_dict({"kind": "CSIDriver", "metadata": {"name": "d"}}) == CSIDriver("d", False, True)
    assert csi_storage_capacity_from_dict(CAPACITY) == CSIStorageCapacity(
        "cap-1", "kube-system", "fast", parse_quantity("100Gi"), parse_quantity("50Gi"),
        LabelSelector({"topology.kubernetes.io/zone": "a"}),
    )


def test_object_from_dict_reads_every_storage_kind() -> None:
    kinds = [type(object_from_dict(doc)).__name__ for doc in (PV, PVC, SC, CSI_NODE, CSI_DRIVER, CAPACITY)]
    assert kinds == ["PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
                     "CSIStorageCapacity"]
    assert object_from_dict({"kind": "ConfigMap", "metadata": {"name": "x"}}) is None


def test_load_cluster_and_the_store_hold_storage_objects() -> None:
    cluster = load_cluster({"kind": "List", "items": [PV, PVC, SC, CSI_NODE, CSI_DRIVER, CAPACITY]})
    store = ObjectStore()
    store.add(cluster.objects)
    storage = store.storage
    assert storage.get_pv("pv-1") == pv_from_dict(PV)
    assert storage.get_pvc("team", "data") == pvc_from_dict(PVC)
    assert storage.get_pvc("default", "data") is None
    assert storage.get_storage_class("fast") is not None
    assert storage.get_csi_node("node-0") is not None
    assert storage.get_csi_driver("ebs.csi.aws.com") is not None
    assert len(storage.csi_storage_capacities()) == 1
    assert [pv.name for pv in storage.pvs_of_class("fast")] == ["pv-1"]
    copied = store.copy()
    copied.storage.remove_pv("pv-1")
    assert storage.get_pv("pv-1") is not None
    assert copied.storage.pvs_of_class("fast") == ()


def test_pvs_of_class_follow_the_beta_annotation_and_updates() -> None:
    store = ObjectStore().storage
    annotated = copy.deepcopy(PV)
    annotated["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "slow"}
    store.add(pv_from_dict(PV))
    store.add(pv_from_dict({**PV, "metadata": {"name": "pv-0"}}))
    assert [pv.name for pv in store.pvs_of_class("fast")] == ["pv-0", "pv-1"]
    store.add(pv_from_dict(annotated))
    assert [pv.name for pv in store.pvs_of_class("fast")] == ["pv-0"]
    assert [pv.name for pv in store.pvs_of_class("slow")] == ["pv-1"]


# --- errors ---------------------------------------------------------------------------------


def _with(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    target = out
    keys = path.split(".")
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value
    return out


ERRORS = [
    pytest.param(_with(PV, "spec.hostPath", {"path": "/"}), "PersistentVolume pv-1", "spec", id="pv-two-sources"),
    pytest.param(_with(PV, "spec.accessModes", ["ReadWriteSometimes"]), "PersistentVolume pv-1",
                 "spec.accessModes[0]", id="pv-bad-access-mode"),
    pytest.param(_with(PV, "spec.volumeMode", "Tape"), "PersistentVolume pv-1", "spec.volumeMode", id="pv-bad-mode"),
    pytest.param(_with(PV, "spec.csi", {"volumeHandle": "h"}), "PersistentVolume pv-1", "spec.csi.driver",
                 id="csi-without-driver"),
    pytest.param(_with(PV, "spec.claimRef", "data"), "PersistentVolume pv-1", "spec.claimRef", id="claim-ref-string"),
    pytest.param(_with(PV, "spec.capacity", {"storage": "ten"}), "PersistentVolume pv-1", "spec.capacity.storage",
                 id="pv-bad-capacity"),
    pytest.param(_with(PV, "status.phase", "Gone"), "PersistentVolume pv-1", "status.phase", id="pv-bad-phase"),
    pytest.param(_with(PV, "spec.nodeAffinity", {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "k", "operator": "In"}]}]}}), "PersistentVolume pv-1",
        "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values", id="pv-affinity-no-values"),
    pytest.param({"kind": "PersistentVolume", "metadata": {"name": "r"}, "spec": {"rbd": {"image": "i"}}},
                 "PersistentVolume r", "spec.rbd.monitors", id="rbd-without-monitors"),
    pytest.param({"kind": "PersistentVolume", "metadata": {"name": "g"}, "spec": {"gcePersistentDisk": {"pdName": 3}}},
                 "PersistentVolume g", "spec.gcePersistentDisk.pdName", id="gce-pd-name-not-a-string"),
    pytest.param({"kind": "PersistentVolume", "metadata": {}}, "PersistentVolume", "metadata.name", id="pv-no-name"),
    pytest.param(_with(PVC, "status.phase", "Done"), "PersistentVolumeClaim team/data", "status.phase",
                 id="pvc-bad-phase"),
    pytest.param(_with(PVC, "spec.storageClassName", 5), "PersistentVolumeClaim team/data", "spec.storageClassName",
                 id="pvc-class-not-a-string"),
    pytest.param(_with(PVC, "spec.selector", {"matchExpressions": [{"key": "a", "operator": "Near"}]}),
                 "PersistentVolumeClaim team/data", "spec.selector.matchExpressions[0].operator",
                 id="pvc-bad-selector"),
    pytest.param(_with(PVC, "spec.resources", {"requests": {"storage": "x1"}}), "PersistentVolumeClaim team/data",
                 "spec.resources.requests.storage", id="pvc-bad-request"),
    pytest.param({**SC, "provisioner": ""}, "StorageClass fast", "provisioner", id="sc-no-provisioner"),
    pytest.param({**SC, "volumeBindingMode": "Later"}, "StorageClass fast", "volumeBindingMode", id="sc-bad-mode"),
    pytest.param({**SC, "allowedTopologies": [{"matchLabelExpressions": [{"key": "z", "values": []}]}]},
                 "StorageClass fast", "allowedTopologies[0].matchLabelExpressions[0].values", id="sc-empty-values"),
    pytest.param(_with(CSI_NODE, "spec.drivers", [{"name": "d", "allocatable": {"count": -1}}]), "CSINode node-0",
                 "spec.drivers[0].allocatable.count", id="csinode-negative-count"),
    pytest.param(_with(CSI_NODE, "spec.drivers", [{"nodeID": "x"}]), "CSINode node-0", "spec.drivers[0].name",
                 id="csinode-driver-without-name"),
    pytest.param(_with(CSI_DRIVER, "spec.storageCapacity", "yes"), "CSIDriver ebs.csi.aws.com", "spec.storageCapacity",
                 id="csidriver-bool"),
    pytest.param({**CAPACITY, "capacity": "lots"}, "CSIStorageCapacity kube-system/cap-1", "capacity",
                 id="capacity-bad-quantity"),
    pytest.param({**CAPACITY, "storageClassName": None}, "CSIStorageCapacity kube-system/cap-1", "storageClassName",
                 id="capacity-without-class"),
]


@pytest.mark.parametrize(("doc", "obj", "field"), ERRORS)
def test_malformed_objects_name_object_and_field(doc: dict[str, Any], obj: str, field: str) -> None:
    with pytest.raises(ManifestError) as info:
        object_from_dict(doc)
    assert (info.value.obj, info.value.field) == (obj, field)


def test_bad_quantity_is_a_quantity_error_with_the_value() -> None:
    with pytest.raises(QuantityError) as info:
        csi_storage_capacity_from_dict({**CAPACITY, "maximumVolumeSize": "1Qi"})
    assert (info.value.field, info.value.value) == ("maximumVolumeSize", "1Qi")


def test_declared_kind_must_match_the_reader() -> None:
    with pytest.raises(ManifestError) as info:
        pv_from_dict({**PVC})
    assert (info.value.field, info.value.value) == ("kind", "PersistentVolumeClaim")


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.parametrize("doc", [PV, PVC, SC, CSI_NODE, CSI_DRIVER, CAPACITY],
                         ids=["pv", "pvc", "storage-class", "csi-node", "csi-driver", "capacity"])
def test_round_trip(doc: dict[str, Any]) -> None:
    obj = object_from_dict(doc)
    assert obj is not None
    written = _through_json(object_to_dict(obj))
    assert written["kind"] == doc["kind"]
    assert object_from_dict(written) == obj
    assert objects_from_document([written]) == [obj]


_names = st.text("abcdefgh0123456789-", min_size=1, max_size=8)
_modes = st.lists(st.sampled_from(["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]),
                  max_size=3, unique=True).map(tuple)
_sizes = st.sampled_from(["1Gi", "500Mi", "10G", "3", "1.5Gi"]).map(parse_quantity)
_sources = st.one_of(
    st.builds(CSIVolumeSource, _names, _names, st.booleans()),
    st.builds(GCEPersistentDiskVolumeSource, _names, read_only=st.booleans()),
    st.builds(AWSElasticBlockStoreVolumeSource, _names, partition=st.integers(0, 4)),
    st.builds(AzureDiskVolumeSource, _names, _names, kind=st.sampled_from(["Shared", "Managed", "Dedicated"])),
    st.builds(RBDVolumeSource, st.lists(_names, min_size=1, max_size=3).map(tuple), _names,
              pool=st.sampled_from(["rbd", "other"])),
    st.builds(ISCSIVolumeSource, _names, _names, st.integers(0, 3), st.booleans()),
    st.builds(LocalVolumeSource, _names),
    st.none(),
)
_pvs = st.builds(
    PersistentVolume, _names,
    labels=st.dictionaries(_names, _names, max_size=2),
    capacity=st.dictionaries(st.just("storage"), _sizes, max_size=1),
    access_modes=_modes,
    storage_class_name=st.one_of(st.just(""), _names),
    volume_mode=st.sampled_from(["Filesystem", "Block"]),
    claim_ref=st.one_of(st.none(), st.builds(ClaimRef, _names, _names, st.one_of(st.just(""), _names))),
    source=_sources,
    phase=st.sampled_from(["Pending", "Available", "Bound", "Released", "Failed"]),
)
_pvcs = st.builds(
    PersistentVolumeClaim, _names, namespace=_names,
    annotations=st.dictionaries(_names, _names, max_size=2),
    access_modes=_modes,
    requests=st.dictionaries(st.just("storage"), _sizes, max_size=1),
    storage_class_name=st.one_of(st.none(), st.just(""), _names),
    volume_name=st.one_of(st.just(""), _names),
    phase=st.sampled_from(["Pending", "Bound", "Lost"]),
)


@settings(max_examples=150, deadline=None)
@given(st.one_of(_pvs, _pvcs))
def test_any_volume_or_claim_round_trips(obj: PersistentVolume | PersistentVolumeClaim) -> None:
    assert object_from_dict(_through_json(object_to_dict(obj))) == obj
