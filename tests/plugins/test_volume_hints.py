"""The volume plugins' v1.36 queueing hints (switch ``queueing_hints``), one table per hint function.

Cases follow kube's ``volume_binding_test.go``, ``volume_restrictions_test.go``, ``volume_zone_test.go``
and ``csi_test.go`` hint tables: event, old and new object, expected Queue / QueueSkip.
"""

from __future__ import annotations

import attrs
import pytest

from kschedlib import Scheduler
from kschedlib.clock import FakeClock
from kschedlib.framework.events import (
    ALL_EVENTS,
    CSI_DRIVER,
    CSI_NODE,
    CSI_STORAGE_CAPACITY,
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    STORAGE_CLASS,
    VOLUME_ATTACHMENT,
    ActionType,
    QueueingHint,
    QueueingHintFn,
)
from kschedlib.model import Pod
from kschedlib.model.objects import Volume
from kschedlib.model.quantity import parse_quantity
from kschedlib.model.storage import (
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    StorageClass,
    TopologySelectorRequirement,
    TopologySelectorTerm,
    VolumeAttachment,
)
from kschedlib.plugins._helpers import volume_hints as hints
from kschedlib.plugins.node_volume_limits import NodeVolumeLimits
from kschedlib.plugins.volume_binding import VolumeBinding
from kschedlib.plugins.volume_restrictions import VolumeRestrictions
from kschedlib.plugins.volume_zone import VolumeZone
from kschedlib.testing import FakeHandle
from tests.helpers import claim_volume, make_node, make_pod, make_pv, make_pvc

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP

POD_WITH_CLAIM = Pod("p", namespace="ns", volumes=(claim_volume("data"),))
EPHEMERAL = Volume("scratch", ephemeral=True, source_kind="ephemeral")
POD_WITH_EPHEMERAL = Pod("p", namespace="ns", volumes=(EPHEMERAL,))


def gce(pd: str, read_only: bool = False) -> Volume:
    return Volume("disk", source_kind="gcePersistentDisk", source={"pdName": pd, "readOnly": read_only},
                  read_only=read_only)


def ebs(volume_id: str) -> Volume:
    return Volume("ebs", source_kind="awsElasticBlockStore", source={"volumeID": volume_id})


def csi_inline(driver: str) -> Volume:
    return Volume("inline", source_kind="csi", source={"driver": driver})


def zone_term(*zones: str) -> tuple[TopologySelectorTerm, ...]:
    return (TopologySelectorTerm((TopologySelectorRequirement("topology.kubernetes.io/zone", zones),)),)


def check(hint: QueueingHintFn, pod: Pod, old: object, new: object, expected: QueueingHint) -> None:
    assert hint(pod, old, new) is expected


# --- claims (VolumeBinding and NodeVolumeLimits count ephemeral claims, the others do not) --------


@pytest.mark.parametrize(("pod", "pvc", "ephemeral", "expected"), [
    pytest.param(POD_WITH_CLAIM, make_pvc("data", namespace="ns"), False, Q, id="claim-the-pod-uses"),
    pytest.param(POD_WITH_CLAIM, make_pvc("data", namespace="other"), False, SKIP, id="other-namespace"),
    pytest.param(POD_WITH_CLAIM, make_pvc("logs", namespace="ns"), False, SKIP, id="claim-the-pod-does-not-use"),
    pytest.param(POD_WITH_EPHEMERAL, make_pvc("p-scratch", namespace="ns"), True, Q, id="ephemeral-claim"),
    pytest.param(POD_WITH_EPHEMERAL, make_pvc("p-scratch", namespace="ns"), False, SKIP,
                 id="ephemeral-claim-not-read"),
    pytest.param(POD_WITH_CLAIM, "not a claim", False, Q, id="unexpected-object"),
])
def test_claim_hint(pod: Pod, pvc: object, ephemeral: bool, expected: QueueingHint) -> None:
    check(hints._claim_hint(ephemeral=ephemeral), pod, None, pvc, expected)


# --- VolumeBinding --------------------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(None, StorageClass("sc"), Q, id="class-added"),
    pytest.param(StorageClass("sc"), StorageClass("sc", parameters={"a": "b"}), SKIP, id="other-field-updated"),
    pytest.param(StorageClass("sc"), StorageClass("sc", allowed_topologies=zone_term("a")), Q,
                 id="allowed-topologies-updated"),
    pytest.param(None, "not a class", Q, id="unexpected-object"),
])
def test_after_storage_class_change(old: object, new: object, expected: QueueingHint) -> None:
    check(hints.after_storage_class_change, POD_WITH_CLAIM, old, new, expected)


MIGRATED = {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(None, CSINode("n"), Q, id="csinode-added"),
    pytest.param(CSINode("n"), CSINode("n", annotations=MIGRATED), Q, id="migrated-plugins-changed"),
    pytest.param(CSINode("n", annotations=MIGRATED), CSINode("n", annotations={**MIGRATED, "x": "y"}), SKIP,
                 id="other-annotation-changed"),
    pytest.param(CSINode("n"), "not a csinode", Q, id="unexpected-object"),
])
def test_after_csi_node_change(old: object, new: object, expected: QueueingHint) -> None:
    check(hints.after_csi_node_change, POD_WITH_CLAIM, old, new, expected)


INLINE_POD = Pod("p", volumes=(csi_inline("csi.example.com"),))


@pytest.mark.parametrize(("pod", "old", "new", "expected"), [
    pytest.param(INLINE_POD, CSIDriver("csi.example.com", storage_capacity=True), CSIDriver("csi.example.com"), Q,
                 id="capacity-tracking-disabled"),
    pytest.param(INLINE_POD, CSIDriver("csi.example.com"), CSIDriver("csi.example.com", storage_capacity=True),
                 SKIP, id="capacity-tracking-enabled"),
    pytest.param(INLINE_POD, CSIDriver("other", storage_capacity=True), CSIDriver("other"), SKIP,
                 id="driver-the-pod-does-not-use"),
    pytest.param(POD_WITH_CLAIM, CSIDriver("csi.example.com", storage_capacity=True), CSIDriver("csi.example.com"),
                 SKIP, id="pod-without-inline-csi-volume"),
    pytest.param(INLINE_POD, None, CSIDriver("csi.example.com"), Q, id="unexpected-object"),
])
def test_after_csi_driver_change(pod: Pod, old: object, new: object, expected: QueueingHint) -> None:
    check(hints.after_csi_driver_change, pod, old, new, expected)


def capacity(total: str | None, maximum: str | None = None) -> CSIStorageCapacity:
    return CSIStorageCapacity("cap", storage_class_name="sc",
                              capacity=parse_quantity(total) if total else None,
                              maximum_volume_size=parse_quantity(maximum) if maximum else None)


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(None, capacity("10Gi"), Q, id="capacity-added"),
    pytest.param(capacity("10Gi"), capacity("20Gi"), Q, id="capacity-grew"),
    pytest.param(capacity("20Gi"), capacity("10Gi"), SKIP, id="capacity-shrank"),
    pytest.param(capacity("10Gi"), capacity("10Gi"), SKIP, id="unchanged"),
    pytest.param(capacity(None), capacity("1Gi"), Q, id="capacity-set"),
    pytest.param(capacity("1Gi"), capacity(None), SKIP, id="capacity-unset"),
    pytest.param(capacity("100Gi", "5Gi"), capacity("100Gi", "6Gi"), Q, id="maximum-volume-size-grew"),
    pytest.param(capacity("100Gi", "5Gi"), capacity("200Gi", "5Gi"), SKIP, id="capacity-grew-under-a-maximum"),
    pytest.param(None, "not a capacity", Q, id="unexpected-object"),
])
def test_after_csi_storage_capacity_change(old: object, new: object, expected: QueueingHint) -> None:
    check(hints.after_csi_storage_capacity_change, POD_WITH_CLAIM, old, new, expected)


# --- VolumeRestrictions ---------------------------------------------------------------------------


@pytest.mark.parametrize(("pod", "deleted", "expected"), [
    pytest.param(Pod("p", volumes=(gce("pd-1"),)), Pod("q", node_name="n", volumes=(gce("pd-1"),)), Q,
                 id="pod-with-the-conflicting-disk"),
    pytest.param(Pod("p", volumes=(gce("pd-1", True),)), Pod("q", node_name="n", volumes=(gce("pd-1", True),)),
                 SKIP, id="read-only-disks-do-not-conflict"),
    pytest.param(Pod("p", volumes=(gce("pd-1"),)), Pod("q", node_name="n", volumes=(gce("pd-2"),)), SKIP,
                 id="other-disk"),
    pytest.param(Pod("p", namespace="ns", volumes=(claim_volume("rwop"),)),
                 Pod("q", namespace="ns", node_name="n", volumes=(claim_volume("rwop"),)), Q, id="same-claim"),
    pytest.param(Pod("p", namespace="ns", volumes=(claim_volume("rwop"),)),
                 Pod("q", namespace="other", node_name="n", volumes=(claim_volume("rwop"),)), SKIP,
                 id="other-namespace"),
    pytest.param(Pod("p", namespace="ns", volumes=(claim_volume("rwop"),)),
                 Pod("q", namespace="ns", volumes=(claim_volume("other"),)), SKIP, id="other-claim"),
    pytest.param(Pod("p"), None, Q, id="unexpected-object"),
])
def test_after_pod_deleted_restrictions(pod: Pod, deleted: object, expected: QueueingHint) -> None:
    check(hints.after_pod_deleted_restrictions, pod, deleted, None, expected)


# --- VolumeZone -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("new", "expected"), [
    pytest.param(StorageClass("sc", volume_binding_mode="WaitForFirstConsumer"), Q, id="wait-for-first-consumer"),
    pytest.param(StorageClass("sc", volume_binding_mode="Immediate"), SKIP, id="immediate"),
    pytest.param(StorageClass("sc", volume_binding_mode=None), SKIP, id="mode-unset"),
    pytest.param("not a class", Q, id="unexpected-object"),
])
def test_after_storage_class_added(new: object, expected: QueueingHint) -> None:
    check(hints.after_storage_class_added, POD_WITH_CLAIM, None, new, expected)


ZONE_A = {"topology.kubernetes.io/zone": "a"}


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(None, make_pv("pv"), Q, id="pv-added"),
    pytest.param(make_pv("pv", labels=ZONE_A), make_pv("pv", labels={"topology.kubernetes.io/zone": "b"}), Q,
                 id="zone-changed"),
    pytest.param(make_pv("pv"), make_pv("pv", labels=ZONE_A), Q, id="zone-added"),
    pytest.param(make_pv("pv", labels=ZONE_A), make_pv("pv", labels={**ZONE_A, "other": "x"}), SKIP,
                 id="other-label-changed"),
    pytest.param(make_pv("pv", labels={"topology.kubernetes.io/zone": " "}), make_pv("pv"), SKIP,
                 id="unparsable-zone-ignored"),
    pytest.param(make_pv("pv"), "not a pv", Q, id="unexpected-object"),
])
def test_after_pv_change(old: object, new: object, expected: QueueingHint) -> None:
    check(hints.after_pv_change, POD_WITH_CLAIM, old, new, expected)


# --- NodeVolumeLimits -----------------------------------------------------------------------------


@pytest.mark.parametrize(("deleted", "expected"), [
    pytest.param(Pod("q", node_name="n", volumes=(claim_volume("data"),)), Q, id="placed-pod-with-claim"),
    pytest.param(Pod("q", nominated_node_name="n", volumes=(EPHEMERAL,)), Q, id="nominated-pod-with-ephemeral"),
    pytest.param(Pod("q", node_name="n", volumes=(ebs("vol-1"),)), Q, id="migratable-inline-volume"),
    pytest.param(Pod("q", node_name="n", volumes=(csi_inline("x"),)), SKIP, id="inline-csi-volume"),
    pytest.param(Pod("q", volumes=(claim_volume("data"),)), SKIP, id="pending-pod"),
    pytest.param(Pod("q", node_name="n"), SKIP, id="no-volumes"),
    pytest.param("not a pod", Q, id="unexpected-object"),
])
def test_after_pod_deleted_limits(deleted: object, expected: QueueingHint) -> None:
    check(hints.after_pod_deleted_limits, POD_WITH_CLAIM, deleted, None, expected)


@pytest.mark.parametrize(("pod", "deleted", "expected"), [
    pytest.param(POD_WITH_CLAIM, VolumeAttachment("va", "ebs.csi.aws.com", "n", "pv-1"), Q,
                 id="attachment-of-the-claims-volume"),
    pytest.param(POD_WITH_CLAIM, VolumeAttachment("va", "ebs.csi.aws.com", "n", "pv-2"), SKIP,
                 id="attachment-of-another-volume"),
    pytest.param(POD_WITH_CLAIM, VolumeAttachment("va", "ebs.csi.aws.com", "n", None), SKIP,
                 id="attachment-without-volume"),
    pytest.param(Pod("p", namespace="ns", volumes=(claim_volume("missing"),)),
                 VolumeAttachment("va", "ebs.csi.aws.com", "n", "pv-1"), SKIP, id="claim-not-found"),
    pytest.param(Pod("p", volumes=(ebs("vol-1"),)), VolumeAttachment("va", "ebs.csi.aws.com", "n", "x"), Q,
                 id="driver-of-a-migratable-inline-volume"),
    pytest.param(Pod("p", volumes=(ebs("vol-1"),)), VolumeAttachment("va", "pd.csi.storage.gke.io", "n", "x"),
                 SKIP, id="other-driver"),
    pytest.param(Pod("p", namespace="ns"), VolumeAttachment("va", "ebs.csi.aws.com", "n", "pv-1"), SKIP,
                 id="pod-without-volumes"),
    pytest.param(POD_WITH_CLAIM, "not an attachment", Q, id="unexpected-object"),
])
def test_after_volume_attachment_deleted(pod: Pod, deleted: object, expected: QueueingHint) -> None:
    handle = FakeHandle(kube_version="1.30", storage=(make_pvc("data", namespace="ns", volume_name="pv-1"),))
    check(hints.after_volume_attachment_deleted(handle), pod, deleted, None, expected)


# --- registrations: every event with hints off (v1.30), v1.36's set with them on -----------------


PLUGINS = [VolumeBinding, VolumeRestrictions, VolumeZone, NodeVolumeLimits]
EXPECTED = {
    "VolumeBinding": [
        (STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE, True),
        (PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE, True),
        (PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE, False),
        (NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL, False),
        (CSI_NODE, ActionType.ADD | ActionType.UPDATE, True),
        (CSI_DRIVER, ActionType.UPDATE, True),
        (CSI_STORAGE_CAPACITY, ActionType.ADD | ActionType.UPDATE, True),
    ],
    "VolumeRestrictions": [
        (POD, ActionType.DELETE, True), (NODE, ActionType.ADD, False), (PERSISTENT_VOLUME_CLAIM, ActionType.ADD, True),
    ],
    "VolumeZone": [
        (STORAGE_CLASS, ActionType.ADD, True),
        (NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL, False),
        (PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE, True),
        (PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE, True),
    ],
    "NodeVolumeLimits": [
        (CSI_NODE, ActionType.ADD, False), (CSI_NODE, ActionType.UPDATE, True), (POD, ActionType.DELETE, True),
        (PERSISTENT_VOLUME_CLAIM, ActionType.ADD, True), (VOLUME_ATTACHMENT, ActionType.DELETE, True),
    ],
}


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_queueing_hints(plugin: type[VolumeBinding | VolumeRestrictions | VolumeZone | NodeVolumeLimits]) -> None:
    with_hints = plugin(None, FakeHandle(kube_version="1.36")).events_to_register()
    assert [(r.event.resource, r.event.action, r.hint is not None) for r in with_hints] == EXPECTED[plugin.name]
    without = plugin(None, FakeHandle(kube_version="1.30")).events_to_register()
    assert [r.event for r in without] == [ALL_EVENTS]


# --- through the scheduler: which pod deletion requeues a pod VolumeRestrictions rejected ---------


@pytest.mark.parametrize(("kube_version", "moved_by_other", "moved_by_holder"), [
    pytest.param("1.30", True, True, id="v1.30-every-event"),
    pytest.param("1.36", False, True, id="v1.36-hint"),
])
def test_volume_restrictions_hint_in_the_queue(kube_version: str, moved_by_other: bool,
                                               moved_by_holder: bool) -> None:
    scheduler = Scheduler(seed=0, clock=FakeClock(1000.0), kube_version=kube_version)
    holder = attrs.evolve(make_pod("holder", node_name="n"), volumes=(gce("pd-1"),))
    other = make_pod("other", node_name="n")
    wanting = attrs.evolve(make_pod("p"), volumes=(gce("pd-1"),))
    scheduler.add_objects([make_node("n"), holder, other, wanting])
    first = scheduler.schedule_one()
    assert first is not None
    assert not first.scheduled
    scheduler.remove_pod("default/other")
    assert (scheduler.pending()["default/p"][0] != "unschedulable") is moved_by_other
    if not moved_by_other:
        scheduler.remove_pod("default/holder")
        assert (scheduler.pending()["default/p"][0] != "unschedulable") is moved_by_holder


@pytest.mark.parametrize(("kube_version", "moved"), [
    pytest.param("1.30", False, id="v1.30-no-storage-events"),
    pytest.param("1.36", True, id="v1.36-claim-hint"),
])
def test_adding_the_missing_claim_requeues_the_pod(kube_version: str, moved: bool) -> None:
    scheduler = Scheduler(seed=0, clock=FakeClock(1000.0), kube_version=kube_version)
    scheduler.add_objects([make_node("n"), attrs.evolve(make_pod("p"), volumes=(claim_volume("data"),))])
    first = scheduler.schedule_one()
    assert first is not None
    assert first.diagnosis is not None
    assert first.diagnosis.unschedulable_plugins == {"VolumeRestrictions"}
    scheduler.add_objects([make_pvc("other")])
    assert scheduler.pending()["default/p"][0] == "unschedulable"
    scheduler.add_objects([make_pvc("data")])
    assert (scheduler.pending()["default/p"][0] != "unschedulable") is moved


def test_a_csinode_raising_the_limit_requeues_the_pod() -> None:
    scheduler = Scheduler(seed=0, clock=FakeClock(1000.0), kube_version="1.36")
    driver = "ebs.csi.aws.com"
    node = CSINode("n", drivers=(CSINodeDriver(driver, allocatable_count=0),))
    scheduler.add_objects([make_node("n"), node, attrs.evolve(make_pod("p"), volumes=(ebs("vol-1"),))])
    first = scheduler.schedule_one()
    assert first is not None
    assert first.diagnosis is not None
    assert first.diagnosis.unschedulable_plugins == {"NodeVolumeLimits"}
    scheduler.add_objects([node])  # unchanged: no event
    assert scheduler.pending()["default/p"][0] == "unschedulable"
    scheduler.add_objects([CSINode("n", drivers=(CSINodeDriver(driver, allocatable_count=0, node_id="x"),))])
    assert scheduler.pending()["default/p"][0] == "unschedulable"  # updated, no count grew
    scheduler.add_objects([CSINode("m", drivers=(CSINodeDriver(driver, allocatable_count=5),))])
    assert scheduler.pending()["default/p"][0] != "unschedulable"  # a new CSINode may help (no hint)


def test_a_csinode_update_raising_a_count_requeues_the_pod() -> None:
    scheduler = Scheduler(seed=0, clock=FakeClock(1000.0), kube_version="1.36")
    driver = "ebs.csi.aws.com"
    scheduler.add_objects([make_node("n"), CSINode("n", drivers=(CSINodeDriver(driver, allocatable_count=0),)),
                           attrs.evolve(make_pod("p"), volumes=(ebs("vol-1"),))])
    assert scheduler.schedule_one() is not None
    scheduler.add_objects([CSINode("n", drivers=(CSINodeDriver(driver, allocatable_count=5),))])
    assert scheduler.pending()["default/p"][0] != "unschedulable"


D = "ebs.csi.aws.com"


@pytest.mark.parametrize(("old", "new", "expected"), [
    pytest.param(CSINode("n", drivers=(CSINodeDriver(D, allocatable_count=1),)),
                 CSINode("n", drivers=(CSINodeDriver(D, allocatable_count=2),)), Q, id="count-grew"),
    pytest.param(CSINode("n", drivers=(CSINodeDriver(D, allocatable_count=2),)),
                 CSINode("n", drivers=(CSINodeDriver(D, allocatable_count=1),)), SKIP, id="count-shrank"),
    pytest.param(CSINode("n"), CSINode("n", drivers=(CSINodeDriver(D, allocatable_count=1),)), Q,
                 id="driver-with-a-count-added"),
    pytest.param(CSINode("n"), CSINode("n", drivers=(CSINodeDriver(D),)), SKIP, id="driver-without-count-added"),
    pytest.param(CSINode("n"), CSINode("n", annotations={"a": "b"}), SKIP, id="annotation-changed"),
    pytest.param(None, CSINode("n"), Q, id="unexpected-object"),
])
def test_after_csi_node_updated(old: object, new: object, expected: QueueingHint) -> None:
    check(hints.after_csi_node_updated, POD_WITH_CLAIM, old, new, expected)
