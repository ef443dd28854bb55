"""DynamicResources at each extension point, through the scheduler (selectors are plain predicates here)."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import Scheduler, load_cluster
from kschedlib.dra._selectors import SelectorCache
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.results import NodeScore
from kschedlib.framework.status import Code, Status
from kschedlib.model.convert import pod_from_dict
from kschedlib.plugins import dynamic_resources as plugin_module
from kschedlib.plugins.dynamic_resources import DynamicResources, dra_allocations
from tests.dra.test_allocator import _predicate

DRIVER = "gpu.example.com"


@pytest.fixture(autouse=True)
def plain_selectors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selectors ``driver`` and ``key=value`` (see tests.dra.test_allocator) instead of CEL."""
    monkeypatch.setattr(plugin_module, "_selector_compiler", lambda: SelectorCache(_predicate))


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


def scheduler(*objects: dict[str, Any]) -> Scheduler:
    sched = Scheduler(kube_version="1.36")
    sched.add_objects(load_cluster(list(objects)).objects)
    return sched


def test_a_bound_pod_holds_its_devices_and_frees_them_when_it_goes() -> None:
    sched = scheduler(node("a"), gpus("a", "g0"), DEVICE_CLASS, claim("c1"), claim("c2"),
                      pod("p1", "c1"), pod("p2", "c2"))
    results = sched.run_until_idle()
    placed = {r.pod.name: r.node_name for r in results if r.scheduled}
    assert list(placed.values()) == ["a"]
    store = sched.engine.store.dra
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
    handle = sched.engine.handles["default-scheduler"]
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
    store = sched.engine.store.dra
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
    assert sched.engine.store.dra.claims["default/c1"].allocation is None


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
    scores = [NodeScore("a", 8), NodeScore("b", 7), NodeScore("c", 0)]
    assert plugin.normalize_score(state, target, scores).is_success
    assert [s.score for s in scores] == [100, 87, 0]
    assert plugin.score(state, target, sched.snapshot().get("a")) == 0
    assert plugin.score_key(state, target) == ()


def test_extended_resources_backed_by_a_device_class() -> None:
    backed = {**DEVICE_CLASS, "spec": {**DEVICE_CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    wants = pod("p")
    wants["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    sched = scheduler(node("a"), node("b"), gpus("b", "g0"), backed)
    sched.add_pod(pod_from_dict(wants))
    [result] = sched.run_until_idle()
    assert result.node_name == "b"
    assert sched.engine.store.dra.allocated_state().devices == {(DRIVER, "b", "g0")}


def test_the_v130_scheduler_ignores_claims() -> None:
    sched = Scheduler(kube_version="1.30")
    sched.add_objects(load_cluster([node("a"), pod("p", "missing")]).objects)
    [result] = sched.run_until_idle()
    assert result.node_name == "a"
