"""Scenarios written for kschedlib's version table, answered by real kube-scheduler v1.30.6 and v1.36.3.

The recorded samples do not exercise every difference between the minors, so
``tests/data/conformance-oracle/v1.MINOR/`` holds timelines and single cycles built for them (a run that
must not end while a pod backs off, node deletions, InterPodAffinity's queueing hints, placements of
pods deleted later, CSI limits from node allocatable), each answered by that minor's kube-scheduler,
some with feature gates (``feature_gates``).  Every part must match.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scenarios.conformance import (
    DATA,
    decision_view,
    expected_view,
    load_case,
    postfilter_view,
    run_explain,
)
from tests.scenarios.test_conformance_loop import outcome_view, run_timeline, trace_matches

ROOT = DATA.with_name("conformance-oracle")
LOOPS = sorted(ROOT.glob("v1.*/loop/*.json"))
SINGLE_CYCLES = sorted(ROOT.glob("v1.*/explain/*.json"))


def _id(path: Path) -> str:
    return f"{path.parent.parent.name}/{path.stem}"


def test_both_answering_minors_have_cases() -> None:
    assert {path.parent.parent.name for path in LOOPS} == {"v1.30", "v1.36"}
    assert {path.parent.parent.name for path in SINGLE_CYCLES} == {"v1.30", "v1.36"}


@pytest.mark.parametrize("path", LOOPS, ids=[_id(p) for p in LOOPS])
def test_timeline_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    out = run_timeline(case)
    assert outcome_view(out) == outcome_view(case["expected"])
    assert trace_matches(out, case["expected"])


@pytest.mark.parametrize("path", SINGLE_CYCLES, ids=[_id(p) for p in SINGLE_CYCLES])
def test_single_cycle_matches_kube_scheduler(path: Path) -> None:
    case = load_case(path)
    out, expected = run_explain(case), case["expected"]
    assert decision_view(out, expected) == expected_view(expected)
    assert postfilter_view(out["postfilter"], exact_victims=True) == postfilter_view(
        expected.get("postfilter"), exact_victims=True)
