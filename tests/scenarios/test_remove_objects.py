"""``Scheduler.remove_objects``: objects a cluster deletes (other than nodes and pods) are forgotten, and what they
allowed or prevented changes with them."""

from __future__ import annotations

import pytest

import kschedlib
from kschedlib.errors import ModelError
from kschedlib.model import LabelSelector
from kschedlib.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kschedlib.model.objects import Namespace, PodDisruptionBudget
from kschedlib.model.storage import CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment
from tests.helpers import claim_volume, make_node, make_pod, make_pv, make_pvc, make_storage_class

PVC_GONE = 'persistentvolumeclaim "data" not found'


def test_a_deleted_claim_is_not_found_any_more() -> None:
    claim = make_pvc("data", class_name="local")
    scheduler = kschedlib.Scheduler(seed=0)
    scheduler.add_objects([make_node("n1"), make_storage_class("local"), make_pv("pv1", class_name="local"), claim])
    user = make_pod("user", volumes=(claim_volume("data"),))
    assert scheduler.feasible_nodes(user) == ["n1"]
    scheduler.remove_objects([claim])
    outcome = scheduler.explain(user)
    assert outcome.outcome is not None
    assert outcome.outcome.feasible == ()
    assert PVC_GONE in str(outcome.to_dict())


def test_a_deleted_pdb_no_longer_guards_its_pods() -> None:
    budget = PodDisruptionBudget("guard", namespace="default", selector=LabelSelector(match_labels={"app": "db"}),
                                 disruptions_allowed=0)
    scheduler = kschedlib.Scheduler(seed=0)
    scheduler.add_objects([make_node("n1"), budget, Namespace("default")])
    assert [b.name for b in scheduler.pod_disruption_budgets()] == ["guard"]
    scheduler.remove_objects([budget, Namespace("default")])
    assert scheduler.pod_disruption_budgets() == []


def test_unknown_objects_are_ignored() -> None:
    scheduler = kschedlib.Scheduler(seed=0)
    scheduler.remove_objects([make_pvc("never-added"), Namespace("nowhere"), make_storage_class("none")])
    assert scheduler.node_names() == []


@pytest.mark.parametrize("obj", [make_node("n1"), make_pod("p")], ids=["node", "pod"])
def test_nodes_and_pods_have_methods_of_their_own(obj: object) -> None:
    scheduler = kschedlib.Scheduler(seed=0)
    with pytest.raises(ModelError, match="remove_node and remove_pod"):
        scheduler.remove_objects([obj])


def test_deleted_dra_objects_are_forgotten() -> None:
    objects = [DeviceClass("gpu"), ResourceSlice("slice-1", driver="gpu.example.com", pool="pool-1", node_name="n1"),
               ResourceClaim("claim-1", uid="u1"), ResourceClaimTemplate("template-1")]
    scheduler = kschedlib.Scheduler(seed=0)
    scheduler.add_objects(objects)
    store = scheduler.devices
    assert (set(store.classes), set(store.slices), set(store.claims), set(store.templates)) == (
        {"gpu"}, {"slice-1"}, {"default/claim-1"}, {"default/template-1"})
    scheduler.remove_objects(objects)
    assert (store.classes, store.slices, store.claims, store.templates) == ({}, {}, {}, {})


def test_a_deleted_storage_object_of_each_kind_is_forgotten() -> None:
    csi_node = CSINode("n1")
    driver = CSIDriver("csi.example.com")
    capacity = CSIStorageCapacity("cap", namespace="default", storage_class_name="local")
    attachment = VolumeAttachment("va", node_name="n1", attacher="csi.example.com", persistent_volume_name="pv1")
    volume, klass = make_pv("pv1", class_name="local"), make_storage_class("local")
    scheduler = kschedlib.Scheduler(seed=0, kube_version="1.36")
    scheduler.add_objects([make_node("n1"), make_pvc("data", class_name="local"), csi_node, driver, capacity,
                           attachment, volume, klass])
    user = make_pod("user", volumes=(claim_volume("data"),))
    assert scheduler.feasible_nodes(user) == ["n1"]
    scheduler.remove_objects([csi_node, driver, capacity, attachment, volume, klass])
    answer = scheduler.explain(user).to_dict()["prefilter"]
    assert answer["reasons"] == ["pod has unbound immediate PersistentVolumeClaims"]  # the class is gone
