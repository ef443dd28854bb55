"""Readable text for explain and simulate results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kschedlib.simulation._groups import group_lines, quota_lines
from kschedlib.simulation.explain import Explanation
from kschedlib.simulation.simulate import SimulationReport
from kschedlib.simulation.skipped import skipped_text

__all__ = ["explanation_text", "simulation_text", "table"]


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
    skipped = skipped_text(data["skipped"]) if data["skipped"] else None
    if data.get("error") or data["skipped_pod"]:
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


def simulation_text(report: SimulationReport) -> str:
    """Where each pending pod went, why the others fit nowhere, and a summary."""
    gated = set(report.gated)
    rows = [[pod, node or ("(gated)" if pod in gated else "-")] for pod, node in report.placements.items()]
    lines = [report.kube.describe(), *(f"note: {n}" for n in report.notes), ""]
    lines.append(table(["pod", "node"], rows) if rows else "no pending pods")
    unschedulable = {pod: message for pod, message in report.unschedulable.items() if pod not in report.errors}
    if unschedulable:
        lines.append("")
        lines.append("unschedulable:")
        lines.extend(f"  {pod}: {message}" for pod, message in unschedulable.items())
    if report.errors:
        lines.append("")
        lines.append("failing with an error (retries stopped: each failed as the one before):")
        lines.extend(f"  {pod}: {entry['error']} ({entry['attempts']} attempts)"
                     for pod, entry in report.errors.items())
    if report.gated:
        lines.append("")
        lines.append("gated: " + ", ".join(report.gated))
    if report.evicted:
        lines.append("")
        lines.append("evicted: " + ", ".join(report.evicted))
    summary = report.summary()
    lines.append("")
    lines.append(f"scheduled {summary['scheduled']} of {summary['pods']} pods, "
                 f"{summary['unschedulable']} unschedulable, {summary['gated']} gated")
    for message, count in report.unschedulable_reasons().most_common():
        lines.append(f"  {count} x {message}")
    lines.append(f"{summary['seconds']:.3f} s scheduling, {summary['pods_per_second']} pods/s")
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
    skipped = skipped_text(report.skipped) if report.skipped else None
    lines.extend([skipped] if skipped else [])
    return "\n".join(lines)
