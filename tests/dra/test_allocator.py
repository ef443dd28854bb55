"""The structured allocator on plain Python predicates (no CEL): search order, modes and rules.

Selectors here are names of predicates (``"model=a100"``), so each case reads as the allocator's rule
it pins: first fit in pool/slice/device order, ``All``, prioritized lists, ``matchAttribute``,
admin access, taints, shared counters, consumable capacity, pools and generations.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from kschedlib.dra._allocator import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocatedState,
    AllocationError,
    Allocator,
    Features,
    NodeAllocationFailed,
    lookup_attribute,
)
from kschedlib.dra._selectors import SelectorCache, SelectorError, SelectorPredicate, SelectorRuntimeError
from kschedlib.model._convert_base import Reader, node_selector
from kschedlib.model.dra import (
    ALLOCATION_MODE_ALL,
    AllocationResult,
    CapacityRequestPolicy,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceTaint,
    DeviceToleration,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.model.labels import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.model.objects import Node
from kschedlib.model.quantity import parse_quantity

DRIVER = "gpu.example.com"


def _missing(device: Device, driver: str) -> bool:
    raise SelectorRuntimeError("no such key: numa")


def plain_compile_error(expression: str) -> str | None:
    """Admission's check of a selector in the plain language of :func:`_predicate`."""
    try:
        _predicate(expression)
    except SelectorError as exc:
        return str(exc)
    return None


def _predicate(expression: str) -> SelectorPredicate:
    """``driver``, ``key=value`` (string attribute), ``bad`` (does not compile), ``boom`` (fails on use)."""
    if expression == "driver":
        return lambda device, driver: driver == DRIVER
    if expression == "bad":
        raise SelectorError("ERROR: <input>:1:1: undeclared reference to 'bad'")
    if expression == "boom":
        return _missing
    key, _, value = expression.partition("=")

    def match(device: Device, driver: str) -> bool:
        attribute = device.attributes.get(key)
        return attribute is not None and str(attribute.value) == value

    return match


CLASSES = {"gpu": DeviceClass("gpu", ("driver",)), "broken": DeviceClass("broken", ("boom",))}


def gpu(name: str, **attributes: int | str) -> Device:
    return Device(name, {k: DeviceAttribute("int" if isinstance(v, int) else "string", v)
                         for k, v in attributes.items()})


def node_slice(node: str, *devices: Device, pool: str | None = None, generation: int = 1, count: int = 1,
               name: str | None = None) -> ResourceSlice:
    return ResourceSlice(name or f"{node}-{pool or node}", DRIVER, pool or node, generation, count, node_name=node,
                         devices=devices)


def counter_slice(node: str, counters: tuple[CounterSet, ...], *, pool: str | None = None,
                  count: int = 2) -> ResourceSlice:
    """The slice publishing a pool's shared counters (v1.36: a slice has counters or devices, not both)."""
    return ResourceSlice(f"{node}-{pool or node}-counters", DRIVER, pool or node, 1, count, node_name=node,
                         shared_counters=counters)


def claim(*requests: DeviceRequest, constraints: Sequence[DeviceConstraint] = (), name: str = "c") -> ResourceClaim:
    return ResourceClaim(name, requests=tuple(requests), constraints=tuple(constraints))


def exactly(name: str = "gpu", count: int = 1, selectors: tuple[str, ...] = (), device_class: str = "gpu",
            **kwargs: object) -> DeviceRequest:
    return DeviceRequest(name, ExactRequest(name, device_class, selectors, count=count, **kwargs))  # type: ignore[arg-type]


def allocate(slices: Sequence[ResourceSlice], claims: Sequence[ResourceClaim], node: str = "n1", *,
             allocated: AllocatedState | None = None, features: Features | None = None,
             labels: dict[str, str] | None = None) -> list[AllocationResult] | None:
    allocator = Allocator(features or Features(), allocated or AllocatedState(), CLASSES, slices,
                          SelectorCache(_predicate))
    return allocator.allocate(Node(node, labels=labels or {}), claims)


def picked(results: list[AllocationResult] | None) -> list[list[tuple[str, str]]] | None:
    if results is None:
        return None
    return [[(d.request, d.device) for d in r.devices] for r in results]


def test_first_fit_in_device_order() -> None:
    slices = [node_slice("n1", gpu("g0"), gpu("g1"), gpu("g2"))]
    assert picked(allocate(slices, [claim(exactly(count=2))])) == [[("gpu", "g0"), ("gpu", "g1")]]


def test_devices_of_other_nodes_are_not_reachable() -> None:
    assert allocate([node_slice("n2", gpu("g0"))], [claim(exactly())]) is None


def test_allocated_devices_are_skipped_unless_admin_access() -> None:
    slices = [node_slice("n1", gpu("g0"), gpu("g1"))]
    used = AllocatedState(frozenset({(DRIVER, "n1", "g0")}))
    assert picked(allocate(slices, [claim(exactly())], allocated=used)) == [[("gpu", "g1")]]
    admin = allocate(slices, [claim(exactly(admin_access=True))], allocated=used)
    assert admin is not None
    assert admin[0].devices[0].device == "g0"
    assert admin[0].devices[0].admin_access is True


def test_two_claims_never_share_a_device() -> None:
    slices = [node_slice("n1", gpu("g0"), gpu("g1"))]
    result = picked(allocate(slices, [claim(exactly(), name="a"), claim(exactly(), name="b")]))
    assert result == [[("gpu", "g0")], [("gpu", "g1")]]
    assert allocate(slices, [claim(exactly(count=2), name="a"), claim(exactly(), name="b")]) is None


def test_request_selectors_narrow_the_class() -> None:
    slices = [node_slice("n1", gpu("g0", model="t4"), gpu("g1", model="a100"))]
    assert picked(allocate(slices, [claim(exactly(selectors=("model=a100",)))])) == [[("gpu", "g1")]]


def test_all_mode_takes_every_matching_device_and_fails_if_one_is_used() -> None:
    slices = [node_slice("n1", gpu("g0", model="a"), gpu("g1", model="b"), gpu("g2", model="a"))]
    request = DeviceRequest("gpu", ExactRequest("gpu", "gpu", ("model=a",), ALLOCATION_MODE_ALL))
    assert picked(allocate(slices, [claim(request)])) == [[("gpu", "g0"), ("gpu", "g2")]]
    used = AllocatedState(frozenset({(DRIVER, "n1", "g2")}))
    assert allocate(slices, [claim(request)], allocated=used) is None
    assert allocate([node_slice("n1", gpu("g0", model="b"))], [claim(request)]) is None


def test_all_mode_over_an_incomplete_pool_is_an_error() -> None:
    slices = [node_slice("n1", gpu("g0"), count=2)]
    request = DeviceRequest("gpu", ExactRequest("gpu", "gpu", (), ALLOCATION_MODE_ALL))
    with pytest.raises(AllocationError, match=r"asks for all devices, but resource pool gpu\.example\.com/n1 is "
                                              r"currently being updated"):
        allocate(slices, [claim(request)])


def test_prioritized_list_takes_the_first_subrequest_that_fits() -> None:
    request = DeviceRequest("gpu", None, (ExactRequest("big", "gpu", ("model=h100",)),
                                          ExactRequest("small", "gpu", ("model=t4",), count=2)))
    t4s = [node_slice("n1", gpu("g0", model="t4"), gpu("g1", model="t4"))]
    assert picked(allocate(t4s, [claim(request)])) == [[("gpu/small", "g0"), ("gpu/small", "g1")]]
    h100 = [node_slice("n1", gpu("g0", model="t4"), gpu("g1", model="h100"))]
    assert picked(allocate(h100, [claim(request)])) == [[("gpu/big", "g1")]]
    with pytest.raises(AllocationError, match="DRAPrioritizedList feature is disabled"):
        allocate(h100, [claim(request)], features=Features(prioritized_list=False))


def test_match_attribute_backtracks() -> None:
    slices = [node_slice("n1", gpu("g0", numa=0), gpu("g1", numa=1), gpu("g2", numa=1))]
    constraint = DeviceConstraint(("a", "b"), "gpu.example.com/numa")
    result = picked(allocate(slices, [claim(exactly("a"), exactly("b"), constraints=[constraint])]))
    assert result == [[("a", "g1"), ("b", "g2")]]
    missing = [node_slice("n1", gpu("g0"), gpu("g1"))]
    assert allocate(missing, [claim(exactly("a"), exactly("b"), constraints=[constraint])]) is None


def test_lookup_attribute_qualifies_with_the_driver() -> None:
    device = gpu("g0", numa=3)
    assert lookup_attribute(device, DRIVER, "gpu.example.com/numa") == DeviceAttribute("int", 3)
    assert lookup_attribute(device, DRIVER, "other.com/numa") is None
    assert lookup_attribute(device, DRIVER, "gpu.example.com/model") is None
    assert lookup_attribute(device, DRIVER, "model") is None


def test_taints_need_tolerations() -> None:
    tainted = Device("g0", taints=(DeviceTaint("broken", "ecc", "NoSchedule"),))
    slices = [node_slice("n1", tainted)]
    assert allocate(slices, [claim(exactly())]) is None
    tolerated = exactly(tolerations=(DeviceToleration("broken", "Exists", effect="NoSchedule"),))
    assert picked(allocate(slices, [claim(tolerated)])) == [[("gpu", "g0")]]
    assert picked(allocate(slices, [claim(exactly())], features=Features(device_taints=False))) == [[("gpu", "g0")]]
    none_effect = [node_slice("n1", Device("g0", taints=(DeviceTaint("k", "v", "None"),)))]
    assert picked(allocate(none_effect, [claim(exactly())])) == [[("gpu", "g0")]]


def test_shared_counters_limit_partitions() -> None:
    counters = (CounterSet("mem", {"memory": parse_quantity("40Gi")}),)

    def part(name: str, size: str) -> Device:
        return Device(name, consumes_counters=(DeviceCounterConsumption("mem", {"memory": parse_quantity(size)}),))

    slices = [ResourceSlice("s", DRIVER, "n1", 1, 2, node_name="n1", devices=(part("whole", "40Gi"),
                            part("half-a", "20Gi"), part("half-b", "20Gi"))), counter_slice("n1", counters)]
    assert picked(allocate(slices, [claim(exactly(count=2))])) == [[("gpu", "half-a"), ("gpu", "half-b")]]
    used = AllocatedState(frozenset({(DRIVER, "n1", "half-a")}))
    assert picked(allocate(slices, [claim(exactly())], allocated=used)) == [[("gpu", "half-b")]]
    assert allocate(slices, [claim(exactly(count=2))], allocated=used) is None
    assert allocate(slices, [claim(exactly())], features=Features(partitionable_devices=False)) is None


def test_consumable_capacity_shares_a_device() -> None:
    shared = Device("nic", capacity={"bw": parse_quantity("10G")}, allow_multiple_allocations=True)
    slices = [node_slice("n1", shared)]
    want = exactly(capacity={"bw": parse_quantity("4G")})
    result = allocate(slices, [claim(want, name="a"), claim(want, name="b")])
    assert result is not None
    assert [r.devices[0].consumed_capacity for r in result] == [{"bw": parse_quantity("4G")}] * 2
    assert allocate(slices, [claim(want, name="a"), claim(want, name="b"), claim(want, name="c")]) is None
    used = AllocatedState(capacity={(DRIVER, "n1", "nic"): {"bw": parse_quantity("8G")}})
    assert allocate(slices, [claim(want)], allocated=used) is None
    with pytest.raises(AllocationError, match="DRAConsumableCapacity feature is disabled"):
        allocate(slices, [claim(want)], features=Features(consumable_capacity=False))
    unknown = exactly(capacity={"other": parse_quantity("1")})
    assert allocate(slices, [claim(unknown)]) is None


def test_newest_generation_wins_and_incomplete_pools_are_skipped() -> None:
    old = node_slice("n1", gpu("g0"), gpu("g1"), name="old", generation=1)
    new = node_slice("n1", gpu("g5"), name="new", generation=2)
    assert picked(allocate([old, new], [claim(exactly())])) == [[("gpu", "g5")]]
    assert picked(allocate([new, old], [claim(exactly())])) == [[("gpu", "g5")]]
    assert allocate([old, new], [claim(exactly(count=2))]) is None
    half = node_slice("n1", gpu("g0"), name="a", count=2)
    assert allocate([half], [claim(exactly())]) is None
    other_half = node_slice("n1", gpu("g1"), name="b", count=2)
    assert picked(allocate([half, other_half], [claim(exactly(count=2))])) == [[("gpu", "g0"), ("gpu", "g1")]]


def test_network_slices_and_node_selectors() -> None:
    everywhere = ResourceSlice("net", DRIVER, "net", 1, 1, all_nodes=True, devices=(gpu("g0"),))
    result = allocate([everywhere], [claim(exactly())])
    assert result is not None
    assert result[0].node_selector is None
    rack = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("rack", "In", ("r1",)),)),))
    raw = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    racked = ResourceSlice("rack", DRIVER, "rack", 1, 1, node_selector=rack, node_selector_raw=raw,
                           devices=(gpu("g0"),))
    assert allocate([racked], [claim(exactly())], labels={"rack": "r2"}) is None
    chosen = allocate([racked], [claim(exactly())], labels={"rack": "r1"})
    assert chosen is not None
    assert chosen[0].node_selector_raw == raw
    local = allocate([node_slice("n1", gpu("g0"))], [claim(exactly())])
    assert local is not None
    assert local[0].node_selector_raw == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}


def test_claim_errors() -> None:
    slices = [node_slice("n1", gpu("g0"))]
    with pytest.raises(AllocationError, match="could not retrieve device class nope"):
        allocate(slices, [claim(exactly(device_class="nope"))])
    with pytest.raises(AllocationError, match=r"^class broken: selector #0: CEL runtime error: no such key: numa$"):
        allocate(slices, [claim(exactly(device_class="broken"))])
    with pytest.raises(AllocationError, match="claim default/c: selector #0: CEL compile error"):
        allocate(slices, [claim(exactly(selectors=("bad",)))])
    with pytest.raises(AllocationError, match="exceeds the claim limit of 32"):
        allocate(slices, [claim(exactly(count=ALLOCATION_RESULTS_MAX_SIZE + 1))])
    with pytest.raises(AllocationError, match="admin access is requested, but the feature is disabled"):
        allocate(slices, [claim(exactly(admin_access=True))], features=Features(admin_access=False))
    with pytest.raises(AllocationError, match="empty constraint"):
        allocate(slices, [claim(exactly(), constraints=[DeviceConstraint(("gpu",))])])


def test_duplicate_device_names_make_a_pool_invalid() -> None:
    slices = [node_slice("n1", gpu("g0"), name="a", count=2), node_slice("n1", gpu("g0"), name="b", count=2)]
    with pytest.raises(NodeAllocationFailed, match="invalid resource pools were encountered"):
        allocate(slices, [claim(exactly())])


def test_a_deadline_stops_the_search() -> None:
    allocator = Allocator(Features(), AllocatedState(), CLASSES, [node_slice("n1", gpu("g0"))],
                          SelectorCache(_predicate))
    with pytest.raises(TimeoutError):
        allocator.allocate(Node("n1"), [claim(exactly())], deadline=lambda: True)


# --- cases after the upstream allocator tables (allocatortesting) ------------------------------

def _selector_slice(pool: str, raw: dict[str, object] | None, *, all_nodes: bool = False) -> ResourceSlice:
    model = node_selector(Reader("test"), raw, "nodeSelector") if raw is not None else None
    return ResourceSlice(f"s-{pool}", DRIVER, pool, 1, 1, node_selector=model, node_selector_raw=raw,
                         all_nodes=all_nodes, devices=(gpu("g1"),))


def _label_selector(key: str, value: str) -> dict[str, object]:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}


def _field_selector(node: str) -> dict[str, object]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}


def test_many_network_attached_devices_get_the_union_of_their_selectors() -> None:
    slices = [_selector_slice("p1", _label_selector("region", "r1")), _selector_slice("p2", None, all_nodes=True),
              _selector_slice("p3", _label_selector("planet", "earth")), _selector_slice("p4", _field_selector("n1"))]
    result = allocate(slices, [claim(exactly(count=4))], labels={"region": "r1", "planet": "earth"})
    assert result is not None
    assert [d.pool for d in result[0].devices] == ["p1", "p2", "p3", "p4"]
    assert result[0].node_selector_raw == {"nodeSelectorTerms": [{
        "matchExpressions": [{"key": "region", "operator": "In", "values": ["r1"]},
                             {"key": "planet", "operator": "In", "values": ["earth"]}],
        "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    assert result[0].node_selector is not None
    assert result[0].node_selector.matches("n1", {"region": "r1", "planet": "earth"})


def test_one_node_local_device_pins_the_allocation_to_the_node() -> None:
    slices = [_selector_slice("p1", _label_selector("region", "r1")), node_slice("n1", gpu("g1"), pool="p2")]
    result = allocate(slices, [claim(exactly(count=2))], labels={"region": "r1"})
    assert result is not None
    assert result[0].node_selector_raw == _field_selector("n1")


def test_constraint_for_one_request_with_a_retry() -> None:
    def device(name: str, version: str, text: str) -> Device:
        return Device(name, {"driverVersion": DeviceAttribute("version", version),
                             "stringAttribute": DeviceAttribute("string", text)})

    slices = [node_slice("n1", device("d1", "1.0.0", "a"), device("d2", "2.0.0", "b"), device("d3", "3.0.0", "b"))]
    constraints = [DeviceConstraint(("r0",), "gpu.example.com/driverVersion"),
                   DeviceConstraint((), "gpu.example.com/stringAttribute")]
    result = picked(allocate(slices, [claim(exactly("r0"), exactly("r1"), constraints=constraints)]))
    assert result == [[("r0", "d2"), ("r1", "d3")]]


def test_all_devices_that_break_a_constraint_are_an_error() -> None:
    slices = [node_slice("n1", gpu("d1", numa=1), gpu("d2", numa=2))]
    request = DeviceRequest("r0", ExactRequest("r0", "gpu", (), ALLOCATION_MODE_ALL))
    with pytest.raises(AllocationError, match=r"claim default/c, request r0: cannot add device "
                                              r"gpu\.example\.com/n1/d2 because a claim constraint would not be "
                                              r"satisfied"):
        allocate(slices, [claim(request, constraints=[DeviceConstraint((), "gpu.example.com/numa")])])


@pytest.mark.parametrize(("first", "second"), [
    pytest.param(DeviceAttribute("int", 1), DeviceAttribute("int", 2), id="int"),
    pytest.param(DeviceAttribute("string", "x"), DeviceAttribute("string", "y"), id="string"),
    pytest.param(DeviceAttribute("bool", True), DeviceAttribute("bool", False), id="bool"),
    pytest.param(DeviceAttribute("version", "1.0.0"), DeviceAttribute("version", "2.0.0"), id="version"),
])
def test_constraint_not_matching(first: DeviceAttribute, second: DeviceAttribute) -> None:
    slices = [node_slice("n1", Device("d1", {"a": first}), Device("d2", {"a": second}))]
    constraint = DeviceConstraint((), "gpu.example.com/a")
    assert allocate(slices, [claim(exactly(count=2), constraints=[constraint])]) is None
    assert allocate(slices, [claim(exactly("r0"), exactly("r1"), constraints=[constraint])]) is None


# --- regressions found by the upstream table (test_allocator_upstream.py) ----------------------

def test_a_dedicated_device_is_never_shared() -> None:
    shareable = Device("nic", capacity={"bw": parse_quantity("10G")}, allow_multiple_allocations=True)
    used = AllocatedState(frozenset({(DRIVER, "n1", "nic")}))
    want = exactly(capacity={"bw": parse_quantity("1G")})
    assert allocate([node_slice("n1", shareable)], [claim(want)], allocated=used) is None


def test_shared_allocations_consume_their_counters() -> None:
    counters = (CounterSet("set", {"units": parse_quantity("1")}),)

    def part(name: str) -> Device:
        return Device(name, {"model": DeviceAttribute("string", name)}, capacity={"units": parse_quantity("1")},
                      allow_multiple_allocations=True,
                      consumes_counters=(DeviceCounterConsumption("set", {"units": parse_quantity("1")}),))

    slices = [ResourceSlice("s", DRIVER, "n1", 1, 2, node_name="n1", devices=(part("a"), part("b"))),
              counter_slice("n1", counters)]
    want_b = claim(exactly(selectors=("model=b",)))
    assert picked(allocate(slices, [want_b])) == [[("gpu", "b")]]
    used = AllocatedState(capacity={(DRIVER, "n1", "a"): {"units": parse_quantity("1")}})
    assert allocate(slices, [want_b], allocated=used) is None


def test_distinct_attribute_needs_different_values() -> None:
    slices = [node_slice("n1", gpu("g0", numa=0), gpu("g1", numa=0), gpu("g2", numa=1))]
    constraint = DeviceConstraint(("a", "b"), distinct_attribute="gpu.example.com/numa")
    result = picked(allocate(slices, [claim(exactly("a"), exactly("b"), constraints=[constraint])]))
    assert result == [[("a", "g0"), ("b", "g2")]]
    missing = [node_slice("n1", gpu("g0"), gpu("g1"))]
    assert allocate(missing, [claim(exactly("a"), exactly("b"), constraints=[constraint])]) is None
    same = [node_slice("n1", gpu("g0", numa=0), gpu("g1", numa=0))]
    assert allocate(same, [claim(exactly("a"), exactly("b"), constraints=[constraint])]) is None
    other_kind = [node_slice("n1", gpu("g0", numa=0), gpu("g1", numa="0"))]
    assert picked(allocate(other_kind, [claim(exactly("a"), exactly("b"), constraints=[constraint])])) == [
        [("a", "g0"), ("b", "g1")]]


def test_capacity_in_a_subrequest_without_the_feature_names_the_subrequest() -> None:
    request = DeviceRequest("gpu", None, (ExactRequest("big", "gpu", capacity={"bw": parse_quantity("1")}),))
    with pytest.raises(AllocationError, match="claim default/c, subrequest big: has capacity requests, but the "
                                              "DRAConsumableCapacity feature is disabled"):
        allocate([node_slice("n1", gpu("g0"))], [claim(request)], features=Features(consumable_capacity=False))


def test_allocations_of_a_shareable_device_get_distinct_share_ids() -> None:
    shared = Device("nic", capacity={"bw": parse_quantity("10G")}, allow_multiple_allocations=True)
    want = exactly(capacity={"bw": parse_quantity("1G")})
    slices = [node_slice("n1", shared, gpu("g0"))]
    first = allocate(slices, [claim(want, exactly("other"), name="a"), claim(want, name="b")])
    assert first is not None
    ids = [d.share_id for r in first for d in r.devices]
    assert ids[1] is None  # a dedicated device has none
    assert ids[0] is not None
    assert ids[2] is not None
    assert ids[0] != ids[2]
    again = allocate(slices, [claim(want, exactly("other"), name="a"), claim(want, name="b")])
    assert again is not None
    assert [d.share_id for r in again for d in r.devices] == ids


def test_pools_are_searched_by_driver_and_name_binding_conditions_last() -> None:
    slices = [node_slice("n1", gpu("g0"), pool="zeta"), node_slice("n1", gpu("g0"), pool="alpha"),
              node_slice("n1", Device("g0", binding_conditions=("ready",)), pool="aaa")]
    result = allocate(slices, [claim(exactly(count=3))])
    assert result is not None
    assert [d.pool for d in result[0].devices] == ["alpha", "zeta", "aaa"]


def test_a_nodes_complete_view_of_a_pool_is_used_even_if_newer_slices_exist_elsewhere() -> None:
    mine = [node_slice("n1", gpu("g0"), pool="p", name="a", generation=1, count=1)]
    elsewhere = [node_slice("n2", gpu("g9"), pool="p", name="b", generation=2, count=2)]
    assert picked(allocate(mine + elsewhere, [claim(exactly())])) == [[("gpu", "g0")]]
    half = [node_slice("n1", gpu("g0"), pool="p", name="a", generation=1, count=2)]
    assert allocate(half + elsewhere, [claim(exactly())]) is None  # incomplete here, newer there: obsolete
    other_half = [node_slice("n2", gpu("g1"), pool="p", name="b", generation=1, count=2)]
    assert picked(allocate(half + other_half, [claim(exactly())])) == [[("gpu", "g0")]]


@pytest.mark.parametrize("consumes", [
    pytest.param(DeviceCounterConsumption("other", {"memory": parse_quantity("1")}), id="unknown-counter-set"),
    pytest.param(DeviceCounterConsumption("mem", {"cores": parse_quantity("1")}), id="unknown-counter"),
])
def test_a_consumption_the_counters_lack_makes_the_pool_invalid(consumes: DeviceCounterConsumption) -> None:
    counters = (CounterSet("mem", {"memory": parse_quantity("1")}),)
    slices = [ResourceSlice("s", DRIVER, "n1", 1, 2, node_name="n1", devices=(Device("g0", consumes_counters=(
        consumes,)),)), counter_slice("n1", counters)]
    with pytest.raises(NodeAllocationFailed, match="invalid resource pools were encountered"):
        allocate(slices, [claim(exactly())])
    twice = [node_slice("n1", gpu("g0"), count=3), counter_slice("n1", counters, count=3),
             attrs.evolve(counter_slice("n1", counters, count=3), name="again")]
    with pytest.raises(NodeAllocationFailed, match="invalid resource pools were encountered"):
        allocate(twice, [claim(exactly(count=2))])


def test_per_device_node_selection() -> None:
    rack = _label_selector("rack", "r1")
    racked = Device("g0", node_selector=node_selector(Reader("test"), rack, "nodeSelector"), node_selector_raw=rack)
    slices = [ResourceSlice("s", DRIVER, "p", 1, 1, per_device_node_selection=True,
                            devices=(racked, Device("g1", node_name="n2")))]
    result = allocate(slices, [claim(exactly())], labels={"rack": "r1"})
    assert result is not None
    assert result[0].node_selector_raw == rack
    assert allocate(slices, [claim(exactly())], labels={"rack": "r2"}) is None
    assert allocate(slices, [claim(exactly())], labels={"rack": "r1"},
                    features=Features(partitionable_devices=False)) is None
    nowhere = [ResourceSlice("s", DRIVER, "p", 1, 1, devices=(gpu("g0"),))]
    assert allocate(nowhere, [claim(exactly())]) is None


def test_request_policies_decide_what_a_share_takes() -> None:
    policy = CapacityRequestPolicy(parse_quantity("2"), (), True, parse_quantity("2"), parse_quantity("4"),
                                   parse_quantity("2"))
    nic = Device("nic", capacity={"bw": parse_quantity("10")}, capacity_policies={"bw": policy},
                 allow_multiple_allocations=True)
    slices = [node_slice("n1", nic)]
    result = allocate(slices, [claim(exactly(capacity={"bw": parse_quantity("3")}))])
    assert result is not None
    assert result[0].devices[0].consumed_capacity == {"bw": parse_quantity("4")}
    assert allocate(slices, [claim(exactly(capacity={"bw": parse_quantity("6")}))]) is None
    defaulted = allocate(slices, [claim(exactly(), name=f"c{i}") for i in range(5)])
    assert defaulted is not None
    assert [r.devices[0].consumed_capacity for r in defaulted] == [{"bw": parse_quantity("2")}] * 5
    assert allocate(slices, [claim(exactly(), name=f"c{i}") for i in range(6)]) is None


def test_a_dedicated_device_must_hold_what_is_asked() -> None:
    gpu_40 = Device("g0", capacity={"memory": parse_quantity("40Gi")})
    slices = [node_slice("n1", gpu_40)]
    assert allocate(slices, [claim(exactly(capacity={"memory": parse_quantity("80Gi")}))]) is None
    fits = allocate(slices, [claim(exactly(capacity={"memory": parse_quantity("20Gi")}))])
    assert fits is not None
    assert fits[0].devices[0].consumed_capacity is None


def test_a_slice_selector_of_several_terms_cannot_be_merged() -> None:
    raw = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": [rack]}]}
                                 for rack in ("r1", "r2")]}
    either = ResourceSlice("s", DRIVER, "p", 1, 1, node_selector=node_selector(Reader("test"), raw, "nodeSelector"),
                           node_selector_raw=raw, devices=(gpu("g0"),))
    with pytest.raises(AllocationError, match=r"create NodeSelector for claim c: unsupported "
                                              r"ResourceSlice\.NodeSelector with 2 terms"):
        allocate([either], [claim(exactly())], labels={"rack": "r2"})
