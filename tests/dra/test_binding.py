"""Device binding conditions: the readiness rules, PreBind's answer, Filter's verdicts and the whole
scheduler, all on a FakeClock."""

from __future__ import annotations

import copy
from typing import Any

import attrs
import pytest

from kschedlib import FakeClock, Scheduler, load_cluster
from kschedlib.dra._binding import (
    DEVICE_BINDING_TIMEOUT,
    ERRORS_V134,
    ERRORS_V136,
    poll_outcome,
    readiness,
    timed_out,
    wait_outcome,
)
from kschedlib.dra._store import DraStore
from kschedlib.errors import ManifestError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import Code
from kschedlib.model.convert import object_from_dict, pod_from_dict
from kschedlib.model.dra import (
    AllocatedDeviceStatus,
    AllocationResult,
    DeviceAllocation,
    DeviceCondition,
    ResourceClaim,
)
from kschedlib.plugins.dynamic_resources import DynamicResources, DynamicResourcesArgs, dra_allocations
from kschedlib.testing import FakeHandle
from tests.helpers import RecordingApi

DRIVER = "gpu.example.com"
T0 = 1_767_225_600.0
"""2026-01-01T00:00:00Z: where the clocks of these tests start."""
T0_TEXT = "2026-01-01T00:00:00Z"


# --- the readiness rules ------------------------------------------------------------------------


def result(device: str = "g0", conditions: tuple[str, ...] = ("attached",),
           failures: tuple[str, ...] = ("failed",)) -> DeviceAllocation:
    return DeviceAllocation("gpu", DRIVER, "a", device, binding_conditions=conditions,
                            binding_failure_conditions=failures)


def status(device: str = "g0", pool: str = "a", **conditions: str | tuple[str, str, str]) -> AllocatedDeviceStatus:
    """A device status whose conditions are ``type=status`` or ``type=(status, reason, message)``."""
    made = [DeviceCondition(kind, *value) if isinstance(value, tuple) else DeviceCondition(kind, value)
            for kind, value in conditions.items()]
    return AllocatedDeviceStatus(DRIVER, pool, device, conditions=tuple(made))


def bound(*results: DeviceAllocation, devices: tuple[AllocatedDeviceStatus, ...] = (),
          since: float | None = None, name: str = "c") -> ResourceClaim:
    return ResourceClaim(name, uid=f"uid-{name}", allocation=AllocationResult(results, allocation_timestamp=since),
                         devices=devices)


FAILED_TEXT = 'claim c binding failed: reason=NoFabric, message="no \\"fabric\\" left"'
READINESS: dict[str, tuple[ResourceClaim, bool | str]] = {
    "unallocated": (ResourceClaim("c"), False),
    "no-binding-conditions": (bound(result(conditions=(), failures=())), True),
    "no-device-status": (bound(result()), False),
    "status-of-another-device": (bound(result(), devices=(status("g1", attached="True"),)), False),
    "status-of-another-pool": (bound(result(), devices=(status(pool="b", attached="True"),)), False),
    "condition-missing": (bound(result(), devices=(status(other="True"),)), False),
    "condition-false": (bound(result(), devices=(status(attached="False"),)), False),
    "condition-unknown": (bound(result(), devices=(status(attached="Unknown"),)), False),
    "condition-true": (bound(result(), devices=(status(attached="True"),)), True),
    "failure-false-condition-true": (bound(result(), devices=(status(attached="True", failed="False"),)), True),
    "failure-true": (bound(result(), devices=(status(failed=("True", "NoFabric", 'no "fabric" left')),)),
                     FAILED_TEXT),
    "failure-true-beats-conditions-true": (
        bound(result(), devices=(status(attached="True", failed=("True", "NoFabric", 'no "fabric" left')),)),
        FAILED_TEXT),
    "all-conditions-needed": (bound(result(conditions=("attached", "powered")),
                                    devices=(status(attached="True", powered="False"),)), False),
    "every-device-needed": (bound(result(), result("g1"), devices=(status(attached="True"),)), False),
    "every-device-ready": (bound(result(), result("g1"), devices=(status(attached="True"),
                                                                  status("g1", attached="True"))), True),
    "first-device-not-ready-hides-a-later-failure": (
        bound(result(), result("g1"), devices=(status("g1", failed="True"),)), False),
    "device-without-conditions-is-skipped": (
        bound(result(conditions=()), result("g1"), devices=(status("g1", attached="True"),)), True),
}


@pytest.mark.parametrize(("claim", "want"), [pytest.param(*v, id=k) for k, v in READINESS.items()])
def test_readiness(claim: ResourceClaim, want: bool | str) -> None:
    assert readiness(claim, ERRORS_V134) == want


TIMED_OUT: dict[str, tuple[ResourceClaim, float, bool]] = {
    "no-allocation-time": (bound(result()), T0 + 10_000, False),
    "before-the-timeout": (bound(result(), since=T0), T0 + 599, False),
    "at-the-timeout": (bound(result(), since=T0), T0 + 600, False),
    "after-the-timeout": (bound(result(), since=T0), T0 + 600.5, True),
    "no-binding-conditions": (bound(result(conditions=()), since=T0), T0 + 10_000, False),
    "unallocated": (ResourceClaim("c"), T0 + 10_000, False),
}


@pytest.mark.parametrize(("claim", "now", "want"), [pytest.param(*v, id=k) for k, v in TIMED_OUT.items()])
def test_timed_out(claim: ResourceClaim, now: float, want: bool) -> None:
    assert timed_out(claim, 600.0, now) is want


READY = bound(result(), devices=(status(attached="True"),), since=T0, name="ready")
WAITING = bound(result(), since=T0, name="waiting")
WAIT_OUTCOMES: dict[str, tuple[list[ResourceClaim], float, str | None]] = {
    "all-ready": ([READY], T0, None),
    "failed": ([bound(result(), devices=(status(failed=("True", "NoFabric", 'no "fabric" left')),))], T0,
               FAILED_TEXT),
    "just-allocated-waits-to-the-deadline": ([WAITING], T0, DEVICE_BINDING_TIMEOUT),
    "no-allocation-time-waits-to-the-deadline": ([bound(result(), name="waiting")], T0, DEVICE_BINDING_TIMEOUT),
    "already-timed-out": ([WAITING], T0 + 601, "claim waiting binding timeout"),
    "times-out-during-the-wait": ([WAITING], T0 + 10, "claim waiting binding timeout"),
    "times-out-after-the-last-look": ([WAITING], T0 + 3, DEVICE_BINDING_TIMEOUT),
    "times-out-at-a-look-is-not-yet-out": ([WAITING], T0 + 5, DEVICE_BINDING_TIMEOUT),
    "the-first-claim-not-ready-decides": (
        [READY, WAITING, bound(result(), devices=(status(failed="True"),), name="failed")], T0 + 601,
        "claim waiting binding timeout"),
    "a-failure-before-a-waiting-claim": (
        [bound(result(), devices=(status(failed=("True", "NoFabric", 'no "fabric" left')),)), WAITING], T0,
        FAILED_TEXT),
}


@pytest.mark.parametrize(("claims", "now", "want"), [pytest.param(*v, id=k) for k, v in WAIT_OUTCOMES.items()])
def test_wait_outcome(claims: list[ResourceClaim], now: float, want: str | None) -> None:
    assert wait_outcome(claims, 600.0, now, ERRORS_V134) == want


# --- reading the objects --------------------------------------------------------------------------

FABRIC_DEVICE: dict[str, Any] = {"name": "g0", "bindsToNode": True, "bindingConditions": ["attached"],
                                 "bindingFailureConditions": ["failed"]}


def slice_(node_name: str, *devices: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": list(devices) or [{"name": "g0"}]}}


TWO_ON_A = slice_("a", {"name": "g0"}, {"name": "g1"})


def on_node(name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}


def claim(name: str = "c", *, allocated_on: str | None = None, conditions: dict[str, str] | None = None,
          allocated_at: str | None = None, selector: bool = True) -> dict[str, Any]:
    """A claim for one device of class ``gpu``; ``allocated_on`` a node: its fabric device ``g0`` there,
    with ``conditions`` (type -> status) reported for it."""
    out: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                               "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}},
                           "status": {}}
    if allocated_on is not None:
        allocation: dict[str, Any] = {"devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": allocated_on, "device": "g0",
             "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}]}}
        if selector:
            allocation["nodeSelector"] = on_node(allocated_on)
        if allocated_at is not None:
            allocation["allocationTimestamp"] = allocated_at
        out["status"]["allocation"] = allocation
    if conditions is not None:
        out["status"]["devices"] = [{
            "driver": DRIVER, "pool": allocated_on, "device": "g0", "shareID": "s-1",
            "conditions": [{"type": kind, "status": value, "reason": "R", "message": "m",
                            "lastTransitionTime": T0_TEXT} for kind, value in conditions.items()],
            "data": {"attached-at": "port-3"}, "networkData": {"interfaceName": "eth1"}}]
    return out


def test_status_devices_allocation_time_and_binding_conditions_are_read() -> None:
    read = object_from_dict(claim(allocated_on="a", conditions={"attached": "True"}, allocated_at=T0_TEXT))
    assert isinstance(read, ResourceClaim)
    assert read.allocation is not None
    assert read.allocation.allocation_timestamp == T0
    assert read.allocation.devices[0].binding_conditions == ("attached",)
    assert read.allocation.devices[0].binding_failure_conditions == ("failed",)
    assert read.devices == (AllocatedDeviceStatus(DRIVER, "a", "g0", "s-1", (DeviceCondition("attached", "True", "R",
                                                                                                 "m"),),
                                                  {"attached-at": "port-3"}, {"interfaceName": "eth1"}),)
    assert read.devices[0].condition("attached") == DeviceCondition("attached", "True", "R", "m")
    assert read.devices[0].condition("failed") is None
    [fabric] = load_cluster([slice_("a", FABRIC_DEVICE)]).objects
    assert fabric.devices[0].binding_failure_conditions == ("failed",)  # type: ignore[attr-defined]


def _broken(change: str) -> dict[str, Any]:
    raw = claim(allocated_on="a", conditions={"attached": "True"})
    entry = raw["status"]["devices"][0]
    if change == "status":
        entry["conditions"][0]["status"] = "Yes"
    elif change == "type":
        del entry["conditions"][0]["type"]
    elif change == "driver":
        del entry["driver"]
    elif change == "conditions":
        entry["conditions"] = "attached"
    elif change == "time":
        raw["status"]["allocation"]["allocationTimestamp"] = "yesterday"
    else:
        raw["status"]["allocation"]["devices"]["results"][0]["bindingConditions"] = [True]
    return raw


@pytest.mark.parametrize(("change", "field", "message"), [
    ("status", "status.devices[0].conditions[0].status", "must be True, False or Unknown"),
    ("type", "status.devices[0].conditions[0].type", "is required"),
    ("driver", "status.devices[0].driver", "is required"),
    ("conditions", "status.devices[0].conditions", "expected"),
    ("time", "status.allocation.allocationTimestamp", "expected an RFC 3339 time"),
    ("result", "status.allocation.devices.results[0].bindingConditions[0]", "expected a string"),
])
def test_malformed_device_status_names_the_field(change: str, field: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message) as caught:
        object_from_dict(_broken(change))
    assert caught.value.field == field


# --- the plugin -----------------------------------------------------------------------------------

GPU_CLASS: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                             "spec": {}}


def node(name: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def pod(name: str = "p", *claims: str) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "image": "x"}],
                     "resourceClaims": [{"name": f"r{i}", "resourceClaimName": c}
                                        for i, c in enumerate(claims or ("c",))]}}


def _plugin(*objects: dict[str, Any], clock: FakeClock, kube_version: str = "1.36",
            timeout: float = 600.0) -> tuple[DynamicResources, FakeHandle]:
    handle = FakeHandle(load_cluster([node("a"), node("b"), GPU_CLASS, *objects]), kube_version=kube_version,
                        clock=clock)
    return DynamicResources(DynamicResourcesArgs(binding_timeout=timeout), handle.as_handle()), handle


def test_a_fresh_allocation_with_binding_conditions_is_stamped_and_times_out_at_once() -> None:
    clock = FakeClock(T0)
    plugin, handle = _plugin(slice_("a", FABRIC_DEVICE), claim(), clock=clock)
    state, target = CycleState(), pod_from_dict(pod())
    assert plugin.pre_filter(state, target).is_success  # type: ignore[union-attr]
    assert plugin.filter(state, target, handle.snapshot.get("a")).is_success
    assert dra_allocations(state, ["a"]) == {"a": [{"claim": "default/c", "devices": [
        {"request": "gpu", "driver": DRIVER, "pool": "a", "device": "g0", "bindingConditions": ["attached"],
         "bindingFailureConditions": ["failed"]}], "nodeSelector": on_node("a")}]}
    assert plugin.reserve(state, target, "a").is_success
    outcome = plugin.pre_bind(state, target, "a")
    assert (outcome.code, outcome.reasons) == (Code.ERROR, (ERRORS_V136.deadline,))
    written = handle.dra.claims["default/c"]
    assert written.allocation is not None
    assert written.allocation.allocation_timestamp == T0
    assert [c.uid for c in written.reserved_for] == ["uid-p"]
    assert handle.dra.allocated_state().devices == {(DRIVER, "a", "g0")}


def test_without_binding_conditions_in_force_nothing_is_stamped_or_checked() -> None:
    """Before v1.36 (gate off) devices with binding conditions are not allocated and claims are not checked."""
    clock = FakeClock(T0)
    failed = claim(allocated_on="a", conditions={"failed": "True"}, allocated_at="2020-01-01T00:00:00Z")
    plugin, handle = _plugin(TWO_ON_A, slice_("b"), failed, claim("fresh"), clock=clock, kube_version="1.35")
    state, target = CycleState(), pod_from_dict(pod("p", "c", "fresh"))
    assert plugin.pre_filter(state, target).is_success  # type: ignore[union-attr]
    assert plugin.filter(state, target, handle.snapshot.get("a")).is_success
    assert plugin.filter_key(state, target) is None  # the allocated claim names a node
    assert plugin.reserve(state, target, "a").is_success
    assert plugin.pre_bind(state, target, "a").is_success
    fresh = handle.dra.claims["default/fresh"].allocation
    assert fresh is not None
    assert fresh.allocation_timestamp is None


def test_an_already_stamped_claim_keeps_its_time_and_a_ready_one_binds() -> None:
    clock = FakeClock(T0 + 30)
    ready = claim(allocated_on="a", conditions={"attached": "True", "failed": "False"}, allocated_at=T0_TEXT)
    plugin, handle = _plugin(slice_("a", FABRIC_DEVICE), ready, clock=clock)
    state, target = CycleState(), pod_from_dict(pod())
    assert plugin.pre_filter(state, target).is_success  # type: ignore[union-attr]
    assert plugin.filter(state, target, handle.snapshot.get("a")).is_success
    assert plugin.reserve(state, target, "a").is_success
    assert plugin.pre_bind(state, target, "a").is_success
    written = handle.dra.claims["default/c"]
    assert written.allocation is not None
    assert written.allocation.allocation_timestamp == T0


@pytest.mark.parametrize(("conditions", "allocated_at", "later", "rejected"), [
    pytest.param({"attached": "True"}, None, 0.0, False, id="ready"),
    pytest.param({"failed": "True"}, None, 0.0, True, id="failed"),
    pytest.param({}, T0_TEXT, 600.0, False, id="waiting-at-the-timeout"),
    pytest.param({}, T0_TEXT, 600.5, True, id="waiting-past-the-timeout"),
    pytest.param({}, None, 10_000.0, False, id="waiting-without-allocation-time"),
])
def test_filter_without_a_node_selector_and_no_reused_verdicts(conditions: dict[str, str], allocated_at: str | None,
                                                               later: float, rejected: bool) -> None:
    """An allocated claim without a node selector (a network device) is checked on every node; its verdict
    moves with the clock, without any event, so it is never reused across cycles."""
    clock = FakeClock(T0)
    allocated = claim(allocated_on="a", conditions=conditions, allocated_at=allocated_at, selector=False)
    plugin, handle = _plugin(TWO_ON_A, slice_("b"), allocated, claim("fresh"), clock=clock)
    target = pod_from_dict(pod("p", "c", "fresh"))
    clock.advance(later)
    state = CycleState()
    assert plugin.pre_filter(state, target).is_success  # type: ignore[union-attr]
    assert plugin.filter_key(state, target) is None
    for name in ("a", "b"):
        verdict = plugin.filter(state, target, handle.snapshot.get(name))
        assert verdict.reasons == (("resourceclaim not available on the node",) if rejected else ())
    outcome = plugin.post_filter(state, target, {})
    want = "deallocation of ResourceClaim completed" if rejected else "still not schedulable"
    assert outcome.status.reasons == (want,)
    assert (handle.dra.claims["default/c"].allocation is None) is rejected
    assert (handle.dra.claims["default/c"].devices == ()) is rejected


def test_pods_whose_allocated_claims_have_no_binding_conditions_keep_their_key() -> None:
    plain = claim(allocated_on="a", selector=False)
    plain["status"]["allocation"]["devices"]["results"][0].pop("bindingConditions")
    plugin, _ = _plugin(slice_("a"), slice_("b"), plain, claim("fresh"), clock=FakeClock(T0))
    state, target = CycleState(), pod_from_dict(pod("p", "c", "fresh"))
    assert plugin.pre_filter(state, target).is_success  # type: ignore[union-attr]
    assert plugin.filter_key(state, target) is not None


# --- the store ------------------------------------------------------------------------------------


def test_stamping_an_allocation_does_not_count_its_devices_again() -> None:
    [read] = load_cluster([claim()]).objects
    assert isinstance(read, ResourceClaim)
    store = DraStore()
    store.add(read)
    allocation = AllocationResult((result(),))
    store.assume(attrs.evolve(read, allocation=allocation))
    position, _ = store.pools_changed(None)
    written = store.bind(attrs.evolve(read, allocation=allocation), pod_from_dict(pod()), T0)
    assert written.allocation is not None
    assert written.allocation.allocation_timestamp == T0
    assert store.pools_changed(position)[1] == frozenset()
    assert store.allocated_state().devices == {(DRIVER, "a", "g0")}


def test_a_claim_released_by_its_last_pod_loses_its_device_status() -> None:
    raw = claim(allocated_on="a", conditions={"attached": "True"})
    raw["status"]["reservedFor"] = [{"resource": "pods", "name": "p", "uid": "uid-p"}]
    store = DraStore()
    store.add(object_from_dict(raw))
    store.release_pod(pod_from_dict(pod()))
    released = store.claims["default/c"]
    assert (released.allocation, released.reserved_for, released.devices) == (None, (), ())


# --- the whole scheduler --------------------------------------------------------------------------


def _scheduler(clock: FakeClock, *objects: dict[str, Any]) -> Scheduler:
    sched = Scheduler(kube_version="1.36", clock=clock)
    sched.add_objects(load_cluster([node("a"), node("b"), GPU_CLASS, *objects]).objects)
    return sched


def _placed(sched: Scheduler, clock: FakeClock, rounds: int = 20) -> dict[str, str | None]:
    """Schedule, moving the clock to each wakeup, until nothing is left to do (or ``rounds`` passed)."""
    placed: dict[str, str | None] = {}
    for _ in range(rounds):
        for outcome in [*sched.run_until_idle(), *sched.tick()]:
            placed[outcome.pod.name] = outcome.node_name if outcome.scheduled else None
        wakeup = sched.next_wakeup()
        if wakeup is None or (placed and all(placed.values())):
            break
        clock.set(max(wakeup, clock.now()))
    return placed


def test_a_claim_whose_devices_are_ready_binds_its_pod() -> None:
    clock = FakeClock(T0)
    ready = claim(allocated_on="a", conditions={"attached": "True", "failed": "False"})
    sched = _scheduler(clock, slice_("a", FABRIC_DEVICE), slice_("b"), ready, pod())
    assert _placed(sched, clock) == {"p": "a"}
    written = sched.devices.claims["default/c"]
    assert written.allocation is not None
    assert written.allocation.allocation_timestamp == T0
    assert [c.uid for c in written.reserved_for] == ["uid-p"]


def test_on_a_live_cluster_prebind_says_it_waits_then_looks_at_the_claims() -> None:
    """With an API server, PreBind records ``BindingConditionsPending`` and looks at the claims as the cluster
    reports them (here ready at the first look), instead of answering what a wait without a driver ends in."""
    api = RecordingApi()
    clock = FakeClock(T0)
    ready = claim(allocated_on="a", conditions={"attached": "True", "failed": "False"})
    sched = Scheduler(kube_version="1.36", clock=clock, api=api)
    sched.add_objects(load_cluster([node("a"), node("b"), GPU_CLASS, slice_("a", FABRIC_DEVICE), slice_("b"),
                                    ready, pod()]).objects)
    assert _placed(sched, clock) == {"p": "a"}
    assert api.calls == [("nominate", "p", "a"), ("reserve", "c", "p", False, ()),
                         ("event", "p", "BindingConditionsPending", "waiting for binding conditions for device "
                                                                    "on node a")]


@pytest.mark.parametrize(("claims", "now", "want"), [
    pytest.param([bound(result())], T0, False, id="not-ready-look-again"),
    pytest.param([bound(result(), since=T0)], T0 + 601, "claim c binding timeout", id="timed-out"),
    pytest.param([bound(result(), devices=(status(attached="True"),))], T0, None, id="ready"),
    pytest.param([bound(result(), devices=(status(failed=("True", "R", "m")),))], T0,
                 'claim c binding failed: reason=R, message="m"', id="failed"),
])
def test_one_look_of_the_live_wait(claims: list[ResourceClaim], now: float, want: str | bool | None) -> None:
    assert poll_outcome(claims, 600.0, now, ERRORS_V134) == want


def test_a_failed_binding_is_deallocated_and_the_pod_lands_elsewhere() -> None:
    clock = FakeClock(T0)
    failed = claim(allocated_on="a", conditions={"attached": "False", "failed": "True"})
    busy = claim("busy", allocated_on="a")  # takes a's only device, freed by the deallocation
    busy["status"]["reservedFor"] = [{"resource": "pods", "name": "other", "uid": "uid-other"}]
    sched = _scheduler(clock, slice_("a", FABRIC_DEVICE), slice_("b"), failed, pod())
    first = sched.schedule_one()
    assert first is not None
    assert not first.scheduled
    assert _devices(sched) is None
    assert sched.devices.claims["default/c"].devices == ()
    sched.add_objects(load_cluster([copy.deepcopy(busy)]).objects)
    placed = _placed(sched, clock)
    assert placed == {"p": "b"}
    assert _devices(sched) == [(DRIVER, "b", "g0")]


def _devices(sched: Scheduler, key: str = "default/c") -> list[tuple[str, str, str]] | None:
    allocation = sched.devices.claims[key].allocation
    return None if allocation is None else [d.device_id for d in allocation.devices]


def test_a_device_that_is_not_ready_fails_prebind_at_once() -> None:
    clock = FakeClock(T0)
    sched = _scheduler(clock, slice_("a", FABRIC_DEVICE), claim(), pod())
    outcome = sched.schedule_one()
    assert outcome is not None
    assert not outcome.scheduled
    assert DEVICE_BINDING_TIMEOUT in " ".join(outcome.status.reasons)
    kept = sched.devices.claims["default/c"]
    assert kept.allocation is not None
    assert kept.allocation.allocation_timestamp == T0
    assert kept.reserved_for == ()
    assert clock.now() == T0


def test_prebind_writes_nothing_for_a_node_without_an_allocation() -> None:
    plugin, handle = _plugin(slice_("a", FABRIC_DEVICE), claim(), clock=FakeClock(T0))
    state, target = CycleState(), pod_from_dict(pod())
    assert plugin.pre_filter(state, target).is_success  # type: ignore[union-attr]
    assert plugin.pre_bind(state, target, "b").is_success
    assert handle.dra.claims["default/c"].allocation is None


def test_a_claim_timing_out_between_two_attempts_is_deallocated() -> None:
    """No event marks the timeout: the retry after the clock passed it finds the claim unavailable, and it is
    deallocated and allocated again, to a device without conditions."""
    clock = FakeClock(T0)
    waiting = claim(allocated_on="a", allocated_at=T0_TEXT, selector=False)
    sched = _scheduler(clock, TWO_ON_A, slice_("b"), waiting, claim("fresh"), pod("p", "c", "fresh"))
    first = sched.schedule_one()
    assert first is not None
    assert first.status.reasons == (f'running PreBind plugin "DynamicResources": {ERRORS_V136.deadline}',)
    clock.set(T0 + 601)
    retried = [*sched.tick(), *sched.run_until_idle()]
    assert [r.status.reasons for r in retried][:1] == [(
        "0/2 nodes are available: 2 resourceclaim not available on the node. deallocation of ResourceClaim "
        "completed, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.",)]
    # each deallocation is a claim update that requeues p at once (no backoff wait); it ends on a
    assert {r.pod.name: r.node_name for r in retried} | _placed(sched, clock) == {"p": "a"}
    again = sched.devices.claims["default/c"].allocation
    assert again is not None
    assert [(d.device, d.binding_conditions) for d in again.devices] == [("g0", ())]


def test_verdicts_of_a_pod_with_the_same_claims_to_allocate_are_not_reused() -> None:
    """``q`` asks for one device like ``p``'s pending claim, so their Filter verdicts would share a key; ``p``
    also holds a timed-out claim without a node selector, so it must ask Filter on every node itself."""
    clock = FakeClock(T0 + 601)
    waiting = claim(allocated_on="a", allocated_at=T0_TEXT, selector=False)
    nodes = [node(f"n{i}") for i in range(4)]
    sched = _scheduler(clock, TWO_ON_A, slice_("b"), *[slice_(n["metadata"]["name"]) for n in nodes], *nodes,
                       waiting, claim("fresh"), claim("for-q"), pod("q", "for-q"))
    first = sched.schedule_one()
    assert first is not None
    assert first.scheduled
    sched.add_objects([pod_from_dict(pod("p", "c", "fresh"))])
    second = sched.schedule_one()
    assert second is not None
    assert second.status.reasons == (
        "0/6 nodes are available: 1 cannot allocate all claims, 5 resourceclaim not available on the node. "
        "deallocation of ResourceClaim completed, preemption: 0/6 nodes are available: 6 Preemption is not "
        "helpful for scheduling.",)  # q took the only device of its node


class _MonotonicOnly:
    """A user's clock with ``now()`` alone (no ``wall_time()``)."""

    def __init__(self, now: float) -> None:
        self.value = now

    def now(self) -> float:
        return self.value


def test_explain_reads_allocation_times_against_the_wall_clock() -> None:
    """``explain`` runs on the system clock: a claim allocated in 2026-01 and never ready has timed out by
    now, as kube-scheduler (which compares with the wall clock) sees it; so has a claim on a clock without
    ``wall_time()`` at a ``now()`` past its deadline, and not one before it."""
    from kschedlib import explain

    stale = claim(allocated_on="a", conditions={"attached": "False"}, allocated_at=T0_TEXT)
    out = explain([node("a"), GPU_CLASS, slice_("a", FABRIC_DEVICE), stale], pod(), kube_version="1.36").to_dict()
    assert out["filtered"]["a"]["reasons"] == ["resourceclaim not available on the node"]
    for now, unavailable in ((T0 + 601, True), (T0 + 10, False)):
        sched = Scheduler(kube_version="1.36", clock=_MonotonicOnly(now))
        sched.add_objects(load_cluster([node("a"), GPU_CLASS, slice_("a", FABRIC_DEVICE), stale]).objects)
        assert ("a" in sched.explain(load_cluster([pod()]).pods[0]).to_dict()["filtered"]) is unavailable


@pytest.mark.parametrize(("kube_version", "failed", "claim_timeout", "deadline"), [
    ("1.35", 'claim c binding failed: reason=R, message="m"', "claim c binding timeout", "device binding timeout"),
    ("1.36", 'device binding failed: claim=c, reason=R, message="m"', "device binding timeout: claim=c",
     "device binding timeout: context deadline exceeded"),
])
def test_each_version_words_the_ends_of_the_wait_as_its_kube_scheduler(kube_version: str, failed: str,
                                                                      claim_timeout: str, deadline: str) -> None:
    """kube v1.36 wraps them in ErrDeviceBindingFailed / ErrDeviceBindingTimeout (dynamicresources.go)."""
    errors = DynamicResources(None, FakeHandle([], kube_version=kube_version,
                                               feature_gates={"DRADeviceBindingConditions": True}))._binding_errors
    failing = bound(result(), devices=(status(failed=("True", "R", "m")),))
    assert readiness(failing, errors) == failed
    assert poll_outcome([bound(result(), since=T0)], 600.0, T0 + 601, errors) == claim_timeout
    assert wait_outcome([WAITING], 600.0, T0, errors) == deadline
