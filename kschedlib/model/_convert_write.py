"""Writing model objects back as Kubernetes v1 dicts (the inverse of :mod:`kschedlib.model.convert`).

Defaults and empty fields are left out, as ``kubectl`` would show an object
someone wrote by hand; reading the result back gives the same model object
for every object that was itself read (defaults already applied).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedlib.errors import ManifestError
from kschedlib.model._convert_base import format_timestamp
from kschedlib.model.labels import LabelSelector, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.model.objects import (
    Affinity,
    Container,
    ContainerPort,
    ContainerRestartRule,
    ContainerStatus,
    Namespace,
    Node,
    NodeAffinity,
    OwnerReference,
    OwnerSelector,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodDisruptionBudget,
    PodResourceClaim,
    ResourceList,
    Toleration,
    TopologySpreadConstraint,
    Volume,
)

__all__ = [
    "label_selector_to_dict",
    "namespace_to_dict",
    "node_to_dict",
    "object_to_dict",
    "owner_selector_to_dict",
    "pdb_to_dict",
    "pod_to_dict",
]

JsonDict = dict[str, Any]

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_API_VERSIONS = {
    "Service": "v1", "ReplicationController": "v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1",
}


def _put(out: JsonDict, key: str, value: object) -> None:
    """Set ``key`` unless ``value`` is empty (``None``, ``""``, ``0``/``False``, ``{}``, ``[]``)."""
    if value:
        out[key] = value


def _quantities(resources: ResourceList) -> JsonDict:
    return {name: str(quantity) for name, quantity in resources.items()}


def _metadata(name: str, namespace: str | None, labels: Mapping[str, str], **extra: object) -> JsonDict:
    meta: JsonDict = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    _put(meta, "labels", dict(labels))
    for key, value in extra.items():
        _put(meta, key, value)
    return meta


def label_selector_to_dict(selector: LabelSelector) -> JsonDict:
    """A metav1.LabelSelector (``{}`` for the empty selector that matches everything)."""
    out: JsonDict = {}
    _put(out, "matchLabels", dict(selector.match_labels))
    _put(out, "matchExpressions", [
        _requirement(r.key, r.operator, r.values) for r in selector.match_expressions
    ])
    return out


def _requirement(key: str, operator: str, values: tuple[str, ...]) -> JsonDict:
    out: JsonDict = {"key": key, "operator": operator}
    _put(out, "values", list(values))
    return out


def _node_requirements(reqs: tuple[NodeSelectorRequirement, ...]) -> list[JsonDict]:
    return [_requirement(r.key, r.operator, r.values) for r in reqs]


def _node_selector_term(term: NodeSelectorTerm) -> JsonDict:
    out: JsonDict = {}
    _put(out, "matchExpressions", _node_requirements(term.match_expressions))
    _put(out, "matchFields", _node_requirements(term.match_fields))
    return out


def _node_selector(selector: NodeSelector) -> JsonDict:
    return {"nodeSelectorTerms": [_node_selector_term(t) for t in selector.terms]}


def _port(port: ContainerPort) -> JsonDict:
    out: JsonDict = {"containerPort": port.container_port}
    _put(out, "hostPort", port.host_port)
    if port.protocol != "TCP":
        out["protocol"] = port.protocol
    _put(out, "hostIP", port.host_ip)
    _put(out, "name", port.name)
    return out


def _container(container: Container) -> JsonDict:
    out: JsonDict = {"name": container.name}
    _put(out, "image", container.image)
    resources: JsonDict = {}
    _put(resources, "requests", _quantities(container.requests))
    _put(resources, "limits", _quantities(container.limits))
    _put(out, "resources", resources)
    _put(out, "ports", [_port(p) for p in container.ports])
    if container.restart_policy is not None:
        out["restartPolicy"] = container.restart_policy
    _put(out, "restartPolicyRules", [_restart_rule(rule) for rule in container.restart_policy_rules])
    return out


def _restart_rule(rule: ContainerRestartRule) -> JsonDict:
    out: JsonDict = {"action": rule.action}
    codes: JsonDict = {}
    _put(codes, "operator", rule.operator)
    _put(codes, "values", list(rule.values))
    _put(out, "exitCodes", codes)
    return out


def _node_affinity(affinity: NodeAffinity) -> JsonDict:
    out: JsonDict = {}
    if affinity.required is not None:
        out[_REQUIRED] = _node_selector(affinity.required)
    _put(out, _PREFERRED, [{"weight": p.weight, "preference": _node_selector_term(p.preference)}
                           for p in affinity.preferred])
    return out


def _pod_affinity_term(term: PodAffinityTerm) -> JsonDict:
    out: JsonDict = {"topologyKey": term.topology_key}
    if term.label_selector is not None:
        out["labelSelector"] = label_selector_to_dict(term.label_selector)
    _put(out, "namespaces", list(term.namespaces))
    if term.namespace_selector is not None:
        out["namespaceSelector"] = label_selector_to_dict(term.namespace_selector)
    _put(out, "matchLabelKeys", list(term.match_label_keys))
    _put(out, "mismatchLabelKeys", list(term.mismatch_label_keys))
    return out


def _pod_affinity(affinity: PodAffinity) -> JsonDict:
    out: JsonDict = {}
    _put(out, _REQUIRED, [_pod_affinity_term(t) for t in affinity.required])
    _put(out, _PREFERRED, [{"weight": p.weight, "podAffinityTerm": _pod_affinity_term(p.term)}
                           for p in affinity.preferred])
    return out


def _affinity(affinity: Affinity) -> JsonDict:
    out: JsonDict = {}
    if affinity.node_affinity is not None:
        out["nodeAffinity"] = _node_affinity(affinity.node_affinity)
    if affinity.pod_affinity is not None:
        out["podAffinity"] = _pod_affinity(affinity.pod_affinity)
    if affinity.pod_anti_affinity is not None:
        out["podAntiAffinity"] = _pod_affinity(affinity.pod_anti_affinity)
    return out


def _toleration(toleration: Toleration) -> JsonDict:
    out: JsonDict = {}
    _put(out, "key", toleration.key)
    if toleration.operator != "Equal":
        out["operator"] = toleration.operator
    _put(out, "value", toleration.value)
    _put(out, "effect", toleration.effect)
    if toleration.toleration_seconds is not None:
        out["tolerationSeconds"] = toleration.toleration_seconds
    return out


def _spread_constraint(c: TopologySpreadConstraint) -> JsonDict:
    out: JsonDict = {"maxSkew": c.max_skew, "topologyKey": c.topology_key,
                     "whenUnsatisfiable": c.when_unsatisfiable}
    if c.label_selector is not None:
        out["labelSelector"] = label_selector_to_dict(c.label_selector)
    _put(out, "minDomains", c.min_domains)
    _put(out, "nodeAffinityPolicy", c.node_affinity_policy)
    _put(out, "nodeTaintsPolicy", c.node_taints_policy)
    _put(out, "matchLabelKeys", list(c.match_label_keys))
    return out


def _volume(volume: Volume) -> JsonDict:
    """The volume with its source; a hand-built claim or ephemeral volume without one gets a minimal one."""
    source = dict(volume.source)
    kind = volume.source_kind
    if volume.claim_name is not None:
        kind = "persistentVolumeClaim"
        source["claimName"] = volume.claim_name
        if volume.read_only or "readOnly" in source:
            source["readOnly"] = volume.read_only
    elif volume.ephemeral:
        kind = "ephemeral"
    return {"name": volume.name, kind or "emptyDir": source}


def _pod_spec(pod: Pod) -> JsonDict:
    spec: JsonDict = {"containers": [_container(c) for c in pod.containers]}
    _put(spec, "initContainers", [_container(c) for c in pod.init_containers])
    _put(spec, "nodeName", pod.node_name)
    if pod.scheduler_name != "default-scheduler":
        spec["schedulerName"] = pod.scheduler_name
    if pod.priority is not None:
        spec["priority"] = pod.priority
    if pod.preemption_policy is not None:
        spec["preemptionPolicy"] = pod.preemption_policy
    if pod.overhead is not None:
        spec["overhead"] = _quantities(pod.overhead)
    if pod.pod_level_requests is not None or pod.pod_level_limits is not None:
        level: JsonDict = {}
        if pod.pod_level_requests is not None:
            level["requests"] = _quantities(pod.pod_level_requests)
        if pod.pod_level_limits is not None:
            level["limits"] = _quantities(pod.pod_level_limits)
        spec["resources"] = level
    if pod.node_selector is not None:
        spec["nodeSelector"] = dict(pod.node_selector)
    if pod.affinity is not None:
        spec["affinity"] = _affinity(pod.affinity)
    _put(spec, "tolerations", [_toleration(t) for t in pod.tolerations])
    _put(spec, "topologySpreadConstraints", [_spread_constraint(c) for c in pod.topology_spread_constraints])
    _put(spec, "schedulingGates", [{"name": gate} for gate in pod.scheduling_gates])
    _put(spec, "hostNetwork", pod.host_network)
    if pod.host_users is not None:
        spec["hostUsers"] = pod.host_users
    _put(spec, "volumes", [_volume(v) for v in pod.volumes])
    _put(spec, "resourceClaims", [_resource_claim(c) for c in pod.resource_claims])
    return spec


def _resource_claim(claim: PodResourceClaim) -> JsonDict:
    out: JsonDict = {"name": claim.name}
    if claim.resource_claim_name is not None:
        out["resourceClaimName"] = claim.resource_claim_name
    if claim.resource_claim_template_name is not None:
        out["resourceClaimTemplateName"] = claim.resource_claim_template_name
    return out


def _owner_reference(owner: OwnerReference) -> JsonDict:
    out: JsonDict = {"apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name}
    _put(out, "uid", owner.uid)
    _put(out, "controller", owner.controller)
    return out


def _timestamp(seconds: float | None) -> str | None:
    return None if seconds is None else format_timestamp(seconds)


def _container_status(status: ContainerStatus) -> JsonDict:
    out: JsonDict = {"name": status.name, "resources": {}}
    if status.requests is not None:
        out["resources"]["requests"] = _quantities(status.requests)
    _put(out, "allocatedResources", _quantities(status.allocated))
    return out


def pod_to_dict(pod: Pod) -> JsonDict:
    """A v1 Pod; the ``uid`` is left out when it is the default ``namespace/name``."""
    meta = _metadata(
        pod.name, pod.namespace, pod.labels,
        uid=pod.uid if pod.uid != pod.key else "",
        annotations=dict(pod.annotations),
        ownerReferences=[_owner_reference(o) for o in pod.owner_references],
        creationTimestamp=_timestamp(pod.creation_timestamp),
        deletionTimestamp=_timestamp(pod.deletion_timestamp),
    )
    status: JsonDict = {"phase": pod.phase}
    _put(status, "conditions", [
        {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message} for c in pod.conditions
    ])
    _put(status, "nominatedNodeName", pod.nominated_node_name)
    _put(status, "startTime", _timestamp(pod.start_time))
    _put(status, "containerStatuses", [_container_status(c) for c in pod.container_statuses])
    _put(status, "initContainerStatuses", [_container_status(c) for c in pod.init_container_statuses])
    _put(status, "resourceClaimStatuses", [
        {"name": name} if claim is None else {"name": name, "resourceClaimName": claim}
        for name, claim in pod.resource_claim_statuses
    ])
    extended = pod.extended_resource_claim_status
    if extended is not None:
        status["extendedResourceClaimStatus"] = {
            "resourceClaimName": extended.resource_claim_name,
            "requestMappings": [{"containerName": m.container_name, "resourceName": m.resource_name,
                                 "requestName": m.request_name} for m in extended.request_mappings]}
    if pod.pod_level_status_requests is not None:
        status["resources"] = {"requests": _quantities(pod.pod_level_status_requests)}
    _put(status, "allocatedResources", _quantities(pod.pod_level_allocated))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": _pod_spec(pod), "status": status}


def node_to_dict(node: Node) -> JsonDict:
    """A v1 Node; an empty allocatable beside a non-empty capacity is written out as ``{}``."""
    spec: JsonDict = {}
    _put(spec, "taints", [_taint(t.key, t.value, t.effect) for t in node.taints])
    _put(spec, "unschedulable", node.unschedulable)
    status: JsonDict = {}
    _put(status, "capacity", _quantities(node.capacity))
    if node.allocatable or node.capacity:
        status["allocatable"] = _quantities(node.allocatable)
    _put(status, "images", [{"names": list(i.names), "sizeBytes": i.size_bytes} for i in node.images])
    _put(status, "conditions", [{"type": t, "status": s} for t, s in node.conditions.items()])
    _put(status, "declaredFeatures", list(node.declared_features))
    meta = _metadata(node.name, None, node.labels, uid=node.uid, annotations=dict(node.annotations))
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def _taint(key: str, value: str, effect: str) -> JsonDict:
    out: JsonDict = {"key": key}
    _put(out, "value", value)
    out["effect"] = effect
    return out


def namespace_to_dict(namespace: Namespace) -> JsonDict:
    """A v1 Namespace."""
    meta = _metadata(namespace.name, None, namespace.labels)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def pdb_to_dict(pdb: PodDisruptionBudget) -> JsonDict:
    """A policy/v1 PodDisruptionBudget; disrupted pods get the epoch as their (unread) time."""
    spec: JsonDict = {}
    if pdb.selector is not None:
        spec["selector"] = label_selector_to_dict(pdb.selector)
    status: JsonDict = {"disruptionsAllowed": pdb.disruptions_allowed}
    _put(status, "disruptedPods", dict.fromkeys(sorted(pdb.disrupted_pods), format_timestamp(0)))
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": _metadata(pdb.name, pdb.namespace, {}), "spec": spec, "status": status}


def owner_selector_to_dict(owner: OwnerSelector) -> JsonDict:
    """The Service, ReplicaSet, StatefulSet or ReplicationController reduced to its selector.

    Services and ReplicationControllers select by a plain map, so a selector with
    expressions cannot be written as one of them.
    """
    name = f"{owner.kind} {owner.namespace}/{owner.name}"
    if owner.kind not in _API_VERSIONS:
        raise ManifestError("not a Service, ReplicaSet, StatefulSet or ReplicationController",
                            obj=name, field="kind", value=owner.kind)
    spec: JsonDict = {}
    selector = owner.selector
    if owner.kind in ("Service", "ReplicationController"):
        if selector is not None and selector.match_expressions:
            raise ManifestError("a plain-map selector cannot hold matchExpressions", obj=name,
                                field="spec.selector")
        _put(spec, "selector", dict(selector.match_labels) if selector is not None else None)
    elif selector is not None:
        spec["selector"] = label_selector_to_dict(selector)
    return {"apiVersion": _API_VERSIONS[owner.kind], "kind": owner.kind,
            "metadata": _metadata(owner.name, owner.namespace, {}), "spec": spec}


def object_to_dict(obj: Node | Pod | Namespace | PodDisruptionBudget | OwnerSelector) -> JsonDict:
    """Any model object as its v1 dict (the inverse of ``object_from_dict``)."""
    if isinstance(obj, Pod):
        return pod_to_dict(obj)
    if isinstance(obj, Node):
        return node_to_dict(obj)
    if isinstance(obj, Namespace):
        return namespace_to_dict(obj)
    if isinstance(obj, PodDisruptionBudget):
        return pdb_to_dict(obj)
    return owner_selector_to_dict(obj)
