"""Invariants of the allocator on random small pools and claims (Hypothesis).

* no device is allocated twice, nor one that an allocated claim holds (admin access aside);
* every allocated device matches its request's selectors and every request gets its count;
* ``matchAttribute`` holds across the constrained requests;
* the search is complete: when it finds nothing, no assignment exists (checked by brute force).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.dra._allocator import AllocatedState, Allocator, Features
from kschedlib.dra._selectors import SelectorCache
from kschedlib.model.dra import (
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.model.objects import Node
from tests.dra.test_allocator import DRIVER, _predicate

CLASSES = {"gpu": DeviceClass("gpu", ("driver",))}
MODELS = ("a", "b")


@st.composite
def devices(draw: st.DrawFn) -> tuple[Device, ...]:
    count = draw(st.integers(1, 5))
    return tuple(Device(f"g{i}", {"model": DeviceAttribute("string", draw(st.sampled_from(MODELS))),
                                  "numa": DeviceAttribute("int", draw(st.integers(0, 1)))}) for i in range(count))


@st.composite
def claims(draw: st.DrawFn) -> list[ResourceClaim]:
    out = []
    for ci in range(draw(st.integers(1, 2))):
        requests = []
        for ri in range(draw(st.integers(1, 2))):
            selectors = draw(st.sampled_from([(), ("model=a",), ("model=b",)]))
            requests.append(DeviceRequest(f"r{ri}", ExactRequest(f"r{ri}", "gpu", selectors,
                                                                 count=draw(st.integers(1, 2)))))
        constraints = ((DeviceConstraint((), "gpu.example.com/numa"),) if draw(st.booleans()) else ())
        out.append(ResourceClaim(f"c{ci}", requests=tuple(requests), constraints=constraints))
    return out


def _matches(device: Device, request: ExactRequest) -> bool:
    return all(_predicate(s)(device, DRIVER) for s in request.selectors)


def _brute_force_exists(pool: Sequence[Device], used: frozenset[str], wanted: list[ResourceClaim]) -> bool:
    """Whether some assignment of distinct free devices satisfies every request and constraint."""
    slots = [(ci, request.exactly) for ci, c in enumerate(wanted) for request in c.requests
             for _ in range(request.exactly.count if request.exactly else 0)]
    free = [d for d in pool if d.name not in used]
    for chosen in itertools.permutations(free, len(slots)):
        if not all(request is not None and _matches(d, request) for d, (_, request) in zip(chosen, slots, strict=True)):
            continue
        ok = True
        for ci, c in enumerate(wanted):
            if c.constraints:
                pairs = zip(chosen, slots, strict=True)
                values = {d.attributes["numa"].value for d, (owner, _) in pairs if owner == ci}
                ok = ok and len(values) <= 1
        if ok:
            return True
    return False


def _check(result: list[AllocationResult], wanted: list[ResourceClaim], pool: Sequence[Device],
           used: frozenset[str]) -> None:
    by_name = {d.name: d for d in pool}
    taken = [d.device for r in result for d in r.devices]
    assert len(taken) == len(set(taken))
    assert not set(taken) & used
    for claim, allocation in zip(wanted, result, strict=True):
        for request in claim.requests:
            assert request.exactly is not None
            mine = [by_name[d.device] for d in allocation.devices if d.request == request.name]
            assert len(mine) == request.exactly.count
            assert all(_matches(d, request.exactly) for d in mine)
        if claim.constraints:
            assert len({by_name[d.device].attributes["numa"].value for d in allocation.devices}) == 1


@settings(max_examples=150, deadline=None)
@given(devices(), claims(), st.sets(st.sampled_from([f"g{i}" for i in range(5)]), max_size=2))
def test_allocations_are_valid_and_the_search_is_complete(pool: tuple[Device, ...], wanted: list[ResourceClaim],
                                                         used_names: set[str]) -> None:
    used = frozenset(name for name in used_names if any(d.name == name for d in pool))
    slices = [ResourceSlice("s", DRIVER, "n1", 1, 1, node_name="n1", devices=pool)]
    state = AllocatedState(frozenset((DRIVER, "n1", name) for name in used))
    allocator = Allocator(Features(), state, CLASSES, slices, SelectorCache(_predicate))
    result = allocator.allocate(Node("n1"), wanted)
    if result is None:
        assert not _brute_force_exists(pool, used, wanted)
    else:
        _check(result, wanted, pool, used)
