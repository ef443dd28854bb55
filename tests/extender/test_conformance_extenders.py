"""kube-scheduler v1.30.6's decisions with HTTP extenders (tests/data/conformance/extenders), replayed.

Each file was recorded against the deterministic stub extender
(``tests/extender_stub.py``); the same stubs are started here on 127.0.0.1 and
kschedlib's :class:`~kschedlib.extender.HTTPExtender` talks to them.  Besides
the decision (feasible and filtered nodes, scores with the extenders' entries,
best nodes, messages, preemption, who bound each pod), what every stub
*received* must equal what it received from kube-scheduler: same verbs, keys
and node sets, in the same order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kschedlib import Scheduler, explain
from tests.extender_stub import StubPool, substitute, unsubstitute
from tests.scenarios.conformance import (
    case_files,
    case_version,
    decision_view,
    expected_view,
    load_case,
    postfilter_view,
    scenario_cluster,
    scenario_config,
)

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

CASES = case_files("extenders")
EXPLAIN = [p for p in CASES if load_case(p)["mode"] == "explain"]
SEQUENCES = [p for p in CASES if load_case(p)["mode"] == "sequence"]


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def test_every_recorded_case_is_replayed() -> None:
    assert len(CASES) == len(EXPLAIN) + len(SEQUENCES) >= 12


def _stub_log(pool: StubPool, count: int) -> list[list[dict[str, Any]]]:
    return [pool.requests(k) for k in range(count)]


def replay_explain(case: dict[str, Any]) -> tuple[dict[str, Any], list[list[dict[str, Any]]], Any]:
    """The case's pod explained against the stub extenders (with the case's kube version).

    Returns the explanation as a dict, what each stub received, and the cycle's outcome.
    """
    scenario = case["scenario"]
    with StubPool(scenario["extenders"]) as pool:
        live = substitute(scenario, pool.ports)
        explanation = explain(scenario_cluster(live), live["pod"], scenario_config(live),
                              kube_version=case_version(case))
        out = unsubstitute(explanation.to_dict(), pool.ports)
        requests = unsubstitute(_stub_log(pool, len(scenario["extenders"])), pool.ports)
    return out, requests, explanation.outcome


def explain_differences(case: dict[str, Any]) -> list[str]:
    """Which parts of an explain-mode case differ from the recording (empty: it matches)."""
    expected = case["expected"]
    out, requests, outcome = replay_explain(case)
    differ = []
    if decision_view(out, expected) != expected_view(expected):
        differ.append("decision")
    if postfilter_view(out["postfilter"], exact_victims=True) != postfilter_view(
            expected.get("postfilter"), exact_victims=True):
        differ.append("postfilter")
    if "unschedulable_plugins" in expected and (
            outcome is None or outcome.diagnosis is None
            or sorted(outcome.diagnosis.unschedulable_plugins) != sorted(expected["unschedulable_plugins"])):
        differ.append("unschedulable_plugins")
    if requests != case["stub_requests"]:
        differ.append("stub_requests")
    return differ


@pytest.mark.parametrize("path", EXPLAIN, ids=_ids(EXPLAIN))
def test_explain_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    expected = case["expected"]
    out, requests, outcome = replay_explain(case)
    assert decision_view(out, expected) == expected_view(expected)
    assert postfilter_view(out["postfilter"], exact_victims=True) == postfilter_view(
        expected.get("postfilter"), exact_victims=True)
    assert outcome is not None
    if "unschedulable_plugins" in expected:
        assert outcome.diagnosis is not None
        assert sorted(outcome.diagnosis.unschedulable_plugins) == sorted(expected["unschedulable_plugins"])
    assert requests == case["stub_requests"]


def _bound_by(requests: list[list[dict[str, Any]]], pod: str) -> str:
    namespace, name = pod.split("/")
    binds = [r for log in requests for r in log if r.get("action") == "bind"]
    hit = any(r["PodNamespace"] == namespace and r["PodName"] == name for r in binds)
    return "extender" if hit else "plugins"


def _step_view(step: dict[str, Any]) -> dict[str, Any]:
    return {
        "result": step["result"],
        "node": step["node"],
        "feasible": sorted(step["feasible"]),
        "filtered": step["filtered"],
        "totals": {node: entry["total"] for node, entry in step["scores"].items()},
        "best": sorted(step["best"]),
        "message": step["message"],
        "bound_by": step.get("bound_by"),
    }


@pytest.mark.parametrize("path", SEQUENCES, ids=_ids(SEQUENCES))
def test_sequence_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    scenario, expected = case["scenario"], case["expected"]
    with StubPool(scenario["extenders"]) as pool:
        live = substitute(scenario, pool.ports)
        scheduler = Scheduler(scenario_config(live), seed=0, retry_unschedulable=False)
        scheduler.add_objects(scenario_cluster(live, pods_key="pods").objects)
        scheduler.add_objects(scenario_cluster({"pending": live["pending"]}, pods_key="pending").objects)
        results = scheduler.run_until_idle()
        placements = scheduler.bound_pods()
        requests = unsubstitute(_stub_log(pool, len(scenario["extenders"])), pool.ports)
    by_pod = {result.pod.key: result for result in results}
    for step in expected["steps"]:
        result = by_pod[step["pod"]]
        outcome = result.outcome
        assert outcome is not None
        # The sequence recorder kept the Filter plugins' statuses only (extender rejections are in the
        # explain files, with plugin ""), so those are compared here.
        statuses = {name: {"plugin": s.plugin, "code": s.code.label, "reasons": list(s.all_reasons())}
                    for name, s in outcome.node_statuses.items() if s.plugin}
        totals = {}
        if outcome.scores is not None and len(outcome.scored_nodes) > 1:
            totals = dict(zip(outcome.scored_nodes, outcome.scores.totals, strict=True))
        got = {
            "result": "bound" if result.scheduled else "unschedulable",
            "node": result.node_name,
            "feasible": sorted(outcome.feasible),
            "filtered": statuses,
            "totals": totals,
            "best": sorted(outcome.best),
            "message": outcome.message,
            "bound_by": _bound_by(requests, step["pod"]) if result.scheduled else None,
        }
        assert got == _step_view(step), step["pod"]
    assert placements == {pod: node for pod, node in expected["placements"].items() if node is not None}
    assert requests == case["stub_requests"]
