"""kube-scheduler v1.36.3's recorded Dynamic Resource Allocation decisions (``dra/``), replayed.

Each case is checked in three parts: the scheduling decision (feasible nodes, reasons, scores,
message), the PostFilter outcome (deallocation, then preemption), and ``dra_allocations`` -- the
devices each claim would get on every feasible node.  Cases kschedlib does not reproduce yet are
listed with the reason in ``tests/data/conformance-v1.36/known-failing-dra.json`` (strict xfail);
regenerate it with ``python -m tests.scenarios.test_conformance_dra_v136``.
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

KNOWN_FAILING = DATA_BY_VERSION["1.36"] / "known-failing-dra.json"
CASES = case_files("dra", version="1.36")
PARTS = ("decision", "postfilter", "allocations")


def _param(path: Path, part: str) -> object:
    return ratchet_param(path, part, KNOWN_FAILING)


def part_matches(part: str, case: dict[str, Any], out: dict[str, Any]) -> bool:
    expected = case["expected"]
    if part == "decision":
        return decision_view(out, expected) == expected_view(expected)
    if part == "postfilter":
        return postfilter_view(out["postfilter"], exact_victims=True) == postfilter_view(
            expected.get("postfilter"), exact_victims=True)
    return bool(out.get("dra_allocations", {}) == expected.get("dra_allocations", {}))


@pytest.mark.parametrize("path", [_param(p, "decision") for p in CASES])
def test_dra_decision_matches_kube_scheduler_v136(path: Path) -> None:
    case = load_case(path)
    assert part_matches("decision", case, run_explain(case))


@pytest.mark.parametrize("path", [_param(p, "postfilter") for p in CASES])
def test_dra_postfilter_matches_kube_scheduler_v136(path: Path) -> None:
    case = load_case(path)
    assert part_matches("postfilter", case, run_explain(case))


@pytest.mark.parametrize("path", [_param(p, "allocations") for p in CASES])
def test_dra_allocations_match_kube_scheduler_v136(path: Path) -> None:
    """Every sample's device choice is deterministic (one pool per request), so it must match exactly."""
    case = load_case(path)
    assert part_matches("allocations", case, run_explain(case))


def regenerate() -> dict[str, dict[str, str]]:
    """Rerun every case; keep the reasons of cases that still fail, name new failures generically."""
    old = known_failing(KNOWN_FAILING)
    new: dict[str, dict[str, str]] = {part: {} for part in PARTS}
    for path in CASES:
        case = load_case(path)
        try:
            out = run_explain(case)
            results = {part: part_matches(part, case, out) for part in PARTS}
            failure = "differs from kube-scheduler v1.36.3"
        except Exception as exc:
            results = dict.fromkeys(PARTS, False)
            failure = f"raises {type(exc).__name__}: {exc}"[:160]
        for part, ok in results.items():
            if not ok:
                new[part][path.stem] = old.get(part, {}).get(path.stem, failure)
    return new


if __name__ == "__main__":
    table = regenerate()
    KNOWN_FAILING.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    counts = ", ".join(f"{len(table[part])} {part}" for part in PARTS)
    sys.stdout.write(f"{counts} of {len(CASES)} cases still differ\n")
