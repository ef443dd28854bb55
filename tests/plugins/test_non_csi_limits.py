"""EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits: in-tree disk counts per node."""

from __future__ import annotations

import pytest

from kschedlib.framework import CycleState, Status
from kschedlib.framework.status import Code
from kschedlib.model.objects import Pod, Volume
from kschedlib.model.storage import (
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CSINode,
    GCEPersistentDiskVolumeSource,
)
from kschedlib.plugins.non_csi_limits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    KUBE_MAX_PD_VOLS,
    AzureDiskLimits,
    CinderLimits,
    EBSLimits,
    GCEPDLimits,
    max_ebs_volumes,
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

ALLOC = {"cpu": "4", "memory": "8Gi", "pods": "110"}
EXCEEDED = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
Limits = type[EBSLimits] | type[GCEPDLimits] | type[AzureDiskLimits] | type[CinderLimits]


def _pod(name: str, *volumes: Volume, node: str = "") -> Pod:
    return make_pod(name, node_name=node, uid=f"default/{name}", volumes=tuple(volumes))


def _ebs(name: str, volume_id: str) -> Volume:
    return inline_volume(name, "awsElasticBlockStore", volumeID=volume_id)


def _gce(name: str, pd: str) -> Volume:
    return inline_volume(name, "gcePersistentDisk", pdName=pd)


def _run(plugin_type: Limits, pod: Pod, existing: tuple[Pod, ...] = (), storage: tuple[object, ...] = (),
         allocatable: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> Status:
    plugin = plugin_type(None, FakeHandle(kube_version="1.30", storage=storage))
    state = CycleState()
    assert plugin.pre_filter(state, pod) == Status.success()
    node = make_node("n", allocatable=allocatable or ALLOC, labels=labels)
    return plugin.filter(state, pod, node_info(node, *existing))


def _many(kind: str, count: int, key: str, prefix: str = "d") -> tuple[Pod, ...]:
    return tuple(_pod(f"o{i}", inline_volume(f"v{i}", kind, **{key: f"{prefix}{i}"}), node="n") for i in range(count))


@pytest.mark.parametrize(("plugin_type", "kind", "key", "default"), [
    pytest.param(GCEPDLimits, "gcePersistentDisk", "pdName", 16, id="gce-pd-16"),
    pytest.param(AzureDiskLimits, "azureDisk", "diskName", 16, id="azure-disk-16"),
    pytest.param(CinderLimits, "cinder", "volumeID", 256, id="cinder-256"),
    pytest.param(EBSLimits, "awsElasticBlockStore", "volumeID", 39, id="ebs-39"),
])
def test_default_limits(plugin_type: Limits, kind: str, key: str, default: int) -> None:
    extra = {"diskURI": "uri"} if kind == "azureDisk" else {}
    pod = _pod("p", inline_volume("new", kind, **{key: "new-disk"}, **extra))
    existing = tuple(_pod(f"o{i}", inline_volume(f"v{i}", kind, **{key: f"d{i}"}, **extra), node="n")
                     for i in range(default))
    assert _run(plugin_type, pod, existing[:-1]) == Status.success()
    assert _run(plugin_type, pod, existing) == EXCEEDED
    already = _pod("p", inline_volume("same", kind, **{key: "d0"}, **extra))
    assert _run(plugin_type, already, existing) == Status.success(), "a disk already on the node costs nothing"


@pytest.mark.parametrize(("instance_type", "limit"), [
    pytest.param("m5.large", 25, id="m5-nitro"),
    pytest.param("c5d.xlarge", 25, id="c5-nitro"),
    pytest.param("t3.micro", 25, id="t3-anywhere"),
    pytest.param("x1.z1d", 25, id="z1d-anywhere"),
    pytest.param("m4.large", 39, id="m4-classic"),
    pytest.param("", 39, id="no-label"),
])
def test_ebs_nitro_limit(instance_type: str, limit: int) -> None:
    assert max_ebs_volumes(instance_type) == limit
    labels = {"node.kubernetes.io/instance-type": instance_type} if instance_type else {}
    pod = _pod("p", _ebs("new", "vol-new"))
    assert _run(EBSLimits, pod, _many("awsElasticBlockStore", limit - 1, "volumeID"), labels=labels) == Status.success()
    assert _run(EBSLimits, pod, _many("awsElasticBlockStore", limit, "volumeID"), labels=labels) == EXCEEDED


def test_allocatable_overrides_the_default_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    pod = _pod("p", _gce("new", "new"))
    existing = _many("gcePersistentDisk", 2, "pdName")
    monkeypatch.setenv(KUBE_MAX_PD_VOLS, "2")
    assert _run(GCEPDLimits, pod, existing) == EXCEEDED
    assert _run(GCEPDLimits, pod, existing, allocatable={**ALLOC, "attachable-volumes-gce-pd": "3"}) == Status.success()
    monkeypatch.setenv(KUBE_MAX_PD_VOLS, "-4")
    assert _run(GCEPDLimits, pod, _many("gcePersistentDisk", 15, "pdName")) == Status.success()
    monkeypatch.setenv(KUBE_MAX_PD_VOLS, "two")
    assert _run(GCEPDLimits, pod, _many("gcePersistentDisk", 16, "pdName")) == EXCEEDED


def test_a_node_with_a_csinode_has_migrated() -> None:
    pod = _pod("p", _gce("new", "new"))
    existing = _many("gcePersistentDisk", 16, "pdName")
    assert _run(GCEPDLimits, pod, existing, storage=(CSINode("n"),)) == Status.success()
    assert _run(GCEPDLimits, pod, existing, storage=(CSINode("other"),)) == EXCEEDED


CLAIMS = [
    pytest.param((make_pvc("c", volume_name="pv"), make_pv("pv", source=GCEPersistentDiskVolumeSource("d0"))),
                 Status.success(), id="claim-to-a-disk-already-attached"),
    pytest.param((make_pvc("c", volume_name="pv"), make_pv("pv", source=GCEPersistentDiskVolumeSource("new"))),
                 EXCEEDED, id="claim-to-a-new-disk"),
    pytest.param((make_pvc("c", volume_name="pv"), make_pv("pv", source=AWSElasticBlockStoreVolumeSource("x"))),
                 Status.success(), id="claim-to-another-type"),
    pytest.param((make_pvc("c", class_name="pd"), make_storage_class("pd", provisioner="kubernetes.io/gce-pd")),
                 EXCEEDED, id="unbound-claim-of-the-in-tree-provisioner"),
    pytest.param((make_pvc("c", class_name="pd", volume_name="gone"),
                  make_storage_class("pd", provisioner="kubernetes.io/gce-pd")), EXCEEDED,
                 id="claim-whose-pv-is-missing"),
    pytest.param((make_pvc("c", class_name="other"), make_storage_class("other", provisioner="pd.csi.storage.gke.io")),
                 Status.success(), id="unbound-claim-of-another-provisioner"),
    pytest.param((make_pvc("c", annotations={"volume.beta.kubernetes.io/storage-class": "pd"}),
                  make_storage_class("pd", provisioner="kubernetes.io/gce-pd")), Status.success(),
                 id="beta-annotation-is-not-read"),
    pytest.param((), Status.unresolvable('looking up PVC default/c: persistentvolumeclaim "c" not found'),
                 id="missing-claim"),
]


@pytest.mark.parametrize(("storage", "expected"), CLAIMS)
def test_claims(storage: tuple[object, ...], expected: Status) -> None:
    existing = _many("gcePersistentDisk", 16, "pdName")
    assert _run(GCEPDLimits, _pod("p", claim_volume("c")), existing, storage) == expected


def test_existing_pods_count_their_claims_and_skip_missing_ones() -> None:
    storage = (make_pvc("a", volume_name="pv-a"), make_pv("pv-a", source=AzureDiskVolumeSource("disk-a", "uri")))
    old = (_pod("o1", claim_volume("a"), node="n"), _pod("o2", claim_volume("missing"), node="n"))
    pod = _pod("p", inline_volume("d", "azureDisk", diskName="disk-b", diskURI="u"))
    allocatable = {**ALLOC, "attachable-volumes-azure-disk": "1"}
    assert _run(AzureDiskLimits, pod, old, storage, allocatable=allocatable) == EXCEEDED
    assert _run(AzureDiskLimits, pod, old[1:], storage, allocatable=allocatable) == Status.success()


@pytest.mark.parametrize(("plugin_type", "volumes", "expected"), [
    pytest.param(EBSLimits, (), Code.SKIP, id="no-volumes"),
    pytest.param(EBSLimits, (_gce("d", "x"),), Code.SKIP, id="other-inline-type"),
    pytest.param(GCEPDLimits, (_gce("d", "x"),), Code.SUCCESS, id="own-inline-type"),
    pytest.param(EBSLimits, (claim_volume("c"),), Code.SUCCESS, id="claim"),
    pytest.param(EBSLimits, (Volume("e", ephemeral=True, source_kind="ephemeral"),), Code.SUCCESS, id="ephemeral"),
])
def test_pre_filter(plugin_type: Limits, volumes: tuple[Volume, ...], expected: Code) -> None:
    status = plugin_type(None, FakeHandle(kube_version="1.30")).pre_filter(CycleState(), _pod("p", *volumes))
    assert isinstance(status, Status)
    assert status.code is expected


def test_plugin_names() -> None:
    assert [t.name for t in (EBSLimits, GCEPDLimits, AzureDiskLimits, CinderLimits)] == [
        "EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits"]
