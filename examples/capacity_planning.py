"""Capacity planning on a small cluster: the four questions, and what-if on a live Scheduler.

A cluster of three 8-CPU nodes in two zones, a web Deployment (three replicas, a budget allowing
one disruption), a log DaemonSet and two pending batch pods.  The controllers are expanded into
the pods they would create, then kschedlib answers: how many more web replicas fit, what a drain
of node-1 does, how many 16-CPU nodes the pending pods need, and what bin-packing changes.
"""

from __future__ import annotations

from typing import Any

import kschedlib
from kschedlib import capacity


def node(name: str, zone: str, cpu: str = "8") -> dict[str, Any]:
    amounts = {"cpu": cpu, "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": amounts, "capacity": amounts}}


def controller(kind: str, name: str, cpu: str, replicas: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": name}},
                            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                                {"name": name, "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def batch(name: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "job", "resources": {"requests": {"cpu": cpu, "memory": "4Gi"}}}]}}


BUDGET = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "web"}}}, "status": {"disruptionsAllowed": 1}}
MANIFESTS = [node("node-1", "zone-a"), node("node-2", "zone-a"), node("node-3", "zone-b"),
             controller("Deployment", "web", "2", replicas=3), controller("DaemonSet", "logs", "250m"),
             batch("train-1", "6"), batch("train-2", "12"), BUDGET]


def main() -> None:
    cluster = capacity.expand_controllers(MANIFESTS)
    sched = kschedlib.Scheduler(seed=0, clock=kschedlib.FakeClock())
    sched.add_objects(cluster)
    bound = {r.pod.key: r.node_name for r in sched.run_until_idle() if r.scheduled}
    print("placed:", dict(sorted(bound.items())))
    train = sched.get_pod("default/train-2")
    assert train is not None
    print("train-2 now:", sched.explain(train).to_dict()["message"])

    snapshot = [*(info.node for info in sched.snapshot().node_infos),
                *(pod for pod in sched.pods().values() if pod.node_name), BUDGET]
    web = next(pod for pod in sched.pods().values() if pod.labels.get("app") == "web")
    more = capacity.max_replicas(snapshot, web)
    print(f"\nmore web replicas: {more.replicas} {dict(more.placements)}")
    print("  stopped by:", more.stopped_by)
    cpu = more.to_dict()["fragmentation"]["after"]["resources"]["cpu"]
    print(f"  free cpu after: {cpu['free']}m, stranded: {cpu['stranded']}m")

    drained = capacity.drain(snapshot, ["node-1"])
    print("\ndrain node-1:")
    print("  " + drained.text().replace("\n", "\n  "))

    trial = sched.fork()  # what if a 16-CPU node joined? (the original stays as it is)
    trial.add_node(kschedlib.load_cluster([node("node-4", "zone-b", cpu="16")]).nodes[0])
    tried = {r.pod.key: r.node_name for r in trial.run_until_idle()}
    print("\nfork with node-4:", dict(sorted(tried.items())))
    print("original still pending:", sorted(sched.pending()))

    pool = node("big", "zone-c", cpu="16")
    needed = capacity.nodes_needed(MANIFESTS, pool, expand_controllers=True)
    print(f"\n16-CPU nodes needed: {needed.nodes_needed} {dict(needed.placements)}")

    packing = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}
    print("\n" + capacity.compare(MANIFESTS, [None, packing], labels=["spread", "packing"],
                                  expand_controllers=True).text())


if __name__ == "__main__":
    main()
