"""The allocator's first-fit answer for plain claims is the full search's answer, errors included.

A claim with one ExactCount request (no constraints, admin access or capacity) on devices without
taints, counters, shared capacity or binding conditions needs no backtracking, so the allocator
takes the first free matching devices directly.  Every case here runs both ways: with the short
cut, and with it switched off so the depth-first search answers alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.dra import _allocator
from kschedlib.dra._allocator import AllocatedState, AllocationError, Allocator, Features, NodeAllocationFailed
from kschedlib.dra._selectors import SelectorCache
from kschedlib.model.dra import (
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceTaint,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.model.objects import Node
from kschedlib.model.quantity import parse_quantity
from tests.dra.test_allocator import CLASSES, DRIVER, _predicate

_SELECTORS = [(), ("model=a",), ("model=b",), ("boom",)]


@st.composite
def _device(draw: st.DrawFn, index: int) -> Device:
    odd = draw(st.sampled_from(["plain"] * 6 + ["taint", "counter", "binding", "shared"]))
    return Device(
        f"g{index}", {"model": DeviceAttribute("string", draw(st.sampled_from(["a", "b"])))},
        taints=(DeviceTaint("k", "v", "NoSchedule"),) if odd == "taint" else (),
        consumes_counters=((DeviceCounterConsumption("set", {"mem": parse_quantity("1")}),)
                           if odd == "counter" else ()),
        binding_conditions=("ready",) if odd == "binding" else (),
        allow_multiple_allocations=odd == "shared")


@st.composite
def _slices(draw: st.DrawFn) -> list[ResourceSlice]:
    out = []
    index = 0
    for pool in range(draw(st.integers(0, 2))):
        count = draw(st.integers(0, 4))
        devices = tuple(draw(_device(index + i)) for i in range(count))
        index += count
        counters = (CounterSet("set", {"mem": parse_quantity("2")}),)
        out.append(ResourceSlice(f"s{pool}", DRIVER, f"p{pool}", 1, draw(st.sampled_from([1, 1, 1, 2])),
                                 node_name="n1", devices=devices, shared_counters=counters))
    return out


@st.composite
def _claim(draw: st.DrawFn) -> ResourceClaim:
    requests = []
    for ri in range(draw(st.sampled_from([1, 1, 1, 2]))):
        request = ExactRequest(f"r{ri}", draw(st.sampled_from(["gpu", "gpu", "gpu", "missing"])),
                               draw(st.sampled_from(_SELECTORS)), count=draw(st.integers(0, 3)),
                               admin_access=draw(st.sampled_from([None, None, None, True])))
        requests.append(DeviceRequest(f"r{ri}", request))
    constraints = (DeviceConstraint((), f"{DRIVER}/model"),) if draw(st.integers(0, 4)) == 0 else ()
    return ResourceClaim("c", requests=tuple(requests), constraints=constraints)


def _outcome(slices: list[ResourceSlice], claim: ResourceClaim, used: frozenset[str], features: Features,
             deadline: Callable[[], bool] | None = None) -> object:
    allocated = AllocatedState(frozenset((DRIVER, pool, name) for pool in ("p0", "p1") for name in used))
    allocator = Allocator(features, allocated, CLASSES, slices, SelectorCache(_predicate))
    try:
        return allocator.allocate(Node("n1"), [claim], deadline)
    except (AllocationError, NodeAllocationFailed, TimeoutError) as exc:
        return type(exc), str(exc)


def _full_search_only() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_allocator._Search, "_first_fit", lambda self: _allocator._GENERAL)
        yield


@settings(max_examples=400, deadline=None)
@given(_slices(), _claim(), st.sets(st.sampled_from([f"g{i}" for i in range(8)]), max_size=3),
       st.builds(Features, device_taints=st.booleans(), partitionable_devices=st.booleans(),
                 consumable_capacity=st.booleans(), binding_conditions=st.booleans(),
                 admin_access=st.booleans()))
def test_first_fit_answers_as_the_full_search(slices: list[ResourceSlice], claim: ResourceClaim, used: set[str],
                                              features: Features) -> None:
    quick = _outcome(slices, claim, frozenset(used), features)
    for _ in _full_search_only():
        assert _outcome(slices, claim, frozenset(used), features) == quick


def test_first_fit_is_taken_for_plain_claims_and_looks_at_the_clock() -> None:
    slices = [ResourceSlice("s", DRIVER, "p0", 1, 1, node_name="n1",
                            devices=(Device("g0", {}), Device("g1", {}), Device("g2", {})))]
    claim = ResourceClaim("c", requests=(DeviceRequest("r", ExactRequest("r", "gpu", count=2)),))
    search = _allocator._Search(Allocator(Features(), AllocatedState(frozenset({(DRIVER, "p0", "g0")})), CLASSES,
                                          slices, SelectorCache(_predicate)), Node("n1"), [claim], None)
    found = search._first_fit()
    assert isinstance(found, list)
    assert [d.device for d in found[0].devices] == ["g1", "g2"]
    assert _outcome(slices, claim, frozenset(), Features(), deadline=lambda: True) == (TimeoutError, "")
