"""NodeVolumeLimits: CSI attach limits from node allocatable and CSINode, unique volumes, migration."""

from __future__ import annotations

import hashlib

import pytest

from kschedlib.framework import CycleState, Status
from kschedlib.model.objects import OwnerReference, Pod, Volume
from kschedlib.model.storage import (
    AWSElasticBlockStoreVolumeSource,
    CSINode,
    CSINodeDriver,
    CSIVolumeSource,
    GCEPersistentDiskVolumeSource,
)
from kschedlib.plugins._helpers.csi_translation import attach_limit_key
from kschedlib.plugins.node_volume_limits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
    volume_limits,
)
from kschedlib.testing import FakeHandle
from tests.helpers import (
    claim_volume,
    inline_volume,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_storage_class,
    node_info,
)

EBS = "ebs.csi.aws.com"
EBS_KEY = "attachable-volumes-csi-ebs.csi.aws.com"
ALLOC = {"cpu": "4", "memory": "8Gi", "pods": "110"}


def _pod(name: str, *volumes: Volume, node: str = "") -> Pod:
    return make_pod(name, node_name=node, uid=f"default/{name}", volumes=tuple(volumes))


def _csi_claim(claim: str, pv: str, handle: str, driver: str = EBS) -> tuple[object, object]:
    return make_pvc(claim, volume_name=pv), make_pv(pv, source=CSIVolumeSource(driver, handle))


def _csi_node(count: int | None, name: str = "n", driver: str = EBS, **annotations: str) -> CSINode:
    return CSINode(name, dict(annotations), (CSINodeDriver(driver, "id", count),))


def _run(pod: Pod, existing: tuple[Pod, ...], storage: tuple[object, ...],
         allocatable: dict[str, str] | None = None) -> Status:
    handle = FakeHandle(kube_version="1.30", storage=storage)
    plugin = NodeVolumeLimits(None, handle)
    state = CycleState()
    pre = plugin.pre_filter(state, pod)
    assert pre == Status.success()
    return plugin.filter(state, pod, node_info(make_node("n", allocatable=allocatable or ALLOC), *existing))


EXCEEDED = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)

CASES = [
    pytest.param(
        _pod("p", claim_volume("c1"), claim_volume("c2")), (),
        (*_csi_claim("c1", "pv1", "h1"), *_csi_claim("c2", "pv2", "h2"), _csi_node(1)), None, EXCEEDED,
        id="two-new-volumes-over-limit-1"),
    pytest.param(
        _pod("p", claim_volume("c1"), claim_volume("c2")), (),
        (*_csi_claim("c1", "pv1", "h1"), *_csi_claim("c2", "pv2", "h2"), _csi_node(2)), None, Status.success(),
        id="two-new-volumes-at-limit-2"),
    pytest.param(
        _pod("p", claim_volume("c1")), (_pod("old", claim_volume("c1"), node="n"),),
        (*_csi_claim("c1", "pv1", "h1"), _csi_node(1)), None, Status.success(),
        id="already-attached-volume-is-free"),
    pytest.param(
        _pod("p", claim_volume("c2")), (_pod("old", claim_volume("c1"), node="n"),),
        (*_csi_claim("c1", "pv1", "h"), *_csi_claim("c2", "pv2", "h"), _csi_node(1)), None, Status.success(),
        id="same-handle-two-claims-is-one-volume"),
    pytest.param(
        _pod("p", claim_volume("c2")), (_pod("old", claim_volume("c1"), node="n"),),
        (*_csi_claim("c1", "pv1", "h1"), *_csi_claim("c2", "pv2", "h2"), _csi_node(1)), None, EXCEEDED,
        id="attached-plus-new-over-limit"),
    pytest.param(
        _pod("p", claim_volume("c1")), (_pod("old", claim_volume("c9"), node="n"),),
        (*_csi_claim("c1", "pv1", "h1"), _csi_node(1)), None, Status.success(),
        id="existing-pod-missing-claim-not-counted"),
    pytest.param(
        _pod("p", claim_volume("c1")), (_pod("old", claim_volume("c2"), node="n"),),
        (*_csi_claim("c1", "pv1", "h1"), *_csi_claim("c2", "pv2", "h2", driver="other.csi"), _csi_node(1)), None,
        Status.success(), id="limits-are-per-driver"),
    pytest.param(
        _pod("p", claim_volume("c1"), claim_volume("c2")), (),
        (*_csi_claim("c1", "pv1", "h1"), *_csi_claim("c2", "pv2", "h2")), {**ALLOC, EBS_KEY: "1"}, EXCEEDED,
        id="limit-from-node-allocatable"),
    pytest.param(
        _pod("p", claim_volume("c1"), claim_volume("c2")), (),
        (*_csi_claim("c1", "pv1", "h1"), *_csi_claim("c2", "pv2", "h2"), _csi_node(3)), {**ALLOC, EBS_KEY: "1"},
        Status.success(), id="csinode-count-overrides-allocatable"),
    pytest.param(
        _pod("p", claim_volume("c1"), claim_volume("c2")), (),
        (*_csi_claim("c1", "pv1", "h1"), *_csi_claim("c2", "pv2", "h2"), _csi_node(None)), None, Status.success(),
        id="no-limits-no-check"),
    pytest.param(
        _pod("p", claim_volume("u1"), claim_volume("u2")), (),
        (make_pvc("u1", class_name="csi"), make_pvc("u2", class_name="csi"), make_storage_class("csi", provisioner=EBS),
         _csi_node(1)), None, EXCEEDED, id="unbound-claims-counted-by-provisioner"),
    pytest.param(
        _pod("p", claim_volume("u1")), (),
        (make_pvc("u1", class_name="missing"), _csi_node(0)), None, Status.success(),
        id="unbound-claim-of-missing-class-not-counted"),
    pytest.param(
        _pod("p", claim_volume("u1")), (),
        (make_pvc("u1", volume_name="gone", class_name="csi"), make_storage_class("csi", provisioner=EBS),
         _csi_node(0)), None, EXCEEDED, id="missing-pv-falls-back-to-the-class"),
    pytest.param(
        _pod("p", claim_volume("u1")), (),
        (make_pvc("u1", class_name="tree"), make_storage_class("tree", provisioner="kubernetes.io/aws-ebs")),
        {**ALLOC, EBS_KEY: "0"}, Status.success(), id="in-tree-provisioner-without-csinode-not-counted"),
    pytest.param(
        _pod("p", claim_volume("u1")), (),
        (make_pvc("u1", class_name="tree"), make_storage_class("tree", provisioner="kubernetes.io/aws-ebs"),
         _csi_node(0)), None, EXCEEDED, id="in-tree-provisioner-migrated-with-csinode"),
    pytest.param(
        _pod("p", inline_volume("d", "awsElasticBlockStore", volumeID="vol-1")), (), (_csi_node(0),), None, EXCEEDED,
        id="inline-ebs-migrated"),
    pytest.param(
        _pod("p", inline_volume("d", "awsElasticBlockStore", volumeID="aws://us-east-1a/vol-1")),
        (_pod("old", inline_volume("d", "awsElasticBlockStore", volumeID="vol-1"), node="n"),), (_csi_node(1),), None,
        Status.success(), id="inline-ebs-zone-prefixed-id-is-the-same-volume"),
    pytest.param(
        _pod("p", inline_volume("d", "awsElasticBlockStore", volumeID="vol-1")), (), (), {**ALLOC, EBS_KEY: "0"},
        Status.success(), id="inline-ebs-not-migrated-without-csinode"),
    pytest.param(
        _pod("p", claim_volume("c")), (),
        (make_pvc("c", volume_name="pv"), make_pv("pv", source=AWSElasticBlockStoreVolumeSource("vol-1")),
         _csi_node(0)), None, EXCEEDED, id="in-tree-pv-migrated"),
    pytest.param(
        _pod("p", claim_volume("c")), (_pod("old", inline_volume("d", "gcePersistentDisk", pdName="disk"), node="n"),),
        (make_pvc("c", volume_name="pv"), make_pv("pv", source=GCEPersistentDiskVolumeSource("disk")),
         _csi_node(1, driver="pd.csi.storage.gke.io")), None, Status.success(),
        id="gce-pv-without-zone-is-the-inline-disk"),
    pytest.param(
        _pod("p", claim_volume("c")), (_pod("old", inline_volume("d", "gcePersistentDisk", pdName="disk"), node="n"),),
        (make_pvc("c", volume_name="pv"),
         make_pv("pv", source=GCEPersistentDiskVolumeSource("disk"), labels={"topology.kubernetes.io/zone": "z"}),
         _csi_node(1, driver="pd.csi.storage.gke.io")), None, EXCEEDED,
        id="gce-pv-with-zone-is-another-handle"),
    pytest.param(
        _pod("p", claim_volume("c")), (),
        (make_pvc("c", volume_name="pv"), make_pv("pv", source=GCEPersistentDiskVolumeSource("disk"),
                                                  labels={"topology.kubernetes.io/zone": "bad__zones"}),
         _csi_node(0, driver="pd.csi.storage.gke.io")), None, Status.success(),
        id="untranslatable-pv-not-counted"),
    pytest.param(
        _pod("p", claim_volume("nope")), (), (_csi_node(1),), None,
        Status.unresolvable('looking up PVC default/nope: persistentvolumeclaim "nope" not found'),
        id="missing-claim-unresolvable"),
    pytest.param(
        _pod("p", Volume("scratch", ephemeral=True, source_kind="ephemeral")), (),
        (make_pvc("p-scratch", owner_references=(OwnerReference("Pod", "p", "someone-else", "v1", True),)),
         _csi_node(1)), None,
        Status.from_error("PVC default/p-scratch was not created for pod default/p (pod is not owner)"),
        id="ephemeral-claim-not-owned-is-an-error"),
    pytest.param(
        _pod("p", inline_volume("d", "azureDisk", diskName="n", diskURI="u")), (), (_csi_node(1),), None,
        Status.from_error("converting volume(d) from inline to csi: kind(Shared) is not supported in csi migration"),
        id="inline-azure-shared-disk-cannot-migrate"),
    pytest.param(
        _pod("p", inline_volume("d", "awsElasticBlockStore", volumeID="aws://zone/bad")), (), (_csi_node(1),), None,
        Status.from_error("converting volume(d) from inline to csi: failed to translate Kubernetes ID to EBS "
                          "Volume ID Invalid format for AWS volume (aws://zone/bad)"),
        id="inline-ebs-bad-id"),
]


@pytest.mark.parametrize(("pod", "existing", "storage", "allocatable", "expected"), CASES)
def test_filter(pod: Pod, existing: tuple[Pod, ...], storage: tuple[object, ...],
                allocatable: dict[str, str] | None, expected: Status) -> None:
    status = _run(pod, existing, storage, allocatable)
    assert (status.code, status.message()) == (expected.code, expected.message())


def test_ephemeral_volume_owned_by_the_pod_counts() -> None:
    pod = _pod("p", Volume("scratch", ephemeral=True, source_kind="ephemeral"))
    owned = make_pvc("p-scratch", class_name="csi",
                     owner_references=(OwnerReference("Pod", "p", pod.uid, "v1", True),))
    status = _run(pod, (), (owned, make_storage_class("csi", provisioner=EBS), _csi_node(0)))
    assert status == EXCEEDED


@pytest.mark.parametrize(("volumes", "expected"), [
    pytest.param((), Status.skip(), id="no-volumes"),
    pytest.param((inline_volume("e", "emptyDir"),), Status.skip(), id="empty-dir"),
    pytest.param((inline_volume("c", "csi", driver="x"),), Status.skip(), id="inline-csi"),
    pytest.param((claim_volume("c"),), Status.success(), id="claim"),
    pytest.param((Volume("e", ephemeral=True, source_kind="ephemeral"),), Status.success(), id="ephemeral"),
    pytest.param((inline_volume("d", "rbd", monitors=["m"], image="i"),), Status.success(), id="migratable-rbd"),
])
def test_pre_filter(volumes: tuple[Volume, ...], expected: Status) -> None:
    plugin = NodeVolumeLimits(None, FakeHandle(kube_version="1.30"))
    assert plugin.pre_filter(CycleState(), _pod("p", *volumes)) == expected


def test_attach_limit_key_hashes_long_driver_names() -> None:
    assert attach_limit_key("ebs.csi.aws.com") == "attachable-volumes-csi-ebs.csi.aws.com"
    long = "a-really-long-csi-driver-name.example.com"
    digest = hashlib.sha1(long.encode()).hexdigest()[:16]
    assert attach_limit_key(long) == f"attachable-volumes-csi-{long[:23]}{digest}"
    assert len("attachable-volumes-csi-") + len("x" * 39) == 62
    assert attach_limit_key("x" * 39) == "attachable-volumes-csi-" + "x" * 39
    assert attach_limit_key("x" * 40).startswith("attachable-volumes-csi-" + "x" * 23)


def test_volume_limits_merge_allocatable_and_csinode() -> None:
    scalars = {"attachable-volumes-aws-ebs": 39, EBS_KEY: 10, "example.com/gpu": 1}
    node = CSINode("n", {}, (CSINodeDriver(EBS, "i", 25), CSINodeDriver("x.csi", "i")))
    assert volume_limits(scalars, node) == {"attachable-volumes-aws-ebs": 39, EBS_KEY: 25}
    assert volume_limits(scalars, None) == {"attachable-volumes-aws-ebs": 39, EBS_KEY: 10}
