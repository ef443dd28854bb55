"""nodes_needed: the fewest nodes of one template that let every pending pod that can fit on it be scheduled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any, ClassVar, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.capacity._common import (
    ClusterSource,
    ProgressCallback,
    before_after,
    held_reason,
    load,
    new_scheduler,
    schedule_once,
    shapes_of,
)
from kschedlib.capacity._controllers import daemon_pods_for
from kschedlib.errors import ManifestError
from kschedlib.framework.registry import Registry
from kschedlib.model.convert import node_from_dict
from kschedlib.model.objects import Node, Pod
from kschedlib.scheduler import ConfigSource, Scheduler
from kschedlib.simulation._settings import config_section
from kschedlib.simulation.cluster import load_cluster
from kschedlib.versions import KubeSettings

__all__ = ["NodesNeededReport", "nodes_needed"]

HOSTNAME = "kubernetes.io/hostname"


@final
@attrs.frozen(slots=True, repr=False)
class NodesNeededReport(FieldsRepr):
    """How many template nodes to add, which pods each new node is for, and which pods no count helps."""

    nodes_needed: int
    template: str
    limit: int
    placements: Mapping[str, str]
    """Pending pod -> node, with ``nodes_needed`` template nodes added (existing nodes first: see
    :func:`nodes_needed`)."""
    not_helped: Mapping[str, str]
    """Pending pods that stay unschedulable even with ``limit`` template nodes -> why: the FitError then, or
    what holds them before scheduling (``SchedulingGates: waiting for scheduling gates: [...]``, a deletion,
    a ResourceClaim not created yet), since a pod never tried is helped by no node."""
    new_nodes: tuple[str, ...]
    extra: Mapping[str, Any]
    kube: KubeSettings
    new_node_pods: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    """Each new node -> the pending pods placed on it: the pods that needed it."""
    only_unschedulable: bool = False
    """Whether only the pods that fit nowhere in the cluster as it is were planned for."""
    fit_today: tuple[str, ...] = ()
    """With ``only_unschedulable``: the pending pods left out, because they fit on an existing node now."""
    csv_columns: ClassVar[tuple[str, ...]] = ("pod", "node", "new_node", "reason")
    evicted: tuple[str, ...] = ()
    """Running pods the preemptions of pending pods evicted, on the cluster as it is (before any new node)."""

    def to_dict(self) -> dict[str, Any]:
        """The ``nodes-needed`` JSON."""
        return {"nodes_needed": self.nodes_needed, "template": self.template, "max": self.limit,
                "new_nodes": list(self.new_nodes),
                "new_node_pods": {node: list(pods) for node, pods in self.new_node_pods.items()},
                "placements": dict(self.placements), "not_helped": dict(self.not_helped),
                "only_unschedulable": self.only_unschedulable, "fit_today": list(self.fit_today),
                "evicted": list(self.evicted),
                **self.extra, **self.kube.to_dict()}

    def rows(self) -> list[dict[str, Any]]:
        """One CSV row per pending pod: its node (and whether that node is new), or why none helps."""
        new = set(self.new_nodes)
        rows = [{"pod": pod, "node": node, "new_node": node in new, "reason": ""}
                for pod, node in self.placements.items()]
        rows += [{"pod": pod, "node": "", "new_node": False, "reason": "fits on an existing node today (left out)"}
                 for pod in self.fit_today]
        return rows + [{"pod": pod, "node": "", "new_node": False, "reason": reason}
                       for pod, reason in self.not_helped.items()]

    def text(self) -> str:
        lines = [f"{self.nodes_needed} node(s) of template {self.template} needed (searched up to {self.limit})"]
        lines.extend(f"  {node}: {', '.join(pods) or '-'}" for node, pods in self.new_node_pods.items())
        new = set(self.new_nodes)
        existing = {pod: node for pod, node in self.placements.items() if node not in new}
        if existing:
            lines.append(f"{len(existing)} pending pod(s) fit on the existing nodes:")
            lines.extend(f"  {pod} -> {node}" for pod, node in existing.items())
        if self.evicted:
            lines.append(f"evicted by their preemptions: {', '.join(self.evicted)}")
        if self.fit_today:
            lines.append(f"left out, as they fit on an existing node today: {', '.join(self.fit_today)}")
        if self.not_helped:
            lines.append(f"no number of such nodes helps (scheduling messages from the try with {self.limit} added):")
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


def _as_pending(pod: Pod) -> Pod:
    return attrs.evolve(pod, node_name="", nominated_node_name="", phase="Pending", conditions=(), start_time=None)


@final
class _Search:
    """The tries of one search: ``start`` (the pods already placed), plus ``count`` template nodes, then
    the pods of ``retry`` scheduled again, once each in queue order."""

    def __init__(self, start: Scheduler, template: Node, retry: Sequence[str]) -> None:
        self.start = start
        self.template = template
        self.retry = list(retry)
        self.bound = [pod for pod in start.pods().values() if pod.node_name]

    def trial(self, count: int) -> tuple[Scheduler, dict[str, str | None], dict[str, str]]:
        """A fork with ``count`` template nodes and the retried pods scheduled: (fork, placements, failures)."""
        trial = self.start.fork()
        for node in _copies(self.template, count):
            trial.add_node(node)
            for daemon in daemon_pods_for(self.bound, node):  # the DaemonSets come to a new node too
                trial.add_pod(daemon)
        for key in self.retry:  # tried once on the cluster as it is: queued again, to meet the new nodes
            pod = trial.get_pod(key)
            assert pod is not None
            trial.remove_pod(key)
            trial.add_pod(_as_pending(pod))
        placements: dict[str, str | None] = {}
        failures: dict[str, str] = {}
        for result in trial.run_until_idle():
            placements[result.pod.key] = result.node_name if result.scheduled else None
            if not result.scheduled:
                failures[result.pod.key] = result.message or ""
        return trial, placements, failures


def _preempts(scheduler: Scheduler, pod: Pod) -> bool:
    """Whether ``pod`` would get a node by preempting lower-priority pods (kube-scheduler's PostFilter)."""
    outcome = scheduler.explain(pod).outcome
    return outcome is not None and outcome.post_filter is not None and bool(outcome.post_filter.nominated_node_name)


def _first_pass(base: Scheduler, candidates: Sequence[Pod], only_unschedulable: bool
                ) -> tuple[Scheduler, dict[str, str], list[str], list[str], list[str]]:
    """The cluster before any new node: (the scheduler to start from, pods placed, pods to retry with new
    nodes, pods left out because they fit today, pods evicted by the preemptions that placed others: a
    pod that fits by preempting needs no new node, as cluster-autoscaler also holds)."""
    if only_unschedulable:
        fitting = [pod.key for pod in candidates if base.feasible_nodes(pod) or _preempts(base, pod)]
        start = base.fork()
        for key in fitting:
            start.remove_pod(key)
        return start, {}, [pod.key for pod in candidates if pod.key not in set(fitting)], fitting, []
    start = base.fork()
    outcome, evicted = schedule_once(start)
    placed = {key: node for key, node in outcome.items() if node is not None}
    return start, placed, [key for key, node in outcome.items() if node is None], [], evicted


def nodes_needed(
    cluster: ClusterSource,
    node_template: Node | Mapping[str, Any] | str | PathLike[str],
    config: ConfigSource = None,
    *,
    limit: int = 100,
    only_unschedulable: bool = False,
    expand_controllers: bool = False,
    seed: int = 0,
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    progress: ProgressCallback | None = None,
) -> NodesNeededReport:
    """The smallest number of nodes like ``node_template`` (named ``<template>-1``, ``-2``...) to add so
    that every pending pod that fits with ``limit`` of them is scheduled, and the pods that do not
    (with their FitError message then, or what holds them before scheduling).

    The pending pods are first scheduled on the cluster as it is, once each in queue order, as
    kube-scheduler does before any node can arrive; the new nodes are for the pods left over, which
    are then scheduled again (``new_node_pods`` says which went to each new node).  With
    ``only_unschedulable`` the pods that fit on an existing node today (each on its own) are left out
    (``fit_today``) and only the others are planned for.  Pods never tried — held by their scheduling
    gates or a missing ResourceClaim, being deleted, or for a scheduler without a profile — are helped
    by no node and say why.  As in cluster-autoscaler, every new node also gets a pod of each DaemonSet
    whose pods the cluster holds and whose node selector and tolerations admit the node.  Every try
    runs on a fork of the loaded cluster; the count is found by bisection (more nodes of one kind never
    make a pod fit less), then confirmed.  ``node_template`` is a Node, a v1 Node dict or a file holding
    one node.  ``progress(tries_done, tries_total)`` is called after each try (a total that bisection
    can only bound is made exact once the bisection ends).
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
    tries = 0
    total = 3 + limit.bit_length()  # the first pass, the try at the limit, the bisection's most steps, the confirmation

    def tried() -> None:
        nonlocal tries
        tries += 1
        if progress is not None:
            progress(tries, max(total, tries))

    candidates = [pod for pod in loaded.pending_pods if pod.key in base.pending()]
    start, placed_now, retry, fit_today, evicted = _first_pass(base, candidates, only_unschedulable)
    tried()
    search = _Search(start, template, retry)
    _, at_limit, failing = search.trial(limit)
    tried()
    not_helped = {key: reason for key, reason in failing.items() if key in set(retry)}
    held = [pod for pod in loaded.pending_pods if pod.key not in at_limit and pod.key not in placed_now
            and pod.key not in fit_today]
    for pod in held:  # never tried: no node helps
        plugin, reason = held_reason(base, pod)
        not_helped[pod.key] = f"{plugin}: {reason}" if plugin in ("SchedulingGates", "DynamicResources") else reason
    goal = [key for key in retry if key in at_limit and key not in not_helped]
    low, high = 0, limit
    while low < high:
        middle = (low + high) // 2
        _, placed, _ = search.trial(middle)
        tried()
        if all(placed.get(key) is not None for key in goal):
            high = middle
        else:
            low = middle + 1
    count = low
    total = tries + 1
    while True:  # confirm (a try is deterministic; bisection assumed monotony)
        trial, placed, _ = search.trial(count)
        tried()
        if all(placed.get(key) is not None for key in goal) or count >= limit:
            break
        count += 1
    new_nodes = tuple(node.name for node in _copies(template, count))
    placements = {**placed_now, **{key: node for key, node in placed.items() if node is not None and key in retry}}
    per_node = {name: tuple(sorted(key for key, node in placements.items() if node == name)) for name in new_nodes}
    extra = {**before_after(base, trial, shapes_of(base, candidates)), "config": config_section(config)}
    return NodesNeededReport(count, template.name, limit, dict(sorted(placements.items())),
                             dict(sorted(not_helped.items())), new_nodes, extra, base.kube, per_node,
                             only_unschedulable, tuple(sorted(fit_today)), tuple(evicted))
