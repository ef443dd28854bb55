"""kube-scheduler v1.30.6's recorded decisions, one scheduling cycle each, replayed through ``explain``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scenarios.conformance import (
    case_files,
    decision_view,
    expected_view,
    load_case,
    postfilter_view,
    run_explain,
)
from tests.scenarios.conformance_xfail import xfail_marks

CASES = case_files("explain", "scale")


def _param(path: Path, part: str) -> object:
    return pytest.param(path, id=f"{path.parent.name}/{path.stem}", marks=xfail_marks(path.stem, part))


@pytest.mark.parametrize("path", [_param(p, "decision") for p in CASES])
def test_decision_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    out = run_explain(case)
    assert decision_view(out, case["expected"]) == expected_view(case["expected"])


@pytest.mark.parametrize("path", [_param(p, "postfilter") for p in CASES])
def test_postfilter_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    out = run_explain(case)
    expected = case["expected"]
    if expected.get("pod_has_nodename"):
        pytest.skip("kube-scheduler's recorded PostFilter is an artifact of a pod that already had a node")
    exact = path.stem.startswith("pre-")
    assert postfilter_view(out["postfilter"], exact_victims=exact) == postfilter_view(
        expected.get("postfilter"), exact_victims=exact)
