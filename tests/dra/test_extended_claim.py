"""The claim for a pod's DRA-backed extended resources: its identity (annotation and controller), the pod
status that names it, and a claim left by an earlier attempt, as kube-scheduler v1.36 handles them."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import Scheduler, explain, load_cluster
from kschedlib.dra._store import EXTENDED_CLAIM_ANNOTATION, DraStore
from kschedlib.errors import ManifestError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import Status
from kschedlib.model.convert import pod_from_dict, pod_to_dict
from kschedlib.model.dra import AllocationResult, ClaimConsumer, DeviceAllocation, ResourceClaim
from kschedlib.model.objects import Container, OwnerReference, Pod
from kschedlib.model.quantity import parse_quantity
from kschedlib.plugins.dynamic_resources import DynamicResources

DRIVER = "gpu.example.com"
GPU = "example.com/gpu"
CLASS: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                         "spec": {"extendedResourceName": GPU,
                                  "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
MAPPING = {"containerName": "c", "resourceName": GPU, "requestName": "container-0-request-1"}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def gpus(name: str, count: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1,
                                                                   "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(count)]}}


def gpu_pod(*gpus_per_container: str, init: str | None = None) -> dict[str, Any]:
    containers = [{"name": f"c{i}", "image": "x",
                   "resources": {"requests": {"cpu": "1", GPU: count}, "limits": {GPU: count}}}
                  for i, count in enumerate(gpus_per_container)]
    spec: dict[str, Any] = {"containers": containers}
    if init is not None:
        spec["initContainers"] = [{"name": "init", "image": "x",
                                   "resources": {"requests": {GPU: init}, "limits": {GPU: init}}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "uid-p"},
            "spec": spec}


def left_claim(*, requests: bool = True, reserved: int = 0, allocated: bool = True) -> dict[str, Any]:
    """The pod's extended-resource claim as an earlier attempt's PreBind wrote it (generated name)."""
    status: dict[str, Any] = {}
    if allocated:
        status["allocation"] = {"devices": {"results": [
            {"request": "container-0-request-1", "driver": DRIVER, "pool": "a", "device": "gpu-0"}]}}
        status["reservedFor"] = [{"resource": "pods", "name": f"o{i}", "uid": f"uid-o{i}"} for i in range(reserved)]
    spec = {"devices": {"requests": [{"name": "container-0-request-1", "exactly": {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}} if requests else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "p-extended-resources-x7k2q", "namespace": "default", "uid": "uid-left",
                         "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "uid-p",
                                              "controller": True}]},
            "spec": spec, "status": status}


# --- the pod status ----------------------------------------------------------------------------

def test_the_extended_resource_claim_status_is_read_and_written_back() -> None:
    raw = gpu_pod("1")
    raw["status"] = {"phase": "Pending", "extendedResourceClaimStatus": {
        "resourceClaimName": "p-extended-resources-x7k2q", "requestMappings": [MAPPING]}}
    loaded = pod_from_dict(raw)
    status = loaded.extended_resource_claim_status
    assert status is not None
    assert status.resource_claim_name == "p-extended-resources-x7k2q"
    assert [(m.container_name, m.resource_name, m.request_name) for m in status.request_mappings] == [
        ("c", GPU, "container-0-request-1")]
    assert pod_to_dict(loaded)["status"]["extendedResourceClaimStatus"] == raw["status"][
        "extendedResourceClaimStatus"]
    assert "extendedResourceClaimStatus" not in pod_to_dict(pod_from_dict(gpu_pod("1")))["status"]


@pytest.mark.parametrize(("value", "field"), [
    ("p-extended-resources", "status.extendedResourceClaimStatus"),
    ({"requestMappings": [MAPPING]}, "status.extendedResourceClaimStatus.resourceClaimName"),
    ({"resourceClaimName": 7, "requestMappings": [MAPPING]}, "status.extendedResourceClaimStatus.resourceClaimName"),
    ({"resourceClaimName": "x"}, "status.extendedResourceClaimStatus.requestMappings"),
    ({"resourceClaimName": "x", "requestMappings": []}, "status.extendedResourceClaimStatus.requestMappings"),
    ({"resourceClaimName": "x", "requestMappings": ["c"]},
     "status.extendedResourceClaimStatus.requestMappings[0]"),
    ({"resourceClaimName": "x", "requestMappings": [{**MAPPING, "requestName": ""}]},
     "status.extendedResourceClaimStatus.requestMappings[0].requestName"),
    ({"resourceClaimName": "x", "requestMappings": [{k: v for k, v in MAPPING.items() if k != "containerName"}]},
     "status.extendedResourceClaimStatus.requestMappings[0].containerName"),
], ids=["not-an-object", "no-claim-name", "claim-name-not-a-string", "no-mappings", "empty-mappings",
        "mapping-not-an-object", "empty-request-name", "no-container-name"])
def test_a_malformed_extended_resource_claim_status_is_refused(value: object, field: str) -> None:
    raw = gpu_pod("1")
    raw["status"] = {"extendedResourceClaimStatus": value}
    with pytest.raises(ManifestError) as refused:
        pod_from_dict(raw)
    assert refused.value.field == field


# --- the store: finding the claim, and a pod that goes ------------------------------------------

def _claim(uid: str = "uid-p", name: str = "p", *, annotation: str | None = "true", controller: bool = True,
           key: str = "p-extended-resources") -> ResourceClaim:
    return ResourceClaim(key, annotations={} if annotation is None else {EXTENDED_CLAIM_ANNOTATION: annotation},
                         owner_references=(OwnerReference("Pod", name, uid, "v1", controller=controller),))


@pytest.mark.parametrize(("claim", "found"), [
    (_claim(), True),
    (_claim(annotation=None), False),
    (_claim(annotation="false"), False),
    (_claim(controller=False), False),
    (_claim(uid="uid-other"), False),
    (_claim(name="other"), False),
], ids=["annotated-and-controlled", "no-annotation", "annotation-not-true", "owner-not-controller",
        "other-pod-uid", "other-pod-name"])
def test_the_extended_claim_is_the_annotated_one_the_pod_controls(claim: ResourceClaim, found: bool) -> None:
    store = DraStore()
    store.add(claim)
    pod = Pod("p", uid="uid-p")
    assert (store.extended_claim(pod) == claim) is found
    assert (store.copy().extended_claim(pod) == claim) is found


def test_the_extended_claim_is_forgotten_when_deleted_or_replaced() -> None:
    store, pod = DraStore(), Pod("p", uid="uid-p")
    store.add(_claim())
    store.add(_claim(key="other-claim", uid="uid-q"))
    store.delete(store.claims["default/other-claim"])
    assert store.extended_claim(pod) == _claim()
    store.add(_claim(annotation=None))
    assert store.extended_claim(pod) is None
    store.add(_claim())
    store.delete(_claim())
    assert store.extended_claim(pod) is None
    assert "default/p-extended-resources" not in store.claims


def test_a_pod_that_goes_releases_then_deletes_its_extended_claim() -> None:
    """As kube's claim controller and garbage collector do: the claim is deallocated (devices free), then deleted."""
    store = DraStore()
    allocation = AllocationResult((DeviceAllocation("container-0-request-0", DRIVER, "a", "gpu-0"),))
    pod = pod_from_dict({**gpu_pod("1"), "status": {"extendedResourceClaimStatus": {
        "resourceClaimName": "generated", "requestMappings": [MAPPING]}}})
    named = _claim(key="generated")
    store.add(named)
    store.bind(ResourceClaim("generated", annotations=named.annotations, owner_references=named.owner_references,
                             allocation=allocation), pod)
    store.take_written()
    assert store.allocated_state().devices == {(DRIVER, "a", "gpu-0")}
    store.release_pod(pod)
    assert store.claims == {}
    assert store.allocated_state().devices == frozenset()
    [(_, released), (_, deleted)] = store.take_written()
    assert released is not None
    assert released.allocation is None
    assert released.reserved_for == ()
    assert deleted is None


def test_a_pod_releases_an_extended_claim_under_any_name_it_controls() -> None:
    store = DraStore()
    store.add(_claim(key="p-extended-resources-abcde"))
    store.add(ResourceClaim("p-extended-resources", reserved_for=(ClaimConsumer("p", "uid-p"),)))
    store.release_pod(Pod("p", uid="uid-p"))
    assert list(store.claims) == ["default/p-extended-resources"]
    assert store.claims["default/p-extended-resources"].reserved_for == ()


# --- the plugin: a claim left by an earlier attempt ---------------------------------------------

def _plugin(*objects: dict[str, Any]) -> tuple[Scheduler, DynamicResources]:
    sched = Scheduler(kube_version="1.36")
    sched.add_objects(load_cluster(list(objects)).objects)
    return sched, DynamicResources(None, sched._engine.handles["default-scheduler"])


def test_a_left_claim_in_use_by_too_many_pods_stops_the_pod_in_prefilter() -> None:
    _, plugin = _plugin(node("a"), gpus("a", 1), CLASS, left_claim(reserved=256))
    refused = plugin.pre_filter(CycleState(), pod_from_dict(gpu_pod("1")))
    assert isinstance(refused, Status)
    assert refused.reasons == ("resourceclaim in use",)


def test_a_left_claim_being_allocated_stops_the_pod_in_prefilter() -> None:
    sched, plugin = _plugin(node("a"), gpus("a", 1), CLASS, left_claim(allocated=False))
    store = sched.devices
    store.assume(store.claims["default/p-extended-resources-x7k2q"])
    refused = plugin.pre_filter(CycleState(), pod_from_dict(gpu_pod("1")))
    assert isinstance(refused, Status)
    assert refused.reasons == ("resource claim default/p-extended-resources-x7k2q is in the process of being "
                               "allocated",)


def test_a_left_claim_without_requests_is_not_refused_but_still_deleted() -> None:
    """kube refuses only a left claim with requests; PostFilter deletes any left claim when no node fits."""
    sched, plugin = _plugin(node("a"), gpus("a", 1), CLASS, left_claim(requests=False, allocated=False))
    state, target = CycleState(), pod_from_dict(gpu_pod("2"))
    plugin.pre_filter(state, target)
    refused = plugin.filter(state, target, sched.snapshot().get("a"))
    assert refused.reasons == ("cannot allocate all claims",)
    assert plugin.post_filter(state, target, {"a": refused}).status.reasons == (
        "deletion of ResourceClaim completed",)
    assert sched.devices.claims == {}


# --- end to end through the public API -----------------------------------------------------------

def test_the_extended_claim_a_scheduler_writes_has_kubes_request_names() -> None:
    """Two containers and an init container that reuses their devices: one request per container, named
    after the container's index and the resource's index among its sorted requests (cpu first)."""
    sched = Scheduler(kube_version="1.36")
    sched.add_objects(load_cluster([node("a"), gpus("a", 4), CLASS, gpu_pod("1", "2", init="3")]).objects)
    [result] = sched.run_until_idle()
    assert result.node_name == "a"
    written = sched.devices.claims["default/p-extended-resources"]
    assert written.annotations == {EXTENDED_CLAIM_ANNOTATION: "true"}
    assert [(ref.kind, ref.name, ref.uid, ref.controller) for ref in written.owner_references] == [
        ("Pod", "p", "uid-p", True)]
    assert [(r.name, r.exactly.count if r.exactly else 0) for r in written.requests] == [
        ("container-1-request-1", 1), ("container-2-request-1", 2)]
    assert written.allocation is not None
    assert [(d.request, d.device) for d in written.allocation.devices] == [
        ("container-1-request-1", "gpu-0"), ("container-2-request-1", "gpu-1"), ("container-2-request-1", "gpu-2")]
    assert [c.uid for c in written.reserved_for] == ["uid-p"]


def test_explain_refuses_every_node_while_a_claim_from_an_earlier_attempt_is_left() -> None:
    cluster = load_cluster([node("a"), node("b"), gpus("a", 2), CLASS, left_claim()])
    out = explain(cluster, pod_from_dict(gpu_pod("1")), kube_version="1.36").to_dict()
    assert out["feasible"] == []
    assert {name: status["reasons"] for name, status in out["filtered"].items()} == {
        "a": ["cannot schedule extended resource claim"], "b": ["cannot schedule extended resource claim"]}
    assert out["postfilter"]["message"].startswith("deletion of ResourceClaim completed, preemption: ")
    fresh = explain(load_cluster([node("a"), node("b"), gpus("a", 2), CLASS]), pod_from_dict(gpu_pod("1")),
                    kube_version="1.36").to_dict()
    assert fresh["feasible"] == ["a"]
    assert "dra_allocations" not in fresh  # as kube's recorded v1.36.3 sample: only spec.resourceClaims are shown


def test_a_pod_whose_containers_ask_for_no_whole_device_gets_no_extended_claim() -> None:
    """kube skips container amounts that are not whole numbers: the node's claim has no request and fits.
    (The API server refuses such a pod, so it is built as a model object, as an embedder may.)"""
    sched, plugin = _plugin(node("a"), CLASS)
    fractional = Container("c0", requests={"cpu": parse_quantity("1"), GPU: parse_quantity("500m")})
    state, target = CycleState(), Pod("p", uid="uid-p", containers=(fractional,))
    plugin.pre_filter(state, target)
    assert plugin.filter(state, target, sched.snapshot().get("a")).is_success
    assert plugin.reserve(state, target, "a").is_success
    assert plugin.pre_bind(state, target, "a").is_success
    assert sched.devices.claims == {}
