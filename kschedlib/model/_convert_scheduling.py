"""Reading and writing the ``scheduling.x-k8s.io/v1alpha1`` kinds PodGroup and ElasticQuota.

The CRDs' validation is applied on reading (an API server would have refused the
object): ``minMember`` and ``scheduleTimeoutSeconds`` are non-negative integers, a
phase is one of the PodGroup phases.  Writing leaves defaults out, and
``x_from_dict(x_to_dict(obj)) == obj``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedlib.model._convert_base import Reader, format_timestamp, join, open_object, section
from kschedlib.model.objects import ResourceList
from kschedlib.model.scheduling_crds import POD_GROUP_PHASES, SCHEDULING_API_VERSION, ElasticQuota, PodGroup

__all__ = [
    "SchedulingObject",
    "elastic_quota_from_dict",
    "elastic_quota_to_dict",
    "pod_group_from_dict",
    "pod_group_to_dict",
    "scheduling_object_to_dict",
]

SchedulingObject = PodGroup | ElasticQuota
"""The batch-scheduling kinds the model holds."""

JsonDict = dict[str, Any]


def _non_negative(r: Reader, d: Mapping[str, Any], key: str, path: str) -> int | None:
    value = r.optint(d, key, path)
    if value is not None and value < 0:
        r.fail(join(path, key), "must be a non-negative integer", value)
    return value


def pod_group_from_dict(d: Mapping[str, Any]) -> PodGroup:
    """A PodGroup: its spec, its controller-written status and its creation time (queue order)."""
    r, meta, name, namespace = open_object(d, "PodGroup", namespaced=True)
    spec = section(r, d, "spec")
    status = section(r, d, "status")
    phase = r.getstr(status, "phase", "status")
    if phase not in POD_GROUP_PHASES:
        r.fail("status.phase", f"must be one of {sorted(POD_GROUP_PHASES - {''})}", phase)
    return PodGroup(
        name=name,
        namespace=namespace,
        min_member=_non_negative(r, spec, "minMember", "spec") or 0,
        min_resources=r.resources(spec, "minResources", "spec"),
        schedule_timeout_seconds=_non_negative(r, spec, "scheduleTimeoutSeconds", "spec"),
        creation_timestamp=r.timestamp(meta, "creationTimestamp", "metadata"),
        phase=phase,
        occupied_by=r.getstr(status, "occupiedBy", "status"),
        running=_non_negative(r, status, "running", "status") or 0,
        succeeded=_non_negative(r, status, "succeeded", "status") or 0,
        failed=_non_negative(r, status, "failed", "status") or 0,
        schedule_start_time=r.timestamp(status, "scheduleStartTime", "status"),
    )


def elastic_quota_from_dict(d: Mapping[str, Any]) -> ElasticQuota:
    """An ElasticQuota: ``spec.min``, ``spec.max`` (absent stays ``None``) and ``status.used``."""
    r, _, name, namespace = open_object(d, "ElasticQuota", namespaced=True)
    spec = section(r, d, "spec")
    status = section(r, d, "status")
    return ElasticQuota(
        name=name,
        namespace=namespace,
        min=r.resources(spec, "min", "spec"),
        max=r.resources(spec, "max", "spec"),
        used=r.resources(status, "used", "status") or {},
    )


def _quantities(resources: ResourceList) -> JsonDict:
    return {name: str(quantity) for name, quantity in resources.items()}


def _put(out: JsonDict, key: str, value: object) -> None:
    if value:
        out[key] = value


def _metadata(name: str, namespace: str, created: float | None) -> JsonDict:
    meta: JsonDict = {"name": name, "namespace": namespace}
    if created is not None:
        meta["creationTimestamp"] = format_timestamp(created)
    return meta


def pod_group_to_dict(group: PodGroup) -> JsonDict:
    """The v1alpha1 PodGroup (the inverse of :func:`pod_group_from_dict`)."""
    spec: JsonDict = {}
    _put(spec, "minMember", group.min_member)
    if group.min_resources is not None:
        spec["minResources"] = _quantities(group.min_resources)
    if group.schedule_timeout_seconds is not None:
        spec["scheduleTimeoutSeconds"] = group.schedule_timeout_seconds
    status: JsonDict = {}
    for key, value in (("phase", group.phase), ("occupiedBy", group.occupied_by), ("running", group.running),
                       ("succeeded", group.succeeded), ("failed", group.failed)):
        _put(status, key, value)
    if group.schedule_start_time is not None:
        status["scheduleStartTime"] = format_timestamp(group.schedule_start_time)
    out: JsonDict = {"apiVersion": SCHEDULING_API_VERSION, "kind": "PodGroup",
                     "metadata": _metadata(group.name, group.namespace, group.creation_timestamp), "spec": spec}
    _put(out, "status", status)
    return out


def elastic_quota_to_dict(quota: ElasticQuota) -> JsonDict:
    """The v1alpha1 ElasticQuota (the inverse of :func:`elastic_quota_from_dict`)."""
    spec: JsonDict = {}
    if quota.min is not None:
        spec["min"] = _quantities(quota.min)
    if quota.max is not None:
        spec["max"] = _quantities(quota.max)
    out: JsonDict = {"apiVersion": SCHEDULING_API_VERSION, "kind": "ElasticQuota",
                     "metadata": _metadata(quota.name, quota.namespace, None), "spec": spec}
    if quota.used:
        out["status"] = {"used": _quantities(quota.used)}
    return out


def scheduling_object_to_dict(obj: SchedulingObject) -> JsonDict:
    """A PodGroup or ElasticQuota as its v1alpha1 dict."""
    if isinstance(obj, PodGroup):
        return pod_group_to_dict(obj)
    return elastic_quota_to_dict(obj)
