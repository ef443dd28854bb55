"""The cluster objects of kube v1.36's DynamicResources plugin tests, as ``resource.k8s.io/v1`` dicts.

The names mirror the upstream fixtures (a node ``worker``, a pod ``my-pod`` with uid ``1234``, a claim
``my-pod-my-resource`` asking for one device of class ``my-resource-class`` ...) so each translated
case reads like its original.  Every builder returns a fresh dict: cases may change them freely.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

NODE = "worker"
NODE2 = "worker-2"
NODE3 = "worker-3"
DRIVER = "some-driver"
DRIVER2 = "some-driver-2"
POD = "my-pod"
POD_UID = "1234"
RESOURCE = "my-resource"
CLAIM = f"{POD}-{RESOURCE}"
CLAIM2 = f"{POD}-{RESOURCE}-2"
CLASS = "my-resource-class"
GPU = "example.com/gpu"
GPU2 = "example.com/gpu2"
IMPLICIT_GPU = f"deviceclass.resource.kubernetes.io/{CLASS}"
HEALTHY = f'device.attributes["{DRIVER}"].healthy'
"""A selector that fails with a CEL runtime error on devices without the ``healthy`` attribute."""


def node(name: str = NODE, **allocatable: str) -> Json:
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", **allocatable}}}


def device(name: str, healthy: bool | None = None, *, taint: bool = False) -> Json:
    out: Json = {"name": name}
    if healthy is not None:
        out["attributes"] = {"healthy": {"bool": healthy}}
    if taint:
        out["taints"] = [{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]
    return out


def slice_(node_name: str, *devices: Json, driver: str = DRIVER) -> Json:
    """A slice on ``node_name`` publishing ``devices`` (default: one plain ``instance-1``)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{driver}"},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": list(devices) or [device("instance-1")]}}


def instances(count: int) -> list[Json]:
    return [device(f"instance-{i}") for i in range(1, count + 1)]


def device_class(name: str = CLASS, *, extended: str | None = None, selector: str | None = None) -> Json:
    spec: Json = {}
    if extended is not None:
        spec["extendedResourceName"] = extended
    if selector is not None:
        spec["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def exactly(class_name: str = CLASS, count: int = 1, *, admin: bool = False, selector: str | None = None) -> Json:
    out: Json = {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": count}
    if admin:
        out["adminAccess"] = True
    if selector is not None:
        out["selectors"] = [{"cel": {"expression": selector}}]
    return out


def request(index: int = 1, **exact: Any) -> Json:
    return {"name": f"req-{index}", "exactly": exactly(**exact)}


def prioritized(index: int, *subrequests: tuple[str, int] | tuple[str, int, str]) -> Json:
    """A ``firstAvailable`` request of (name, count[, selector]) subrequests of the class."""
    subs = []
    for sub in subrequests:
        entry: Json = {"name": sub[0], **exactly(count=sub[1])}
        if len(sub) == 3:
            entry["selectors"] = [{"cel": {"expression": sub[2]}}]
        subs.append(entry)
    return {"name": f"req-{index}", "firstAvailable": subs}


def result(request_name: str, device_name: str = "instance-1", *, driver: str = DRIVER, admin: bool = False) -> Json:
    out: Json = {"request": request_name, "driver": driver, "pool": NODE, "device": device_name}
    if admin:
        out["adminAccess"] = True
    return out


def on_node(name: str = NODE) -> Json:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}


def by_label(key: str, value: str) -> Json:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}


def claim(name: str = CLAIM, *requests: Json, owned: bool = True, allocation: list[Json] | None = None,
          selector: Json | None = None, reserved: tuple[str, ...] = (), deleting: bool = False,
          owner_uid: str = POD_UID) -> Json:
    """A claim (default: one request ``req-1`` for a device of the class, owned by the pod, pending)."""
    meta: Json = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owned:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": POD, "uid": owner_uid,
                                    "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: Json = {}
    if allocation is not None or selector is not None:
        status["allocation"] = {"devices": {"results": allocation or []}}
        if selector is not None:
            status["allocation"]["nodeSelector"] = selector
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": POD, "uid": uid} for uid in reserved]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
            "spec": {"devices": {"requests": list(requests) or [request()]}}, "status": status}


def allocated(name: str = CLAIM, *requests: Json, device_name: str = "instance-1", admin: bool = False,
              **more: Any) -> Json:
    """A claim allocated ``instance-1`` of the worker for ``req-1`` (the upstream ``allocatedClaim``)."""
    return claim(name, *requests, allocation=[result("req-1", device_name, admin=admin)], selector=on_node(), **more)


def pod(*claims: tuple[str, str], uid: str = POD_UID, name: str = POD, generated: tuple[str, ...] | None = None,
        requests: tuple[dict[str, str], ...] = ()) -> Json:
    """A pod naming ``claims`` as (pod claim, ``claim:<name>`` or ``template:<name>``); ``generated``
    lists the claims the template controller created (``status.resourceClaimStatuses``); one container
    per entry of ``requests``."""
    pod_claims = []
    for pod_claim, ref in claims:
        kind, target = ref.split(":")
        key = "resourceClaimName" if kind == "claim" else "resourceClaimTemplateName"
        pod_claims.append({"name": pod_claim, key: target})
    containers = [{"name": f"c{i}", "image": "x", "resources": {"requests": r, "limits": r}}
                  for i, r in enumerate(requests)] or [{"name": "c0", "image": "x"}]
    out: Json = {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
                 "spec": {"containers": containers, "resourceClaims": pod_claims}}
    if generated is not None:
        out["status"] = {"resourceClaimStatuses": [
            {"name": pod_claim, "resourceClaimName": target}
            for (pod_claim, _), target in zip(claims, generated, strict=False)]}
    return out


POD_WITH_CLAIM = (RESOURCE, f"claim:{CLAIM}")
POD_WITH_TEMPLATE = (RESOURCE, f"template:{CLAIM}")
