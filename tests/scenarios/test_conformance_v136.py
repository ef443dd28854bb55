"""kube-scheduler v1.36.3's recorded decisions, replayed through ``explain(..., kube_version="1.36")``.

Cases kschedlib does not reproduce yet are listed, with the reason, in
``tests/data/conformance-v1.36/known-failing.json`` and marked strict xfail: a case that starts
passing must leave the list, and a passing case that breaks fails.  Regenerate the list after a
change with ``python -m tests.scenarios.test_conformance_v136`` (it keeps the written reasons).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.scenarios.conformance import (
    DATA_BY_VERSION,
    case_files,
    decision_view,
    expected_view,
    known_failing,
    load_case,
    postfilter_view,
    ratchet_param,
    run_explain,
)

KNOWN_FAILING = DATA_BY_VERSION["1.36"] / "known-failing.json"
CASES = case_files("explain", version="1.36")


def _known() -> dict[str, dict[str, str]]:
    return known_failing(KNOWN_FAILING)


def _param(path: Path, part: str) -> object:
    return ratchet_param(path, part, KNOWN_FAILING)


def decision_matches(case: dict[str, Any], out: dict[str, Any]) -> bool:
    return decision_view(out, case["expected"]) == expected_view(case["expected"])


def postfilter_matches(path: Path, case: dict[str, Any], out: dict[str, Any]) -> bool:
    exact = path.stem.startswith("pre-")
    return postfilter_view(out["postfilter"], exact_victims=exact) == postfilter_view(
        case["expected"].get("postfilter"), exact_victims=exact)


@pytest.mark.parametrize("path", [_param(p, "decision") for p in CASES])
def test_decision_matches_kube_scheduler_v136(path: Path) -> None:
    case = load_case(path)
    out = run_explain(case)
    assert decision_view(out, case["expected"]) == expected_view(case["expected"])


@pytest.mark.parametrize("path", [_param(p, "postfilter") for p in CASES])
def test_postfilter_matches_kube_scheduler_v136(path: Path) -> None:
    case = load_case(path)
    out = run_explain(case)
    if case["expected"].get("pod_has_nodename"):
        pytest.skip("kube-scheduler's recorded PostFilter is an artifact of a pod that already had a node")
    assert postfilter_matches(path, case, out)


def regenerate() -> dict[str, dict[str, str]]:
    """Rerun every case; keep the reasons of cases that still fail, name new failures generically."""
    old = _known()
    new: dict[str, dict[str, str]] = {"decision": {}, "postfilter": {}}
    for path in CASES:
        case = load_case(path)
        try:
            out = run_explain(case)
            results = {"decision": decision_matches(case, out),
                       "postfilter": case["expected"].get("pod_has_nodename") or postfilter_matches(path, case, out)}
            failure = "differs from kube-scheduler v1.36.3"
        except Exception as exc:
            results = {"decision": False, "postfilter": False}
            failure = f"raises {type(exc).__name__}: {exc}"[:160]
        for part, ok in results.items():
            if not ok:
                new[part][path.stem] = old.get(part, {}).get(path.stem, failure)
    return new


if __name__ == "__main__":
    table = regenerate()
    KNOWN_FAILING.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    sys.stdout.write(f"{len(table['decision'])} decision and {len(table['postfilter'])} postfilter cases "
                     f"of {len(CASES)} still differ\n")
