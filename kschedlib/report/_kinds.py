"""The reports of the commands that answer about one cluster: simulate, explain, capacity, nodes-needed.

Each builder takes the command's JSON (a dict) and returns ``(title, lead, sections)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedlib.explanation import bound_note
from kschedlib.report._fit_errors import rejections_of
from kschedlib.report._format import plural
from kschedlib.report._html import Cell, Section, cell, el, esc, figures, table
from kschedlib.report._sections import (
    fragmentation_section,
    pending_section,
    placements_section,
    pod_list,
    settings_section,
    utilisation_section,
)

__all__ = ["Built", "capacity_report", "explain_report", "nodes_needed_report", "simulate_report", "state_sections"]

Built = tuple[str, str, list[Section]]


def state_sections(data: Mapping[str, Any]) -> list[Section]:
    """Utilisation and fragmentation, when the result has them."""
    sections = []
    if data.get("utilisation"):
        sections.append(utilisation_section(data["utilisation"]))
    if data.get("fragmentation"):
        sections.append(fragmentation_section(data["fragmentation"]))
    return sections


def _nodes_of(data: Mapping[str, Any]) -> list[str]:
    util = data.get("utilisation") or {}
    state = util.get("after", util) or {}
    return list(state.get("nodes", {}))


def _not_tried(data: Mapping[str, Any]) -> dict[str, str]:
    pending = data.get("pending") or {}
    why = {pod: "held by " + (", ".join(pending.get(pod, {}).get("plugins") or []) or "a PreEnqueue plugin")
           for pod in data.get("gated", [])}
    why.update({pod: f"error: {entry['error']} ({plural(entry['attempts'], 'attempt')})"
                for pod, entry in (data.get("errors") or {}).items()})
    return why


def _events(data: Mapping[str, Any]) -> list[Section]:
    rows = [[pod, "nominated", node] for pod, node in (data.get("nominations") or {}).items()]
    rows += [[pod, "evicted by preemption", ""] for pod in data.get("evicted", [])]
    if not rows:
        return []
    return [Section("preemption", "Preemption", table(["pod", "what happened", "node"], rows))]


def _skipped(data: Mapping[str, Any]) -> list[Section]:
    skipped = {key: value for key, value in (data.get("skipped") or {}).items() if value}
    rows = [[key, len(value) if isinstance(value, list | dict) else value,
             Cell(pod_list([str(v) for v in value], "item")) if isinstance(value, list | dict) else ""]
            for key, value in skipped.items()]
    if not rows:
        return []
    return [Section("skipped", "Inputs not used", table(["what", "count", "which"], rows, numeric=(1,)))]


def simulate_report(data: Mapping[str, Any]) -> Built:
    summary = data["summary"]
    errors = data.get("errors") or {}
    unschedulable = {pod: message for pod, message in data["unschedulable"].items() if pod not in errors}
    pending = data.get("pending") or {}
    plugins = {pod: entry.get("plugins") or [] for pod, entry in pending.items()}
    overview = figures([("pods", summary["pods"]), ("scheduled", summary["scheduled"]),
                        ("unschedulable", summary["unschedulable"]), ("not tried", summary.get("gated", 0)),
                        ("evicted", len(data.get("evicted", [])))])
    sections = [Section("summary", "Summary", overview),
                pending_section(unschedulable, plugins=plugins, fit_errors=data.get("fit_errors"),
                                gated=_not_tried(data)),
                placements_section(data["placements"], _nodes_of(data)),
                *state_sections(data), *_events(data), *_skipped(data), settings_section(data)]
    lead = (f"{summary['scheduled']:,} of {plural(summary['pods'], 'pending pod')} scheduled, "
            f"{summary['unschedulable']:,} unschedulable, {summary.get('gated', 0):,} gated")
    return "kschedlib simulate", lead, sections


def _verdicts(data: Mapping[str, Any]) -> str:
    scores: Mapping[str, Any] = data["scores"]
    plugins = sorted({plugin for entry in scores.values() for plugin in entry["plugins"]})
    best = set(data["best"])
    rows: list[list[Any]] = []
    for node in data["feasible"]:
        entry = scores.get(node, {"plugins": {}, "total": None})
        verdict = "selected" if node == data["selected"] else ("best" if node in best else "feasible")
        rows.append([cell(node), cell(verdict, class_="ok"), entry["total"], "", "",
                     *(entry["plugins"].get(p) for p in plugins)])
    for node, status in data["filtered"].items():
        rows.append([cell(node), cell("rejected", class_="bad"), None, status["plugin"] or "PreFilter",
                     cell("; ".join(status["reasons"]), class_="text"), *([None] * len(plugins))])
    numeric = [2, *range(5, 5 + len(plugins))]
    return table(["node", "verdict", "total score", "rejected by", "reason", *plugins], rows, id_="verdicts",
                 numeric=numeric)


def explain_report(data: Mapping[str, Any]) -> Built:
    pod = data["pod"]
    sections = []
    if data.get("error") or data.get("skipped_pod") or data.get("preenqueue"):
        gate = data.get("preenqueue") or {}
        why = data.get("error") or data.get("skipped_pod") or f"{gate.get('plugin')}: {'; '.join(gate['reasons'])}"
        sections.append(Section("summary", "Summary", el("p", esc(f"{pod} is not tried: {why}"), class_="bad")))
        return f"kschedlib explain {pod}", "not tried", [*sections, *_skipped(data), settings_section(data)]
    overview = figures([("nodes", data["num_all_nodes"]), ("evaluated", data["evaluated_nodes"]),
                        ("feasible", len(data["feasible"])), ("rejected", len(data["filtered"])),
                        ("selected", data["selected"] or "none")])
    bound = data.get("bound_to")
    sections.append(Section("summary", "Summary", overview + (el("p", esc(f"{pod} is {bound_note(bound)}."))
                                                              if bound else "")))
    if data["message"]:
        sections.append(pending_section({pod: data["message"]}, fit_errors=[
            {"pods": [pod], "message": data["message"], "rejections": rejections_of(data["filtered"])}],
            title="Why it fits nowhere"))
    elif data["filtered"]:
        sections.append(Section("rejections", "Rejections by plugin",
                                table(["plugin", "reason", "nodes", "which"],
                                      [[r["plugin"] or "PreFilter", r["reason"], len(r["nodes"]),
                                        Cell(pod_list(r["nodes"], "node"))] for r in rejections_of(data["filtered"])],
                                      numeric=(2,))))
    sections.append(Section("nodes", "Every node's verdict and scores", _verdicts(data)))
    post = data.get("postfilter")
    if post:
        text = (f"nominate {post['nominatedNode']}, evicting {', '.join(post['victims']) or 'nothing'}"
                if post["nominatedNode"] else str(post["message"] or "no node"))
        sections.append(Section("preemption", "Preemption", el("p", esc(text))))
    sections += [*_skipped(data), settings_section(data)]
    lead = f"goes to {data['selected']}" if data["selected"] else "fits nowhere"
    return f"kschedlib explain {pod}", f"bound to {bound}; as written, it {lead}" if bound else lead, sections


def capacity_report(data: Mapping[str, Any]) -> Built:
    templates: Mapping[str, Any] = data["templates"]
    names = list(templates)
    per_node = sorted(data["placements"])
    rows = [[cell(node), data["placements"][node],
             *(templates[t]["placements"].get(node, 0) for t in names)] for node in per_node]
    overview = figures([("more copies fit", data["replicas"]), *((t, templates[t]["replicas"]) for t in names)])
    sections = [Section("summary", "Summary", overview), _stopped(data),
                Section("copies", "Copies per node", table(["node", "copies", *names], rows, id_="copies-table",
                                                          numeric=range(1, 2 + len(names))))]
    pending = data.get("pending") or {}
    if pending and data.get("include_pending", True):
        sections.append(placements_section(pending, title="The cluster's pending pods, placed first",
                                           id_="pending-placed"))
    elif pending:
        sections.append(Section("pending-left-out", "The cluster's pending pods, left out", el("p", esc(
            f"{plural(len(pending), 'pending pod')} of the cluster were not scheduled before the copies "
            "(--include-pending schedules them first): "), pod_list(sorted(pending)))))
    sections += [*_events(data), *state_sections(data), settings_section(data)]
    lead = f"{plural(data['replicas'], 'more copy', 'more copies')} of {', '.join(names)} fit"
    return "kschedlib capacity", lead, sections


def _stopped(data: Mapping[str, Any]) -> Section:
    """What stopped the copies: the next copy's FitError (or the limit), and the victims when a preemption
    would have made room for it."""
    stop = data["stopped_by"]
    if stop is None:
        return Section("stopped", "What stopped it", el("p", "The limit (--max)."))
    section = pending_section({f"{data['stopped_pod']} (next copy)": stop}, title="What stopped it", id_="stopped")
    preemption = data.get("preemption")
    if not preemption:
        return section
    victims = el("p", el("strong", "Preemption would help: "), esc(
        f"the next copy would fit on {preemption['node']} by preempting lower-priority pods: "),
        pod_list(preemption["victims"]), class_="preemption")
    return Section(section.id, section.title, section.html + victims)


def nodes_needed_report(data: Mapping[str, Any]) -> Built:
    count = data["nodes_needed"]
    new = data["new_nodes"]
    overview = figures([("nodes needed", count), ("template", data["template"]), ("searched up to", data["max"]),
                        ("pods placed", len(data["placements"])), ("not helped", len(data["not_helped"]))])
    sections = [Section("summary", "Summary", overview + (el("p", el("strong", "New nodes: "), pod_list(new, "node"))
                                                          if new else "")),
                pending_section(data["not_helped"], title="Pods no number of such nodes helps", id_="not-helped"),
                placements_section(data["placements"], _nodes_of(data)), *_events(data)]
    if data.get("fit_today"):
        sections.append(Section("fit-today", "Left out: they fit on an existing node today", el("p", esc(
            f"{plural(len(data['fit_today']), 'pending pod')}, each checked on its own, fit on a node of the "
            "cluster as it is (--only-unschedulable plans only for the others): "), pod_list(data["fit_today"]))))
    sections += [*state_sections(data), settings_section(data)]
    lead = f"{plural(count, 'node')} of template {data['template']} needed (searched up to {data['max']})"
    return "kschedlib nodes-needed", lead, sections
