"""Explanation: one scheduling cycle's answer for a pod, with every node's verdict and score.

Both :meth:`kschedlib.Scheduler.explain` (against a live scheduler) and :func:`kschedlib.explain`
(against a cluster file) give one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.cycle import CycleOutcome
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from kschedlib.plugins.dynamic_resources import dra_allocations
from kschedlib.versions import KubeSettings
from kschedlib.versions import resolve as resolve_kube

__all__ = ["Explanation", "bound_note", "deleting_message"]


def bound_note(node: str) -> str:
    """What an explanation of a pod bound to ``node`` shows, said before it (text and HTML alike)."""
    return (f"bound to {node}: kube-scheduler never schedules a bound pod again; below, the cycle it would get "
            f"as written (spec.nodeName included), itself taken off {node}")


def deleting_message(pod: Pod) -> str:
    """kube-scheduler's word for a pending pod that is being deleted (it never schedules one)."""
    return f"skip schedule deleting pod: {pod.key}"


def _status_dict(status: Status) -> dict[str, Any]:
    return {"plugin": status.plugin, "code": status.code.label, "reasons": list(status.all_reasons())}


@final
@attrs.frozen(slots=True, repr=False)
class Explanation(FieldsRepr):
    """The outcome of one scheduling cycle, with every node's verdict and score."""

    pod: Pod
    outcome: CycleOutcome | None
    error: str | None = None
    pre_enqueue: Status | None = None
    skipped: Mapping[str, Any] = attrs.field(factory=dict)
    """What the cluster file held that was not used (``kschedlib.explain`` fills it in)."""
    skip_reason: str | None = None
    """Why kube-scheduler would not even try this pod (it is being deleted), else ``None``."""
    kube: KubeSettings = attrs.field(factory=resolve_kube)
    """The kube-scheduler version and feature gates the answer is for."""
    notes: tuple[str, ...] = ()
    """Remarks on the answer (e.g. nodes that report another kubelet version than the one in force)."""
    groups: Mapping[str, Any] = attrs.field(factory=dict)
    """The pod's PodGroup state (``pod_group``) and the ElasticQuotas (``elastic_quotas``), when the
    cluster has them (``kschedlib.explain`` fills it in)."""
    config: Mapping[str, Any] = attrs.field(factory=dict)
    """The config the answer is for, ``{"source", "document"}`` (``kschedlib.explain`` fills it in;
    ``to_dict`` leaves it out when empty)."""

    @property
    def bound_to(self) -> str | None:
        """The node a bound pod runs on (its ``spec.nodeName``): kube-scheduler never schedules it again,
        and the cycle shown is the one it would get as written; ``None`` for a pending pod."""
        return self.pod.node_name or None

    @property
    def refused(self) -> bool:
        """Whether no scheduler here would take the pod (its scheduler has no profile)."""
        return self.outcome is None and self.error is not None

    @property
    def selected(self) -> str | None:
        """The node the cycle chose (``None`` when nothing fits)."""
        return self.outcome.selected if self.outcome is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The ``explain`` JSON of DESIGN.md (plus ``dra_allocations`` for a pod with resource claims, and
        ``config`` when known)."""
        data = self._to_dict()
        if self.config:
            data["config"] = dict(self.config)
        if self.outcome is not None and self.pod.resource_claims:
            allocations = dra_allocations(self.outcome.state, self.outcome.feasible)
            if allocations is not None:  # None: DynamicResources did not run (v1.30-v1.33, or PreFilter stopped)
                data["dra_allocations"] = allocations
        return data

    def _to_dict(self) -> dict[str, Any]:
        out = self.outcome
        if out is None:
            pre_enqueue = _status_dict(self.pre_enqueue) if self.pre_enqueue is not None else None
            return {"pod": self.pod.key, "preenqueue": pre_enqueue, "prefilter": None, "prefilter_nodes": None,
                    "feasible": [], "filtered": {}, "scores": {}, "best": [], "selected": None,
                    "message": None, "postfilter": None, "num_all_nodes": 0, "evaluated_nodes": 0,
                    "error": self.error, "skipped_pod": self.skip_reason, "bound_to": self.bound_to,
                    "skipped": dict(self.skipped), **self.kube.to_dict(), "notes": list(self.notes), **self.groups}
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
            "bound_to": self.bound_to,
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
