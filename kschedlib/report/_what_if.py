"""The reports that put states side by side: compare (configs), drain (before and after), sweep (scenarios)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kschedlib.report._charts import bars
from kschedlib.report._detect import SIGNATURES
from kschedlib.report._format import percent, plural
from kschedlib.report._html import Cell, Section, cell, el, esc, figures, table
from kschedlib.report._kinds import Built, state_sections
from kschedlib.report._sections import (
    pending_section,
    placements_section,
    pod_list,
    ratio_bar,
    resources_of,
    settings_section,
    zone_charts,
)

__all__ = ["compare_report", "drain_report", "sweep_report"]


def _node_cell(node: str | None) -> Cell:
    return cell(node) if node is not None else cell("unschedulable", class_="bad")


def _nodes_side_by_side(labels: Sequence[str], states: Sequence[Mapping[str, Any]]) -> str:
    resources = resources_of(states[0])
    nodes = sorted({n for s in states for n in s.get("nodes", {})})
    header = ["node", *(f"{r} ({label})" for r in resources for label in labels)]
    rows = [[cell(node), *(ratio_bar((state["nodes"].get(node, {}).get(resource) or {}).get("ratio"))
                           for resource in resources for state in states)] for node in nodes]
    return table(header, rows, id_="nodes-side-by-side", numeric=range(1, len(header)))


def _compare_summary(labels: Sequence[str], runs: Mapping[str, Any], differences: Mapping[str, Any]) -> Section:
    rows = [[cell(label), runs[label]["summary"]["scheduled"], runs[label]["summary"]["unschedulable"],
             runs[label]["summary"].get("gated", 0), len(runs[label].get("evicted", []))] for label in labels]
    return Section("summary", "Summary", figures([("configs", len(labels)), ("placed differently", len(differences))])
                   + table(["config", "scheduled", "unschedulable", "gated", "evicted"], rows, numeric=(1, 2, 3, 4)))


def _compare_placements(labels: Sequence[str], runs: Mapping[str, Any], differences: Mapping[str, Any],
                        nodes: Iterable[str]) -> Section:
    placements = {label: runs[label]["placements"] for label in labels}
    counts = {label: Counter(n for n in placements[label].values() if n is not None) for label in labels}
    names = sorted(set(nodes).union(*counts.values()))
    per_node = [[cell(node), *(counts[label][node] for label in labels)] for node in names]
    pods = list(dict.fromkeys(pod for placed in placements.values() for pod in placed))
    per_pod = [[cell(pod), *(_node_cell(placements[label].get(pod)) for label in labels),
                cell("differs", class_="bad") if pod in differences else cell("same")] for pod in pods]
    return Section("placements", "Placements side by side",
                   el("h3", "Pods per node") + table(["node", *labels], per_node, id_="placements-table",
                                                     numeric=range(1, len(labels) + 1))
                   + el("h3", "Every pending pod") + table(["pod", *labels, ""], per_pod, id_="pods-table"))


def compare_report(data: Mapping[str, Any]) -> Built:
    labels: list[str] = list(data["configs"])
    runs: Mapping[str, Any] = data["runs"]
    differences = data["differences"]
    diff_rows = [[cell(pod), *(_node_cell(node) for node in nodes)] for pod, nodes in differences.items()]
    sections = [_compare_summary(labels, runs, differences),
                Section("differences", "Pods placed differently",
                        table(["pod", *labels], diff_rows, id_="differences-table") if diff_rows
                        else el("p", "Every pod goes to the same node under every config.", class_="ok"))]
    afters = [runs[label]["utilisation"]["after"] for label in labels if runs[label].get("utilisation")]
    if len(afters) == len(labels):
        sections.append(Section("utilisation", "Utilisation after, side by side",
                                el("h3", "Per zone") + zone_charts(labels, afters)
                                + el("h3", "Per node") + _nodes_side_by_side(labels, afters)))
    sections.append(_compare_placements(labels, runs, differences, (n for a in afters for n in a.get("nodes", {}))))
    for index, label in enumerate(labels):
        sections.append(pending_section(runs[label]["unschedulable"], fit_errors=runs[label].get("fit_errors"),
                                        title=f"Pending pods by reason: {label}", id_=f"pending-{index}"))
    sections.append(settings_section(data, [(f"config {label}", runs[label].get("config")) for label in labels]))
    lead = f"{plural(len(labels), 'config')}, {plural(len(differences), 'pod')} placed differently"
    return "kschedlib compare", lead, sections


def _drained(data: Mapping[str, Any]) -> str:
    rows = []
    for entry in data["nodes"]:
        state = cell(f"not drained: {entry['blocked']}", class_="bad") if entry["blocked"] else cell("drained")
        stays = [f"{pod} ({why})" for pod, why in entry["left"].items()]
        rows.append([cell(entry["node"]), state, len(entry["moved"]), Cell(pod_list(stays))])
    return table(["node", "state", "pods moved", "pods that go with the node"], rows, numeric=(2,))


def drain_report(data: Mapping[str, Any]) -> Built:
    pods: Mapping[str, Any] = data["pods"]
    unschedulable: Mapping[str, str] = data["unschedulable"]
    drained = [e["node"] for e in data["nodes"] if not e["blocked"]]
    overview = figures([("nodes drained", len(drained)), ("not drained", len(data["blocked"])),
                        ("pods moved", len(pods)), ("unschedulable", len(unschedulable)),
                        ("evicted", len(data.get("evicted", []))), ("PDB violations", len(data["pdb_violations"]))])
    moved = [[cell(pod), cell(entry["from"]), _node_cell(entry["to"]), ", ".join(entry["flags"])]
             for pod, entry in pods.items()]
    sections = [Section("summary", "Summary", overview + el("h3", "Nodes") + _drained(data)),
                Section("moved", "Moved pods: before and after",
                        table(["pod", "was on", "goes to", "flags"], moved, id_="moved-table")),
                pending_section(unschedulable, title="Moved pods that fit nowhere")]
    if data["pdb_violations"]:
        rows = [[v["pod"], v["pdb"], v["disruptions_allowed"]] for v in data["pdb_violations"]]
        sections.append(Section("pdbs", "PodDisruptionBudget violations",
                                table(["pod", "budget", "disruptions allowed"], rows, numeric=(2,))))
    if data.get("evicted"):
        sections.append(Section("evicted", "Evicted by preemption", el("p", pod_list(data["evicted"]))))
    if data.get("pending"):
        sections.append(placements_section(data["pending"], title="The cluster's pending pods, placed first",
                                           id_="pending-placed"))
    sections += [*state_sections(data), settings_section(data)]
    lead = (f"{plural(len(drained), 'node')} drained, {plural(len(pods), 'pod')} moved, "
            f"{len(unschedulable)} unschedulable")
    return "kschedlib drain", lead, sections


_HEADLINES: dict[str, tuple[tuple[str, str], ...]] = {
    "simulate": (("scheduled", "summary.scheduled"), ("unschedulable", "summary.unschedulable"),
                 ("gated", "summary.gated")),
    "explain": (("selected", "selected"),),
    "capacity": (("more copies", "replicas"), ("stopped by", "stopped_by")),
    "drain": (("moved", "pods"), ("unschedulable", "unschedulable")),
    "nodes-needed": (("nodes needed", "nodes_needed"), ("not helped", "not_helped")),
    "compare": (("placed differently", "differences"),),
}
"""Per kind of scenario answer: the columns a sweep report shows (label, dotted path in the answer)."""


def _answer_kind(value: Any) -> str | None:
    if isinstance(value, Mapping):
        if "summary" in value and "pods_per_node" in value:  # the sweep's short simulate answer
            return "simulate"
        found = [kind for kind, keys in SIGNATURES.items() if keys <= value.keys()]
        return found[0] if len(found) == 1 else None
    return None


def _at(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return len(value) if isinstance(value, list | dict) else value


_ROW_KEYS = frozenset({"index", "scenario", "ok", "error", "seconds", "result", "traceback"})


def sweep_report(rows: Sequence[Mapping[str, Any]]) -> Built:
    kinds = {_answer_kind(row["result"]) for row in rows if row["ok"]}
    kind = next(iter(kinds)) if len(kinds) == 1 else None
    headlines = _HEADLINES.get(kind or "", ())
    axes = list(dict.fromkeys(key for row in rows for key in row if key not in _ROW_KEYS))
    failed = [row for row in rows if not row["ok"]]
    table_rows = []
    for row in rows:
        values = [_at(row["result"], path) if row["ok"] else None for _, path in headlines]
        labels = ("" if row.get(axis) is None else str(row[axis]) for axis in axes)
        table_rows.append([row["index"], cell(row["scenario"]), *labels,
                           cell("yes", class_="ok") if row["ok"] else cell("failed", class_="bad"),
                           *values, round(row.get("seconds") or 0.0, 3)])
    header = ["#", "scenario", *axes, "answered", *(label for label, _ in headlines), "seconds"]
    numeric = [0, *(i for i, (label, _) in enumerate(headlines, 3 + len(axes)) if label not in
                    ("selected", "stopped by")), len(header) - 1]
    sections = [Section("summary", "Summary", figures([("scenarios", len(rows)), ("answered", len(rows) - len(failed)),
                                                        ("failed", len(failed)), ("question", kind or "mixed")])),
                Section("scenarios", "Scenarios side by side", _chart(rows, headlines)
                        + table(header, table_rows, id_="scenarios-table", numeric=numeric))]
    if kind == "simulate":
        sections.append(_pods_per_node(rows))
    if failed:
        sections.append(Section("failed", "Failed scenarios",
                                table(["#", "scenario", "error"], [[r["index"], r["scenario"], r["error"]]
                                                                  for r in failed])))
    return "kschedlib sweep", f"{plural(len(rows), 'scenario')}, {len(failed)} failed", sections


def _chart(rows: Sequence[Mapping[str, Any]], headlines: Sequence[tuple[str, str]]) -> str:
    """Bars of the first numeric headline per scenario, scaled to the largest (scheduled share for simulate)."""
    found = [(label, path) for label, path in headlines
             if any(isinstance(_at(r["result"], path), int | float) for r in rows if r["ok"])]
    if not found:
        return ""
    label, path = found[0]
    values = {r["index"]: _at(r["result"], path) if r["ok"] else None for r in rows}
    pods = {r["index"]: _at(r["result"], "summary.pods") if r["ok"] else None for r in rows}
    share = path == "summary.scheduled"
    most = max((v for v in values.values() if isinstance(v, int | float)), default=0) or 1
    bars_rows = []
    for r in rows:
        value, total = values[r["index"]], pods[r["index"]]
        ratio = (value / total if total else None) if share and value is not None else (
            value / most if isinstance(value, int | float) else None)
        bars_rows.append((f"#{r['index']}", [(ratio, f"{r['scenario']}: {label} {value}"
                                                       + (f" of {total} pods" if share else ""))]))
    title = f"{label} per scenario" + (" (share of the pods)" if share else f" (scaled to the largest, {most})")
    scaled = None if share else (lambda ratio: "-" if ratio is None else f"{ratio * most:g}")
    return el("h3", esc(title)) + bars(bars_rows, [label], title, heat=False, text=scaled or percent)


def _pods_per_node(rows: Sequence[Mapping[str, Any]]) -> Section:
    answered = [row for row in rows if row["ok"]]
    nodes = sorted({n for row in answered for n in row["result"].get("pods_per_node", {})})
    matrix = [[cell(node), *(row["result"]["pods_per_node"].get(node, 0) for row in answered)] for node in nodes]
    header = ["node", *(f"#{row['index']}" for row in answered)]
    return Section("pods-per-node", "Pods per node, per scenario (columns: scenario numbers)",
                   table(header, matrix, id_="pods-per-node-table", numeric=range(1, len(header))))
