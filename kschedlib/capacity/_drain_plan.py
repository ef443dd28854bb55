"""drain: take nodes away and reschedule their pods as cluster-autoscaler's drain simulation does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.capacity._common import (
    ClusterSource,
    ProgressCallback,
    before_after,
    held_reason,
    load,
    pending_line,
    shapes_of,
)
from kschedlib.errors import ManifestError
from kschedlib.framework.registry import Registry
from kschedlib.model.objects import Node
from kschedlib.scheduler import ConfigSource, Scheduler
from kschedlib.simulation.simulator import simulation_run
from kschedlib.versions import KubeSettings

__all__ = ["DrainReport", "drain"]


@final
@attrs.frozen(slots=True, repr=False)
class DrainReport(FieldsRepr):
    """Where each moved pod went, which found no place (with the reason), and what was not drained."""

    nodes: tuple[Mapping[str, Any], ...]
    """Per drained node: ``{node, blocked, moved, left, flags, pdb_violations}``."""
    pods: Mapping[str, Mapping[str, Any]]
    """Moved pod -> ``{"from": node, "to": node or None, "message": FitError or None, "flags": [...]}``."""
    evicted: tuple[str, ...]
    """Pods that moved pods preempted."""
    pending: Mapping[str, str | None]
    """The cluster's own pending pods -> node or ``None`` (scheduled before the drain)."""
    extra: Mapping[str, Any]
    kube: KubeSettings
    csv_columns: ClassVar[tuple[str, ...]] = ("pod", "from", "to", "message", "flags")

    @property
    def unschedulable(self) -> dict[str, str]:
        """Moved pods that fit nowhere -> FitError message."""
        return {pod: entry["message"] for pod, entry in self.pods.items() if entry["to"] is None}

    @property
    def blocked(self) -> dict[str, str]:
        """Nodes not drained -> why."""
        return {entry["node"]: entry["blocked"] for entry in self.nodes if entry["blocked"] is not None}

    @property
    def pdb_violations(self) -> list[Mapping[str, Any]]:
        """``{pod, pdb, disruptions_allowed}`` for each move a budget did not allow (all drained nodes)."""
        return [violation for entry in self.nodes for violation in entry["pdb_violations"]]

    def summary(self) -> dict[str, int]:
        """The counts of the summary line."""
        moved = len(self.pods)
        unschedulable = len(self.unschedulable)
        return {"nodes": len(self.nodes), "drained": len(self.nodes) - len(self.blocked),
                "blocked": len(self.blocked), "moved": moved, "placed": moved - unschedulable,
                "unschedulable": unschedulable, "pdb_violations": len(self.pdb_violations),
                "evicted": len(self.evicted)}

    def to_dict(self) -> dict[str, Any]:
        """The ``drain`` JSON."""
        return {"nodes": [dict(n) for n in self.nodes], "blocked": self.blocked,
                "pods": {k: dict(v) for k, v in self.pods.items()}, "unschedulable": self.unschedulable,
                "pdb_violations": [dict(v) for v in self.pdb_violations], "evicted": list(self.evicted),
                "pending": dict(self.pending), "summary": self.summary(), **self.extra, **self.kube.to_dict()}

    def rows(self) -> list[dict[str, Any]]:
        """One CSV row per moved pod."""
        return [{"pod": pod, "from": entry["from"], "to": entry["to"] or "", "message": entry["message"] or "",
                 "flags": ";".join(entry["flags"])} for pod, entry in self.pods.items()]

    def text(self) -> str:
        lines = []
        for entry in self.nodes:
            state = f"not drained: {entry['blocked']}" if entry["blocked"] else f"{len(entry['moved'])} pod(s) moved"
            lines.append(f"{entry['node']}: {state}")
            lines.extend(f"  {pod} stays ({why})" for pod, why in entry["left"].items())
        for pod, entry in self.pods.items():
            where = entry["to"] if entry["to"] is not None else f"unschedulable: {entry['message']}"
            flags = f" [{', '.join(entry['flags'])}]" if entry["flags"] else ""
            lines.append(f"{pod}: {entry['from']} -> {where}{flags}")
        if self.evicted:
            lines.append(f"evicted: {', '.join(self.evicted)}")
        lines.extend(self._violation_lines())
        if self.pending:
            lines.append(pending_line(self.pending))
        counts = self.summary()
        lines.append(f"drained {counts['drained']} of {counts['nodes']} node(s): {counts['moved']} pod(s) moved, "
                     f"{counts['placed']} placed, {counts['unschedulable']} unschedulable, "
                     f"{counts['pdb_violations']} PodDisruptionBudget violation(s), {counts['evicted']} evicted")
        return "\n".join(lines)

    def _violation_lines(self) -> list[str]:
        lines = []
        for entry in self.nodes:
            if not entry["pdb_violations"]:
                continue
            state = "not drained" if entry["blocked"] else "drained anyway: budgets ignored"
            lines.append(f"PodDisruptionBudget violations on {entry['node']} ({state}):")
            lines.extend(f"  {v['pod']}: {v['pdb']} allows {v['disruptions_allowed']} more disruption(s)"
                         for v in entry["pdb_violations"])
        return lines


def _not_tried(scheduler: Scheduler, key: str, placements: Mapping[str, str | None]) -> str | None:
    """Why a moved pod that got no attempt found no node (gated, being deleted, no profile for its
    scheduler name), so the report never says "unschedulable" without a reason."""
    if placements.get(key) is not None:
        return None
    pod = scheduler.get_pod(key)
    return held_reason(scheduler, pod)[1] if pod is not None else None


def drain(
    cluster: ClusterSource,
    nodes: Sequence[str],
    config: ConfigSource = None,
    *,
    respect_pdbs: bool = True,
    expand_controllers: bool = False,
    seed: int = 0,
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    progress: ProgressCallback | None = None,
) -> DrainReport:
    """Drain ``nodes`` (in order) and reschedule their pods.

    As cluster-autoscaler's drain simulation: DaemonSet and mirror (static) pods are not moved;
    a node whose drain would exceed a PodDisruptionBudget is not drained (``blocked``, with the
    violation) unless ``respect_pdbs=False``; moved pods with local storage, without a controller,
    marked not safe to evict, or in kube-system without a budget are flagged.  The nodes are cordoned
    first, as ``kubectl drain`` does (cluster-autoscaler never counts a node it removes as a destination
    either), so the cluster's pending pods, scheduled next, do not land there and are never "moved";
    moved pods are then scheduled as kube-scheduler would (retries, preemption with evictions), as in
    ``simulate --events`` with ``drain_node`` steps.  A blocked node stays cordoned, as after a
    ``kubectl drain`` that a budget stopped.
    ``progress(pods_tried, pods_to_place)`` is called after each attempt: pods given at least one
    attempt, of the pending and moved pods known so far (the moved ones count from their drain on).
    """
    names = list(nodes)
    if not names or not all(isinstance(name, str) for name in names):
        raise ManifestError("needs one or more node names", obj="drain", field="nodes", value=nodes)
    names = list(dict.fromkeys(names))  # a node named twice is drained once
    loaded = load(cluster, expand=expand_controllers)
    known = {node.name for node in loaded.nodes}
    for name in names:
        if name not in known:
            raise ManifestError("no such node in the cluster", obj=f"Node {name}", field="nodes", value=name)
    loaded = attrs.evolve(loaded, objects=tuple(  # cordoned
        attrs.evolve(o, unschedulable=True) if isinstance(o, Node) and o.name in names else o for o in loaded.objects))
    events = [{"op": "drain_node", "name": name, "respect_pdbs": respect_pdbs,
               **({"at": "with_previous"} if index else {})} for index, name in enumerate(names)]
    run = simulation_run(loaded, config, seed=seed, events=events, registry=registry, kube_version=kube_version,
                         feature_gates=feature_gates)
    if progress is not None:
        tell = progress
        run.progress = lambda _attempts, to_place: tell(len(run.report.attempts), to_place)
    forks: list[Scheduler] = []
    run.before_batch = lambda scheduler: forks.append(scheduler.fork()) if not forks else None
    own_pending = [pod.key for pod in loaded.pending_pods]
    report = run.finish()
    drained = tuple(entry for entry in report.node_removals if entry["op"] == "drain_node")
    before = forks[0] if forks else run.scheduler
    flags = {pod: list(found) for entry in drained for pod, found in entry["flags"].items()}
    moving = [pod for entry in drained for key in entry["moved"] if (pod := before.get_pod(key)) is not None]
    pods = {key: {"from": entry["node"], "to": report.placements.get(key),
                  "message": report.unschedulable.get(key) or _not_tried(run.scheduler, key, report.placements),
                  "flags": flags.get(key, [])}
            for entry in drained for key in entry["moved"]}
    pending = {key: report.placements.get(key) for key in own_pending if key in report.placements}
    extra = {**before_after(before, run.scheduler, shapes_of(before, moving)), "config": report.config}
    return DrainReport(drained, pods, tuple(report.evicted), pending, extra, report.kube)
