"""Reading the parts of a pod spec (and node taints) from Kubernetes v1 dicts.

Each function reads one kind of sub-object at a JSON path and applies the
API server's defaults for it, so objects come out as kube-scheduler would see
them after admission to a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kschedlib.model._convert_base import (
    Json,
    Reader,
    join,
    label_selector,
    node_selector,
    node_selector_term,
)
from kschedlib.model._resource_checks import check_container_resources, check_pod_resources
from kschedlib.model._shared import EMPTY_MAP, from_manifest, resource_map
from kschedlib.model.objects import (
    TAINT_EFFECTS,
    Affinity,
    Container,
    ContainerPort,
    ContainerRestartRule,
    ContainerStatus,
    NodeAffinity,
    OwnerReference,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
)
from kschedlib.model.quantity import Quantity
from kschedlib.model.resources import is_pod_level_resource

__all__ = [
    "affinity",
    "containers",
    "owner_references",
    "pod_conditions",
    "taints",
    "tolerations",
    "topology_spread_constraints",
    "volumes",
]

_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"
_WHEN_UNSATISFIABLE: Final = frozenset({"DoNotSchedule", "ScheduleAnyway"})
_INCLUSION_POLICIES: Final = frozenset({"Honor", "Ignore"})
_TOLERATION_OPERATORS: Final = frozenset({"Equal", "Exists"})


_MAX_PORT: Final = 65535
_PORT_RANGE: Final = "must be between 1 and 65535, inclusive"


def _host_network_port(r: Reader, raw: object, path: str) -> ContainerPort:
    return _port(r, raw, path, host_network=True)


def _port(r: Reader, raw: object, path: str, host_network: bool = False) -> ContainerPort:
    """A container port; ``protocol`` defaults to TCP, and ``hostPort`` to the container port
    under ``hostNetwork`` (the pod then really occupies that port on the node)."""
    d = r.as_map(raw, path)
    container_port = r.optint(d, "containerPort", path)
    if container_port is None:
        r.fail(join(path, "containerPort"), "is required")
    if not 1 <= container_port <= _MAX_PORT:
        r.fail(join(path, "containerPort"), _PORT_RANGE, container_port)
    host_port = r.getint(d, "hostPort", path)
    if host_port and not 1 <= host_port <= _MAX_PORT:
        r.fail(join(path, "hostPort"), _PORT_RANGE, host_port)
    if host_network and not host_port:
        host_port = container_port
    return ContainerPort(
        container_port=container_port,
        host_port=host_port,
        protocol=r.getstr(d, "protocol", path) or "TCP",
        host_ip=r.getstr(d, "hostIP", path),
        name=r.getstr(d, "name", path),
    )


def _container(r: Reader, raw: object, path: str, host_network: bool = False) -> Container:
    """A container; a resource with a limit but no request gets request = limit (per resource), and
    requirements the API server refuses are refused (:mod:`kschedlib.model._resource_checks`)."""
    d = r.as_map(raw, path)
    res = r.getmap(d, "resources", path)
    requests = limits = None
    if res is not None:
        res_path = join(path, "resources")
        requests = r.resources(res, "requests", res_path)
        limits = r.resources(res, "limits", res_path)
    if limits:
        requests = resource_map({**limits, **requests}) if requests else limits
    if res is not None:
        check_container_resources(r, join(path, "resources"), requests or {}, limits or {})
    ports = r.each(d, "ports", path, _host_network_port if host_network else _port)
    return Container(
        name=r.getstr(d, "name", path),
        image=r.getstr(d, "image", path),
        requests=requests or EMPTY_MAP,
        limits=limits or EMPTY_MAP,
        ports=ports,
        restart_policy=r.optstr(d, "restartPolicy", path),
        restart_policy_rules=r.each(d, "restartPolicyRules", path, _restart_rule),
    )


def _restart_rule(r: Reader, raw: object, path: str) -> ContainerRestartRule:
    d = r.as_map(raw, path)
    codes = r.getmap(d, "exitCodes", path) or {}
    codes_path = join(path, "exitCodes")
    values = r.getlist(codes, "values", codes_path)
    for i, value in enumerate(values):
        if type(value) is not int:
            r.fail(f"{join(codes_path, 'values')}[{i}]", "expected an integer", value)
    return ContainerRestartRule(r.getstr(d, "action", path), r.getstr(codes, "operator", codes_path), tuple(values))


def _host_network_container(r: Reader, raw: object, path: str) -> Container:
    return _container(r, raw, path, host_network=True)


_CONTAINER_FIELDS: Final = ("name", "image", "resources", "ports", "restartPolicy", "restartPolicyRules")
"""What :func:`_container` reads of a container, and so all that two containers must share to read alike
(env, args, probes and mounts, which can be large and differ from pod to pod, are not part of the key)."""


def _read_fields(raw: object) -> object:
    """The containers as :func:`_container` sees them: each one's read fields (others are kept as they are)."""
    if type(raw) is not list:
        return raw
    return [{k: c[k] for k in _CONTAINER_FIELDS if k in c} if type(c) is dict else c for c in raw]


def containers(r: Reader, spec: Json, key: str, host_network: bool) -> tuple[Container, ...]:
    """``spec.containers`` or ``spec.initContainers``."""
    read = _host_network_container if host_network else _container
    return from_manifest((key, host_network), _read_fields(spec.get(key)), lambda: r.each(spec, key, "spec", read))


def _weight(r: Reader, d: Json, path: str) -> int:
    weight = r.optint(d, "weight", path)
    if weight is None or not 1 <= weight <= 100:
        r.fail(join(path, "weight"), "must be in the range 1-100", weight)
    return weight


def _preferred_node_term(r: Reader, raw: object, path: str) -> PreferredSchedulingTerm:
    d = r.as_map(raw, path)
    term = node_selector_term(r, d.get("preference") or {}, join(path, "preference"))
    return PreferredSchedulingTerm(_weight(r, d, path), term)


def _node_affinity(r: Reader, d: Json, path: str) -> NodeAffinity:
    required = d.get(_REQUIRED)
    return NodeAffinity(
        required=None if required is None else node_selector(r, required, join(path, _REQUIRED)),
        preferred=r.each(d, _PREFERRED, path, _preferred_node_term),
    )


def _pod_affinity_term(r: Reader, raw: object, path: str) -> PodAffinityTerm:
    d = r.as_map(raw, path)
    return PodAffinityTerm(
        topology_key=r.reqstr(d, "topologyKey", path),
        label_selector=label_selector(r, d.get("labelSelector"), join(path, "labelSelector")),
        namespaces=r.strlist(d, "namespaces", path),
        namespace_selector=label_selector(r, d.get("namespaceSelector"), join(path, "namespaceSelector")),
        match_label_keys=r.strlist(d, "matchLabelKeys", path),
        mismatch_label_keys=r.strlist(d, "mismatchLabelKeys", path),
    )


def _weighted_pod_affinity_term(r: Reader, raw: object, path: str) -> WeightedPodAffinityTerm:
    d = r.as_map(raw, path)
    term = _pod_affinity_term(r, d.get("podAffinityTerm") or {}, join(path, "podAffinityTerm"))
    return WeightedPodAffinityTerm(_weight(r, d, path), term)


def _pod_affinity(r: Reader, d: Json, path: str) -> PodAffinity:
    """``podAffinity`` or ``podAntiAffinity``: required terms and weighted preferred terms."""
    return PodAffinity(
        r.each(d, _REQUIRED, path, _pod_affinity_term),
        r.each(d, _PREFERRED, path, _weighted_pod_affinity_term),
    )


def affinity(r: Reader, spec: Json) -> Affinity | None:
    """``spec.affinity``; each part is ``None`` when absent, so absent and empty stay distinct."""
    return from_manifest("affinity", spec.get("affinity"), lambda: _affinity(r, spec))


def _affinity(r: Reader, spec: Json) -> Affinity | None:
    d = r.getmap(spec, "affinity", "spec")
    if d is None:
        return None
    path = "spec.affinity"
    node = r.getmap(d, "nodeAffinity", path)
    pod = r.getmap(d, "podAffinity", path)
    anti = r.getmap(d, "podAntiAffinity", path)
    return Affinity(
        node_affinity=None if node is None else _node_affinity(r, node, join(path, "nodeAffinity")),
        pod_affinity=None if pod is None else _pod_affinity(r, pod, join(path, "podAffinity")),
        pod_anti_affinity=None if anti is None else _pod_affinity(r, anti, join(path, "podAntiAffinity")),
    )


def _effect(r: Reader, d: Json, path: str, *, required: bool) -> str:
    effect = r.getstr(d, "effect", path)
    if (effect or required) and effect not in TAINT_EFFECTS:
        r.fail(join(path, "effect"), "must be NoSchedule, PreferNoSchedule or NoExecute", effect or None)
    return effect


def _toleration(r: Reader, raw: object, path: str) -> Toleration:
    """A toleration; an empty operator means ``Equal``, as in Kubernetes."""
    d = r.as_map(raw, path)
    operator = r.getstr(d, "operator", path) or "Equal"
    if operator not in _TOLERATION_OPERATORS:
        r.fail(join(path, "operator"), "must be Equal or Exists", operator)
    return Toleration(
        key=r.getstr(d, "key", path),
        operator=operator,
        value=r.getstr(d, "value", path),
        effect=_effect(r, d, path, required=False),
        toleration_seconds=r.optint(d, "tolerationSeconds", path),
    )


def tolerations(r: Reader, spec: Json) -> tuple[Toleration, ...]:
    """``spec.tolerations``."""
    return from_manifest("tolerations", spec.get("tolerations"),
                         lambda: r.each(spec, "tolerations", "spec", _toleration))


def _taint(r: Reader, raw: object, path: str) -> Taint:
    d = r.as_map(raw, path)
    return Taint(key=r.reqstr(d, "key", path), effect=_effect(r, d, path, required=True),
                 value=r.getstr(d, "value", path))


def taints(r: Reader, spec: Json) -> tuple[Taint, ...]:
    """A node's ``spec.taints``; every taint needs a key and a valid effect."""
    return r.each(spec, "taints", "spec", _taint)


def _choice(r: Reader, d: Json, key: str, path: str, allowed: frozenset[str]) -> str | None:
    value = r.optstr(d, key, path)
    if value is not None and value not in allowed:
        r.fail(join(path, key), f"must be one of {', '.join(sorted(allowed))}", value)
    return value


def _spread_constraint(r: Reader, raw: object, path: str) -> TopologySpreadConstraint:
    d = r.as_map(raw, path)
    max_skew = r.optint(d, "maxSkew", path)
    if max_skew is None or max_skew <= 0:
        r.fail(join(path, "maxSkew"), "must be greater than zero", max_skew)
    min_domains = r.optint(d, "minDomains", path)
    if min_domains is not None and min_domains <= 0:
        r.fail(join(path, "minDomains"), "must be greater than zero", min_domains)
    when = _choice(r, d, "whenUnsatisfiable", path, _WHEN_UNSATISFIABLE)
    if when is None:
        r.fail(join(path, "whenUnsatisfiable"), "is required (DoNotSchedule or ScheduleAnyway)")
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=r.reqstr(d, "topologyKey", path),
        when_unsatisfiable=when,
        label_selector=label_selector(r, d.get("labelSelector"), join(path, "labelSelector")),
        min_domains=min_domains,
        node_affinity_policy=_choice(r, d, "nodeAffinityPolicy", path, _INCLUSION_POLICIES),
        node_taints_policy=_choice(r, d, "nodeTaintsPolicy", path, _INCLUSION_POLICIES),
        match_label_keys=r.strlist(d, "matchLabelKeys", path),
    )


def topology_spread_constraints(r: Reader, spec: Json) -> tuple[TopologySpreadConstraint, ...]:
    """``spec.topologySpreadConstraints``."""
    return from_manifest("topologySpreadConstraints", spec.get("topologySpreadConstraints"),
                         lambda: r.each(spec, "topologySpreadConstraints", "spec", _spread_constraint))


def _volume(r: Reader, raw: object, path: str) -> Volume:
    """A volume: its one source key is kept as read; a volume with none is an ``emptyDir``,
    as the API server defaults it."""
    d = r.as_map(raw, path)
    kinds = [key for key in d if key != "name" and d[key] is not None]
    if len(kinds) > 1:
        r.fail(path, "may not specify more than one volume source", sorted(kinds))
    kind = kinds[0] if kinds else "emptyDir"
    raw_source = r.getmap(d, kind, path)
    source: dict[str, Any] = {} if raw_source is None else _json_copy(raw_source)
    claim_name = None
    read_only = False
    if kind == "persistentVolumeClaim":
        claim_path = join(path, kind)
        claim_name = r.reqstr(source, "claimName", claim_path)
        read_only = r.getbool(source, "readOnly", claim_path)
    return Volume(
        name=r.reqstr(d, "name", path),
        claim_name=claim_name,
        ephemeral=kind == "ephemeral",
        read_only=read_only,
        source_kind=kind,
        source=source,
    )


def _json_copy(value: Any) -> Any:
    """A copy of a JSON value, so that a volume source shares nothing mutable with the input.

    Sources are small and volumes rare, so this costs little where a blanket deep copy of
    every pod would not.
    """
    if isinstance(value, Mapping):
        return {key: _json_copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_copy(item) for item in value]
    return value


def volumes(r: Reader, spec: Json) -> tuple[Volume, ...]:
    """``spec.volumes``."""
    return r.each(spec, "volumes", "spec", _volume)


def _owner_reference(r: Reader, raw: object, path: str) -> OwnerReference:
    d = r.as_map(raw, path)
    return OwnerReference(
        kind=r.getstr(d, "kind", path),
        name=r.getstr(d, "name", path),
        uid=r.getstr(d, "uid", path),
        api_version=r.getstr(d, "apiVersion", path),
        controller=r.getbool(d, "controller", path),
    )


def owner_references(r: Reader, meta: Json) -> tuple[OwnerReference, ...]:
    """``metadata.ownerReferences``."""
    return r.each(meta, "ownerReferences", "metadata", _owner_reference)


def _pod_condition(r: Reader, raw: object, path: str) -> PodCondition:
    d = r.as_map(raw, path)
    return PodCondition(
        type=r.getstr(d, "type", path),
        status=r.getstr(d, "status", path),
        reason=r.getstr(d, "reason", path),
        message=r.getstr(d, "message", path),
    )


def pod_conditions(r: Reader, status: Json) -> tuple[PodCondition, ...]:
    """``status.conditions`` of a pod (preemption reads ``DisruptionTarget``)."""
    return r.each(status, "conditions", "status", _pod_condition)


def _container_status(r: Reader, raw: object, path: str) -> ContainerStatus | None:
    d = r.as_map(raw, path)
    resources = r.getmap(d, "resources", path)
    if resources is None:
        return None  # kube-scheduler only reads statuses that report resources
    return ContainerStatus(
        name=r.getstr(d, "name", path),
        requests=r.resources(resources, "requests", join(path, "resources")) or EMPTY_MAP,
        allocated=r.resources(d, "allocatedResources", path) or EMPTY_MAP,
    )


def pod_level_status(r: Reader, status: Json) -> tuple[Mapping[str, Quantity] | None, Mapping[str, Quantity]]:
    """``status.resources.requests`` (``None`` without ``status.resources``) and ``status.allocatedResources``."""
    resources = r.getmap(status, "resources", "status")
    requests = None if resources is None else r.resources(resources, "requests", "status.resources") or EMPTY_MAP
    return requests, r.resources(status, "allocatedResources", "status") or EMPTY_MAP


def container_statuses(r: Reader, status: Json, key: str) -> tuple[ContainerStatus, ...]:
    """``status.containerStatuses`` / ``initContainerStatuses`` entries that report ``resources``."""
    return tuple(s for s in r.each(status, key, "status", _container_status) if s is not None)


def pod_level_resources(r: Reader, spec: Json, pod_containers: Callable[[], Mapping[str, Quantity]]
                        ) -> tuple[Mapping[str, Quantity] | None, Mapping[str, Quantity] | None]:
    """``spec.resources`` (requests, limits), defaulted as the API server does when limits are set:
    a missing cpu/memory request is the containers' total request if they request it, else the limit;
    any other missing request of a pod-level resource is its limit."""
    level = r.getmap(spec, "resources", "spec")
    if level is None:
        return None, None
    requests = r.resources(level, "requests", "spec.resources")
    limits = r.resources(level, "limits", "spec.resources")
    if limits:
        defaulted = dict(requests or {})
        totals = pod_containers()
        for name in ("cpu", "memory"):
            if name not in defaulted and name in totals:
                defaulted[name] = totals[name]
        for name, quantity in limits.items():
            if name not in defaulted and is_pod_level_resource(name):
                defaulted[name] = quantity
        requests = resource_map(defaulted) if defaulted else requests
    check_pod_resources(r, requests, limits)
    return requests, limits
