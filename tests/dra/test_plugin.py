"""DynamicResources at each extension point, through the scheduler (selectors are plain predicates here)."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import pytest

from kschedlib import Scheduler, in_tree_registry, load_cluster
from kschedlib.dra._selectors import SelectorCache
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import BindPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.status import Code, Status
from kschedlib.model._convert_dra import resource_claim_from_dict, resource_slice_from_dict
from kschedlib.model._dra_checks import _claims as dra_admission
from kschedlib.model.convert import pod_from_dict
from kschedlib.model.objects import Pod
from kschedlib.plugins import dynamic_resources as plugin_module
from kschedlib.plugins.dynamic_resources import DynamicResources, dra_allocations
from tests.dra.test_allocator import _predicate, plain_compile_error

DRIVER = "gpu.example.com"


@pytest.fixture(autouse=True)
def plain_selectors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selectors ``driver`` and ``key=value`` (see tests.dra.test_allocator) instead of CEL, at admission too."""
    monkeypatch.setattr(plugin_module, "_selector_compiler", lambda: SelectorCache(_predicate))
    monkeypatch.setattr(dra_admission, "compile_error", plain_compile_error)


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def gpus(node_name: str, *names: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": n, "attributes": {"model": {"string": "a100"}}} for n in names]}}


DEVICE_CLASS: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": "driver"}}]}}


def claim(name: str, count: int = 1, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}}]}},
            "status": status or {}}


def pod(name: str, *claims: str, **spec: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                     "resourceClaims": [{"name": f"r{i}", "resourceClaimName": c} for i, c in enumerate(claims)],
                     **spec}}


def stored(raw: dict[str, Any]) -> object:
    """An object the API server would refuse, as if it were stored all the same (kube's plugin tests use
    such objects; a newer API server's shapes read by this one are the same case)."""
    read = {"ResourceClaim": resource_claim_from_dict, "ResourceSlice": resource_slice_from_dict}[raw["kind"]]
    return read(raw, admission=False)


def scheduler(*objects: dict[str, Any] | object) -> Scheduler:
    sched = Scheduler(kube_version="1.36")
    sched.add_objects(load_cluster(list(objects)).objects)
    return sched


def test_a_bound_pod_holds_its_devices_and_frees_them_when_it_goes() -> None:
    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"), claim("c2"),
                      pod("p1", "c1"), pod("p2", "c2"))
    results = sched.run_until_idle()
    placed = {r.pod.name: r.node_name for r in results if r.scheduled}
    assert list(placed.values()) == ["a"]
    store = sched.devices
    winner = next(iter(placed))
    written = store.claims[f"default/{'c1' if winner == 'p1' else 'c2'}"]
    assert written.allocation is not None
    assert [d.device for d in written.allocation.devices] == ["g0"]
    assert [c.uid for c in written.reserved_for] == [f"uid-{winner}"]
    assert sched.remove_pod(f"default/{winner}")
    freed = store.claims[written.key]
    assert freed.allocation is None
    assert freed.reserved_for == ()
    assert [r.node_name for r in sched.run_until_idle() if r.scheduled] == ["a"]


def _cycle(sched: Scheduler, raw_pod: dict[str, Any]) -> tuple[DynamicResources, CycleState, Any]:
    handle = sched._engine.handles["default-scheduler"]
    plugin = DynamicResources(None, handle)
    target = pod_from_dict(raw_pod)
    state = CycleState()
    assert plugin.pre_enqueue(target).is_success
    plugin.pre_filter(state, target)
    return plugin, state, target


def test_reserve_holds_devices_in_flight_and_unreserve_returns_every_one() -> None:
    sched = scheduler(node("a"), gpus("a", "g0", "g1"), DEVICE_CLASS, claim("c1", 2))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    info = sched.snapshot().get("a")
    assert plugin.filter(state, target, info).is_success
    store = sched.devices
    assert plugin.reserve(state, target, "a").is_success
    assert store.allocated_state().devices == {(DRIVER, "a", "g0"), (DRIVER, "a", "g1")}
    plugin.unreserve(state, target, "a")
    assert store.allocated_state().devices == frozenset()
    assert store.in_flight == {}


def test_filter_reports_devices_and_node_selectors() -> None:
    sched = scheduler(node("a"), node("b"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    snapshot = sched.snapshot()
    assert plugin.filter(state, target, snapshot.get("a")).is_success
    refused = plugin.filter(state, target, snapshot.get("b"))
    assert (refused.code, refused.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot allocate all claims",))
    assert dra_allocations(state, ["a"]) == {"a": [{
        "claim": "default/c1", "devices": [{"request": "gpu", "driver": DRIVER, "pool": "a", "device": "g0"}],
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}]}


def test_postfilter_deallocates_an_unreserved_claim_that_fits_nowhere() -> None:
    allocated: dict[str, Any] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "a", "device": "g0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}
    sched = scheduler(node("a"), node("b"), gpus("a", "g0"), DEVICE_CLASS, claim("c1", status=allocated))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    refused = plugin.filter(state, target, sched.snapshot().get("b"))
    assert refused.reasons == ("resourceclaim not available on the node",)
    outcome = plugin.post_filter(state, target, {"b": refused})
    assert outcome.status.reasons == ("deallocation of ResourceClaim completed",)
    assert sched.devices.claims["default/c1"].allocation is None


def test_postfilter_without_claims_and_without_state() -> None:
    sched = scheduler(node("a"))
    plugin, state, target = _cycle(sched, pod("p"))
    assert plugin.post_filter(state, target, {}).status.reasons == ("no new claims to deallocate",)
    assert plugin.post_filter(CycleState(), target, {}).status.code is Code.ERROR


def test_claim_in_use_by_too_many_pods() -> None:
    consumers = [{"resource": "pods", "name": f"x{i}", "uid": f"x{i}"} for i in range(256)]
    allocated: dict[str, Any] = {"allocation": {"devices": {"results": []}}, "reservedFor": consumers}
    sched = scheduler(node("a"), DEVICE_CLASS, claim("c1", status=allocated))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    status = plugin.pre_filter(state, target)
    assert isinstance(status, Status)
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("resourceclaim in use",))


def test_score_prefers_earlier_subrequests() -> None:
    sched = scheduler(node("a"))
    plugin, state, target = _cycle(sched, pod("p"))
    nodes = [sched.snapshot().get("a")] * 3
    assert plugin.normalize_score(state, target, nodes, [8, 7, 0]) == [100, 87, 0]
    assert plugin.score(state, target, sched.snapshot().get("a")) == 0
    assert plugin.score_key(state, target) == ()


def test_extended_resources_backed_by_a_device_class() -> None:
    backed = {**DEVICE_CLASS, "spec": {**DEVICE_CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    wants = pod("p")
    wants["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    wants["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}  # as required
    sched = scheduler(node("a"), node("b"), gpus("b", "g0"), backed)
    sched.add_pod(pod_from_dict(wants))
    [result] = sched.run_until_idle()
    assert result.node_name == "b"
    assert sched.devices.allocated_state().devices == {(DRIVER, "b", "g0")}


def test_the_v130_scheduler_ignores_claims() -> None:
    sched = Scheduler(kube_version="1.30")
    sched.add_objects(load_cluster([node("a"), pod("p", "missing")]).objects)
    [result] = sched.run_until_idle()
    assert result.node_name == "a"


def _status(result: object) -> Status:
    assert isinstance(result, Status)
    return result


def test_claims_that_cannot_be_used() -> None:
    handle_sched = scheduler(node("a"), DEVICE_CLASS,
                             {**claim("gone"), "metadata": {**claim("gone")["metadata"],
                                                            "deletionTimestamp": "2026-01-01T00:00:00Z"}})
    plugin = DynamicResources(None, handle_sched._engine.handles["default-scheduler"])
    refused = plugin.pre_enqueue(pod_from_dict(pod("p", "gone")))
    assert refused.reasons == ('resourceclaim "gone" is being deleted',)
    nothing_needed = pod("q")
    nothing_needed["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "t"}]
    nothing_needed["status"] = {"resourceClaimStatuses": [{"name": "gpu"}]}
    target = pod_from_dict(nothing_needed)
    assert plugin.pre_enqueue(target).is_success
    assert _status(plugin.pre_filter(CycleState(), target)).code is Code.SKIP


def test_prefilter_checks_classes_and_allocations_in_flight() -> None:
    unnamed = claim("c0")
    unnamed["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = ""
    listed = claim("c2")
    listed["spec"]["devices"]["requests"] = [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "nope"}]}]
    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, stored(unnamed), claim("c1"), listed)
    plugin, state, first = _cycle(sched, pod("p", "c1"))
    assert plugin.filter(state, first, sched.snapshot().get("a")).is_success
    assert plugin.reserve(state, first, "a").is_success
    second = pod_from_dict(pod("q", "c1"))
    assert _status(plugin.pre_filter(CycleState(), second)).reasons == (
        "resource claim default/c1 is in the process of being allocated",)
    assert _status(plugin.pre_filter(CycleState(), pod_from_dict(pod("r", "c0")))).code is Code.ERROR
    assert _status(plugin.pre_filter(CycleState(), pod_from_dict(pod("s", "c2")))).reasons == (
        "request gpu/big: device class nope does not exist",)


def test_filter_errors_and_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    everything = claim("all")
    everything["spec"]["devices"]["requests"][0]["exactly"] = {"deviceClassName": "gpu", "allocationMode": "All"}
    half = gpus("a", "g0")
    half["spec"]["pool"]["resourceSliceCount"] = 2
    sched = scheduler(node("a"), half, DEVICE_CLASS, everything, claim("c1"))
    plugin, state, target = _cycle(sched, pod("p", "all"))
    error = plugin.filter(state, target, sched.snapshot().get("a"))
    assert error.code is Code.ERROR
    assert "asks for all devices" in error.message()
    plugin, state, target = _cycle(sched, pod("q", "c1"))
    ticks = iter(range(0, 1000, 20))
    monkeypatch.setattr(time, "monotonic", lambda: float(next(ticks)))
    timed_out = plugin.filter(state, target, sched.snapshot().get("a"))
    assert timed_out.reasons == ("node a: timed out trying to allocate devices",)


def test_reserve_and_prebind_for_claims_already_allocated() -> None:
    allocated: dict[str, Any] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "a", "device": "g0"}]}},
        "reservedFor": [{"resource": "pods", "name": "other", "uid": "uid-other"}]}
    sched = scheduler(node("a"), node("b"), gpus("a", "g0"), DEVICE_CLASS, claim("c1", status=allocated))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    assert plugin.filter(state, target, sched.snapshot().get("b")).is_success
    assert plugin.reserve(state, target, "b").is_success
    assert plugin.pre_bind(state, target, "b").is_success
    written = sched.devices.claims["default/c1"]
    assert [c.uid for c in written.reserved_for] == ["uid-other", "uid-p"]
    assert dra_allocations(state, ["b"]) == {}
    assert dra_allocations(CycleState(), ["b"]) is None


def test_postfilter_keeps_claims_other_pods_use() -> None:
    allocated: dict[str, Any] = {"allocation": {"devices": {"results": []}, "nodeSelector": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}},
        "reservedFor": [{"resource": "pods", "name": "other", "uid": "uid-other"}]}
    sched = scheduler(node("a"), node("b"), DEVICE_CLASS, claim("c1", status=allocated))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    refused = plugin.filter(state, target, sched.snapshot().get("b"))
    assert plugin.post_filter(state, target, {"b": refused}).status.reasons == ("still not schedulable",)


def test_reserve_without_an_allocation_for_the_node_is_an_error() -> None:
    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    assert plugin.reserve(state, target, "a").code is Code.ERROR
    plugin.unreserve(CycleState(), target, "a")


def test_shared_and_admin_devices_in_dra_allocations() -> None:
    shared = gpus("a", "nic")
    shared["spec"]["devices"][0].update(allowMultipleAllocations=True, capacity={"bw": {"value": "10G"}})
    wants = claim("c1")
    wants["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"bw": "4G"}}
    sched = scheduler(node("a"), shared, DEVICE_CLASS, wants)
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    assert plugin.filter(state, target, sched.snapshot().get("a")).is_success
    [entry] = (dra_allocations(state, ["a"]) or {})["a"]
    assert entry["devices"] == [{"request": "gpu", "driver": DRIVER, "pool": "a", "device": "nic",
                                 "consumedCapacity": {"bw": "4G"}}]


def test_invalid_pools_reject_only_the_node() -> None:
    twice = gpus("a", "g0", "g0")
    sched = scheduler(node("a"), stored(twice), DEVICE_CLASS, claim("c1", 3))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    refused = plugin.filter(state, target, sched.snapshot().get("a"))
    assert (refused.code, refused.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                               ("invalid resource pools were encountered",))


def test_requests_of_unknown_shape_and_lists_with_the_gate_off() -> None:
    unknown = claim("c1")
    unknown["spec"]["devices"]["requests"] = [{"name": "gpu", "somethingNew": {}}]
    listed = claim("c2")
    listed["spec"]["devices"]["requests"] = [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": "gpu"}]}]
    sched = scheduler(node("a"), DEVICE_CLASS, stored(unknown), listed)
    plugin, _, _ = _cycle(sched, pod("p"))
    assert _status(plugin.pre_filter(CycleState(), pod_from_dict(pod("p", "c1")))).reasons == (
        "resource claim default/c1, request gpu: unknown request type",)
    old = Scheduler(kube_version="1.34", feature_gates={"DRAPrioritizedList": False})
    old.add_objects(load_cluster([node("a"), DEVICE_CLASS, listed]).objects)
    gated = DynamicResources(None, old._engine.handles["default-scheduler"])
    assert _status(gated.pre_filter(CycleState(), pod_from_dict(pod("p", "c2")))).reasons == (
        "resource claim default/c2, request gpu: has subrequests, but the DRAPrioritizedList feature is disabled",)


def test_postfilter_of_a_pod_with_dra_backed_extended_resources() -> None:
    backed = {**DEVICE_CLASS, "spec": {**DEVICE_CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    wants = pod("p")
    wants["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "2"
    wants["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "2"}  # as required
    sched = scheduler(node("a"), gpus("a", "g0"), backed)
    plugin, state, target = _cycle(sched, wants)
    refused = plugin.filter(state, target, sched.snapshot().get("a"))
    assert refused.reasons == ("cannot allocate all claims",)
    assert plugin.post_filter(state, target, {"a": refused}).status.reasons == ("still not schedulable",)


def test_reused_allocations_follow_classes_slices_and_devices_in_use() -> None:
    from kschedlib.model.dra import DeviceClass

    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"), claim("c2"), claim("c3"))
    store = sched.devices
    plugin = DynamicResources(None, sched._engine.handles["default-scheduler"])

    def fits(name: str, claim_name: str) -> bool:
        state, target = CycleState(), pod_from_dict(pod(name, claim_name))
        plugin.pre_filter(state, target)
        return plugin.filter(state, target, sched.snapshot().get("a")).is_success

    assert fits("p", "c1")
    assert fits("q", "c2")  # the same request: reused
    store.add(DeviceClass("gpu", ("model=h100",)))
    assert not fits("r", "c3")
    store.add(DeviceClass("gpu", ("driver",)))
    assert fits("r", "c3")
    sched.add_objects(load_cluster([gpus("a")]).objects)  # the slice now has no devices
    assert not fits("s", "c3")


def test_reused_allocations_follow_devices_in_use_nodes_and_the_memo_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"), claim("c2"), claim("c3", count=2))
    plugin = DynamicResources(None, sched._engine.handles["default-scheduler"])

    def filter_on_a(name: str, claim_name: str) -> tuple[CycleState, Any, Status]:
        state, target = CycleState(), pod_from_dict(pod(name, claim_name))
        plugin.pre_filter(state, target)
        return state, target, plugin.filter(state, target, sched.snapshot().get("a"))

    state, target, status = filter_on_a("p", "c1")
    assert status.is_success
    assert plugin.reserve(state, target, "a").is_success  # g0 now in flight for c1
    assert filter_on_a("q", "c2")[2].reasons == (plugin_module.CANNOT_ALLOCATE,)  # not the remembered g0
    plugin.unreserve(state, target, "a")
    assert filter_on_a("q", "c2")[2].is_success
    sched.add_objects(load_cluster([node("a", zone="z")]).objects)  # a new node object: searched again
    assert filter_on_a("q", "c2")[2].is_success
    monkeypatch.setattr(plugin_module, "_MEMO_SIGNATURES_MAX", 1)
    assert not filter_on_a("r", "c3")[2].is_success  # a second signature: the memo starts over
    assert filter_on_a("q", "c2")[2].is_success


def test_pods_without_prioritized_lists_share_one_score_key() -> None:
    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    info = sched.snapshot().get("a")
    assert plugin.filter(state, target, info).is_success
    assert plugin.score_key(state, target) == ()
    assert plugin.score(state, target, info) == 0


def test_a_zero_filter_timeout_means_no_bound() -> None:
    from kschedlib.plugins.dynamic_resources import DynamicResourcesArgs

    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"))
    plugin = DynamicResources(DynamicResourcesArgs(filter_timeout=0.0), sched._engine.handles["default-scheduler"])
    state, target = CycleState(), pod_from_dict(pod("p", "c1"))
    plugin.pre_filter(state, target)
    assert plugin.filter(state, target, sched.snapshot().get("a")).is_success


def test_the_fake_handle_holds_dra_objects() -> None:
    from kschedlib.testing import FakeHandle

    cluster = load_cluster([node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1")])
    handle = FakeHandle(cluster, kube_version="1.36")
    plugin = DynamicResources(None, handle.as_handle())
    state, target = CycleState(), pod_from_dict(pod("p", "c1"))
    plugin.pre_filter(state, target)
    assert plugin.filter(state, target, handle.snapshot.get("a")).is_success
    assert plugin.reserve(state, target, "a").is_success
    assert handle.dra.allocated_state().devices == {(DRIVER, "a", "g0")}


def test_pre_bind_pre_flight_works_only_for_pods_with_claims() -> None:
    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"))
    plugin, state, target = _cycle(sched, pod("p", "c1"))
    assert plugin.pre_bind_pre_flight(state, target, "a").is_success
    plain, plain_state, plain_pod = _cycle(sched, pod("q"))
    assert plain.pre_bind_pre_flight(plain_state, plain_pod, "a").code is Code.SKIP
    assert plain.pre_bind_pre_flight(CycleState(), plain_pod, "a").code is Code.SKIP


class _RefusingBind(BindPlugin):
    """Refuses every pod: a binding that fails after PreBind wrote the claims."""

    name: ClassVar[str] = "RefusingBind"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status.from_error("the API server refused the binding")


def test_a_failed_binding_keeps_the_claims_allocation_but_not_the_reservation() -> None:
    """kube's Unreserve after PreBind takes the pod out of ``reservedFor`` and leaves the allocation (and deletes
    the claim it made for DRA-backed extended resources); freeing the devices is the claim controller's job."""
    registry = in_tree_registry()
    registry.register(_RefusingBind.name, _RefusingBind)
    backed = {**DEVICE_CLASS, "spec": {**DEVICE_CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    wants = pod("p", "c1")
    wants["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    wants["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}  # as required
    sched = Scheduler({"profiles": [{"plugins": {"bind": {"enabled": [{"name": "RefusingBind"}],
                                                          "disabled": [{"name": "*"}]}}}]},
                      registry=registry, kube_version="1.36")
    sched.add_objects(load_cluster([node("a"), gpus("a", "g0", "g1"), backed, claim("c1"), wants]).objects)
    result = sched.schedule_one()
    assert result is not None
    assert result.status.reasons == ('running Bind plugin "RefusingBind": the API server refused the binding',)
    store = sched.devices
    kept = store.claims["default/c1"]
    assert kept.allocation is not None
    assert kept.reserved_for == ()
    assert "default/p-extended-resources" not in store.claims
    assert store.allocated_state().devices == {(DRIVER, "a", "g0")}
