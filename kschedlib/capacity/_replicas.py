"""max_replicas: how many more copies of one or more pods fit, placed one by one as cluster-capacity does."""

from __future__ import annotations

from collections import Counter
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
    pending_line,
    schedule_once,
    shapes_of,
)
from kschedlib.capacity._controllers import controller_pods
from kschedlib.errors import ManifestError
from kschedlib.framework.registry import Registry
from kschedlib.model.objects import Pod
from kschedlib.scheduler import ConfigSource, Scheduler
from kschedlib.simulation._settings import config_section
from kschedlib.simulation.cluster import Cluster, resolve_pod
from kschedlib.versions import KubeSettings

__all__ = ["ReplicaReport", "max_replicas"]

PodSource = Pod | Mapping[str, Any] | str | PathLike[str]


@final
@attrs.frozen(slots=True, repr=False)
class ReplicaReport(FieldsRepr):
    """How many more copies fit, where they went and what stopped them."""

    replicas: int
    stopped_by: str | None
    """The FitError message of the copy that fit nowhere (``None`` when ``limit`` was reached)."""
    stopped_pod: str | None
    """The template (``namespace/name``) whose copy fit nowhere."""
    preemption: Mapping[str, Any] | None
    """When the copy that fit nowhere would fit by preempting lower-priority pods, as kube-scheduler's
    PostFilter would do it: ``{"node": nominated node, "victims": [namespace/name, ...]}``, else ``None``."""
    held_by: str | None
    """When the copy was never tried because something holds it before scheduling: the PreEnqueue plugin
    (``SchedulingGates``, ``DynamicResources``), and ``stopped_by`` is its reason; else ``None``."""
    placements: Mapping[str, int]
    """node -> copies placed there (all templates)."""
    templates: Mapping[str, Mapping[str, Any]]
    """template -> ``{"replicas": n, "placements": {node: n}}``."""
    include_pending: bool
    """Whether the cluster's pending pods were scheduled before the copies."""
    pending: Mapping[str, str | None]
    """The cluster's pending pods -> node, or ``None``: where they went (``include_pending``), else all ``None``
    (left out: the copies were placed as if they did not exist)."""
    extra: Mapping[str, Any]
    """Utilisation and fragmentation before and after."""
    kube: KubeSettings
    csv_columns: ClassVar[tuple[str, ...]] = ("template", "node", "replicas")
    evicted: tuple[str, ...] = ()
    """With ``include_pending``: the running pods that pending pods evicted by preemption, as kube-scheduler
    would, before the copies were placed."""

    def to_dict(self) -> dict[str, Any]:
        """The ``capacity`` JSON."""
        return {"replicas": self.replicas, "stopped_by": self.stopped_by, "stopped_pod": self.stopped_pod,
                "preemption": dict(self.preemption) if self.preemption is not None else None,
                "held_by": self.held_by, "placements": dict(self.placements),
                "templates": {k: dict(v) for k, v in self.templates.items()},
                "include_pending": self.include_pending, "pending": dict(self.pending),
                "evicted": list(self.evicted), **self.extra, **self.kube.to_dict()}

    def rows(self) -> list[dict[str, Any]]:
        """One CSV row per template and node."""
        return [{"template": template, "node": node, "replicas": count}
                for template, entry in self.templates.items() for node, count in entry["placements"].items()]

    def text(self) -> str:
        lines = [f"{self.replicas} more replica(s) fit"]
        for template, entry in self.templates.items():
            lines.append(f"  {template}: {entry['replicas']}")
        for node, count in self.placements.items():
            lines.append(f"  on {node}: {count}")
        if self.held_by is not None:
            lines.append(f"not tried: {self.held_by} holds {self.stopped_pod} before scheduling: {self.stopped_by}")
        elif self.stopped_by is not None:
            lines.append(f"stopped by: {self.stopped_by}")
        else:
            lines.append("stopped at the limit")
        if self.preemption is not None:
            victims = ", ".join(self.preemption["victims"])
            lines.append(f"the next copy would fit on {self.preemption['node']} by preempting lower-priority "
                         f"pod(s): {victims}")
        lines.append(self._pending_line())
        return "\n".join(lines)

    def _pending_line(self) -> str:
        count = len(self.pending)
        if not self.include_pending:
            return (f"the cluster's {count} pending pod(s) were left out (--include-pending schedules them first)"
                    if count else "the cluster has no pending pods")
        line = pending_line(self.pending)
        return f"{line}; evicted by their preemptions: {', '.join(self.evicted)}" if self.evicted else line


def _copy(scheduler: Scheduler, template: Pod, index: int) -> Pod:
    """Copy ``index`` of ``template``: ``<name>-<n>`` with the first free ``n`` from ``index`` on."""
    while scheduler.get_pod(f"{template.namespace}/{template.name}-{index}") is not None:
        index += 1
    return attrs.evolve(template, name=f"{template.name}-{index}", uid=f"{template.uid or template.key}-copy-{index}",
                        node_name="", nominated_node_name="", phase="Pending", conditions=(), start_time=None)


def _template(cluster: Cluster, source: PodSource, expand: bool) -> Pod:
    """The pod to copy; with ``expand``, a Deployment, ReplicaSet, StatefulSet or Job file gives its pod template."""
    try:
        return resolve_pod(cluster, source)
    except ManifestError as exc:
        made = [] if isinstance(source, Pod) else _controller_templates(source)
        if not made:
            raise
        if not expand:
            raise ManifestError(f"{exc.message}; or add --expand-controllers (expand_controllers=True) to copy "
                                "its pod template", obj=exc.obj, field=exc.field, value=exc.value) from None
        return resolve_pod(cluster, made[0])


def _controller_templates(source: str | PathLike[str] | Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pods the controllers in ``source`` would create; none when it is no readable file of objects (a
    mistyped pod name keeps its own error, with the close matches)."""
    try:
        return list(controller_pods(source))
    except ManifestError:
        return []


def max_replicas(
    cluster: ClusterSource,
    pods: PodSource | Sequence[PodSource],
    config: ConfigSource = None,
    *,
    limit: int | None = None,
    include_pending: bool = False,
    expand_controllers: bool = False,
    seed: int = 0,
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    progress: ProgressCallback | None = None,
) -> ReplicaReport:
    """How many more copies of ``pods`` fit in ``cluster``, scheduled one at a time (cluster-capacity's way).

    ``pods`` is one pod or a list (a Pod, v1 dict, ``namespace/name`` of the cluster or a pod file);
    with several, copies are made round robin.  The first copy that fits nowhere stops the run and
    its FitError message (with the preemption part, as kube-scheduler writes it) is ``stopped_by``;
    when preempting lower-priority pods would make room, ``preemption`` names the node and the victims
    kube-scheduler's PostFilter chose (copies are not placed by preemption: cluster-capacity counts
    free room).  A copy held before scheduling (scheduling gates, a ResourceClaim not created yet) is
    never tried: the answer is then 0 more, ``held_by`` the PreEnqueue plugin and ``stopped_by`` its
    reason.  ``limit`` stops it earlier.  Copies are named ``<template>-<n>``.  The cluster's pending
    pods are left out unless ``include_pending``, which schedules them first (``pending`` lists them
    either way).  ``expand_controllers`` creates the pods of the cluster's controllers first
    (:func:`expand_controllers`), and takes a Deployment, ReplicaSet, StatefulSet or Job file in
    ``pods`` as its pod template.  ``progress(copies_placed, limit)`` is called after each copy placed.
    """
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise ManifestError("must be a whole number of at least 0", obj="max_replicas", field="limit", value=limit)
    loaded = load(cluster, expand=expand_controllers)
    sources: Sequence[PodSource] = pods if isinstance(pods, list | tuple) else [pods]  # type: ignore[list-item]
    templates = [_template(loaded, pod, expand_controllers) for pod in sources]
    if not templates:
        raise ManifestError("needs at least one pod", obj="max_replicas", field="pods", value=[])
    scheduler = new_scheduler(config, seed=seed, registry=registry, kube_version=kube_version,
                              feature_gates=feature_gates)
    scheduler.add_objects(o for o in loaded.objects if not isinstance(o, Pod) or o.node_name)
    before = scheduler.fork()
    pending: dict[str, str | None] = dict.fromkeys((pod.key for pod in loaded.pending_pods), None)
    evicted: list[str] = []
    if include_pending:
        for pod in loaded.pending_pods:
            scheduler.add_pod(pod)
        placed_first, evicted = schedule_once(scheduler)
        pending.update(placed_first)
    for key in scheduler.pending():
        scheduler.remove_pod(key)
    for template in templates:
        if template.scheduler_name not in scheduler.profiles:
            raise ManifestError(f'profile not found for scheduler name "{template.scheduler_name}"',
                                obj=f"Pod {template.key}", field="spec.schedulerName", value=template.scheduler_name)
    placed: dict[str, Counter[str]] = {t.key: Counter() for t in templates}
    next_index = dict.fromkeys(placed, 0)
    stopped_by = stopped_pod = held_by = None
    preemption: dict[str, Any] | None = None
    count = 0
    while limit is None or count < limit:
        template = templates[count % len(templates)]
        replica = _copy(scheduler, template, next_index[template.key])
        next_index[template.key] = int(replica.name.rsplit("-", 1)[1]) + 1
        scheduler.add_pod(replica)
        result = scheduler.schedule_one()
        if result is None:  # held before scheduling (scheduling gates, a missing claim): never tried
            held_by, stopped_by = held_reason(scheduler, replica)
            stopped_pod = template.key
            scheduler.remove_pod(replica.key)
            break
        if not result.scheduled:
            stopped_by, stopped_pod = result.message or "", template.key
            if result.nominated_node_name:
                preemption = {"node": result.nominated_node_name, "victims": sorted(result.victims)}
            scheduler.remove_pod(replica.key)
            break
        placed[template.key][result.node_name or ""] += 1
        count += 1
        if progress is not None:
            progress(count, limit)
    total: Counter[str] = Counter()
    for counts in placed.values():
        total.update(counts)
    per_template = {key: {"replicas": sum(c.values()), "placements": dict(sorted(c.items()))}
                    for key, c in placed.items()}
    extra = {**before_after(before, scheduler, shapes_of(scheduler, templates)), "config": config_section(config)}
    return ReplicaReport(count, stopped_by, stopped_pod, preemption, held_by, dict(sorted(total.items())),
                         per_template, include_pending, pending, extra, scheduler.kube, tuple(evicted))
