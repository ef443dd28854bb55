"""kube-scheduler v1.30.6's real scheduling loop on timelines, replayed through ``simulate --events``."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from kschedlib import load_cluster, simulate
from tests.scenarios.conformance import case_files, load_case, scenario_config

CASES = case_files("loop")


def _run(case: dict[str, Any]) -> dict[str, Any]:
    scenario = case["scenario"]
    objects = [*scenario.get("namespaces", []), *scenario["nodes"], *scenario.get("pods", []),
               *scenario.get("pending", []), *scenario.get("objects", [])]
    report = simulate(load_cluster(objects), scenario_config(scenario), events=scenario.get("events") or [])
    out = report.to_dict()
    out["trace"] = report.trace
    return out


def _per_pod(trace: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in trace:
        grouped[entry["pod"]].append({k: v for k, v in entry.items() if v not in ("", None, [])})
    return dict(grouped)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_timeline_outcome_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    expected = case["expected"]
    out = _run(case)
    assert out["placements"] == expected["placements"]
    assert out["pending"] == expected["pending"]
    assert out["evicted"] == expected["evicted"]
    assert out.get("checkpoints", []) == expected["checkpoints"]
    assert out.get("deleted_by_events", []) == expected["deleted_by_events"]


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_timeline_trace_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    expected = case["expected"]
    out = _run(case)
    assert out["bind_order"] == expected["bind_order"]
    assert out["attempts"] == expected["attempts"]
    if expected.get("trace_interleaving_varies"):
        assert _per_pod(out["trace"]) == _per_pod(expected["trace"])
    else:
        assert [{k: v for k, v in e.items() if v not in ("", None, [])} for e in out["trace"]] == [
            {k: v for k, v in e.items() if v not in ("", None, [])} for e in expected["trace"]]
