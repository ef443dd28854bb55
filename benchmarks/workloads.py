"""Deterministic benchmark workloads as Kubernetes v1 dicts.

Every workload is built from a seeded :class:`random.Random`, so the same name
and scale always give the same objects, in the same order.  Nodes come first,
then bound pods, then pending pods (file order is queue order).

* ``small`` / ``basic`` / ``large`` — the shape of kube-scheduler's SchedulingBasic benchmark:
  uniform nodes, pods with plain cpu/memory requests from five deployment-like
  templates, no ownerReferences and no Services (so PodTopologySpread's system
  default constraints do not apply), images on containers but none on nodes.
* ``affinity`` — every pod spreads over zones (maxSkew 1, DoNotSchedule) and
  prefers not to share a host with its own app (weight 100).
* ``preemption`` — nodes full of low-priority bound pods; high-priority pods
  that fit only by evicting some of them; ``preemption-pdb`` the same with
  PodDisruptionBudgets guarding some of the low-priority pods.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["WORKLOADS", "Workload", "as_list", "build"]

Json = dict[str, Any]

SEED: Final = 20240601
ZONE_KEY: Final = "topology.kubernetes.io/zone"
HOST_KEY: Final = "kubernetes.io/hostname"
REGION_KEY: Final = "topology.kubernetes.io/region"

TEMPLATES: Final = (
    # (app, cpu, memory): deployment-like templates with plain requests
    ("web", "100m", "128Mi"),
    ("api", "250m", "256Mi"),
    ("cache", "200m", "1Gi"),
    ("worker", "500m", "512Mi"),
    ("batch", "1", "2Gi"),
)


@dataclass(frozen=True, slots=True)
class Workload:
    """A named workload shape; ``objects(scale)`` builds its v1 dicts, ``stream(scale)`` yields them one by one."""

    name: str
    description: str
    nodes: int
    pending_pods: int
    build: Callable[[Workload, float], Iterator[Json]]
    evicts: bool = False

    def scaled(self, count: int, scale: float, minimum: int = 1) -> int:
        return max(minimum, round(count * scale))

    def objects(self, scale: float = 1.0) -> list[Json]:
        return list(self.build(self, scale))

    def stream(self, scale: float = 1.0) -> Iterator[Json]:
        """The same dicts in the same order, each made when it is asked for (as a watch delivers them)."""
        return self.build(self, scale)


def node(index: int, zones: int, cpu: str, memory: str, pods: str = "110") -> Json:
    """A Ready node ``node-NNNNN`` in zone ``zone-<index % zones>``."""
    name = f"node-{index:05d}"
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {HOST_KEY: name, ZONE_KEY: f"zone-{index % zones}", REGION_KEY: "region-1"},
        },
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod(name: str, app: str, cpu: str, memory: str, **spec: Any) -> Json:
    """A pod of ``app`` in ``default`` with one container requesting ``cpu``/``memory``."""
    container = {
        "name": app,
        "image": f"registry.example.com/{app}:1.0",
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "spec": {"containers": [container], **spec},
    }


def _uniform(workload: Workload, scale: float, zones: int) -> Iterator[Json]:
    rng = random.Random(f"{SEED}-{workload.name}")
    nodes = workload.scaled(workload.nodes, scale, minimum=zones)
    pods = workload.scaled(workload.pending_pods, scale)
    for i in range(nodes):
        yield node(i, zones, "32", "128Gi")
    for i in range(pods):
        app, cpu, memory = rng.choice(TEMPLATES)
        yield pod(f"{app}-{i:06d}", app, cpu, memory)


def _small(workload: Workload, scale: float) -> Iterator[Json]:
    return _uniform(workload, scale, zones=5)


def _basic(workload: Workload, scale: float) -> Iterator[Json]:
    return _uniform(workload, scale, zones=10)


def _large(workload: Workload, scale: float) -> Iterator[Json]:
    return _uniform(workload, scale, zones=10)


def _spread_and_anti_affinity(app: str) -> Json:
    selector = {"matchLabels": {"app": app}}
    return {
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE_KEY, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector},
        ],
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 100, "podAffinityTerm": {"labelSelector": selector, "topologyKey": HOST_KEY}},
                ],
            },
        },
    }


AFFINITY_APPS: Final = 10


def _affinity(workload: Workload, scale: float) -> Iterator[Json]:
    rng = random.Random(f"{SEED}-{workload.name}")
    zones = 10
    nodes = workload.scaled(workload.nodes, scale, minimum=zones)
    pods = workload.scaled(workload.pending_pods, scale)
    templates = [TEMPLATES[k % len(TEMPLATES)] for k in range(AFFINITY_APPS)]
    apps = [(f"{app}-{k}", cpu, memory) for k, (app, cpu, memory) in enumerate(templates)]
    for i in range(nodes):
        yield node(i, zones, "32", "128Gi")
    for i in range(pods):
        app, cpu, memory = rng.choice(apps)
        yield pod(f"{app}-{i:06d}", app, cpu, memory, **_spread_and_anti_affinity(app))


LOW_PODS_PER_NODE: Final = 4


def _preemption(
    workload: Workload, scale: float, low_app: Callable[[int, int], str] = lambda n, k: "low",
) -> Iterator[Json]:
    """kube-scheduler's PreemptionBasic shape: 4-CPU nodes, each full with four 900m pods at priority 0.

    A 3-CPU pod at priority 1000 finds 400m free anywhere, so it fits only after three victims go.
    ``low_app(node, k)`` names the app of node ``node``'s ``k``-th low-priority pod.
    """
    zones = 5
    nodes = workload.scaled(workload.nodes, scale, minimum=zones)
    pending = workload.scaled(workload.pending_pods, scale)
    for i in range(nodes):
        yield node(i, zones, "4", "32Gi")
    for i in range(nodes * LOW_PODS_PER_NODE):
        n, k = divmod(i, LOW_PODS_PER_NODE)
        low = pod(f"low-{i:06d}", low_app(n, k), "900m", "500Mi", priority=0, nodeName=f"node-{n:05d}")
        low["status"] = {"phase": "Running"}
        yield low
    for i in range(pending):
        yield pod(f"high-{i:06d}", "high", "3", "500Mi", priority=1000)


def _pdb(name: str, app: str, allowed: int) -> Json:
    """A PodDisruptionBudget over ``app`` whose status allows ``allowed`` more disruptions."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 0, "desiredHealthy": 0,
                       "expectedPods": 0}}  # fmt: skip


def _guarded_app(n: int, k: int) -> str:
    """Node ``n``'s first ``n % 3`` pods are guarded; the others alternate between a lax budget and none."""
    if k < n % 3:
        return "low-guarded"
    return "low-budget" if k % 2 else "low"


def _preemption_pdb(workload: Workload, scale: float) -> Iterator[Json]:
    """``preemption`` with budgets: on node ``n``, ``n % 3`` of its four low-priority pods are guarded.

    Guarded pods (app ``low-guarded``) belong to a PodDisruptionBudget that allows no disruption, the
    ``low-budget`` pods to one that allows plenty.  A node with two guarded pods makes room only by
    violating a budget, so preemption takes the other nodes first and then has to pick among
    violating candidates.
    """
    yield from _preemption(workload, scale, _guarded_app)
    yield _pdb("guarded", "low-guarded", 0)
    yield _pdb("budget", "low-budget", 100_000)


GPU_DRIVER: Final = "gpu.example.com"
GPUS_PER_NODE: Final = 8


def _gpu_requests(workload: Workload, scale: float) -> tuple[int, list[tuple[int, bool]]]:
    """Nodes, and per pod (GPUs wanted, whether only A100s will do), the same for both GPU workloads."""
    rng = random.Random(f"{SEED}-gpu")
    nodes = workload.scaled(workload.nodes, scale)
    pods = workload.scaled(workload.pending_pods, scale)
    wants = [(rng.choice([1, 1, 2, 4]), rng.random() < 0.3) for _ in range(pods)]
    return nodes, wants


def _gpu_extended(workload: Workload, scale: float) -> Iterator[Json]:
    """GPUs as the extended resource ``nvidia.com/gpu`` (the model preference cannot be said)."""
    nodes, wants = _gpu_requests(workload, scale)
    for i in range(nodes):
        n = node(i, 10, "64", "512Gi")
        n["status"]["allocatable"]["nvidia.com/gpu"] = str(GPUS_PER_NODE)
        yield n
    for i, (count, _) in enumerate(wants):
        p = pod(f"train-{i:06d}", "train", "1", "1Gi")
        resources = p["spec"]["containers"][0]["resources"]
        resources["requests"]["nvidia.com/gpu"] = str(count)
        resources["limits"] = {"nvidia.com/gpu": str(count)}  # as the API server insists for extended resources
        yield p


def _gpu_dra(workload: Workload, scale: float) -> Iterator[Json]:
    """The same GPUs as DRA devices in ResourceSlices; each pod has a ResourceClaim (30% want A100s)."""
    nodes, wants = _gpu_requests(workload, scale)
    for i in range(nodes):
        yield node(i, 10, "64", "512Gi")
    for i in range(nodes):
        name = f"node-{i:05d}"
        model = "a100" if i % 2 else "h100"
        yield {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
               "spec": {"driver": GPU_DRIVER, "nodeName": name,
                        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": f"gpu-{j}", "attributes": {"model": {"string": model}}}
                                    for j in range(GPUS_PER_NODE)]}}
    yield {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
           "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]}}
    for i, (count, a100) in enumerate(wants):
        exactly: Json = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
        if a100:
            exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{GPU_DRIVER}"].model == "a100"'}}]
        name = f"train-{i:06d}"
        yield {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": name, "namespace": "default", "uid": f"uid-claim-{name}"},
               "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}
        yield pod(name, "train", "1", "1Gi", resourceClaims=[{"name": "gpu", "resourceClaimName": name}])


WORKLOADS: Final[dict[str, Workload]] = {
    w.name: w
    for w in (
        Workload("small", "500 nodes / 5 zones, 2,000 pods from 5 templates", 500, 2_000, _small),
        Workload("basic", "5,000 nodes / 10 zones, 10,000 pods from 5 templates", 5_000, 10_000, _basic),
        Workload("large", "15,000 nodes / 10 zones, 30,000 pods from 5 templates", 15_000, 30_000, _large),
        Workload("affinity", "1,000 nodes / 10 zones, 5,000 pods: zone spread + host anti-affinity",
                 1_000, 5_000, _affinity),
        Workload("preemption", "500 full nodes (2,000 low-priority pods), 500 high-priority pods",
                 500, 500, _preemption, evicts=True),
        Workload("preemption-pdb", "preemption with PodDisruptionBudgets guarding 1 in 4 low-priority pods",
                 500, 500, _preemption_pdb, evicts=True),
        Workload("gpu-extended", "1,000 nodes of 8 GPUs (nvidia.com/gpu), 2,000 pods wanting 1-4",
                 1_000, 2_000, _gpu_extended),
        Workload("gpu-dra", "the same as DRA devices: ResourceSlices, one ResourceClaim per pod, 30% with a selector",
                 1_000, 2_000, _gpu_dra),
    )
}


def build(name: str, scale: float = 1.0) -> list[Json]:
    """The v1 dicts of workload ``name`` at ``scale``."""
    return WORKLOADS[name].objects(scale)


def as_list(objects: list[Json]) -> Json:
    """A v1 ``List`` holding ``objects``."""
    return {"apiVersion": "v1", "kind": "List", "items": objects}
