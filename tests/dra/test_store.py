"""DraStore: devices in use as claims change, copies, releases, extended resource names."""

from __future__ import annotations

import attrs
import pytest

from kschedlib.dra._allocated import AllocatedState, HeldDevices
from kschedlib.dra._store import DraStore
from kschedlib.model.dra import (
    AllocationResult,
    ClaimConsumer,
    Device,
    DeviceAllocation,
    DeviceClass,
    DeviceTaint,
    DeviceToleration,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kschedlib.model.objects import Pod, PodResourceClaim
from kschedlib.model.quantity import parse_quantity

D = "gpu.example.com"


def allocated(name: str, *devices: DeviceAllocation, consumers: tuple[ClaimConsumer, ...] = ()) -> ResourceClaim:
    return ResourceClaim(name, uid=f"uid-{name}", allocation=AllocationResult(devices), reserved_for=consumers)


def test_devices_in_use_follow_every_claim_change() -> None:
    store = DraStore()
    store.add(ResourceSlice("s", D, "n1", node_name="n1", devices=(Device("g0"), Device("g1"), Device("nic"))))
    share = DeviceAllocation("r", D, "n1", "nic", consumed_capacity={"bw": parse_quantity("4G")})
    admin = DeviceAllocation("r", D, "n1", "g1", admin_access=True)
    store.add(allocated("a", DeviceAllocation("r", D, "n1", "g0"), admin, share))
    state = store.allocated_state()
    assert state.devices == {(D, "n1", "g0")}
    assert state.capacity == {(D, "n1", "nic"): {"bw": parse_quantity("4G")}}
    assert store.allocated_state() is state  # unchanged claims, same answer
    assert store.free_devices("n1") == {f"{D}/n1": ["g1", "nic"]}
    copy = store.copy()
    store.deallocate(store.claims["default/a"])
    assert store.allocated_state().devices == frozenset()
    assert store.allocated_state().capacity == {}
    assert copy.allocated_state().devices == {(D, "n1", "g0")}
    assert store.free_devices("n2") == {}


def test_in_flight_allocations_count_until_written_or_forgotten() -> None:
    store = DraStore()
    claim = ResourceClaim("c", uid="u")
    store.add(claim)
    with_allocation = attrs.evolve(claim, allocation=AllocationResult((DeviceAllocation("r", D, "p", "g0"),)))
    store.assume(with_allocation)
    assert store.has_pending_allocation("u")
    assert store.allocated_state().devices == {(D, "p", "g0")}
    store.forget(with_allocation)
    store.forget(with_allocation)
    assert store.allocated_state().devices == frozenset()
    store.assume(with_allocation)
    pod = Pod("p", uid="pu", resource_claims=(PodResourceClaim("gpu", resource_claim_name="c"),))
    written = store.bind(with_allocation, pod)
    assert written.reserved_for == (ClaimConsumer("p", "pu"),)
    assert store.bind(written, pod).reserved_for == (ClaimConsumer("p", "pu"),)
    assert not store.has_pending_allocation("u")
    store.release_pod(pod)
    assert store.claims["default/c"].allocation is None


def test_a_claim_other_pods_use_stays_allocated_when_one_goes() -> None:
    store = DraStore()
    both = (ClaimConsumer("p", "pu"), ClaimConsumer("q", "qu"))
    store.add(allocated("c", DeviceAllocation("r", D, "p", "g0"), consumers=both))
    pod = Pod("p", uid="pu", resource_claims=(PodResourceClaim("gpu", resource_claim_name="c"),
                                              PodResourceClaim("t", resource_claim_template_name="t")))
    store.release_pod(pod)
    left = store.claims["default/c"]
    assert left.reserved_for == (ClaimConsumer("q", "qu"),)
    assert left.allocation is not None
    store.release(Pod("x", uid="xu"), ["default/c", "default/missing"])
    assert store.claims["default/c"] == left


def test_objects_and_extended_resource_names() -> None:
    store = DraStore()
    assert store.add(DeviceClass("gpu", extended_resource_name="example.com/gpu"))
    assert store.add(DeviceClass("other"))
    assert store.add(ResourceClaimTemplate("t"))
    assert not store.add(Pod("p"))
    assert store.templates["default/t"].key == "default/t"
    names = store.extended_resource_classes()
    assert names["example.com/gpu"].name == "gpu"
    assert names["deviceclass.resource.kubernetes.io/other"].name == "other"


def test_tolerations() -> None:
    taint = DeviceTaint("k", "v", "NoSchedule")
    assert DeviceToleration("k", "Equal", "v").tolerates(taint)
    assert not DeviceToleration("k", "Equal", "w").tolerates(taint)
    assert not DeviceToleration("other", "Exists").tolerates(taint)
    assert not DeviceToleration("k", "Exists", effect="NoExecute").tolerates(taint)
    assert DeviceToleration("", "Exists").tolerates(taint)
    assert not DeviceToleration("k", "Lt", "v").tolerates(taint)


def test_held_devices_are_a_set_kept_by_pool() -> None:
    held = HeldDevices.of([(D, "p", "g0"), (D, "p", "g1"), (D, "q", "g0")])
    assert (D, "p", "g1") in held
    assert (D, "q", "g1") not in held
    assert "g0" not in held  # type: ignore[comparison-overlap]  # anything but a device id is not in it
    assert held.in_pool(D, "p") == {"g0", "g1"}
    assert held.in_pool(D, "none") == frozenset()
    assert len(held) == 3
    assert held == {(D, "p", "g0"), (D, "p", "g1"), (D, "q", "g0")}
    assert hash(held) == hash(HeldDevices.of(sorted(held)))
    assert repr(HeldDevices.of([(D, "p", "g0")])) == "HeldDevices([('gpu.example.com', 'p', 'g0')])"
    assert AllocatedState(frozenset({(D, "p", "g0")})).devices == HeldDevices.of([(D, "p", "g0")])


def test_a_snapshot_of_devices_in_use_does_not_move_with_the_store() -> None:
    store = DraStore()
    first = allocated("a", DeviceAllocation("gpu", D, "p", "g0"))
    second = allocated("b", DeviceAllocation("gpu", D, "p", "g1"))
    store.add(first)
    before = store.allocated_state()
    store.add(second)
    store.deallocate(first)
    assert before.devices == {(D, "p", "g0")}
    assert store.allocated_state().devices == {(D, "p", "g1")}
    store.deallocate(second)
    assert store.allocated_state().devices.in_pool(D, "p") == frozenset()


def test_selector_answers_are_remembered_per_device_object_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedlib.dra import _selectors
    from kschedlib.dra._selectors import SelectorCache

    asked: list[str] = []

    def compile_selector(expression: str) -> _selectors.SelectorPredicate:
        def predicate(device: Device, driver: str) -> bool:
            asked.append(device.name)
            return device.name.endswith(expression)
        return predicate

    cache = SelectorCache(compile_selector)
    one, two = Device("g1"), Device("g2")
    assert [cache.match("1", d, D) for d in (one, two, one, two)] == [True, False, True, False]
    assert asked == ["g1", "g2"]
    assert cache.match("1", Device("g1"), D)  # an equal but new object is asked again
    assert asked == ["g1", "g2", "g1"]
    monkeypatch.setattr(_selectors, "_RESULTS_MAX", 3)
    assert not cache.match("2", one, D)  # the bound is reached: everything is forgotten first
    assert cache.match("1", one, D)
    assert asked == ["g1", "g2", "g1", "g1", "g1"]
