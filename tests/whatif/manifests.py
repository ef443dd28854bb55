"""v1 manifests for the what-if tests: nodes, pods with owners, PodDisruptionBudgets, controllers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Json = dict[str, Any]


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", zone: str = "z1",
         **extra: str) -> Json:
    amounts = {"cpu": cpu, "memory": memory, "pods": pods, **extra}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": amounts, "capacity": amounts,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, cpu: str = "1", memory: str = "1Gi", *, node_name: str = "", owner: str | None = None,
        labels: dict[str, str] | None = None, namespace: str = "default", volumes: list[Json] | None = None,
        annotations: dict[str, str] | None = None, priority: int | None = None,
        extended: dict[str, str] | None = None) -> Json:
    """``extended`` adds requests beyond cpu and memory, e.g. ``{"nvidia.com/gpu": "1"}``."""
    metadata: Json = {"name": name, "namespace": namespace, "labels": labels or {}}
    if owner is not None:
        kind, _, owner_name = owner.partition("/")
        metadata["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": owner_name,
                                        "uid": f"uid-{owner_name}", "controller": True}]
    if annotations:
        metadata["annotations"] = annotations
    requests = {"cpu": cpu, "memory": memory, **(extended or {})}
    resources = {"requests": requests, **({"limits": dict(extended)} if extended else {})}  # required for them
    spec: Json = {"containers": [{"name": "c", "resources": resources}]}
    if node_name:
        spec["nodeName"] = node_name
    if volumes:
        spec["volumes"] = volumes
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec,
            "status": {"phase": "Running" if node_name else "Pending"}}


def pdb(name: str, app: str, allowed: int, namespace: str = "default") -> Json:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": allowed}}


def write_files(directory: Path, docs: dict[str, Any]) -> dict[str, str]:
    """Each document as ``<directory>/<name>.json``: name -> path."""
    out = {}
    for name, doc in docs.items():
        path = directory / f"{name}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        out[name] = str(path)
    return out
