"""explain: where would this pod go, and why not elsewhere — one pure scheduling cycle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any, final

import attrs

from kschedlib._internal.cycle import CycleOutcome, run_cycle
from kschedlib._internal.documents import load_config, read_config_document
from kschedlib.framework.config import SchedulerConfig
from kschedlib.framework.extender import Extender
from kschedlib.framework.registry import Registry
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from kschedlib.scheduler import Scheduler
from kschedlib.simulation._groups import explain_group_sections
from kschedlib.simulation.cluster import Cluster, load_cluster, resolve_pod
from kschedlib.simulation.skipped import deleting_message, skipped_section
from kschedlib.versions import KubeSettings, chosen_explicitly, kubelet_note
from kschedlib.versions import resolve as resolve_kube

__all__ = ["Explanation", "explain"]


def _status_dict(status: Status) -> dict[str, Any]:
    return {"plugin": status.plugin, "code": status.code.label, "reasons": list(status.all_reasons())}


@final
@attrs.frozen(slots=True)
class Explanation:
    """The outcome of one scheduling cycle, with every node's verdict and score."""

    pod: Pod
    outcome: CycleOutcome | None
    error: str | None = None
    pre_enqueue: Status | None = None
    skipped: Mapping[str, Any] = attrs.field(factory=dict)
    """What the cluster held that was not used (see :func:`~kschedlib.simulation.skipped.skipped_section`)."""
    skip_reason: str | None = None
    """Why kube-scheduler would not even try this pod (it is being deleted), else ``None``."""
    kube: KubeSettings = attrs.field(factory=resolve_kube)
    """The kube-scheduler version and feature gates the answer is for."""
    notes: tuple[str, ...] = ()
    """Remarks on the answer (e.g. nodes that report another kubelet version than the one in force)."""
    groups: Mapping[str, Any] = attrs.field(factory=dict)
    """The pod's PodGroup state (``pod_group``) and the ElasticQuotas (``elastic_quotas``), when the
    cluster has them (see :mod:`kschedlib.simulation._groups`)."""

    @property
    def refused(self) -> bool:
        """Whether no scheduler here would take the pod (its scheduler has no profile)."""
        return self.outcome is None and self.error is not None

    @property
    def selected(self) -> str | None:
        """The node the cycle chose (``None`` when nothing fits)."""
        return self.outcome.selected if self.outcome is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The ``explain`` JSON of DESIGN.md."""
        out = self.outcome
        if out is None:
            pre_enqueue = _status_dict(self.pre_enqueue) if self.pre_enqueue is not None else None
            return {"pod": self.pod.key, "preenqueue": pre_enqueue, "prefilter": None, "prefilter_nodes": None,
                    "feasible": [], "filtered": {}, "scores": {}, "best": [], "selected": None,
                    "message": None, "postfilter": None, "num_all_nodes": 0, "evaluated_nodes": 0,
                    "error": self.error, "skipped_pod": self.skip_reason, "skipped": dict(self.skipped),
                    **self.kube.to_dict(), "notes": list(self.notes), **self.groups}
        return {
            "pod": self.pod.key,
            "preenqueue": None,
            "prefilter": _status_dict(out.pre_filter_status) if out.pre_filter_status is not None else None,
            "prefilter_nodes": sorted(out.pre_filter_nodes) if out.pre_filter_nodes is not None else None,
            "feasible": sorted(out.feasible),
            "filtered": {name: _status_dict(s) for name, s in sorted(out.node_statuses.items())},
            "scores": self._scores(out),
            "best": list(out.best),
            "selected": out.selected,
            "message": out.fit_error,
            "postfilter": self._post_filter(out),
            "num_all_nodes": out.num_all_nodes,
            "evaluated_nodes": out.evaluated_nodes,
            "start_index": out.start_index,
            "next_start_index": out.next_start_index,
            "error": out.error.message() if out.error is not None else self.error,
            "skipped_pod": None,
            "skipped": dict(self.skipped),
            **self.kube.to_dict(),
            "notes": list(self.notes),
            **self.groups,
        }

    @staticmethod
    def _scores(out: CycleOutcome) -> dict[str, Any]:
        table = out.scores
        if table is None:
            return {}
        result: dict[str, Any] = {}
        for column, name in enumerate(out.scored_nodes):
            plugins = {plugin: table.scores[row][column] for row, plugin in enumerate(table.plugins)}
            entries = out.extender_scores.get(name, ())
            for extender, score in entries:  # an extender's entry sits beside the plugins, under its name
                plugins[extender] = plugins.get(extender, 0) + score
            result[name] = {"plugins": dict(sorted(plugins.items())), "total": table.totals[column]}
            if entries:
                result[name]["extender_entries"] = [{"name": n, "score": score} for n, score in entries]
        return dict(sorted(result.items()))

    @staticmethod
    def _post_filter(out: CycleOutcome) -> dict[str, Any] | None:
        post = out.post_filter
        if post is None:
            return None
        return {"code": post.status.code.label, "message": post.status.message(),
                "nominatedNode": post.nominated_node_name or None, "victims": sorted(post.victims)}


def _explain_config(config: Any) -> SchedulerConfig:
    """The config explain uses: every node is evaluated unless the config sets percentageOfNodesToScore."""
    if isinstance(config, SchedulerConfig):
        return config
    raw = config
    parsed = load_config(config)
    if isinstance(config, str | PathLike):
        raw = read_config_document(config)
    if isinstance(raw, Mapping) and "percentageOfNodesToScore" in raw:
        return parsed
    return attrs.evolve(parsed, percentage_of_nodes_to_score=100)


def explain(
    cluster: Cluster | str | PathLike[str] | Mapping[str, Any] | Sequence[Any],
    pod: Pod | Mapping[str, Any] | str,
    config: Any = None,
    *,
    start_index: int = 0,
    seed: int = 0,
    extenders: Sequence[Extender] = (),
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
) -> Explanation:
    """Run one scheduling cycle for ``pod`` against ``cluster`` without changing anything.

    ``pod`` is a Pod, a v1 Pod dict, ``namespace/name`` of a pod in the cluster, or a pod file.
    Other pending pods of the cluster that carry ``status.nominatedNodeName`` count as nominated.
    ``extenders`` run after the config's own (HTTP) extenders; nodes they reject show ``plugin: ""``.
    ``registry`` supplies the plugins (default: in-tree plus entry points), for profiles using your own.
    A pod whose scheduler has no profile gets ``error`` (and :attr:`Explanation.refused`); a pending
    pod being deleted is not tried, as kube-scheduler skips it (``skipped_pod`` says so).
    ``kube_version`` and ``feature_gates`` choose the kube-scheduler behaviour (:mod:`kschedlib.versions`).
    """
    loaded = load_cluster(cluster)
    target = resolve_pod(loaded, pod)
    settings = _explain_config(config)
    scheduler = Scheduler(settings, seed=seed, extenders=extenders, registry=registry,
                          kube_version=kube_version, feature_gates=feature_gates)
    kube = scheduler.kube
    note = kubelet_note(kube, loaded.kubelet_versions) if not chosen_explicitly(kube_version) else None
    notes = (note,) if note else ()
    scheduler.add_objects(loaded.without_pod(target).objects)
    skipped = skipped_section(loaded, scheduler.profiles)
    if target.scheduler_name not in scheduler.profiles:
        return Explanation(target, None, f'profile not found for scheduler name "{target.scheduler_name}"',
                           skipped=skipped, kube=kube, notes=notes)
    if target.deletion_timestamp is not None and not target.node_name:
        return Explanation(target, None, skipped=skipped, skip_reason=deleting_message(target), kube=kube, notes=notes)
    engine = scheduler.engine
    runtime = engine.profiles[target.scheduler_name]
    gate = runtime.run_pre_enqueue(target)
    if not gate.is_success:
        return Explanation(target, None, pre_enqueue=gate, skipped=skipped, kube=kube, notes=notes)
    snapshot = scheduler.snapshot()
    handle = engine.handles[target.scheduler_name]
    handle.set_snapshot(snapshot)
    engine.store.pods[target.key] = target
    groups = explain_group_sections(scheduler, target)
    outcome = run_cycle(
        runtime,
        target,
        snapshot,
        start_index=start_index,
        percentage_of_nodes_to_score=settings.percentage_of_nodes_to_score,
        rng=handle.rng,
        nominator=engine.nominator,
        score_single_node=True,
    )
    return Explanation(target, outcome, skipped=skipped, kube=kube, notes=notes, groups=groups)
