"""DRA objects requeue the pods DynamicResources held back, through the public Scheduler (kube v1.36).

The clock never moves in these tests and the unschedulable pool is never flushed: a pod that is
scheduled again was moved by the event under test (claim, slice, class, pod status, or one of the
scheduler's own claim writes), as kube-scheduler's queueing hints move it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from typing import Any

import pytest

import kschedlib
from kschedlib import FakeClock, Scheduler, ScheduleResult
from kschedlib.framework.events import ActionType, pod_changes
from kschedlib.model.convert import pod_from_dict
from tests.dra.test_simulation import CLASS, DRIVER, node


def gpus(name: str, count: int = 1, *, generation: int = 1) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": name,
                     "pool": {"name": name, "generation": generation, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(count)]}}


def claim(name: str, *, owner: str | None = None, device_class: str = "gpu") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owner is not None:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner, "uid": f"uid-{owner}",
                                        "controller": True}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata,
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": device_class, "allocationMode": "ExactCount", "count": 1}}]}}}


def pod(name: str, claim_name: str, *, template: bool = False, generated: str | None = None) -> dict[str, Any]:
    ref = {"resourceClaimTemplateName": claim_name} if template else {"resourceClaimName": claim_name}
    out: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                 "resourceClaims": [{"name": "gpu", **ref}]}}
    if generated is not None:
        out["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": generated}]}
    return out


def load(*manifests: dict[str, Any]) -> list[object]:
    return list(kschedlib.load_cluster(list(manifests)).objects)


def scheduler(*manifests: dict[str, Any], **options: Any) -> Scheduler:
    sched = Scheduler(seed=1, clock=FakeClock(), kube_version="1.36", flush_unschedulable=False, **options)
    sched.add_objects(load(*manifests))
    return sched


def placed(results: Sequence[ScheduleResult]) -> list[tuple[str, str | None]]:
    return [(r.pod.name, r.node_name) for r in results]


def where(sched: Scheduler, name: str) -> tuple[str, int]:
    """Where the pending pod is and how many attempts it had."""
    queue, info = sched.pending()[f"default/{name}"]
    return queue, info.attempts


def held_back(sched: Scheduler, name: str, message: str) -> None:
    """Run the scheduler: ``name`` is tried once and fails with ``message``, then waits in the pool."""
    [result] = sched.run_until_idle()
    assert (result.pod.name, result.node_name) == (name, None)
    assert message in str(result.message)
    assert sched.run_until_idle() == []
    assert where(sched, name) == ("unschedulable", 1)


# --- a missing claim, a missing class, devices in use --------------------------------------------


def test_a_pod_waiting_for_its_claim_is_scheduled_as_soon_as_the_claim_is_added() -> None:
    sched = scheduler(node("a"), gpus("a"), CLASS, pod("p", "c"))
    assert sched.run_until_idle() == []
    assert where(sched, "p") == ("gated", 0)  # PreEnqueue: the claim does not exist yet
    sched.add_objects(load(claim("c")))
    assert placed(sched.run_until_idle()) == [("p", "a")]


def test_a_pod_rejected_for_want_of_devices_is_scheduled_when_a_slice_brings_some() -> None:
    sched = scheduler(node("a"), node("b"), gpus("a"), CLASS, claim("c0"), pod("p0", "c0"), claim("c1"),
                      pod("p1", "c1"))
    assert placed(sched.run_until_idle()) == [("p0", "a"), ("p1", None)]
    sched.add_objects(load(gpus("b")))
    assert placed(sched.run_until_idle()) == [("p1", "b")]
    assert sched.bound_pods() == {"default/p0": "a", "default/p1": "b"}


def test_a_slice_update_adding_devices_requeues_too() -> None:
    sched = scheduler(node("a"), gpus("a"), CLASS, claim("c0"), pod("p0", "c0"), claim("c1"), pod("p1", "c1"))
    assert placed(sched.run_until_idle()) == [("p0", "a"), ("p1", None)]
    sched.add_objects(load(gpus("a", 2, generation=2)))
    assert placed(sched.run_until_idle()) == [("p1", "a")]


def test_a_pod_waiting_for_devices_gets_those_a_deleted_pod_frees() -> None:
    sched = scheduler(node("a"), gpus("a"), CLASS, claim("c0"), pod("p0", "c0"), claim("c1"), pod("p1", "c1"))
    assert placed(sched.run_until_idle()) == [("p0", "a"), ("p1", None)]
    assert sched.remove_pod("default/p0")
    assert sched.devices.claims["default/c0"].allocation is None  # reserved for nobody: deallocated
    assert placed(sched.run_until_idle()) == [("p1", "a")]


def test_a_claim_given_back_outside_the_scheduler_requeues_the_pods_waiting_for_devices() -> None:
    taken = claim("other")
    taken["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "a", "device": "gpu-0"}]}}}
    sched = scheduler(node("a"), gpus("a"), CLASS, taken, claim("c"), pod("p", "c"))
    held_back(sched, "p", "cannot allocate all claims")
    sched.add_objects(load(claim("other")))  # its allocation removed
    assert placed(sched.run_until_idle()) == [("p", "a")]


def test_a_pod_whose_device_class_is_missing_is_scheduled_when_the_class_arrives() -> None:
    sched = scheduler(node("a"), gpus("a"), claim("c"), pod("p", "c"))
    held_back(sched, "p", "device class gpu does not exist")
    sched.add_objects(load(CLASS))
    assert placed(sched.run_until_idle()) == [("p", "a")]


# --- events that do not help ------------------------------------------------------------------------


def test_unrelated_claims_do_not_requeue_a_pod_waiting_for_devices() -> None:
    sched = scheduler(node("a"), gpus("a"), CLASS, claim("c0"), pod("p0", "c0"), claim("c1"), pod("p1", "c1"))
    assert placed(sched.run_until_idle()) == [("p0", "a"), ("p1", None)]
    assert where(sched, "p1") == ("unschedulable", 1)
    sched.add_objects(load(claim("unrelated")))  # a new claim nobody uses
    changed = claim("unrelated")
    changed["metadata"]["annotations"] = {"note": "spec and metadata only"}
    sched.add_objects(load(changed))  # an update outside the status
    sched.add_objects(load(claim("unrelated")))  # the same object again: no event at all
    assert sched.run_until_idle() == []
    assert where(sched, "p1") == ("unschedulable", 1)


def test_a_claim_added_for_another_pod_does_not_ungate_a_pod_still_missing_its_own() -> None:
    sched = scheduler(node("a"), gpus("a"), CLASS, pod("p", "mine"))
    assert sched.run_until_idle() == []
    sched.add_objects(load(claim("someone-elses")))
    assert sched.run_until_idle() == []
    assert where(sched, "p") == ("gated", 0)


def test_pods_without_claims_are_not_moved_by_dra_objects() -> None:
    big = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default", "uid": "uid-big"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "64"}}}]}}
    sched = scheduler(node("a"), big)
    held_back(sched, "big", "Insufficient cpu")
    sched.add_objects(load(CLASS, gpus("a"), claim("c")))
    assert sched.run_until_idle() == []
    assert where(sched, "big") == ("unschedulable", 1)


# --- the pod's generated claims -------------------------------------------------------------------


def test_a_pod_from_a_template_is_scheduled_once_its_status_names_the_generated_claim() -> None:
    sched = scheduler(node("a"), gpus("a"), CLASS, pod("p", "template", template=True))
    assert sched.run_until_idle() == []
    assert where(sched, "p") == ("gated", 0)  # ResourceClaim not created yet
    sched.add_objects(load(claim("p-gpu", owner="p")))  # the claim exists, but the pod's status does not name it
    assert sched.run_until_idle() == []
    assert where(sched, "p") == ("gated", 0)
    sched.update_pod(pod_from_dict(pod("p", "template", template=True, generated="p-gpu")))
    assert placed(sched.run_until_idle()) == [("p", "a")]


def test_a_generated_claim_status_change_is_its_own_kind_of_pod_update() -> None:
    before = pod_from_dict(pod("p", "template", template=True))
    after = pod_from_dict(pod("p", "template", template=True, generated="p-gpu"))
    assert [e.action for e in pod_changes(before, after, generated_claims=True)] == [
        ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM]
    assert [e.label for e in pod_changes(before, after, generated_claims=True)] == [
        "UnschedulablePodGeneratedResourceClaimUpdate"]
    assert [e.action for e in pod_changes(before, after)] == [ActionType.UPDATE_POD_OTHER]


# --- the scheduler's own claim writes ---------------------------------------------------------------


class HeldBindings(Executor):
    """Runs the binding work it is given only when told to (a binding that takes a while)."""

    def __init__(self) -> None:
        self.held: list[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.held.append((future, fn, args))
        return future

    def release(self) -> None:
        held, self.held = self.held, []
        for future, fn, args in held:
            future.set_result(fn(*args))


def test_a_pod_sharing_a_claim_in_flight_is_requeued_when_the_claim_is_written() -> None:
    bindings = HeldBindings()
    sched = scheduler(node("a"), node("b"), gpus("a"), gpus("b"), CLASS, claim("shared"), pod("p0", "shared"),
                      pod("p1", "shared"), binding_executor=bindings)
    first = sched.run_until_idle()
    assert placed(first) == [("p0", first[0].node_name), ("p1", None)]  # p0 binds on the held executor
    assert "resource claim default/shared is in the process of being allocated" in str(first[1].message)
    node_of_p0 = first[0].node_name
    bindings.release()  # PreBind writes the claim: allocated, reserved for p0
    assert placed(sched.tick()) == [("p0", node_of_p0)]
    assert placed(sched.run_until_idle()) == [("p1", node_of_p0)]  # without waiting out a backoff
    bindings.release()
    assert placed(sched.tick()) == [("p1", node_of_p0)]
    assert [c.uid for c in sched.devices.claims["default/shared"].reserved_for] == ["uid-p0", "uid-p1"]


def _pinned_away_from_its_claim() -> tuple[dict[str, Any], dict[str, Any]]:
    """A claim allocated on node a but reserved for nobody, and a pod using it that must run on b."""
    held = claim("held")
    held["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "a", "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}
    pinned = pod("pinned", "held")
    pinned["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "b"}
    return held, pinned


def test_a_post_filter_deallocation_requeues_the_pod_at_once() -> None:
    held, pinned = _pinned_away_from_its_claim()
    sched = scheduler(node("a"), node("b"), gpus("a"), gpus("b"), CLASS, held, pinned)
    results = sched.run_until_idle()
    assert [(r.pod.name, r.node_name) for r in results] == [("pinned", None), ("pinned", "b")]
    assert "deallocation of ResourceClaim completed" in str(results[0].message)


def test_explain_deallocates_nothing_and_requeues_nobody() -> None:
    held, pinned = _pinned_away_from_its_claim()
    sched = scheduler(node("a"), node("b"), gpus("a"), CLASS, claim("c"), pod("p", "c"), held)
    assert placed(sched.run_until_idle()) == [("p", None)]  # gpu-0 is held
    explanation = sched.explain(pod_from_dict(pinned))
    assert "deallocation of ResourceClaim completed" in str(explanation.to_dict())
    assert sched.devices.claims["default/held"].allocation is not None
    assert sched.run_until_idle() == []
    assert where(sched, "p") == ("unschedulable", 1)


# --- other versions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.34", "1.35"])
def test_earlier_dra_versions_requeue_alike(version: str) -> None:
    sched = Scheduler(seed=1, clock=FakeClock(), kube_version=version, flush_unschedulable=False)
    sched.add_objects(load(node("a"), gpus("a"), CLASS, pod("p", "c")))
    assert sched.run_until_idle() == []
    sched.add_objects(load(claim("c")))
    assert placed(sched.run_until_idle()) == [("p", "a")]


def test_dra_objects_are_no_events_without_dra() -> None:
    """v1.30 has no DRA informers: a pod held by a plugin that watches every event stays where it is."""
    waiting = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w", "namespace": "default", "uid": "uid-w"},
               "spec": {"containers": [{"name": "c", "image": "x"}],
                        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "missing"}}]}}
    sched = Scheduler(seed=1, clock=FakeClock(), kube_version="1.30", flush_unschedulable=False)
    sched.add_objects(load(node("a"), waiting))
    held_back(sched, "w", '"missing" not found')
    sched.add_objects(load(CLASS, gpus("a"), claim("c")))
    assert where(sched, "w") == ("unschedulable", 1)
    sched.add_node(kschedlib.load_cluster([node("b")]).nodes[0])  # an event it does watch moves it
    assert where(sched, "w")[0] != "unschedulable"


def test_a_binding_in_flight_writes_its_claim_to_the_live_devices_while_explain_runs() -> None:
    """``explain`` of a pod with claims works on a copy of the device state; a binding running meanwhile (on
    a binding thread) must still write its claim to the live state, else the pod would be bound with its
    claim left unallocated."""
    bindings = HeldBindings()
    sched = scheduler(node("a"), gpus("a"), CLASS, claim("c0"), pod("p0", "c0"), claim("other"),
                      binding_executor=bindings)
    assert placed(sched.run_until_idle()) == [("p0", "a")]
    engine = sched._engine
    live = engine.store.dra
    engine.store.dra = live.copy()  # what Scheduler.explain does while it runs
    bindings.release()
    engine.store.dra = live
    assert placed(sched.tick()) == [("p0", "a")]
    written = sched.devices.claims["default/c0"]
    assert written.allocation is not None
    assert [c.uid for c in written.reserved_for] == ["uid-p0"]
