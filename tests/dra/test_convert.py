"""Reading DRA objects from ``resource.k8s.io`` dicts (v1 and the beta shapes kubectl still reads)."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import load_cluster
from kschedlib.errors import ManifestError
from kschedlib.model.convert import object_from_dict, object_to_dict, pod_from_dict
from kschedlib.model.dra import (
    CapacityRequestPolicy,
    DeviceAttribute,
    DeviceClass,
    DeviceTaint,
    DeviceToleration,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kschedlib.model.quantity import parse_quantity

SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 3,
                                                                     "resourceSliceCount": 2},
             "devices": [{"name": "g0",
                          "attributes": {"model": {"string": "a100"}, "index": {"int": 0}, "mig": {"bool": True},
                                         "driverVersion": {"version": "1.2.3"}},
                          "capacity": {"memory": {"value": "40Gi"}},
                          "consumesCounters": [{"counterSet": "mem", "counters": {"memory": {"value": "40Gi"}}}],
                          "taints": [{"key": "broken", "value": "ecc", "effect": "NoSchedule"}],
                          "allowMultipleAllocations": True}]},
}


def test_resource_slice() -> None:
    s = object_from_dict(SLICE)
    assert isinstance(s, ResourceSlice)
    assert (s.driver, s.pool, s.generation, s.slice_count, s.node_name) == ("gpu.example.com", "n1", 3, 2, "n1")
    device = s.devices[0]
    assert device.attributes == {"model": DeviceAttribute("string", "a100"), "index": DeviceAttribute("int", 0),
                                 "mig": DeviceAttribute("bool", True),
                                 "driverVersion": DeviceAttribute("version", "1.2.3")}
    assert device.capacity == {"memory": parse_quantity("40Gi")}
    assert device.consumes_counters[0].counters == {"memory": parse_quantity("40Gi")}
    assert device.taints == (DeviceTaint("broken", "ecc", "NoSchedule"),)
    assert device.allow_multiple_allocations
    counters = object_from_dict({**SLICE, "spec": {**SLICE["spec"], "devices": None, "sharedCounters": [
        {"name": "mem", "counters": {"memory": {"value": "80Gi"}}}]}})  # a slice has devices or counters
    assert isinstance(counters, ResourceSlice)
    assert counters.shared_counters[0].counters == {"memory": parse_quantity("80Gi")}


def test_v1beta1_device_and_request_shapes() -> None:
    beta_slice = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                  "spec": {"driver": "d", "allNodes": True, "pool": {"name": "p", "generation": 1,
                                                                     "resourceSliceCount": 1},
                           "devices": [{"name": "g0", "basic": {"attributes": {"model": {"string": "x"}}}}]}}
    s = object_from_dict(beta_slice)
    assert isinstance(s, ResourceSlice)
    assert s.all_nodes
    assert s.devices[0].attributes == {"model": DeviceAttribute("string", "x")}
    beta_claim = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
                  "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu", "count": 2,
                                                     "adminAccess": True}]}}}
    c = object_from_dict(beta_claim)
    assert isinstance(c, ResourceClaim)
    exact = c.requests[0].exactly
    assert exact is not None
    assert (exact.device_class_name, exact.count, exact.admin_access) == ("gpu", 2, True)


def test_claim_with_prioritized_list_constraints_and_status() -> None:
    raw = {"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "team", "uid": "u1",
                                                 "ownerReferences": [{"kind": "Pod", "name": "p", "uid": "pu",
                                                                      "controller": True}]},
           "spec": {"devices": {
               "requests": [{"name": "gpu", "firstAvailable": [
                   {"name": "big", "deviceClassName": "gpu", "selectors": [{"cel": {"expression": "true"}}],
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                    "capacity": {"requests": {"memory": "10Gi"}}}]}],
               "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/numa"}]}},
           "status": {"allocation": {"devices": {"results": [
               {"request": "gpu/big", "driver": "d", "pool": "p", "device": "g0", "adminAccess": False,
                "consumedCapacity": {"memory": "10Gi"}, "shareID": "s1"}]},
               "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                   {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
               "reservedFor": [{"resource": "pods", "name": "p", "uid": "pu"}]}}
    c = object_from_dict(raw)
    assert isinstance(c, ResourceClaim)
    assert c.key == "team/c"
    sub = c.requests[0].first_available[0]
    assert (sub.name, sub.selectors, sub.tolerations) == ("big", ("true",), (DeviceToleration("k", "Exists"),))
    assert sub.capacity == {"memory": parse_quantity("10Gi")}
    assert c.constraints[0].match_attribute == "gpu.example.com/numa"
    assert c.allocation is not None
    assert c.allocation.node_selector is not None
    assert c.allocation.node_selector.matches("n1", {})
    result = c.allocation.devices[0]
    assert (result.device_id, result.admin_access, result.share_id) == (("d", "p", "g0"), False, "s1")
    assert c.reserved_for[0].uid == "pu"
    assert c.owner_references[0].controller


def test_class_template_and_pod_claim_statuses() -> None:
    cluster = load_cluster([
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": "device.driver == 'd'"}}],
                  "extendedResourceName": "example.com/gpu"}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
         "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}},
    ])
    device_class, template = cluster.objects
    assert device_class == DeviceClass("gpu", ("device.driver == 'd'",), "example.com/gpu")
    assert isinstance(template, ResourceClaimTemplate)
    assert template.key == "default/t"
    pod = pod_from_dict({"kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]},
                         "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x"},
                                                              {"name": "none"}]}})
    assert pod.resource_claim_statuses == (("gpu", "p-gpu-x"), ("none", None))
    assert object_from_dict(object_to_dict(device_class)) == device_class
    assert object_from_dict(object_to_dict(template)) == template
    with pytest.raises(ManifestError, match="ResourceSlices back is not supported"):
        object_to_dict(object_from_dict(SLICE))  # type: ignore[arg-type]


def test_capacity_request_policies_and_per_device_node_selectors() -> None:
    rack = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    s = object_from_dict({"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {
        "driver": "d", "pool": {"name": "p", "resourceSliceCount": 1}, "perDeviceNodeSelection": True, "devices": [{
            "name": "nic", "nodeSelector": rack, "allowMultipleAllocations": True, "capacity": {
                "bw": {"value": "10G", "requestPolicy": {"default": "1G", "validRange": {
                    "min": "1G", "max": "4G", "step": "1G"}}},
                "queues": {"value": "8", "requestPolicy": {"default": "1", "validValues": ["1", "2", "4"]}},
                "plain": {"value": "1"}}}]}})
    assert isinstance(s, ResourceSlice)
    device = s.devices[0]
    q = parse_quantity
    assert device.capacity_policies == {
        "bw": CapacityRequestPolicy(q("1G"), (), True, q("1G"), q("4G"), q("1G")),
        "queues": CapacityRequestPolicy(q("1"), (q("1"), q("2"), q("4")))}
    assert device.node_selector_raw == rack
    assert device.node_selector is not None
    with pytest.raises(ManifestError, match=r"capacity\.bw\.requestPolicy\.validRange\.max"):
        object_from_dict({"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {
            "driver": "d", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n", "devices": [{
                "name": "nic", "allowMultipleAllocations": True, "capacity": {"bw": {"value": "10G", "requestPolicy": {
                    "default": "1", "validRange": {"min": "1", "max": "lots"}}}}}]}})


@pytest.mark.parametrize(("path", "value", "message"), [
    (("devices", 0, "attributes", "model"), {"float": 1.5},
     r"attributes\[model\]: Invalid value: \"\": exactly one value must be specified"),
    (("devices", 0, "attributes", "model"), {"int": "7"}, "expected a int"),
    (("devices", 0, "capacity", "memory"), {"value": "lots"}, "memory"),
    (("devices", 0, "capacity", "memory"), {"value": True}, "expected a quantity"),
])
def test_malformed_slices_name_the_field(path: tuple[Any, ...], value: object, message: str) -> None:
    import copy

    raw = copy.deepcopy(SLICE)
    target: Any = raw["spec"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ManifestError, match=message):
        object_from_dict(raw)


def test_malformed_claims_name_the_field() -> None:
    base = {"kind": "ResourceClaim", "metadata": {"name": "c"}}
    with pytest.raises(ManifestError, match=r"field spec\.devices\.requests\[0\]\.exactly\.selectors\[0\]\.cel: "
                                            r"Required value$"):
        object_from_dict({**base, "spec": {"devices": {"requests": [
            {"name": "r", "exactly": {"deviceClassName": "g", "selectors": [{"other": {}}]}}]}}})
    with pytest.raises(ManifestError, match="adminAccess"):
        object_from_dict({**base, "spec": {"devices": {"requests": [
            {"name": "r", "exactly": {"deviceClassName": "g", "adminAccess": "yes"}}]}}})
