"""kube-scheduler v1.30.6's recorded scheduling loops (sequences/), replayed one step at a time through ``explain``.

Every pending pod got exactly one attempt in kube-scheduler.  Each step is
explained against the cluster as the earlier steps left it, compared with the
recording (including the preemption part of the message, the nomination and
the victims), and then the recorded outcome is applied: the pod is bound to
the node kube-scheduler picked (which must be one of our best nodes), or it is
nominated and its victims are deleted.  Pods nominated earlier stay pending
with ``status.nominatedNodeName`` and count as nominated pods in later steps.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from kschedlib import explain
from tests.scenarios.conformance import case_files, load_case, scenario_cluster

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

CASES = case_files("sequences")
XFAIL: dict[str, str] = {}
"""Sequence files that cannot pass yet for reasons outside preemption (strict)."""


def _key(pod: dict[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace', 'default')}/{meta['name']}"


def _param(path: Path) -> object:
    reason = XFAIL.get(path.stem)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(path, id=f"sequences/{path.stem}", marks=marks)


def _reasons(status: dict[str, Any]) -> dict[str, Any]:
    """Several ``Insufficient`` reasons come from a Go map, so their order is unspecified."""
    reasons = status["reasons"]
    if sum(reason.startswith("Insufficient ") for reason in reasons) > 1:
        reasons = sorted(reasons)
    return {"plugin": status["plugin"], "code": status["code"], "reasons": reasons}


def _view(step: dict[str, Any]) -> dict[str, Any]:
    return {
        "feasible": sorted(step["feasible"]),
        "filtered": {node: _reasons(status) for node, status in step["filtered"].items()},
        "prefilter": step["prefilter"],
        "scores": step["scores"],
        "best": sorted(step["best"]),
        "message": step["message"],
        "nominatedNode": step.get("nominatedNode"),
        "victims": sorted(step.get("victims") or []),
    }


class _Replay:
    """The cluster between steps: bound pods, and pending pods with their nominations."""

    def __init__(self, scenario: dict[str, Any]) -> None:
        self.namespaces = scenario.get("namespaces", [])
        self.nodes = scenario["nodes"]
        self.bound = {_key(pod): copy.deepcopy(pod) for pod in scenario.get("pods", [])}
        self.pending = {_key(pod): copy.deepcopy(pod) for pod in scenario.get("pending", [])}

    def explain(self, pod: str) -> dict[str, Any]:
        cluster = scenario_cluster({"namespaces": self.namespaces, "nodes": self.nodes,
                                    "pods": [*self.bound.values(), *self.pending.values()]})
        explanation = explain(cluster, pod)
        out = explanation.to_dict()
        outcome = explanation.outcome
        assert outcome is not None, out
        post = out["postfilter"] or {}
        return {
            "feasible": out["feasible"],
            "filtered": {node: _reasons(status) for node, status in out["filtered"].items()},
            "prefilter": out["prefilter"],
            "scores": out["scores"] if len(out["feasible"]) > 1 else {},  # kube does not score a lone node
            "best": out["best"],
            "message": outcome.message,
            "nominatedNode": post.get("nominatedNode"),
            "victims": sorted(post.get("victims") or []),
        }

    def gate(self, pod: str) -> dict[str, Any] | None:
        """The PreEnqueue status that holds ``pod`` back, if any."""
        cluster = scenario_cluster({"namespaces": self.namespaces, "nodes": self.nodes,
                                    "pods": [*self.bound.values(), *self.pending.values()]})
        gate: dict[str, Any] | None = explain(cluster, pod).to_dict()["preenqueue"]
        return gate

    def apply(self, step: dict[str, Any]) -> None:
        key = step["pod"]
        pod = self.pending[key]
        if step["result"] == "bound":
            del self.pending[key]
            pod["spec"]["nodeName"] = step["node"]
            pod.setdefault("status", {}).pop("nominatedNodeName", None)
            self.bound[key] = pod
            return
        node = step.get("nominatedNode")
        if not node:
            return
        for victim in step.get("victims") or []:
            self.bound.pop(victim, None)
        priority = pod["spec"].get("priority", 0)
        for other in self.pending.values():
            status = other.get("status", {})
            if status.get("nominatedNodeName") == node and other["spec"].get("priority", 0) < priority:
                del status["nominatedNodeName"]
        pod.setdefault("status", {})["nominatedNodeName"] = node


@pytest.mark.parametrize("path", [_param(p) for p in CASES])
def test_sequence_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    replay = _Replay(case["scenario"])
    steps = case["expected"]["steps"]
    assert steps, "a sequence without steps tests nothing"
    for index, step in enumerate(steps):
        got = replay.explain(step["pod"])
        assert got == _view(step), f"step {index}: {step['pod']}"
        if step["result"] == "bound":
            assert step["node"] in got["best"], f"step {index}: {step['pod']} bound outside our best nodes"
        replay.apply(step)
    gated = set(case["expected"].get("gated", []))
    assert gated.isdisjoint(step["pod"] for step in steps)
    for pod in sorted(gated):
        assert replay.gate(pod) is not None, f"{pod} is held by a scheduling gate"
    placements = case["expected"]["placements"]
    assert {key: node for key, node in placements.items() if node is not None} == {
        step["pod"]: step["node"] for step in steps if step["result"] == "bound"}
