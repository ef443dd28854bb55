"""Writing DeviceClasses, ResourceClaims and ResourceClaimTemplates back as ``resource.k8s.io/v1`` dicts.

The inverse of :mod:`kschedlib.model._convert_dra` for what the model keeps: reading a written object gives
the same model object, and an allocation written here is the one kube-scheduler writes into a claim's
``status.allocation`` (the API server's defaults written out, as it stores them: a request's
``allocationMode`` and ``count``, a toleration's ``operator``).  ResourceSlices are not written: the
scheduler never writes one, and the model keeps less of them than the API holds.
"""

from __future__ import annotations

from typing import Any

from kschedlib.model._convert_base import format_timestamp
from kschedlib.model._convert_write import JsonDict, _owner_reference, _put
from kschedlib.model.dra import (
    ALLOCATION_MODE_EXACT_COUNT,
    AllocationResult,
    ClaimConsumer,
    DeviceAllocation,
    DeviceClass,
    DeviceConfig,
    DeviceConstraint,
    DeviceRequest,
    DeviceToleration,
    ExactRequest,
    ResourceClaim,
    ResourceClaimTemplate,
)

__all__ = ["allocation_to_dict", "consumer_to_dict", "device_class_to_dict", "device_request_to_dict",
           "resource_claim_template_to_dict", "resource_claim_to_dict"]

API_VERSION = "resource.k8s.io/v1"


def _selectors(expressions: tuple[str, ...]) -> list[JsonDict]:
    return [{"cel": {"expression": expression}} for expression in expressions]


def _toleration(toleration: DeviceToleration) -> JsonDict:
    out: JsonDict = {}
    _put(out, "key", toleration.key)
    _put(out, "operator", toleration.operator)
    _put(out, "value", toleration.value)
    _put(out, "effect", toleration.effect)
    if toleration.toleration_seconds is not None:
        out["tolerationSeconds"] = toleration.toleration_seconds
    return out


def config_to_dict(config: DeviceConfig) -> JsonDict:
    out: JsonDict = {}
    _put(out, "source", config.source)
    _put(out, "requests", list(config.requests))
    opaque: JsonDict = {"driver": config.driver}
    if config.parameters is not None:
        opaque["parameters"] = config.parameters
    out["opaque"] = opaque
    return out


def _exact(request: ExactRequest, *, named: bool) -> JsonDict:
    out: JsonDict = {"name": request.name} if named else {}
    out["deviceClassName"] = request.device_class_name
    _put(out, "selectors", _selectors(request.selectors))
    out["allocationMode"] = request.allocation_mode
    if request.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
        out["count"] = request.count
    if request.admin_access is not None:
        out["adminAccess"] = request.admin_access
    _put(out, "tolerations", [_toleration(t) for t in request.tolerations])
    if request.capacity is not None:
        out["capacity"] = {"requests": {name: str(q) for name, q in request.capacity.items()}}
    return out


def device_request_to_dict(request: DeviceRequest) -> JsonDict:
    """A ``spec.devices.requests`` entry (``exactly`` or ``firstAvailable``)."""
    out: JsonDict = {"name": request.name}
    if request.exactly is not None:
        out["exactly"] = _exact(request.exactly, named=False)
    elif request.first_available:
        out["firstAvailable"] = [_exact(sub, named=True) for sub in request.first_available]
    return out


def _constraint(constraint: DeviceConstraint) -> JsonDict:
    out: JsonDict = {}
    _put(out, "requests", list(constraint.requests))
    _put(out, "matchAttribute", constraint.match_attribute)
    _put(out, "distinctAttribute", constraint.distinct_attribute)
    return out


def _claim_spec(requests: tuple[DeviceRequest, ...], constraints: tuple[DeviceConstraint, ...],
                config: tuple[DeviceConfig, ...]) -> JsonDict:
    devices: JsonDict = {}
    _put(devices, "requests", [device_request_to_dict(r) for r in requests])
    _put(devices, "constraints", [_constraint(c) for c in constraints])
    _put(devices, "config", [config_to_dict(c) for c in config])
    return {"devices": devices}


def _result(result: DeviceAllocation) -> JsonDict:
    out: JsonDict = {"request": result.request, "driver": result.driver, "pool": result.pool,
                     "device": result.device}
    if result.admin_access is not None:
        out["adminAccess"] = result.admin_access
    _put(out, "tolerations", [_toleration(t) for t in result.tolerations])
    _put(out, "bindingConditions", list(result.binding_conditions))
    _put(out, "bindingFailureConditions", list(result.binding_failure_conditions))
    _put(out, "shareID", result.share_id)
    if result.consumed_capacity is not None:
        out["consumedCapacity"] = {name: str(q) for name, q in result.consumed_capacity.items()}
    return out


def allocation_to_dict(allocation: AllocationResult) -> JsonDict:
    """A claim's ``status.allocation``, as kube-scheduler writes it."""
    devices: JsonDict = {}
    _put(devices, "results", [_result(r) for r in allocation.devices])
    _put(devices, "config", [config_to_dict(c) for c in allocation.config])
    out: JsonDict = {}
    _put(out, "devices", devices)
    if allocation.node_selector_raw is not None:
        out["nodeSelector"] = dict(allocation.node_selector_raw)
    if allocation.allocation_timestamp is not None:
        out["allocationTimestamp"] = format_timestamp(allocation.allocation_timestamp)
    return out


def consumer_to_dict(consumer: ClaimConsumer) -> JsonDict:
    """A ``status.reservedFor`` entry."""
    return {"resource": consumer.resource, "name": consumer.name, "uid": consumer.uid}


def _device_status(status: Any) -> JsonDict:
    out: JsonDict = {"driver": status.driver, "pool": status.pool, "device": status.device}
    _put(out, "shareID", status.share_id)
    conditions = []
    for condition in status.conditions:
        entry: JsonDict = {"type": condition.type, "status": condition.status}
        _put(entry, "reason", condition.reason)
        _put(entry, "message", condition.message)
        conditions.append(entry)
    _put(out, "conditions", conditions)
    if status.data is not None:
        out["data"] = status.data
    if status.network_data is not None:
        out["networkData"] = dict(status.network_data)
    return out


def _metadata(name: str, namespace: str | None, **extra: object) -> JsonDict:
    meta: JsonDict = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    for key, value in extra.items():
        _put(meta, key, value)
    return meta


def resource_claim_to_dict(claim: ResourceClaim) -> JsonDict:
    """A v1 ResourceClaim: spec, and the status the model keeps (allocation, reservations, device status)."""
    meta = _metadata(claim.name, claim.namespace, uid=claim.uid, annotations=dict(claim.annotations),
                     ownerReferences=[_owner_reference(o) for o in claim.owner_references],
                     deletionTimestamp=None if claim.deletion_timestamp is None
                     else format_timestamp(claim.deletion_timestamp))
    status: JsonDict = {}
    if claim.allocation is not None:
        status["allocation"] = allocation_to_dict(claim.allocation)
    _put(status, "reservedFor", [consumer_to_dict(c) for c in claim.reserved_for])
    _put(status, "devices", [_device_status(d) for d in claim.devices])
    out: JsonDict = {"apiVersion": API_VERSION, "kind": "ResourceClaim", "metadata": meta,
                     "spec": _claim_spec(claim.requests, claim.constraints, claim.config)}
    _put(out, "status", status)
    return out


def resource_claim_template_to_dict(template: ResourceClaimTemplate) -> JsonDict:
    return {"apiVersion": API_VERSION, "kind": "ResourceClaimTemplate",
            "metadata": _metadata(template.name, template.namespace),
            "spec": {"spec": _claim_spec(template.requests, template.constraints, template.config)}}


def device_class_to_dict(device_class: DeviceClass) -> JsonDict:
    spec: JsonDict = {}
    _put(spec, "selectors", _selectors(device_class.selectors))
    _put(spec, "config", [config_to_dict(c) for c in device_class.config])
    _put(spec, "extendedResourceName", device_class.extended_resource_name)
    return {"apiVersion": API_VERSION, "kind": "DeviceClass", "metadata": _metadata(device_class.name, None),
            "spec": spec}
