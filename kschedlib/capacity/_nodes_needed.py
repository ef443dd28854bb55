"""nodes_needed: the fewest nodes of one template that let every pending pod that can fit on it be scheduled."""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from typing import Any, final

import attrs

from kschedlib.capacity._common import ClusterSource, ProgressCallback, before_after, load, new_scheduler, shapes_of
from kschedlib.capacity._controllers import daemon_pods_for
from kschedlib.errors import ManifestError
from kschedlib.framework.registry import Registry
from kschedlib.model.convert import node_from_dict
from kschedlib.model.objects import Node
from kschedlib.scheduler import ConfigSource, Scheduler
from kschedlib.simulation._settings import config_section
from kschedlib.simulation.cluster import load_cluster
from kschedlib.versions import KubeSettings

__all__ = ["NodesNeededReport", "nodes_needed"]

HOSTNAME = "kubernetes.io/hostname"


@final
@attrs.frozen(slots=True)
class NodesNeededReport:
    """How many template nodes to add, where the pending pods then go, and which pods no count helps."""

    nodes_needed: int
    template: str
    limit: int
    placements: Mapping[str, str]
    """Pending pod -> node, with ``nodes_needed`` template nodes added."""
    not_helped: Mapping[str, str]
    """Pending pods that stay unschedulable even with ``limit`` template nodes -> the FitError then."""
    new_nodes: tuple[str, ...]
    extra: Mapping[str, Any]
    kube: KubeSettings

    def to_dict(self) -> dict[str, Any]:
        """The ``nodes-needed`` JSON."""
        return {"nodes_needed": self.nodes_needed, "template": self.template, "max": self.limit,
                "new_nodes": list(self.new_nodes), "placements": dict(self.placements),
                "not_helped": dict(self.not_helped), **self.extra, **self.kube.to_dict()}

    def rows(self) -> list[dict[str, Any]]:
        """One CSV row per pending pod."""
        rows = [{"pod": pod, "node": node, "reason": ""} for pod, node in self.placements.items()]
        return rows + [{"pod": pod, "node": "", "reason": reason} for pod, reason in self.not_helped.items()]

    def text(self) -> str:
        lines = [f"{self.nodes_needed} node(s) of template {self.template} needed (searched up to {self.limit})"]
        lines.extend(f"  {pod} -> {node}" for pod, node in self.placements.items())
        if self.not_helped:
            lines.append("no number of such nodes helps:")
            lines.extend(f"  {pod}: {reason}" for pod, reason in self.not_helped.items())
        return "\n".join(lines)


def _template(node: Node | Mapping[str, Any] | str | PathLike[str]) -> Node:
    if isinstance(node, Node):
        return node
    if isinstance(node, Mapping):
        return node_from_dict(node)
    found = load_cluster(node).nodes
    if len(found) != 1:
        raise ManifestError(f"expected exactly one Node, found {len(found)}", obj=str(node))
    return found[0]


def _copies(template: Node, count: int) -> list[Node]:
    out = []
    for index in range(1, count + 1):
        name = f"{template.name}-{index}"
        labels = {**template.labels, HOSTNAME: name} if HOSTNAME in template.labels else dict(template.labels)
        out.append(attrs.evolve(template, name=name, labels=labels))
    return out


def _try(base: Scheduler, template: Node, count: int) -> tuple[Scheduler, dict[str, str | None], dict[str, str]]:
    """A fork of ``base`` with ``count`` template nodes, its pending pods scheduled: (fork, placements, failures)."""
    trial = base.fork()
    bound = [pod for pod in base.pods().values() if pod.node_name]
    for node in _copies(template, count):
        trial.add_node(node)
        for daemon in daemon_pods_for(bound, node):  # the DaemonSets come to a new node too
            trial.add_pod(daemon)
    placements: dict[str, str | None] = {}
    failures: dict[str, str] = {}
    for result in trial.run_until_idle():
        placements[result.pod.key] = result.node_name if result.scheduled else None
        if not result.scheduled:
            failures[result.pod.key] = result.message or ""
    return trial, placements, failures


def nodes_needed(
    cluster: ClusterSource,
    node_template: Node | Mapping[str, Any] | str | PathLike[str],
    config: ConfigSource = None,
    *,
    limit: int = 100,
    expand_controllers: bool = False,
    seed: int = 0,
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    progress: ProgressCallback | None = None,
) -> NodesNeededReport:
    """The smallest number of nodes like ``node_template`` (named ``<template>-1``, ``-2``...) to add so
    that every pending pod that fits with ``limit`` of them is scheduled, and the pods that do not
    (with their FitError message then).

    As in cluster-autoscaler, every new node also gets a pod of each DaemonSet whose pods the cluster
    holds and whose node selector and tolerations admit the node.  Every try schedules the pending
    pods once each, in queue order, on a fork of the loaded cluster;
    the count is found by bisection (more nodes of one kind never make a pod fit less), then
    confirmed.  ``node_template`` is a Node, a v1 Node dict or a file holding one node.
    ``progress(tries_done, tries_total)`` is called after each try (a total that bisection can
    only bound is made exact once the bisection ends).
    """
    if not isinstance(limit, int) or limit < 0:
        raise ManifestError("must be a whole number of at least 0", obj="nodes_needed", field="limit", value=limit)
    template = _template(node_template)
    loaded = load(cluster, expand=expand_controllers)
    if any(node.name.startswith(f"{template.name}-") for node in loaded.nodes):
        raise ManifestError("the cluster already has nodes named like the template's copies",
                            obj=f"Node {template.name}", field="metadata.name", value=template.name)
    base = new_scheduler(config, seed=seed, registry=registry, kube_version=kube_version, feature_gates=feature_gates)
    base.add_objects(loaded.objects)
    waiting = set(base.pending())
    tries = 0
    total = 2 + limit.bit_length()  # the try at the limit, the bisection's most steps, the confirmation

    def tried() -> None:
        nonlocal tries
        tries += 1
        if progress is not None:
            progress(tries, max(total, tries))

    _, _, failing = _try(base, template, limit)
    tried()
    at_most = {key: reason for key, reason in failing.items() if key in waiting}
    helped_goal = waiting - set(at_most)
    low, high = 0, limit
    while low < high:
        middle = (low + high) // 2
        _, placed, _ = _try(base, template, middle)
        tried()
        if all(placed.get(key) is not None for key in helped_goal):
            high = middle
        else:
            low = middle + 1
    count = low
    total = tries + 1
    while True:  # confirm (a try is deterministic; bisection assumed monotony)
        trial, placed, _ = _try(base, template, count)
        tried()
        if all(placed.get(key) is not None for key in helped_goal) or count >= limit:
            break
        count += 1
    placements = {key: node for key, node in placed.items() if node is not None}
    pending_pods = [pod for key in base.pending() if (pod := base.get_pod(key)) is not None]
    extra = {**before_after(base, trial, shapes_of(base, pending_pods)), "config": config_section(config)}
    return NodesNeededReport(count, template.name, limit, dict(sorted(placements.items())),
                             dict(sorted(at_most.items())), tuple(n.name for n in _copies(template, count)),
                             extra, base.kube)


