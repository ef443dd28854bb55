"""What an allocation carries besides its devices, as kube's allocator writes it: ``devices.config`` (the classes'
configs once, naming every request they serve, then the claim's, once per request they name) and each result's
tolerations; and claims written back losslessly, checked on a claim kube-scheduler v1.36.3 allocated."""

from __future__ import annotations

import copy
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.dra._allocator import AllocatedState, Allocator, Features
from kschedlib.dra._selectors import SelectorCache
from kschedlib.model._convert_dra import resource_claim_from_dict
from kschedlib.model.convert import allocation_to_dict, object_from_dict, object_to_dict
from kschedlib.model.dra import (
    AllocatedDeviceStatus,
    AllocationResult,
    ClaimConsumer,
    DeviceAllocation,
    DeviceClass,
    DeviceCondition,
    DeviceConfig,
    DeviceConstraint,
    DeviceRequest,
    DeviceToleration,
    ExactRequest,
    ResourceClaim,
)
from kschedlib.model.objects import Node
from kschedlib.model.quantity import parse_quantity
from tests.dra.test_allocator import DRIVER, _predicate, gpu, node_slice

CLASS_A = DeviceConfig(DRIVER, {"kind": "A", "n": 1})
CLASS_B = DeviceConfig(DRIVER, {"kind": "B"})
CLASSES = {"a": DeviceClass("a", ("driver",), config=(CLASS_A, CLASS_B)), "plain": DeviceClass("plain", ("driver",))}


def request(name: str, device_class: str = "a", **kwargs: Any) -> DeviceRequest:
    return DeviceRequest(name, ExactRequest(name, device_class, **kwargs))


def allocate(*requests: DeviceRequest, config: tuple[DeviceConfig, ...] = ()) -> AllocationResult:
    slices = [node_slice("n1", *(gpu(f"g{i}") for i in range(6)))]
    allocator = Allocator(Features(prioritized_list=True), AllocatedState(), CLASSES, slices,
                          SelectorCache(_predicate))
    results = allocator.allocate(Node("n1"), [ResourceClaim("c", requests=requests, config=config)])
    assert results is not None
    return results[0]


def configs(result: AllocationResult) -> list[tuple[str | None, tuple[str, ...], object]]:
    return [(c.source, c.requests, c.parameters) for c in result.config]


CLAIM_ONE = DeviceConfig(DRIVER, {"claim": 1}, ("x",))
CLAIM_BOTH = DeviceConfig(DRIVER, {"claim": 2}, ("x", "y"))
CLAIM_ALL = DeviceConfig(DRIVER, {"claim": "all"})
CLAIM_SUB = DeviceConfig(DRIVER, {"claim": "sub"}, ("p/second",))

CASES = [
    pytest.param([request("x")], (), [("FromClass", ("x",), {"kind": "A", "n": 1}),
                                      ("FromClass", ("x",), {"kind": "B"})], id="class-configs-in-order"),
    pytest.param([request("x"), request("y")], (),
                 [("FromClass", ("x", "y"), {"kind": "A", "n": 1}), ("FromClass", ("x", "y"), {"kind": "B"})],
                 id="a-class-once-for-all-its-requests"),
    pytest.param([request("x", "plain")], (CLAIM_ONE, CLAIM_ALL),
                 [("FromClaim", ("x",), {"claim": 1}), ("FromClaim", (), {"claim": "all"})],
                 id="claim-configs-after-a-class-without-any"),
    pytest.param([request("x", "plain"), request("y", "plain")], (CLAIM_BOTH,),
                 [("FromClaim", ("x", "y"), {"claim": 2}), ("FromClaim", ("x", "y"), {"claim": 2})],
                 id="a-claim-config-once-per-request-it-names"),
    pytest.param([DeviceRequest("p", first_available=(ExactRequest("first", "plain", ("model=none",)),
                                                       ExactRequest("second", "a")))], (CLAIM_SUB,),
                 [("FromClass", ("p/second",), {"kind": "A", "n": 1}), ("FromClass", ("p/second",), {"kind": "B"}),
                  ("FromClaim", ("p/second",), {"claim": "sub"})],
                 id="the-chosen-subrequest-names-the-configs"),
]


@pytest.mark.parametrize(("requests", "claim_config", "expected"), CASES)
def test_allocation_configs(requests: list[DeviceRequest], claim_config: tuple[DeviceConfig, ...],
                            expected: list[tuple[str | None, tuple[str, ...], object]]) -> None:
    assert configs(allocate(*requests, config=claim_config)) == expected


def test_results_carry_the_requests_tolerations() -> None:
    tolerations = (DeviceToleration("k", "Exists"), DeviceToleration("t", "Equal", "v", "NoExecute", 30))
    result = allocate(request("x", "plain", tolerations=tolerations, count=2))
    assert [d.tolerations for d in result.devices] == [tolerations, tolerations]


KUBE_WRITTEN: dict[str, Any] = {
    # a claim as kube-scheduler v1.36.3 allocated and reserved it (read back from the API server; less
    # resourceVersion, timestamps and managed fields)
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "c1", "namespace": "d", "uid": "3b44fd1a-a093-4315-9d51-96d0c173e6d3"},
    "spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
                                               "tolerations": [{"key": "k", "operator": "Exists"}]}}],
        "config": [{"requests": ["r"], "opaque": {"driver": "gpu.example.com",
                                                  "parameters": {"kind": "ClaimParams", "b": 2}}},
                   {"opaque": {"driver": "gpu.example.com", "parameters": {"all": True}}}]}},
    "status": {
        "allocation": {
            "devices": {
                "results": [{"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
                             "tolerations": [{"key": "k", "operator": "Exists"}]}],
                "config": [
                    {"source": "FromClass", "requests": ["r"],
                     "opaque": {"driver": "gpu.example.com", "parameters": {"kind": "ClassParams", "a": 1}}},
                    {"source": "FromClaim", "requests": ["r"],
                     "opaque": {"driver": "gpu.example.com", "parameters": {"kind": "ClaimParams", "b": 2}}},
                    {"source": "FromClaim",
                     "opaque": {"driver": "gpu.example.com", "parameters": {"all": True}}}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                     "values": ["n1"]}]}]},
            "allocationTimestamp": "2026-12-03T19:56:47Z"},
        "reservedFor": [{"resource": "pods", "name": "p1", "uid": "401aab90-874c-4829-9a96-c7f58ef9b81b"}]},
}


def test_a_claim_kube_scheduler_wrote_is_written_back_as_it_was() -> None:
    claim = object_from_dict(copy.deepcopy(KUBE_WRITTEN))
    assert isinstance(claim, ResourceClaim)
    assert object_to_dict(claim) == KUBE_WRITTEN
    assert claim.allocation is not None
    assert allocation_to_dict(claim.allocation) == KUBE_WRITTEN["status"]["allocation"]


_names = st.text("abcxyz", min_size=1, max_size=4)
_parameters = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=3),
                           lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_names, inner, max_size=2),
                           max_leaves=4)
_configs = st.builds(DeviceConfig, _names, _parameters, st.lists(_names, max_size=2).map(tuple))
_tolerations = st.builds(DeviceToleration, _names, st.sampled_from(["Equal", "Exists"]), st.text("v", max_size=1),
                         st.sampled_from(["", "NoSchedule", "NoExecute"]), st.none() | st.integers(0, 60))
_exact = st.builds(ExactRequest, _names, _names, st.lists(_names, max_size=1).map(tuple),
                   count=st.integers(1, 3), admin_access=st.none() | st.booleans(),
                   tolerations=st.lists(_tolerations, max_size=2).map(tuple),
                   capacity=st.none() | st.just({"memory": parse_quantity("1Gi")}))
_requests = (st.builds(lambda name, exact: DeviceRequest(name, attrs.evolve(exact, name=name)), _names, _exact)
             | st.builds(lambda name, subs: DeviceRequest(name, first_available=tuple(subs)), _names,
                         st.lists(_exact, min_size=1, max_size=2)))
_statuses = st.builds(AllocatedDeviceStatus, _names, _names, _names, share_id=st.none() | _names,
                      conditions=st.lists(st.builds(DeviceCondition, _names, st.sampled_from(["True", "False"]),
                                                    st.text("ab", max_size=2), st.text("ab", max_size=2)),
                                          max_size=1).map(tuple),
                      data=st.none() | _parameters, network_data=st.none() | st.just({"interfaceName": "eth0"}))
_results = st.builds(DeviceAllocation, _names, _names, _names, _names, admin_access=st.none() | st.booleans(),
                     share_id=st.none() | _names, tolerations=st.lists(_tolerations, max_size=1).map(tuple),
                     binding_conditions=st.lists(_names, max_size=1).map(tuple))
_allocations = st.builds(AllocationResult, st.lists(_results, max_size=2).map(tuple),
                         allocation_timestamp=st.none() | st.integers(0, 2**31).map(float),
                         config=st.lists(_configs.map(lambda c: attrs.evolve(c, source="FromClaim")),
                                         max_size=2).map(tuple))
_claims = st.builds(ResourceClaim, _names, _names, st.text("0123456789abcdef", max_size=8),
                    requests=st.lists(_requests, max_size=2).map(tuple),
                    constraints=st.lists(st.builds(DeviceConstraint, st.lists(_names, max_size=1).map(tuple),
                                                   st.none() | _names), max_size=1).map(tuple),
                    allocation=st.none() | _allocations,
                    reserved_for=st.lists(st.builds(ClaimConsumer, _names, _names), max_size=2).map(tuple),
                    devices=st.lists(_statuses, max_size=1).map(tuple),
                    config=st.lists(_configs, max_size=2).map(tuple))


@given(_claims)
def test_claims_round_trip(claim: ResourceClaim) -> None:
    """What the model keeps comes back (the generated claims need not pass the API server's admission)."""
    assert resource_claim_from_dict(object_to_dict(claim), admission=False) == claim
