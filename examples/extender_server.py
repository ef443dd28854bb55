"""One placement rule three ways: a plugin, an in-process extender, and a plugin served as an HTTP extender.

The rule: a pod labelled ``team=X`` may only run on nodes labelled ``team=X``
(other pods anywhere), and nodes with more free CPU are preferred.

1. As a Filter + Score plugin, enabled in a profile (the usual way in kschedlib).
2. As a :class:`~kschedlib.extender.CallableExtender`: two plain functions, run
   where kube-scheduler runs extenders (after the Filter plugins, scores x weight x 10).
3. As an HTTP extender: :class:`~kschedlib.extender.ExtenderServer` serves the
   plugin's profile on 127.0.0.1 (what ``python -m kschedlib serve-extender`` does),
   and a scheduler whose ``extenders`` config points at it asks it over HTTP,
   exactly as a real kube-scheduler would.

All three place the pods on the same nodes.  Run it with ``python examples/extender_server.py``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import kschedlib
from kschedlib.extender import CallableExtender, ExtenderServer
from kschedlib.framework import CycleState, FilterPlugin, Handle, NodeInfo, ScorePlugin, Status
from kschedlib.model import Pod

TEAM: Final = "team"
REASON: Final = "node(s) belong to another team"


def team_fits(pod: Pod, node_info: NodeInfo) -> bool:
    """The rule itself, shared by the plugin and the extender."""
    wanted = pod.labels.get(TEAM)
    return wanted is None or (node_info.node is not None and node_info.node.labels.get(TEAM) == wanted)


def free_cpu_cores(node_info: NodeInfo) -> int:
    return (node_info.allocatable.milli_cpu - node_info.requested.milli_cpu) // 1000


class TeamNodes(FilterPlugin, ScorePlugin):
    """Team pods only on their team's nodes; more free CPU scores higher (0..100)."""

    name: ClassVar[str] = "TeamNodes"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.success() if team_fits(pod, node_info) else Status.unresolvable(REASON)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return min(free_cpu_cores(node_info) * 10, 100)


def node(name: str, cpu: str, **labels: str) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": "16Gi", "pods": "110"}
    return {"kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": allocatable, "capacity": allocatable}}


def pod(name: str, cpu: str, **labels: str) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": "1Gi"}
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "main", "image": "app:1", "resources": {"requests": requests}}]}}


CLUSTER: Final = [
    node("node-a", "4", team="red"),
    node("node-b", "6", team="red"),
    node("node-c", "16", team="blue"),
    pod("red-1", "3", team="red"),
    pod("red-2", "1", team="red"),
    pod("any-1", "1"),
    pod("blue-1", "20", team="blue"),
]
HEADER: Final = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
# Only the rule decides here (no other scoring), so the three ways are comparable node for node.
RULE_ONLY: Final = {"multiPoint": {"disabled": [{"name": "*"}]},
                    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                    "preFilter": {"enabled": [{"name": "NodeResourcesFit"}]},
                    "filter": {"enabled": [{"name": "NodeResourcesFit"}]},
                    "bind": {"enabled": [{"name": "DefaultBinder"}]}}
PLUGIN_CONFIG: Final = {**HEADER, "profiles": [{"plugins": {
    **RULE_ONLY, "filter": {"enabled": [{"name": "NodeResourcesFit"}, {"name": "TeamNodes"}]},
    "score": {"enabled": [{"name": "TeamNodes"}]}}}]}


def registry() -> kschedlib.Registry:
    plugins = kschedlib.in_tree_registry()
    plugins.register(TeamNodes.name, TeamNodes)
    return plugins


def schedule(title: str, scheduler: kschedlib.Scheduler) -> dict[str, str | None]:
    scheduler.add_objects(kschedlib.load_cluster(CLUSTER).objects)
    placements: dict[str, str | None] = {}
    print(f"-- {title}")
    for result in scheduler.run_until_idle():
        placements[result.pod.key] = result.node_name
        print(f"{result.pod.key}: {result.node_name or result.message}")
    return placements


def main() -> None:
    as_plugin = schedule("plugin", kschedlib.Scheduler(PLUGIN_CONFIG, registry=registry(), seed=0,
                                                        retry_unschedulable=False))

    in_process = CallableExtender(
        "team-nodes",
        filter=lambda pod, node_info: None if team_fits(pod, node_info) else Status.unresolvable(REASON),
        prioritize=lambda pod, node_info: min(free_cpu_cores(node_info), 10),
    )
    as_extender = schedule("in-process extender", kschedlib.Scheduler(
        {**HEADER, "profiles": [{"plugins": RULE_ONLY}]}, extenders=[in_process], seed=0,
        retry_unschedulable=False))

    # The plugin's profile behind HTTP; the client profile runs only NodeResourcesFit itself.  The
    # extender also binds, so it learns where each pod went (a real extender would watch the cluster).
    bindings: list[str] = []
    with ExtenderServer(PLUGIN_CONFIG, registry=registry(),
                        binder=lambda pod, node: bindings.append(f"{pod.key}->{node}")) as server:
        client_config = {**HEADER, "profiles": [{"plugins": RULE_ONLY}], "extenders": [{
            "urlPrefix": server.url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 1,
            "bindVerb": "bind", "httpTimeout": "2s"}]}
        over_http = schedule("HTTP extender", kschedlib.Scheduler(client_config, seed=0,
                                                                  retry_unschedulable=False))
    print("bound by the HTTP extender:", ", ".join(bindings))
    print("same placements:", as_plugin == as_extender == over_http)


if __name__ == "__main__":
    main()
