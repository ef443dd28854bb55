"""Loading kube-scheduler's recorded decisions (tests/data/conformance) and comparing kschedlib with them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kschedlib import Cluster, explain, load_cluster

DATA = Path(__file__).parent.parent / "data" / "conformance"
DATA_BY_VERSION = {"1.30": DATA, **{f"1.{m}": DATA.with_name(f"conformance-v1.{m}") for m in range(31, 37)}}
"""Real kube-scheduler decisions per minor: v1.30.6, v1.31.14, v1.32.13, v1.33.13, v1.34.9, v1.35.6, v1.36.3."""
CONFIG_HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def case_files(*folders: str, version: str = "1.30") -> list[Path]:
    root = DATA_BY_VERSION[version]
    return sorted(path for folder in folders for path in (root / folder).glob("*.json"))


def load_case(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def known_failing(path: Path) -> dict[str, dict[str, str]]:
    """A ratchet file: part -> case name -> why kschedlib still differs (empty when absent)."""
    known: dict[str, dict[str, str]] = json.loads(path.read_text()) if path.exists() else {}
    return known


def ratchet_param(case: Path, part: str, known: Path) -> object:
    """``case`` as a test parameter, strict xfail with the reason when ``known`` lists it under ``part``."""
    reason = known_failing(known).get(part, {}).get(case.stem)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(case, id=case.stem, marks=marks)


def _needs_a_limit(name: str) -> bool:
    """A resource the API server does not let a container overcommit (extended resources, hugepages)."""
    return name.startswith("hugepages-") or ("/" in name and "kubernetes.io/" not in name)


def admitted(pod: dict[str, Any]) -> dict[str, Any]:
    """``pod`` as an API server admits it.

    The oracle fed pods straight to kube-scheduler's framework through a fake API server, which does
    not validate, so a container may request an extended resource (or hugepages) without the limit a
    real API server requires; kschedlib refuses such a pod, as the API server does.  The limit it
    gets here equals the request, and no scheduling decision reads a limit: re-running the oracle
    on the scenarios with these limits gave the same ``expected`` (``tests/data/apiserver/SOURCE.md``).
    """
    spec = pod.get("spec") or {}
    changed = False
    containers: dict[str, list[dict[str, Any]]] = {}
    for key in ("containers", "initContainers"):
        containers[key] = []
        for container in spec.get(key) or []:
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, dict(resources.get("limits") or {})
            missing = {name: amount for name, amount in requests.items() if _needs_a_limit(name) and name not in limits}
            if missing:
                changed = True
                container = {**container, "resources": {**resources, "limits": {**limits, **missing}}}
            containers[key].append(container)
    if not changed:
        return pod
    return {**pod, "spec": {**spec, **{key: value for key, value in containers.items() if key in spec}}}


def _typed(objects: list[dict[str, Any]], kind: str) -> Iterator[dict[str, Any]]:
    for obj in objects:
        typed = obj if "kind" in obj else {"apiVersion": "v1", "kind": kind, **obj}
        yield admitted(typed) if typed["kind"] == "Pod" else typed


def scenario_cluster(scenario: dict[str, Any], *, pods_key: str = "pods") -> Cluster:
    """The scenario's namespaces, nodes, pods and extra objects as a cluster."""
    objects: list[Any] = [
        *scenario.get("namespaces", []),
        *_typed(scenario.get("nodes", []), "Node"),
        *_typed(scenario.get(pods_key, []), "Pod"),
        *scenario.get("objects", []),
    ]
    return load_cluster(objects)


def scenario_config(scenario: dict[str, Any]) -> dict[str, Any] | None:
    config = scenario.get("config")
    return None if config is None else {**CONFIG_HEADER, **config}


def case_version(case: dict[str, Any]) -> str:
    """The minor (``"1.36"``) of the case's ``kube_version`` (``v1.36.3``; v1.30.6 when absent)."""
    return ".".join(str(case.get("kube_version", "v1.30.6")).lstrip("v").split(".")[:2])


def run_explain(case: dict[str, Any]) -> dict[str, Any]:
    scenario = case["scenario"]
    result = explain(scenario_cluster(scenario), admitted(scenario["pod"]), scenario_config(scenario),
                     start_index=scenario.get("start_index", 0), kube_version=case_version(case),
                     feature_gates=case.get("feature_gates"))
    return result.to_dict()


def _normalize_reasons(status: dict[str, Any]) -> dict[str, Any]:
    """Several ``Insufficient`` reasons come from a Go map, so their order is unspecified."""
    reasons = status["reasons"]
    if sum(reason.startswith("Insufficient ") for reason in reasons) > 1:
        reasons = sorted(reasons)
    return {"plugin": status["plugin"], "code": status["code"], "reasons": reasons}


def decision_view(out: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """The fields of the scheduling decision that must equal kube-scheduler's, without PostFilter."""
    view = {
        "preenqueue": out["preenqueue"],
        "feasible": sorted(out["feasible"]),
        "filtered": {node: _normalize_reasons(s) for node, s in out["filtered"].items()},
        "scores": out["scores"],
        "best": out["best"],
        "message": out["message"],
        "prefilter": out["prefilter"],
        "prefilter_nodes": out["prefilter_nodes"],
        "num_all_nodes": out["num_all_nodes"],
        "evaluated_nodes": out["evaluated_nodes"],
        "selected_in_best": out["selected"] in out["best"] if out["best"] else out["selected"] is None,
    }
    if "next_start_index" in expected:
        view["next_start_index"] = out["next_start_index"]
    if expected.get("error"):
        view["error"] = out["error"]
    return view


def expected_view(expected: dict[str, Any]) -> dict[str, Any]:
    view = {
        "preenqueue": expected.get("preenqueue"),
        "feasible": sorted(expected["feasible"]),
        "filtered": {node: _normalize_reasons(s) for node, s in expected["filtered"].items()},
        "scores": expected["scores"],
        "best": sorted(expected["best"]),
        "message": expected["message"],
        "prefilter": expected["prefilter"],
        "prefilter_nodes": sorted(expected["prefilter_nodes"]) if expected["prefilter_nodes"] is not None else None,
        "num_all_nodes": expected["num_all_nodes"],
        "evaluated_nodes": expected["evaluated_nodes"],
        "selected_in_best": True,
    }
    if "next_start_index" in expected:
        view["next_start_index"] = expected["next_start_index"]
    if expected.get("error"):
        view["error"] = expected["error"]
    return view


def postfilter_view(postfilter: dict[str, Any] | None, *, exact_victims: bool) -> dict[str, Any] | None:
    if postfilter is None:
        return None
    view = {"code": postfilter["code"], "message": postfilter["message"]}
    if exact_victims:
        view["nominatedNode"] = postfilter["nominatedNode"]
        view["victims"] = sorted(postfilter["victims"])
    return view
