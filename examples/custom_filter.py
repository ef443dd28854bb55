"""A custom Filter plugin: keep pods off nodes labelled ``maintenance=true``.

Shows the whole life of a Filter plugin:

* the plugin class (a ``name`` and a ``filter`` method returning a ``Status``),
* the cluster events that can make a pod it rejected schedulable again,
* registering it next to the in-tree plugins and enabling it in a profile,
* its reason appearing in the "0/N nodes are available" message,
* a pod it held back being retried when the maintenance label goes away.

Run it with ``python examples/custom_filter.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final

import attrs

import kschedlib
from kschedlib.framework import CycleState, FilterPlugin, Handle, NodeInfo, Status
from kschedlib.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions
from kschedlib.model import Pod

MAINTENANCE_LABEL: Final = "maintenance"
ERR_REASON: Final = "node(s) were under maintenance"


def in_maintenance(node_info: NodeInfo) -> bool:
    """The pure predicate, kept apart from the plugin so it can be tested and reused."""
    node = node_info.node
    return node is not None and node.labels.get(MAINTENANCE_LABEL) == "true"


class NoMaintenance(FilterPlugin, EnqueueExtensions):
    """Rejects nodes under maintenance; evicting pods would not help, so the rejection is unresolvable."""

    name: ClassVar[str] = "NoMaintenance"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments: the factory signature is ``(args, handle)``."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if in_maintenance(node_info):
            return Status.unresolvable(ERR_REASON)
        return Status.success()

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A new node, or a node whose labels changed, may end the maintenance."""
        return (ClusterEventWithHint(ClusterEvent("Node", ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),)


def node(name: str, cpu: str, **labels: str) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {"kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": allocatable, "capacity": allocatable}}


def pod(name: str, cpu: str) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": "1Gi"}
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "main", "image": "app:1", "resources": {"requests": requests}}]}}


CLUSTER: Final = [
    node("node-1", "4", maintenance="true"),
    node("node-2", "4"),
    node("node-3", "8", maintenance="true"),
    pod("small", "1"),
    pod("large", "6"),
]

CONFIG: Final = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        # Added after the default Filter plugins; multiPoint would work as well.
        "plugins": {"filter": {"enabled": [{"name": "NoMaintenance"}]}},
    }],
}


def main() -> None:
    registry = kschedlib.in_tree_registry()
    registry.register(NoMaintenance.name, NoMaintenance)

    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(CONFIG, registry=registry, clock=clock, seed=0)
    scheduler.add_objects(kschedlib.load_cluster(CLUSTER).objects)

    print("-- first pass")
    for result in scheduler.run_until_idle():
        print(f"{result.pod.key}: {result.node_name or result.message}")
        outcome = result.outcome
        if outcome is not None and not result.scheduled:
            for name, status in sorted(kschedlib.Explanation(result.pod, outcome).to_dict()["filtered"].items()):
                print(f"  {name}: {status['plugin']} {status['code']}: {'; '.join(status['reasons'])}")

    print("-- node-3 leaves maintenance")
    node_3 = scheduler.snapshot().get("node-3").node
    assert node_3 is not None
    labels = {key: value for key, value in node_3.labels.items() if key != MAINTENANCE_LABEL}
    scheduler.update_node(attrs.evolve(node_3, labels=labels))
    for key, (queue, _info) in sorted(scheduler.pending().items()):
        print(f"{key} is in the {queue} queue")

    retried = scheduler.schedule_one()
    while retried is None and (wakeup := scheduler.next_wakeup()) is not None:
        clock.set(wakeup)  # the pod backs off for a second after its failed attempt
        retried = scheduler.schedule_one()
    assert retried is not None
    print(f"t={clock.now():.0f}s {retried.pod.key}: {retried.node_name or retried.message}")
    print("bound:", scheduler.bound_pods())


if __name__ == "__main__":
    main()
