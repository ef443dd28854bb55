"""The sections every kind of report shares: version and config, utilisation, fragmentation, pending
pods by reason, placements per node."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from kschedlib.report._charts import bars, heat_legend, heatmap
from kschedlib.report._fit_errors import parse_fit_error
from kschedlib.report._format import amount, percent, plural
from kschedlib.report._html import Cell, Section, cell, el, esc, table

__all__ = ["fragmentation_section", "pending_section", "placements_section", "pod_list", "resources_of",
           "ratio_bar", "settings_section", "utilisation_section", "zone_charts"]

FIRST_RESOURCES: Final = ("cpu", "memory", "pods")
INLINE_NAMES: Final = 12
"""Lists longer than this are folded into a ``<details>`` (still in the page, searchable, printable)."""


def pod_list(names: Sequence[str], noun: str = "pod") -> str:
    """Names as a comma-separated line, folded behind a summary when there are many."""
    text = esc(", ".join(names))
    if len(names) <= INLINE_NAMES:
        return el("span", text, class_="pods")
    return el("details", el("summary", esc(plural(len(names), noun))), el("p", text, class_="pods"))


def resources_of(util: Mapping[str, Any]) -> list[str]:
    """The resources of a utilisation section: cpu, memory, pods, then the others by name."""
    names = set(util.get("total", {}))
    return [r for r in FIRST_RESOURCES if r in names] + sorted(names - set(FIRST_RESOURCES))


def settings_section(data: Mapping[str, Any], configs: Sequence[tuple[str, Any]] | None = None) -> Section:
    """The kube-scheduler version, feature gates and config(s) the result is for (``configs``: label and
    ``config`` section per run, default the result's own), each config's document folded below."""
    gates = data.get("feature_gates") or {}
    rows = [("kube-scheduler version", str(data.get("kube_version") or "not recorded")),
            ("feature gates set", ", ".join(f"{k}={str(v).lower()}" for k, v in gates.items())
             or "none (the version's defaults)")]
    documents = []
    for label, config in configs if configs is not None else [("scheduler config", data.get("config"))]:
        if not isinstance(config, Mapping):
            rows.append((label, "not recorded"))
            continue
        rows.append((label, str(config.get("source") or "default")))
        if config.get("document") is not None:
            documents.append(el("details", el("summary", esc(f"{label}: the KubeSchedulerConfiguration")),
                                el("pre", esc(json.dumps(config["document"], indent=2)))))
    parts = [el("table", el("tbody", *(el("tr", el("th", esc(k), scope="row"), el("td", esc(v))) for k, v in rows)),
                class_="settings"), *documents]
    notes = data.get("notes") or []
    if notes:
        parts.append(el("ul", *(el("li", esc(note)) for note in notes), class_="notes"))
    return Section("settings", "Version and config", "".join(parts))


def _stages(util: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``[(label, utilisation)]``: before and after when the result has both, else the one state."""
    if "after" in util:
        return [(label, util[label]) for label in ("before", "after") if util.get(label) is not None]
    return [("now", util)]


def _tip(name: str, resource: str, entry: Mapping[str, Any] | None) -> str:
    if entry is None:
        return f"{name}: no {resource}"
    return (f"{name} {resource}: {percent(entry.get('ratio'))} ({amount(resource, entry['requested'])} of "
            f"{amount(resource, entry['allocatable'])})")


def zone_charts(labels: Sequence[str], states: Sequence[Mapping[str, Any]]) -> str:
    """Per resource, a bar per zone (and for all nodes) and per state: before and after, or one per config."""
    zones = list(dict.fromkeys(z for state in states for z in state.get("zones", {})))
    charts = []
    for resource in resources_of(states[-1]):
        rows = []
        for zone in [*zones, "all nodes"]:
            values = []
            for label, state in zip(labels, states, strict=True):
                entry = state.get("total", {}) if zone == "all nodes" else state.get("zones", {}).get(zone, {})
                item = entry.get(resource)
                values.append((item.get("ratio") if item else None, _tip(f"{label}, {zone}", resource, item)))
            rows.append((zone, values))
        charts.append(el("div", el("h3", esc(resource)), bars(rows, labels, f"{resource} requested per zone")))
    return el("div", *charts, class_="side")


def utilisation_section(util: Mapping[str, Any], *, id_: str = "utilisation",
                        title: str = "Utilisation") -> Section:
    """Requested / allocatable per zone (bars, before and after) and per node (heat map and table)."""
    stages = _stages(util)
    last_label, last = stages[-1]
    first = stages[0][1] if len(stages) > 1 else None
    resources = resources_of(last)
    nodes = list(last.get("nodes", {}))
    heat = [(resource, [(last["nodes"][n].get(resource, {}).get("ratio"), _tip(n, resource, last["nodes"][n].get(
        resource))) for n in nodes]) for resource in resources]
    earlier = first.get("nodes", {}) if first is not None else None
    rows = [[cell(name), *(_bar(last["nodes"][name].get(r), r, _before(earlier, name, r)) for r in resources)]
            for name in nodes]
    gone = [n for n in (first or {}).get("nodes", {}) if n not in last.get("nodes", {})]
    parts = [el("p", esc(f"Requested of allocatable, {last_label if len(stages) > 1 else 'per resource'}; "
                         f"{plural(len(nodes), 'node')}."), class_="muted"),
             el("h3", "Per zone"), zone_charts([label for label, _ in stages], [state for _, state in stages]),
             el("h3", "Per node"), heat_legend(), heatmap(nodes, heat, "requested per node", table=f"{id_}-nodes"),
             table(["node", *resources], rows, id_=f"{id_}-nodes", numeric=range(1, len(resources) + 1))]
    if gone:
        parts.append(el("p", esc(f"Not in the cluster {last_label}: "), pod_list(gone, "node")))
    return Section(id_, title, "".join(parts))


def ratio_bar(ratio: float | None, text: str | None = None) -> Cell:
    """A table cell: ``text`` (default the percentage) over a bar of ``ratio``; it sorts by its leading number."""
    width = min(max(ratio or 0.0, 0.0), 1.0) * 100
    return Cell(el("span", esc(percent(ratio) if text is None else text), style=f"--r:{width:.0f}%"))


def _before(nodes: Mapping[str, Any] | None, name: str, resource: str) -> Mapping[str, Any] | str | None:
    """A node's entry for ``resource`` before: ``None`` when the result has one state only, ``"new"`` for a
    node that was not there."""
    if nodes is None:
        return None
    if name not in nodes:
        return "new"
    entry: Mapping[str, Any] | None = nodes[name].get(resource)
    return entry


def _bar(entry: Mapping[str, Any] | None, resource: str, before: Mapping[str, Any] | str | None) -> Cell:
    """A utilisation table cell: the figures as text over a bar of the ratio, and the ratio before when it
    changed (``new``: the node was added)."""
    if entry is None:
        return Cell("-")
    ratio = entry.get("ratio")
    text = f"{percent(ratio)} ({amount(resource, entry['requested'])} of {amount(resource, entry['allocatable'])})"
    if before == "new":
        text += ", new node"
    elif isinstance(before, Mapping) and before.get("ratio") != ratio:
        text += f", was {percent(before.get('ratio'))}"
    return ratio_bar(ratio, text)


def fragmentation_section(frag: Mapping[str, Any]) -> Section:
    """Free capacity that none of the pod shapes in question can use, per resource (before and after)."""
    stages = [(label, frag[label]) for label in ("before", "after") if frag.get(label) is not None] \
        if "after" in frag or "before" in frag else [("now", frag)]
    if not stages:
        return Section("fragmentation", "Fragmentation", el("p", "No pod shapes to judge by."))
    parts = [el("p", esc("Free capacity is stranded on a node when none of the "
                         f"{plural(stages[-1][1]['shapes'], 'pod shape')} in question fits in it by resources."),
                class_="muted")]
    rows = []
    for label, state in stages:
        for resource, entry in state["resources"].items():
            rows.append([label, resource, Cell(esc(amount(resource, entry["free"])), entry["free"]),
                         Cell(esc(amount(resource, entry["stranded"])), entry["stranded"]),
                         Cell(esc(percent(entry["ratio"])), entry["ratio"])])
    parts.append(table(["state", "resource", "free", "stranded", "stranded share"], rows, id_="fragmentation-table",
                       numeric=(2, 3, 4)))
    parts.append(el("p", esc("; ".join(f"{label}: {plural(state['nodes_without_room'], 'node')} without room "
                                       "for any of them" for label, state in stages))))
    return Section("fragmentation", "Fragmentation", "".join(parts))


def _rejection_table(rejections: Sequence[Mapping[str, Any]]) -> str:
    rows = [[r["plugin"] or "(extender or PreFilter)", r["reason"], len(r["nodes"]), Cell(pod_list(r["nodes"], "node"))]
            for r in rejections]
    return table(["plugin", "reason", "nodes", "which"], rows, numeric=(2,))


def _group(index: int, message: str, pods: Sequence[str], plugins: Sequence[str],
           rejections: Sequence[Mapping[str, Any]] | None) -> str:
    parsed = parse_fit_error(message)
    parts = [el("h3", esc(f"{plural(len(pods), 'pod')}: "), el("span", esc(message), class_="bad"),
                id=f"reason-{index}")]
    parts.append(el("p", el("strong", "Pods: "), pod_list(pods)))
    if plugins:
        parts.append(el("p", el("strong", "Rejected by: "), esc(", ".join(plugins))))
    if rejections:
        parts.append(_rejection_table(rejections))
    elif parsed.reasons:
        parts.append(table(["reason", "nodes"], [[reason, count] for count, reason in parsed.reasons], numeric=(1,)))
    if parsed.rest:
        parts.append(el("p", el("strong", "Preemption: "), esc(parsed.rest)))
    return el("div", *parts, class_="reason")


def pending_section(unschedulable: Mapping[str, str], *, plugins: Mapping[str, Sequence[str]] | None = None,
                    fit_errors: Sequence[Mapping[str, Any]] | None = None,
                    gated: Mapping[str, str] | None = None, title: str = "Pending pods by reason",
                    id_: str = "pending") -> Section:
    """Pods that fit nowhere, grouped by their FitError message, each group with its breakdown per reason
    (or per plugin, reason and node when the result has it); gated pods apart."""
    groups: dict[tuple[str, int | None], list[str]] = {}
    breakdowns: list[Sequence[Mapping[str, Any]]] = []
    for index, entry in enumerate(fit_errors or ()):
        breakdowns.append(entry["rejections"])
        for pod in entry["pods"]:
            groups.setdefault((unschedulable.get(pod, entry["message"]), index), []).append(pod)
    placed = {pod for members in groups.values() for pod in members}
    for pod, message in unschedulable.items():
        if pod not in placed:
            groups.setdefault((message, None), []).append(pod)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0][0]))
    parts = []
    for index, ((message, breakdown), pods) in enumerate(ordered):
        rejecting = sorted({p for pod in pods for p in (plugins or {}).get(pod, ())})
        parts.append(_group(index, message, pods, rejecting, breakdowns[breakdown] if breakdown is not None else None))
    if gated:
        parts.append(el("h3", esc(f"{plural(len(gated), 'pod')} not tried")))
        parts.append(table(["pod", "why"], [[pod, why] for pod, why in gated.items()]))
    if not parts:
        parts.append(el("p", "Every pod found a node.", class_="ok"))
    lead = el("p", esc(f"{plural(len(unschedulable), 'pod')} fit nowhere, for "
                       f"{plural(len(ordered), 'reason')}."), class_="muted") if unschedulable else ""
    return Section(id_, title, lead + "".join(parts))


def placements_section(placements: Mapping[str, str | None], nodes: Iterable[str] = (), *,
                       title: str = "Placements per node", id_: str = "placements") -> Section:
    """Which pods went to each node (every known node listed, also those that got none)."""
    per_node: dict[str, list[str]] = {name: [] for name in nodes}
    for pod, node in placements.items():
        if node is not None:
            per_node.setdefault(node, []).append(pod)
    counts = Counter({node: len(pods) for node, pods in per_node.items()})
    most = max(counts.values(), default=0) or 1
    rows = [[cell(node), ratio_bar(len(pods) / most, str(len(pods))), Cell(pod_list(sorted(pods)))]
            for node, pods in sorted(per_node.items())]
    placed = sum(counts.values())
    lead = el("p", esc(f"{plural(placed, 'pod')} placed on {plural(sum(1 for c in counts.values() if c), 'node')}."),
              class_="muted")
    return Section(id_, title, lead + table(["node", "pods placed", "which"], rows, id_=f"{id_}-table",
                                            numeric=(1,)))
