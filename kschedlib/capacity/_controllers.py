"""Controllers expanded into the pods they would create, so a manifest repo can be planned without a cluster.

Deployment -> one ReplicaSet ``<name>-<template hash>`` -> ``replicas`` pods ``<rs>-<5 chars>``;
ReplicaSet -> ``replicas`` pods ``<name>-<5 chars>``; StatefulSet -> ``<name>-0`` ... ``<name>-<n-1>``;
Job -> ``parallelism`` pods ``<name>-<5 chars>`` (at most the completions left); DaemonSet -> one pod
``<name>-<5 chars>`` per node it may run on, pinned there by node affinity on ``metadata.name`` and
given the DaemonSet controller's default tolerations.  Every pod carries the controller's
``ownerReference`` (``controller: true``).  Suffixes are derived from the names, so the same input
gives the same pods.  A controller whose pods (or, for a Deployment, ReplicaSets) the input already
holds is not expanded again.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from os import PathLike
from typing import Any, Final

import attrs

from kschedlib._internal.documents import read_documents
from kschedlib.model.convert import node_from_dict, pod_from_dict, pod_to_dict
from kschedlib.model.objects import NO_EXECUTE, NO_SCHEDULE, Node, Pod, Toleration
from kschedlib.simulation.cluster import Cluster, load_cluster

__all__ = ["controller_pods", "daemon_pods_for", "expand_controllers", "pin_to_node"]

Json = dict[str, Any]
EXPANDED_KINDS: Final = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet"})
_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
"""The characters kube's name generator and template hashes use (no vowels, no look-alikes)."""
_DAEMON_TOLERATIONS: Final = (
    ("node.kubernetes.io/not-ready", NO_EXECUTE), ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE), ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE), ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
)


def _suffix(seed: str, length: int = 5) -> str:
    digest = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
    out = []
    for _ in range(length):
        digest, index = divmod(digest, len(_ALPHABET))
        out.append(_ALPHABET[index])
    return "".join(out)


def _uid(seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _flatten(source: object) -> Iterator[object]:
    if isinstance(source, str | PathLike):
        for doc in read_documents(source):
            yield from _flatten(doc)
    elif isinstance(source, Mapping):
        if isinstance(source.get("items"), list) and str(source.get("kind", "")).endswith("List"):
            for item in source["items"]:
                yield from _flatten(item)
        else:
            yield source
    elif isinstance(source, Cluster):
        yield source
    elif isinstance(source, Sequence):
        for item in source:
            yield from _flatten(item)
    else:
        yield source


def _meta(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = doc.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _owner_ref(doc: Mapping[str, Any], kind: str, uid: str) -> Json:
    return {"apiVersion": str(doc.get("apiVersion", "apps/v1")), "kind": kind, "name": _meta(doc).get("name", ""),
            "uid": uid, "controller": True, "blockOwnerDeletion": True}


def _controller_uid(doc: Mapping[str, Any], kind: str) -> str:
    meta = _meta(doc)
    return str(meta.get("uid") or _uid(f"{kind}/{meta.get('namespace', 'default')}/{meta.get('name', '')}"))


def _spec(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = doc.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _count(value: object, default: int = 1) -> int:
    return value if isinstance(value, int) and value >= 0 else default


def _pod(template: Mapping[str, Any], name: str, namespace: str, owner: Json, labels: Mapping[str, str]) -> Json:
    pod = copy.deepcopy(dict(template))
    metadata = dict(pod.get("metadata") or {})
    metadata.update(name=name, namespace=namespace, uid=_uid(f"Pod/{namespace}/{name}"), ownerReferences=[owner])
    metadata["labels"] = {**(metadata.get("labels") or {}), **labels}
    metadata.pop("generateName", None)
    pod.update(apiVersion="v1", kind="Pod", metadata=metadata)
    pod.setdefault("spec", {})
    pod.pop("status", None)
    return pod


def _template_hash(template: Mapping[str, Any]) -> str:
    return _suffix(json.dumps(template, sort_keys=True, default=str), 10)


def _replica_pods(doc: Mapping[str, Any], kind: str, name: str, namespace: str, count: int,
                  extra_labels: Mapping[str, str] | None = None) -> list[Json]:
    template = _spec(doc).get("template") or {}
    owner = _owner_ref(doc, kind, _controller_uid(doc, kind))
    labels = dict(extra_labels or {})
    return [_pod(template, f"{name}-{_suffix(f'{namespace}/{name}/{i}')}", namespace, owner, labels)
            for i in range(count)]


def _deployment(doc: Mapping[str, Any], namespace: str) -> list[Json]:
    name = str(_meta(doc).get("name", ""))
    spec = _spec(doc)
    template = spec.get("template") or {}
    pod_hash = _template_hash(template)
    rs_name = f"{name}-{pod_hash}"
    rs_template = copy.deepcopy(dict(template))
    rs_meta = dict(rs_template.get("metadata") or {})
    rs_meta["labels"] = {**(rs_meta.get("labels") or {}), "pod-template-hash": pod_hash}
    rs_template["metadata"] = rs_meta
    selector = copy.deepcopy(dict(spec.get("selector") or {}))
    selector.setdefault("matchLabels", {})["pod-template-hash"] = pod_hash
    replica_set: Json = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": rs_name, "namespace": namespace, "uid": _uid(f"ReplicaSet/{namespace}/{rs_name}"),
                     "labels": dict(rs_meta["labels"]),
                     "ownerReferences": [_owner_ref(doc, "Deployment", _controller_uid(doc, "Deployment"))]},
        "spec": {"replicas": _count(spec.get("replicas")), "selector": selector, "template": rs_template},
    }
    return [replica_set, *_replica_pods(replica_set, "ReplicaSet", rs_name, namespace,
                                        _count(spec.get("replicas")))]


def _stateful_set(doc: Mapping[str, Any], namespace: str) -> list[Json]:
    name = str(_meta(doc).get("name", ""))
    template = _spec(doc).get("template") or {}
    owner = _owner_ref(doc, "StatefulSet", _controller_uid(doc, "StatefulSet"))
    return [_pod(template, f"{name}-{i}", namespace, owner,
                 {"statefulset.kubernetes.io/pod-name": f"{name}-{i}", "apps.kubernetes.io/pod-index": str(i)})
            for i in range(_count(_spec(doc).get("replicas")))]


def _job(doc: Mapping[str, Any], namespace: str) -> list[Json]:
    name = str(_meta(doc).get("name", ""))
    spec = _spec(doc)
    parallelism = _count(spec.get("parallelism"))
    completions = spec.get("completions")
    count = min(parallelism, _count(completions)) if completions is not None else parallelism
    uid = _controller_uid(doc, "Job")
    labels = {"job-name": name, "batch.kubernetes.io/job-name": name, "controller-uid": uid,
              "batch.kubernetes.io/controller-uid": uid}
    return _replica_pods(doc, "Job", name, namespace, count, labels)


def _may_run_on(pod: Pod, node: Node) -> bool:
    """The DaemonSet controller's test: node selector, required node affinity and NoSchedule/NoExecute taints."""
    if pod.node_selector and any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    required = affinity.required if affinity is not None else None
    if required is not None and not required.matches(node.name, node.labels):
        return False
    tolerations = (*pod.tolerations, *(Toleration(key, "Exists", "", effect) for key, effect in _DAEMON_TOLERATIONS))
    return all(any(t.tolerates(taint) for t in tolerations)
               for taint in node.taints if taint.effect in (NO_SCHEDULE, NO_EXECUTE))


def _daemon_set(doc: Mapping[str, Any], namespace: str, nodes: Sequence[Node]) -> list[Json]:
    name = str(_meta(doc).get("name", ""))
    template = _spec(doc).get("template") or {}
    owner = _owner_ref(doc, "DaemonSet", _controller_uid(doc, "DaemonSet"))
    probe = pod_from_dict(_pod(template, name, namespace, owner, {}))
    pods = []
    for node in sorted(nodes, key=lambda n: n.name):
        if not _may_run_on(probe, node):
            continue
        pod = _pod(template, f"{name}-{_suffix(f'{namespace}/{name}/{node.name}')}", namespace, owner, {})
        pin_to_node(pod, node.name)
        spec = pod["spec"]
        spec["tolerations"] = [*(spec.get("tolerations") or []),
                               *({"key": key, "operator": "Exists", "effect": effect}
                                 for key, effect in _DAEMON_TOLERATIONS)]
        pods.append(pod)
    return pods


def pin_to_node(pod: Json, node_name: str) -> None:
    """Pin a v1 pod dict to one node as the DaemonSet controller does (required node affinity on
    ``metadata.name``, replacing the pod's own required terms)."""
    spec = pod.setdefault("spec", {})
    affinity = dict(spec.get("affinity") or {})
    pinned = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    affinity["nodeAffinity"] = {**(affinity.get("nodeAffinity") or {}),
                                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [pinned]}}
    spec["affinity"] = affinity


def daemon_pods_for(pods: Sequence[Pod], node: Node) -> list[Pod]:
    """The pods the DaemonSets behind ``pods`` would run on a new ``node`` (one per DaemonSet whose
    node selector and taint tolerations admit it), modelled on one existing pod of each and bound to
    the node already, as cluster-autoscaler's template node holds them."""
    samples: dict[tuple[str, str], Pod] = {}
    for pod in pods:
        owner = next((ref for ref in pod.owner_references if ref.controller and ref.kind == "DaemonSet"), None)
        if owner is not None:
            samples.setdefault((pod.namespace, owner.name), pod)
    out = []
    for (namespace, name), sample in sorted(samples.items()):
        unpinned = attrs.evolve(sample, affinity=None) if _pinned_only(sample) else sample
        if not _may_run_on(unpinned, node):
            continue
        doc = pod_to_dict(sample)
        doc["metadata"] = {**doc["metadata"], "name": f"{name}-{_suffix(f'{namespace}/{name}/{node.name}')}",
                           "uid": _uid(f"Pod/{namespace}/{name}/{node.name}")}
        doc["spec"]["nodeName"] = node.name
        doc.pop("status", None)
        pin_to_node(doc, node.name)
        out.append(pod_from_dict(doc))
    return out


def _pinned_only(pod: Pod) -> bool:
    """Whether the pod's required node affinity is only the DaemonSet controller's pin to one node."""
    affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    required = affinity.required if affinity is not None else None
    return required is not None and all(not term.match_expressions and term.match_fields for term in required.terms)


def _owned(items: Sequence[object]) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of every controller something in the input names as its controller."""
    owned = set()
    for item in items:
        if isinstance(item, Pod):
            refs: Sequence[Any] = [{"kind": r.kind, "name": r.name, "controller": r.controller}
                                   for r in item.owner_references]
            namespace = item.namespace
        elif isinstance(item, Mapping):
            refs = _meta(item).get("ownerReferences") or []
            namespace = str(_meta(item).get("namespace") or "default")
        else:
            continue
        for ref in refs:
            if isinstance(ref, Mapping) and ref.get("controller"):
                owned.add((str(ref.get("kind")), namespace, str(ref.get("name"))))
    return owned


def _created(items: Sequence[object], owned: set[tuple[str, str, str]], nodes: Sequence[Node]) -> list[Json]:
    """What the controllers among ``items`` (v1 dicts) would create, except those ``owned`` already did."""
    created: list[Json] = []
    for item in items:
        if not isinstance(item, Mapping) or item.get("kind") not in EXPANDED_KINDS:
            continue
        kind = str(item["kind"])
        namespace = str(_meta(item).get("namespace") or "default")
        if (kind, namespace, str(_meta(item).get("name", ""))) in owned:
            continue
        if kind == "Deployment":
            created.extend(_deployment(item, namespace))
        elif kind == "ReplicaSet":
            created.extend(_replica_pods(item, kind, str(_meta(item).get("name", "")), namespace,
                                         _count(_spec(item).get("replicas"))))
        elif kind == "StatefulSet":
            created.extend(_stateful_set(item, namespace))
        elif kind == "Job":
            created.extend(_job(item, namespace))
        else:
            created.extend(_daemon_set(item, namespace, nodes))
    return created


def controller_pods(source: str | PathLike[str] | Mapping[str, Any] | Sequence[Any]) -> list[Json]:
    """The pods (v1 dicts, not yet read) that the Deployments, ReplicaSets, StatefulSets and Jobs of
    ``source`` would create: a controller's pod template as a pod to plan with."""
    items = list(_flatten(source))
    return [item for item in _created(items, set(), ()) if item.get("kind") == "Pod"]


def expand_controllers(source: Cluster | str | PathLike[str] | Mapping[str, Any] | Sequence[Any]) -> Cluster:
    """Load ``source`` as :func:`kschedlib.load_cluster` does, with Deployments, ReplicaSets, StatefulSets,
    Jobs and DaemonSets expanded into the pods their controllers would create (see the module docstring)."""
    items = list(_flatten(source))
    owned = _owned(items)
    nodes = [item if isinstance(item, Node) else node_from_dict(item) for item in items
             if isinstance(item, Node) or (isinstance(item, Mapping) and item.get("kind") == "Node")]
    for item in items:
        if isinstance(item, Cluster):
            nodes.extend(item.nodes)
            owned |= _owned(item.objects)
    return load_cluster([*items, *_created(items, owned, nodes)])
