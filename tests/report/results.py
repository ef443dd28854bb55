"""One result of each kind, from the tutorial's cluster (plus a gated pod), as the commands print them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import kschedlib
from kschedlib import capacity
from kschedlib.sweeps import Ask, Scenario

ROOT: Final = Path(__file__).resolve().parents[2]
TUTORIAL: Final = ROOT / "docs" / "tutorial" / "cluster.json"
TEMPLATE: Final = {"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": "pool", "labels": {"topology.kubernetes.io/zone": "zone-3"}},
                   "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
PACKING: Final = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                      {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}
GATED: Final = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "held", "namespace": "default"},
                "spec": {"schedulingGates": [{"name": "example.com/quota"}],
                         "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}


def cluster() -> list[Any]:
    """The tutorial's objects and one gated pod."""
    objects: list[Any] = json.loads(TUTORIAL.read_text(encoding="utf-8"))["items"]
    return [*objects, GATED]


def results() -> dict[str, Any]:
    """Kind -> its JSON data (a sweep: its rows, as ``kschedlib sweep --format json`` prints them)."""
    objects = cluster()
    scenarios = [Scenario(objects, params={"kube_version": v}, name=v) for v in ("1.30", "1.36")]
    rows = [{"index": r.index, "scenario": r.name, "kube_version": r.scenario.params["kube_version"], "ok": r.ok,
             "error": r.error, "seconds": r.seconds, "result": r.value}
            for r in kschedlib.sweep(scenarios, Ask("simulate"))]
    return {
        "simulate": kschedlib.simulate(objects).to_dict(),
        "explain": kschedlib.explain(objects, "default/big").to_dict(),
        "capacity": capacity.max_replicas(objects, "default/web-1").to_dict(),
        "drain": capacity.drain(objects, ["node-a"]).to_dict(),
        "nodes-needed": capacity.nodes_needed(objects, TEMPLATE, limit=20).to_dict(),
        "compare": capacity.compare(objects, [None, PACKING], labels=["default", "packing"]).to_dict(),
        "sweep": rows,
    }


def pending_pods(kind: str, data: Any) -> set[str]:
    """The pods a report of ``kind`` must name: those that found no place (and the gated ones)."""
    if kind == "simulate":
        return {*data["unschedulable"], *data["gated"], *data["placements"]}
    if kind == "explain":
        return {data["pod"]}
    if kind == "drain":
        return {*data["pods"], *data["unschedulable"]}
    if kind == "nodes-needed":
        return {*data["placements"], *data["not_helped"]}
    if kind == "compare":
        return {pod for run in data["runs"].values() for pod in (*run["placements"], *run["unschedulable"])}
    return set()


def node_names(kind: str, data: Any) -> set[str]:
    """The nodes a report of ``kind`` must name."""
    if kind == "explain":
        return {*data["feasible"], *data["filtered"]}
    if kind == "compare":
        return {n for run in data["runs"].values() for n in run["utilisation"]["after"]["nodes"]}
    if kind == "sweep":
        return {n for row in data for n in row["result"]["pods_per_node"]}
    return set(data["utilisation"]["before"]["nodes"]) | set(data["utilisation"]["after"]["nodes"])


URGENT: Final = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent", "namespace": "default"},
                 "spec": {"priority": 1000, "nodeSelector": {"disktype": "hdd"},
                          "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}]}}
"""Fits only on node-c by preempting db-0."""
LOG_BUDGET: Final = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                     "metadata": {"name": "log", "namespace": "default"},
                     "spec": {"selector": {"matchLabels": {"app": "log"}}}, "status": {"disruptionsAllowed": 0}}
DEPLOYMENT: Final = {"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": "dep", "namespace": "default"},
                     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                              "template": {"metadata": {"labels": {"app": "x"}},
                                           "spec": {"containers": [{"name": "c"}]}}}}


def edge_results() -> dict[str, Any]:
    """Results with the parts the plain ones lack: preemption, a budget violated, inputs not used, a gated
    pod explained, pods placed before the copies, a scenario that failed."""
    objects = [*cluster(), URGENT, LOG_BUDGET, DEPLOYMENT]
    scenarios = [Scenario(objects, params={"kube_version": "1.36"}, name="fine"),
                 Scenario(objects, params={"kube_version": "0.1"}, name="broken")]
    rows = [{"index": r.index, "scenario": r.name, "kube_version": r.scenario.params["kube_version"], "ok": r.ok,
             "error": r.error, "seconds": r.seconds, "result": r.value}
            for r in kschedlib.sweep(scenarios, Ask("simulate"))]
    return {
        "simulate": kschedlib.simulate(objects, once=True).to_dict(),
        "explain": kschedlib.explain(objects, "default/held").to_dict(),
        "explain-fits": kschedlib.explain(objects, "default/web-1").to_dict(),
        "explain-preempts": kschedlib.explain(objects, "default/urgent").to_dict(),
        "capacity": capacity.max_replicas(objects, "default/web-1", include_pending=True, limit=2).to_dict(),
        "drain": capacity.drain(objects, ["node-a"], respect_pdbs=False).to_dict(),
        "sweep": rows,
    }
