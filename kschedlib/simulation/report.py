"""Readable text and CSV rows for explain and simulate results, and the answers the command line prints."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.explanation import bound_note
from kschedlib.simulation._groups import group_lines, quota_lines
from kschedlib.simulation.cluster import CONTROLLER_KINDS
from kschedlib.simulation.explain import Explanation
from kschedlib.simulation.skipped import listing, skipped_text

if TYPE_CHECKING:
    from kschedlib.simulation.simulator import SimulationReport

__all__ = ["ExplainAnswer", "SimulationAnswer", "explanation_rows", "explanation_text", "listing",
           "simulation_rows", "simulation_text", "table"]

TIMING_FROM = 100
"""Attempts from which the text of a simulation gives its speed (below, the figure says nothing)."""


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain left-aligned text table."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=False)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=False)).rstrip()
             for row in (header, *rows)]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def explanation_text(explanation: Explanation) -> str:
    """A table of every node: verdict or first failing plugin and reason, per-plugin scores, total."""
    data = explanation.to_dict()
    lines = [f"pod {data['pod']} ({explanation.kube.describe()})", *(f"note: {n}" for n in explanation.notes)]
    if data.get("bound_to"):
        lines.append(bound_note(data["bound_to"]))
    skipped = skipped_text(data["skipped"]) if data["skipped"] else None
    held = data["preenqueue"]
    if data.get("error") or data["skipped_pod"] or held:
        if held:
            until = "; it is tried once every gate is removed" if held["plugin"] == "SchedulingGates" else ""
            lines.append(f"not tried: {held['plugin']} holds the pod back ({'; '.join(held['reasons'])}){until}")
        else:
            lines.append(f"error: {data['error']}" if data.get("error") else data["skipped_pod"])
        lines.extend([skipped] if skipped else [])
        return "\n".join(lines)
    scores: dict[str, Any] = data["scores"]
    plugins = sorted({plugin for entry in scores.values() for plugin in entry["plugins"]})
    rows: list[list[str]] = []
    best = set(data["best"])
    for node in data["feasible"]:
        entry = scores.get(node, {"plugins": {}, "total": ""})
        verdict = "selected" if node == data["selected"] else ("best" if node in best else "feasible")
        rows.append([node, verdict, *[str(entry["plugins"].get(p, "-")) for p in plugins], str(entry["total"])])
    for node, status in data["filtered"].items():
        reason = "; ".join(status["reasons"])
        rows.append([node, f"{status['plugin'] or 'PreFilter'}: {reason}", *["" for _ in plugins], ""])
    lines.append(table(["node", "verdict", *plugins, "total"], rows))
    lines.append(f"evaluated {data['evaluated_nodes']} of {data['num_all_nodes']} nodes")
    for entry in data.get("dra_allocations", {}).get(data["selected"], ()):
        devices = ", ".join(f"{d['driver']}/{d['pool']}/{d['device']}" for d in entry["devices"])
        lines.append(f"devices for {entry['claim']} on {data['selected']}: {devices}")
    if data["message"]:
        lines.append(data["message"])
    post = data.get("postfilter")
    if post:
        if post["nominatedNode"]:
            victims = ", ".join(post["victims"]) or "none"
            lines.append(f"preemption would help: nominate {post['nominatedNode']}, evicting {victims}")
        else:
            message = str(post["message"] or "").removeprefix("preemption: ")
            lines.append(f"preemption would not help: {message}")
    lines.extend(_group_text(data))
    lines.extend([skipped] if skipped else [])
    return "\n".join(lines)


def explanation_rows(explanation: Explanation) -> list[dict[str, Any]]:
    """One CSV row per node: its verdict, the plugin and reasons that rejected it, or its total score; for a
    pod that is not tried (held by a PreEnqueue plugin, being deleted, no profile), one row that says why."""
    data = explanation.to_dict()
    held = data["preenqueue"]
    if data.get("error") or data["skipped_pod"] or held:
        why = "; ".join(held["reasons"]) if held else data.get("error") or data["skipped_pod"]
        verdict = "error" if data.get("error") else "not tried"
        return [{"pod": data["pod"], "node": "", "verdict": verdict, "plugin": held["plugin"] if held else "",
                 "reasons": why, "total": ""}]
    rows: list[dict[str, Any]] = []
    for node in data["feasible"]:
        verdict = "selected" if node == data["selected"] else ("best" if node in data["best"] else "feasible")
        rows.append({"pod": data["pod"], "node": node, "verdict": verdict, "plugin": "", "reasons": "",
                     "total": data["scores"].get(node, {}).get("total", "")})
    for node, status in data["filtered"].items():
        rows.append({"pod": data["pod"], "node": node, "verdict": "filtered", "plugin": status["plugin"],
                     "reasons": "; ".join(status["reasons"]), "total": ""})
    return rows


def _group_text(data: Mapping[str, Any]) -> list[str]:
    """The pod's PodGroup and the ElasticQuotas, when the result carries them."""
    lines = []
    if "pod_group" in data:
        group = data["pod_group"]
        lines.append("pod group " + group_lines(group["name"], group))
    if "elastic_quotas" in data:
        lines.append("elastic quotas:")
        lines.extend(quota_lines(data["elastic_quotas"]))
    return lines


def _failures(unschedulable: Mapping[str, str]) -> list[str]:
    """Each FitError message once, after the pods that got it."""
    pods_of: dict[str, list[str]] = {}
    for pod, message in unschedulable.items():
        pods_of.setdefault(message, []).append(pod)
    lines = ["", "unschedulable:"]
    for message, pods in pods_of.items():
        who = pods[0] if len(pods) == 1 else f"{listing(pods)} ({len(pods)} pods)"
        lines.append(f"  {who}: {message}")
    return lines


def _next_steps(report: SimulationReport, files: Sequence[str], bundled: bool) -> list[str]:
    """What to try next, as commands to copy."""
    if not files:
        return []
    given = shlex.join(files)
    steps = []
    if bundled:
        steps.append("kubectl get nodes,pods,pdb,priorityclasses -A -o json > cluster.json   # your own cluster, "
                     "then: kschedlib simulate cluster.json")
    if report.skipped.get("kinds", {}).keys() & CONTROLLER_KINDS:
        steps.append(f"kschedlib simulate {given} --expand-controllers   # create the pods of its Deployments, "
                     "StatefulSets, Jobs, ... first")
    stuck = [pod for pod in report.unschedulable if pod not in report.errors]
    if stuck:
        steps.append(f"kschedlib explain {given} --pod {stuck[0]}   # why it fits nowhere, node by node")
        steps.append(f"kschedlib nodes-needed {given} --node-template NODE.json --only-unschedulable   "
                     "# how many more nodes like NODE.json (kubectl get node NAME -o json) they need")
    elif report.placements:
        steps.append(f"kschedlib capacity {given} --pod POD   # how many more copies of a pod fit")
    return ["", "next:", *(f"  {step}" for step in steps)] if steps else []


def simulation_text(report: SimulationReport, source: str | None = None, files: Sequence[str] = (),
                    bundled: bool = False) -> str:
    """Where each pending pod went, why the others fit nowhere (each message once), a summary and,
    given the cluster ``files``, what to try next (``bundled``: they are the bundled example).
    ``source`` names the input in the text."""
    gated = set(report.gated)
    rows = [[pod, node or ("(gated)" if pod in gated else "-")] for pod, node in report.placements.items()]
    lines = [report.kube.describe(), *([f"input: {source}"] if source else []),
             *(f"note: {n}" for n in report.notes), ""]
    lines.append(table(["pod", "node"], rows) if rows else "no pending pods")
    unschedulable = {pod: message for pod, message in report.unschedulable.items() if pod not in report.errors}
    if unschedulable:
        lines.extend(_failures(unschedulable))
    if report.errors:
        lines.append("")
        lines.append("failing with an error (retries stopped: each failed as the one before):")
        lines.extend(f"  {pod}: {entry['error']} ({entry['attempts']} attempts)"
                     for pod, entry in report.errors.items())
    if report.gated:
        lines.append("")
        lines.append("gated (not tried until their scheduling gates are removed):")
        lines.extend(f"  {pod}: {', '.join(report.gates.get(pod, ()))}" for pod in report.gated)
    if report.evicted:
        lines.append("")
        lines.append("evicted: " + ", ".join(report.evicted))
    summary = report.summary()
    lines.append("")
    lines.append(f"scheduled {summary['scheduled']} of {summary['pods']} pods, "
                 f"{summary['unschedulable']} unschedulable, {summary['gated']} gated")
    if sum(report.attempts.values()) >= TIMING_FROM:
        lines.append(f"{summary['seconds']:.3f} s scheduling, {summary['pods_per_second']} pods/s")
    lines.extend(_batch_text(report))
    skipped = skipped_text(report.skipped) if report.skipped else None
    lines.extend([skipped] if skipped else [])
    lines.extend(_next_steps(report, files, bundled))
    return "\n".join(lines)


def _batch_text(report: SimulationReport) -> list[str]:
    """Pod groups, elastic quotas and devices, when the cluster has them."""
    lines = []
    if report.pod_groups:
        lines.append("")
        lines.append("pod groups:")
        lines.extend("  " + group_lines(name, state) for name, state in report.pod_groups.items())
    if report.elastic_quotas:
        lines.append("")
        lines.append("elastic quotas:")
        lines.extend(quota_lines(report.elastic_quotas))
    if report.dra:
        held = sum(len(entry["devices"]) for entries in report.dra["allocations"].values() for entry in entries)
        free = sum(len(names) for pools in report.dra["free_devices"].values() for names in pools.values())
        lines.append(f"devices: {held} allocated to {len(report.dra['allocations'])} pods, {free} free")
    return lines


def simulation_rows(report: SimulationReport) -> list[dict[str, Any]]:
    """One CSV row per pending pod: its node, or why it has none."""
    gated = set(report.gated)
    rows = []
    for pod, node in report.placements.items():
        if node is not None:
            state, why = "scheduled", ""
        elif pod in gated:
            state, why = "gated", ", ".join(report.gates.get(pod, ()))
        elif pod in report.errors:
            state, why = "error", report.errors[pod]["error"]
        else:
            state, why = "unschedulable", report.unschedulable.get(pod, "")
        rows.append({"pod": pod, "node": node or "", "state": state, "attempts": report.attempts.get(pod, 0),
                     "reason": why})
    return rows


@final
@attrs.frozen(slots=True, repr=False)
class ExplainAnswer(FieldsRepr):
    """What ``kschedlib explain`` prints, in every format."""

    explanation: Explanation
    csv_columns: ClassVar[tuple[str, ...]] = ("pod", "node", "verdict", "plugin", "reasons", "total")

    def to_dict(self) -> dict[str, Any]:
        return self.explanation.to_dict()

    def rows(self) -> list[dict[str, Any]]:
        return explanation_rows(self.explanation)

    def text(self) -> str:
        return explanation_text(self.explanation)


@final
@attrs.frozen(slots=True, repr=False)
class SimulationAnswer(FieldsRepr):
    """What ``kschedlib simulate`` prints, in every format: the report, and the input it read."""

    report: SimulationReport
    source: str | None = None
    """The input, as the text names it."""
    files: tuple[str, ...] = ()
    """The cluster files read, for the commands the text suggests."""
    bundled: bool = False
    """Whether ``files`` is the bundled example."""
    csv_columns: ClassVar[tuple[str, ...]] = ("pod", "node", "state", "attempts", "reason")

    def to_dict(self) -> dict[str, Any]:
        return self.report.to_dict()

    def rows(self) -> list[dict[str, Any]]:
        return simulation_rows(self.report)

    def text(self) -> str:
        return simulation_text(self.report, self.source, self.files, self.bundled)
