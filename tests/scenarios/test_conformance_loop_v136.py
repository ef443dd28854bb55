"""kube-scheduler v1.36.3's loop timelines and extender decisions, replayed with ``kube_version="1.36"``.

The same ratchet as :mod:`tests.scenarios.test_conformance_v136`: cases kschedlib does not
reproduce yet are listed, with the reason, in ``tests/data/conformance-v1.36/known-failing-loop.json``
(parts ``loop_outcome``, ``loop_trace`` and ``extenders``) and marked strict xfail.  Regenerate the
list after a change with ``python -m tests.scenarios.test_conformance_loop_v136`` (written reasons
are kept).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.extender.test_conformance_extenders import explain_differences
from tests.scenarios.conformance import DATA_BY_VERSION, case_files, known_failing, load_case, ratchet_param
from tests.scenarios.test_conformance_loop import outcome_view, run_timeline, trace_matches

KNOWN_FAILING = DATA_BY_VERSION["1.36"] / "known-failing-loop.json"
LOOPS = case_files("loop", version="1.36")
EXTENDERS = case_files("extenders", version="1.36")
PARTS = ("loop_outcome", "loop_trace", "extenders")


def _known() -> dict[str, dict[str, str]]:
    return known_failing(KNOWN_FAILING)


def _param(path: Path, part: str) -> object:
    return ratchet_param(path, part, KNOWN_FAILING)


def test_every_v136_file_is_replayed() -> None:
    assert (len(LOOPS), len(EXTENDERS)) == (16, 10)
    assert all(load_case(path)["mode"] == "explain" for path in EXTENDERS)


@pytest.mark.parametrize("path", [_param(p, "loop_outcome") for p in LOOPS])
def test_timeline_outcome_matches_kube_scheduler_v136(path: Path) -> None:
    case = load_case(path)
    assert outcome_view(run_timeline(case)) == outcome_view(case["expected"])


@pytest.mark.parametrize("path", [_param(p, "loop_trace") for p in LOOPS])
def test_timeline_trace_matches_kube_scheduler_v136(path: Path) -> None:
    case = load_case(path)
    assert trace_matches(run_timeline(case), case["expected"])


@pytest.mark.parametrize("path", [_param(p, "extenders") for p in EXTENDERS])
def test_extender_decision_matches_kube_scheduler_v136(path: Path) -> None:
    assert explain_differences(load_case(path)) == []


def _failures(case: dict[str, Any], checks: Mapping[str, Callable[[dict[str, Any]], str | None]]) -> dict[str, str]:
    """Run each part's check; a check returns ``None`` when the part matches, else why not."""
    out: dict[str, str] = {}
    for part, check in checks.items():
        try:
            failure = check(case)
        except Exception as exc:
            failure = f"raises {type(exc).__name__}: {exc}"[:160]
        if failure is not None:
            out[part] = failure
    return out


def _loop_outcome(case: dict[str, Any]) -> str | None:
    same = outcome_view(run_timeline(case)) == outcome_view(case["expected"])
    return None if same else "outcome differs from kube-scheduler v1.36.3"


def _loop_trace(case: dict[str, Any]) -> str | None:
    return None if trace_matches(run_timeline(case), case["expected"]) else "trace differs from kube-scheduler v1.36.3"


def _extenders(case: dict[str, Any]) -> str | None:
    differ = explain_differences(case)
    return f"{', '.join(differ)} differ from kube-scheduler v1.36.3" if differ else None


def regenerate() -> dict[str, dict[str, str]]:
    """Rerun every case; keep the reasons of cases that still fail, name new failures generically."""
    old = _known()
    new: dict[str, dict[str, str]] = {part: {} for part in PARTS}
    runs = [(path, {"loop_outcome": _loop_outcome, "loop_trace": _loop_trace}) for path in LOOPS]
    runs += [(path, {"extenders": _extenders}) for path in EXTENDERS]
    for path, checks in runs:
        for part, failure in _failures(load_case(path), checks).items():
            new[part][path.stem] = old.get(part, {}).get(path.stem, failure)
    return new


if __name__ == "__main__":
    table = regenerate()
    KNOWN_FAILING.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    sys.stdout.write(", ".join(f"{len(table[part])} {part}" for part in PARTS)
                     + f" of {len(LOOPS)} timelines and {len(EXTENDERS)} extender cases still differ\n")
