"""kube-scheduler v1.30.6's real scheduling loop on timelines, replayed through ``simulate --events``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kschedlib import load_cluster, simulate
from tests.scenarios.conformance import case_files, case_version, load_case, scenario_config

CASES = case_files("loop")


def run_timeline(case: dict[str, Any]) -> dict[str, Any]:
    """The case's timeline through ``simulate`` with the case's kube version (and feature gates, if it names
    any): the report and its trace."""
    scenario = case["scenario"]
    objects = [*scenario.get("namespaces", []), *scenario["nodes"], *scenario.get("pods", []),
               *scenario.get("pending", []), *scenario.get("objects", [])]
    report = simulate(load_cluster(objects), scenario_config(scenario), events=scenario.get("events") or [],
                      kube_version=case_version(case), feature_gates=case.get("feature_gates"))
    out = report.to_dict()
    out["trace"] = report.trace
    return out


def trace_view(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if v not in ("", None, [])} for e in entries]


def outcome_view(out: dict[str, Any]) -> dict[str, Any]:
    """What a timeline ended with: placements, pending pods, evictions, checkpoints, deletions, and the
    events whose trigger never came."""
    return {"placements": out["placements"], "pending": out["pending"], "evicted": out["evicted"],
            "checkpoints": out.get("checkpoints", []), "deleted_by_events": out.get("deleted_by_events", []),
            "events_not_applied": out.get("events_not_applied", [])}


def trace_matches(out: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Bind order, attempts and the cycle-by-cycle trace (per pod where kube's interleaving varies)."""
    if out["bind_order"] != expected["bind_order"] or out["attempts"] != expected["attempts"]:
        return False
    if expected.get("trace_interleaving_varies"):
        return _per_pod(out["trace"]) == _per_pod(expected["trace"])
    return trace_view(out["trace"]) == trace_view(expected["trace"])


def _per_pod(trace: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in trace:
        grouped[entry["pod"]].append({k: v for k, v in entry.items() if v not in ("", None, [])})
    return dict(grouped)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_timeline_outcome_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    expected = case["expected"]
    out = run_timeline(case)
    assert outcome_view(out) == outcome_view(expected)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_timeline_trace_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    expected = case["expected"]
    out = run_timeline(case)
    assert out["bind_order"] == expected["bind_order"]
    assert out["attempts"] == expected["attempts"]
    if expected.get("trace_interleaving_varies"):
        assert _per_pod(out["trace"]) == _per_pod(expected["trace"])
    else:
        assert trace_view(out["trace"]) == trace_view(expected["trace"])
