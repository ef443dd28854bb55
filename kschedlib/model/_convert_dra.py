"""Reading the DRA objects (:mod:`kschedlib.model.dra`) from ``resource.k8s.io`` dicts.

``v1`` is the form kube-scheduler v1.34+ reads.  ``v1beta2`` has the same shape; ``v1beta1`` puts a
request's fields directly on the request (no ``exactly``) and wraps a device in ``basic`` -- both are
read as kubectl would convert them.  Malformed fields raise :class:`~kschedlib.errors.ManifestError`, and so
does an object kube-apiserver v1.36 would refuse (:mod:`kschedlib.model._dra_checks`), with the field path
and kube's wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kschedlib.errors import QuantityError
from kschedlib.model._convert_base import EMPTY, Json, Reader, node_selector, open_object, section
from kschedlib.model._convert_spec import owner_references
from kschedlib.model._dra_checks import (
    device_class_errors,
    resource_claim_errors,
    resource_claim_template_errors,
    resource_slice_errors,
)
from kschedlib.model._field_errors import raise_errors
from kschedlib.model._shared import ReadOnlyMap, from_manifest
from kschedlib.model.dra import (
    AllocatedDeviceStatus,
    AllocationResult,
    CapacityRequestPolicy,
    ClaimConsumer,
    CounterSet,
    Device,
    DeviceAllocation,
    DeviceAttribute,
    DeviceClass,
    DeviceCondition,
    DeviceConfig,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceTaint,
    DeviceToleration,
    ExactRequest,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kschedlib.model.quantity import Quantity, parse_quantity

__all__ = [
    "DraObject",
    "device_class_from_dict",
    "resource_claim_from_dict",
    "resource_claim_template_from_dict",
    "resource_slice_from_dict",
]

DraObject = DeviceClass | ResourceSlice | ResourceClaim | ResourceClaimTemplate

_ATTRIBUTE_KINDS: Final = (("int", int), ("bool", bool), ("string", str), ("version", str))
_CONDITION_STATUSES: Final = ("True", "False", "Unknown")


def _quantity(r: Reader, raw: object, path: str) -> Quantity:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        r.fail(path, "expected a quantity", raw)
    try:
        return parse_quantity(raw)
    except QuantityError as exc:
        r.fail(path, str(exc), raw)


def _quantities(r: Reader, raw: object, path: str, *, wrapped: bool) -> dict[str, Quantity]:
    """A map name -> quantity; ``wrapped`` reads ``{name: {value: q}}`` (capacity, counters)."""
    out: dict[str, Quantity] = {}
    for name, value in r.as_map(raw, path).items():
        at = f"{path}.{name}"
        if wrapped:
            value = r.as_map(value, at).get("value")
            at += ".value"
        out[str(name)] = _quantity(r, value, at)
    return out


def _attribute(r: Reader, raw: object, path: str) -> DeviceAttribute:
    d = r.as_map(raw, path)
    for kind, typ in _ATTRIBUTE_KINDS:
        if kind in d:
            value = d[kind]
            if type(value) is not typ:
                r.fail(f"{path}.{kind}", f"expected a {typ.__name__}", value)
            return DeviceAttribute(kind, value)  # type: ignore[arg-type]
    return r.fail(path, "an attribute needs one of int, bool, string, version", dict(d))


def _taint(r: Reader, raw: object, path: str) -> DeviceTaint:
    d = r.as_map(raw, path)
    return DeviceTaint(r.getstr(d, "key", path), r.getstr(d, "value", path), r.getstr(d, "effect", path))


def _toleration(r: Reader, raw: object, path: str) -> DeviceToleration:
    d = r.as_map(raw, path)
    seconds = d.get("tolerationSeconds")
    return DeviceToleration(r.getstr(d, "key", path), r.getstr(d, "operator", path) or "Equal",
                            r.getstr(d, "value", path), r.getstr(d, "effect", path),
                            r.getint(d, "tolerationSeconds", path) if seconds is not None else None)


def _config(r: Reader, raw: object, path: str) -> DeviceConfig:
    """A ``config`` entry (class, claim or allocation): its opaque driver parameters, kept as read."""
    d = r.as_map(raw, path)
    opaque = r.getmap(d, "opaque", path)
    if opaque is None:
        r.fail(path, "only opaque device configurations are supported", raw)
    return DeviceConfig(r.reqstr(opaque, "driver", f"{path}.opaque"), opaque.get("parameters"),
                        r.strlist(d, "requests", path), r.optstr(d, "source", path))


def _consumption(r: Reader, raw: object, path: str) -> DeviceCounterConsumption:
    d = r.as_map(raw, path)
    return DeviceCounterConsumption(r.reqstr(d, "counterSet", path),
                                    _quantities(r, d.get("counters") or {}, f"{path}.counters", wrapped=True))


def _counter_set(r: Reader, raw: object, path: str) -> CounterSet:
    d = r.as_map(raw, path)
    return CounterSet(r.reqstr(d, "name", path), _quantities(r, d.get("counters") or {}, f"{path}.counters",
                                                             wrapped=True))


def _optional_quantity(r: Reader, d: Json, key: str, path: str) -> Quantity | None:
    return _quantity(r, d[key], f"{path}.{key}") if d.get(key) is not None else None


def _policy(r: Reader, raw: object, path: str) -> CapacityRequestPolicy:
    d = r.as_map(raw, path)
    valid_range = r.getmap(d, "validRange", path)
    at = f"{path}.validRange"
    return CapacityRequestPolicy(
        default=_optional_quantity(r, d, "default", path),
        valid_values=r.each(d, "validValues", path, _quantity),
        has_range=valid_range is not None,
        valid_min=_optional_quantity(r, valid_range, "min", at) if valid_range is not None else None,
        valid_max=_optional_quantity(r, valid_range, "max", at) if valid_range is not None else None,
        valid_step=_optional_quantity(r, valid_range, "step", at) if valid_range is not None else None,
    )


def _policies(r: Reader, raw: object, path: str) -> dict[str, CapacityRequestPolicy]:
    out: dict[str, CapacityRequestPolicy] = {}
    for name, value in r.as_map(raw, path).items():
        policy = r.getmap(r.as_map(value, f"{path}.{name}"), "requestPolicy", f"{path}.{name}")
        if policy is not None:
            out[str(name)] = _policy(r, policy, f"{path}.{name}.requestPolicy")
    return out


def _device(r: Reader, raw: object, path: str) -> Device:
    d = r.as_map(raw, path)
    body = r.getmap(d, "basic", path) or d  # v1beta1 wraps the device in "basic"
    raw_attributes = r.getmap(body, "attributes", path) or EMPTY
    attributes = from_manifest("device attributes", raw_attributes, lambda: ReadOnlyMap({
        str(k): _attribute(r, v, f"{path}.attributes.{k}") for k, v in raw_attributes.items()}))
    raw_capacity = body.get("capacity") or EMPTY
    capacity, policies = from_manifest("device capacity", raw_capacity, lambda: (
        ReadOnlyMap(_quantities(r, raw_capacity, f"{path}.capacity", wrapped=True)),
        ReadOnlyMap(_policies(r, raw_capacity, f"{path}.capacity"))))
    selector = r.getmap(body, "nodeSelector", path)
    return Device(
        name=r.reqstr(d, "name", path),
        attributes=attributes,
        capacity=capacity,
        capacity_policies=policies,
        consumes_counters=r.each(body, "consumesCounters", path, _consumption),
        taints=r.each(body, "taints", path, _taint),
        allow_multiple_allocations=r.getbool(body, "allowMultipleAllocations", path),
        binds_to_node=r.getbool(body, "bindsToNode", path),
        binding_conditions=r.strlist(body, "bindingConditions", path),
        binding_failure_conditions=r.strlist(body, "bindingFailureConditions", path),
        node_name=r.optstr(body, "nodeName", path),
        all_nodes=r.getbool(body, "allNodes", path),
        node_selector=node_selector(r, selector, f"{path}.nodeSelector") if selector is not None else None,
        node_selector_raw=dict(selector) if selector is not None else None,
    )


def resource_slice_from_dict(d: Mapping[str, Any], *, admission: bool = True) -> ResourceSlice:
    """A ResourceSlice (cluster-scoped).

    With ``admission`` (the default) one the API server would refuse is refused, naming the field in
    kube's words; ``admission=False`` reads it as stored, as kube-scheduler reads what is there (every
    ``*_from_dict`` of this module takes it).
    """
    r, _, name, _ = open_object(d, "ResourceSlice", namespaced=False)
    if admission:
        raise_errors(resource_slice_errors(d), r.obj)
    spec = section(r, d, "spec")
    pool = r.getmap(spec, "pool", "spec") or {}
    selector = r.getmap(spec, "nodeSelector", "spec")
    return ResourceSlice(
        name=name,
        driver=r.reqstr(spec, "driver", "spec"),
        pool=r.reqstr(pool, "name", "spec.pool"),
        generation=r.getint(pool, "generation", "spec.pool"),
        slice_count=r.getint(pool, "resourceSliceCount", "spec.pool", 1),
        node_name=r.optstr(spec, "nodeName", "spec") or None,
        node_selector=node_selector(r, selector, "spec.nodeSelector") if selector is not None else None,
        node_selector_raw=dict(selector) if selector is not None else None,
        all_nodes=r.getbool(spec, "allNodes", "spec"),
        per_device_node_selection=r.getbool(spec, "perDeviceNodeSelection", "spec"),
        devices=r.each(spec, "devices", "spec", _device),
        shared_counters=r.each(spec, "sharedCounters", "spec", _counter_set),
    )


def device_class_from_dict(d: Mapping[str, Any], *, admission: bool = True) -> DeviceClass:
    """A DeviceClass (cluster-scoped): its CEL selectors and extended resource name."""
    r, _, name, _ = open_object(d, "DeviceClass", namespaced=False)
    if admission:
        raise_errors(device_class_errors(d), r.obj)
    spec = section(r, d, "spec")
    return DeviceClass(name, r.each(spec, "selectors", "spec", _selector),
                       r.optstr(spec, "extendedResourceName", "spec"), r.each(spec, "config", "spec", _config))


def _selector(r: Reader, raw: object, path: str) -> str:
    cel = r.getmap(r.as_map(raw, path), "cel", path)
    if cel is None:
        r.fail(path, "only CEL selectors are supported", raw)
    return r.reqstr(cel, "expression", f"{path}.cel")


def _exact(r: Reader, d: Json, name: str, path: str) -> ExactRequest:
    mode = r.getstr(d, "allocationMode", path) or "ExactCount"
    count = r.getint(d, "count", path, 0)
    capacity = r.getmap(d, "capacity", path)
    requests = r.getmap(capacity, "requests", f"{path}.capacity") if capacity is not None else None
    admin = d.get("adminAccess")
    if admin is not None and type(admin) is not bool:
        r.fail(f"{path}.adminAccess", "expected a boolean", admin)
    return ExactRequest(
        name=name,
        device_class_name=r.getstr(d, "deviceClassName", path),
        selectors=r.each(d, "selectors", path, _selector),
        allocation_mode=mode,
        count=1 if mode == "ExactCount" and count == 0 else count,  # the API server's default
        admin_access=admin,
        tolerations=r.each(d, "tolerations", path, _toleration),
        capacity=_quantities(r, requests, f"{path}.capacity.requests", wrapped=False) if requests is not None
        else None,
    )


def _sub_request(r: Reader, raw: object, path: str) -> ExactRequest:
    d = r.as_map(raw, path)
    return _exact(r, d, r.reqstr(d, "name", path), path)


def _request(r: Reader, raw: object, path: str) -> DeviceRequest:
    d = r.as_map(raw, path)
    name = r.reqstr(d, "name", path)
    first = r.each(d, "firstAvailable", path, _sub_request)
    if first:
        return DeviceRequest(name, None, first)
    exactly = r.getmap(d, "exactly", path)
    if exactly is not None:
        return DeviceRequest(name, _exact(r, exactly, name, f"{path}.exactly"))
    if "deviceClassName" in d:  # v1beta1: the fields sit on the request itself
        return DeviceRequest(name, _exact(r, d, name, path))
    return DeviceRequest(name)  # a request type this version does not know


def _constraint(r: Reader, raw: object, path: str) -> DeviceConstraint:
    d = r.as_map(raw, path)
    return DeviceConstraint(r.strlist(d, "requests", path), r.optstr(d, "matchAttribute", path),
                            r.optstr(d, "distinctAttribute", path))


def _claim_spec(r: Reader, spec: Json, path: str) -> tuple[tuple[DeviceRequest, ...], tuple[DeviceConstraint, ...],
                                                            tuple[DeviceConfig, ...]]:
    devices = r.getmap(spec, "devices", path) or {}
    at = f"{path}.devices"
    return (r.each(devices, "requests", at, _request), r.each(devices, "constraints", at, _constraint),
            r.each(devices, "config", at, _config))


def _allocated_device(r: Reader, raw: object, path: str) -> DeviceAllocation:
    d = r.as_map(raw, path)
    consumed = r.getmap(d, "consumedCapacity", path)
    admin = d.get("adminAccess")
    return DeviceAllocation(
        request=r.reqstr(d, "request", path),
        driver=r.reqstr(d, "driver", path),
        pool=r.reqstr(d, "pool", path),
        device=r.reqstr(d, "device", path),
        admin_access=admin if type(admin) is bool else None,
        consumed_capacity=_quantities(r, consumed, f"{path}.consumedCapacity", wrapped=False)
        if consumed is not None else None,
        share_id=r.optstr(d, "shareID", path),
        binding_conditions=r.strlist(d, "bindingConditions", path),
        binding_failure_conditions=r.strlist(d, "bindingFailureConditions", path),
        tolerations=r.each(d, "tolerations", path, _toleration),
    )


def _allocation(r: Reader, raw: Json) -> AllocationResult:
    path = "status.allocation"
    devices = r.getmap(raw, "devices", path) or {}
    selector = r.getmap(raw, "nodeSelector", path)
    return AllocationResult(
        r.each(devices, "results", f"{path}.devices", _allocated_device),
        node_selector(r, selector, f"{path}.nodeSelector") if selector is not None else None,
        dict(selector) if selector is not None else None,
        r.timestamp(raw, "allocationTimestamp", path),
        r.each(devices, "config", f"{path}.devices", _config),
    )


def _condition(r: Reader, raw: object, path: str) -> DeviceCondition:
    d = r.as_map(raw, path)
    status = r.reqstr(d, "status", path)
    if status not in _CONDITION_STATUSES:
        r.fail(f"{path}.status", "must be True, False or Unknown", status)
    return DeviceCondition(r.reqstr(d, "type", path), status, r.getstr(d, "reason", path),
                           r.getstr(d, "message", path))


def _device_status(r: Reader, raw: object, path: str) -> AllocatedDeviceStatus:
    d = r.as_map(raw, path)
    network = r.getmap(d, "networkData", path)
    return AllocatedDeviceStatus(
        driver=r.reqstr(d, "driver", path),
        pool=r.reqstr(d, "pool", path),
        device=r.reqstr(d, "device", path),
        share_id=r.optstr(d, "shareID", path),
        conditions=r.each(d, "conditions", path, _condition),
        data=d.get("data"),
        network_data=dict(network) if network is not None else None,
    )


def _consumer(r: Reader, raw: object, path: str) -> ClaimConsumer:
    d = r.as_map(raw, path)
    return ClaimConsumer(r.getstr(d, "name", path), r.getstr(d, "uid", path),
                         r.getstr(d, "resource", path) or "pods")


def resource_claim_from_dict(d: Mapping[str, Any], *, admission: bool = True) -> ResourceClaim:
    """A ResourceClaim with its allocation and reservations, if any."""
    r, meta, name, namespace = open_object(d, "ResourceClaim", namespaced=True)
    if admission:
        raise_errors(resource_claim_errors(d), r.obj)
    requests, constraints, config = _claim_spec(r, section(r, d, "spec"), "spec")
    status = section(r, d, "status")
    allocation = r.getmap(status, "allocation", "status")
    return ResourceClaim(
        name=name,
        namespace=namespace,
        uid=r.getstr(meta, "uid", "metadata"),
        annotations=r.strmap(meta, "annotations", "metadata") or {},
        owner_references=owner_references(r, meta),
        requests=requests,
        constraints=constraints,
        allocation=_allocation(r, allocation) if allocation is not None else None,
        reserved_for=r.each(status, "reservedFor", "status", _consumer),
        deletion_timestamp=r.timestamp(meta, "deletionTimestamp", "metadata"),
        devices=r.each(status, "devices", "status", _device_status),
        config=config,
    )


def resource_claim_template_from_dict(d: Mapping[str, Any], *, admission: bool = True) -> ResourceClaimTemplate:
    """A ResourceClaimTemplate: the claim spec under ``spec.spec``."""
    r, _, name, namespace = open_object(d, "ResourceClaimTemplate", namespaced=True)
    if admission:
        raise_errors(resource_claim_template_errors(d), r.obj)
    inner = r.getmap(section(r, d, "spec"), "spec", "spec") or {}
    requests, constraints, config = _claim_spec(r, inner, "spec.spec")
    return ResourceClaimTemplate(name, namespace, requests, constraints, config)
