"""Real kube-scheduler decisions of every minor from 1.31 to 1.36, replayed with that minor's ``kube_version``.

``tests/data/conformance-v1.MINOR/`` holds the same scenarios recorded with each minor's kube-scheduler
(v1.31.14 ... v1.36.3): single cycles (``explain/``), HTTP extenders (``extenders/``), timelines through
the real loop (``loop/``) and, from 1.34, Dynamic Resource Allocation (``dra/``).  Every case is run
once per minor and its parts are checked by separate tests that share that run:

* explain and dra: ``decision`` (feasible nodes, reasons, scores, message), ``postfilter``
  (deallocation, preemption) and, for dra, ``allocations`` (the devices each claim would get);
* loop: ``loop_outcome`` (placements, pending pods, evictions, checkpoints) and ``loop_trace``;
* extenders: ``extenders`` (the decision and what each stub extender received).

Cases kschedlib does not reproduce yet are listed with the reason in the minor's
``known-failing.json`` (part -> case -> reason) and marked strict xfail: a case that starts
passing must leave the list.  Regenerate the lists after a change with
``python -m tests.scenarios.test_conformance_minors [1.34 ...]`` (written reasons are kept).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.extender.test_conformance_extenders import explain_differences
from tests.scenarios.conformance import (
    DATA_BY_VERSION,
    case_version,
    decision_view,
    expected_view,
    known_failing,
    load_case,
    postfilter_view,
    run_explain,
)
from tests.scenarios.test_conformance_loop import outcome_view, run_timeline, trace_matches

MINORS = ("1.31", "1.32", "1.33", "1.34", "1.35", "1.36")
FOLDERS = ("explain", "dra", "loop", "extenders")
PARTS = {"explain": ("decision", "postfilter"), "dra": ("decision", "postfilter", "allocations"),
         "loop": ("loop_outcome", "loop_trace"), "extenders": ("extenders",)}
"""The parts checked per folder (a ratchet entry names one of them)."""
COUNTS = {"explain": 151, "dra": 51, "loop": 16, "extenders": 10}
"""Files per folder in every minor's sample (``dra/`` from 1.34, where kube serves resource.k8s.io/v1)."""


def _ratchet(minor: str) -> Path:
    return DATA_BY_VERSION[minor] / "known-failing.json"


def cases(minor: str, folder: str) -> list[Path]:
    return sorted((DATA_BY_VERSION[minor] / folder).glob("*.json"))


@cache
def _case(path: Path) -> dict[str, Any]:
    return load_case(path)


@cache
def _explained(path: Path) -> dict[str, Any]:
    """The explain output of an explain or dra case (one run shared by its parts)."""
    return run_explain(_case(path))


@cache
def _timeline(path: Path) -> dict[str, Any]:
    """The simulated timeline of a loop case (one run shared by its parts)."""
    return run_timeline(_case(path))


def _exact_victims(path: Path) -> bool:
    """Victims are compared where the recording pins them (preemption cases, every dra case)."""
    return path.parent.name == "dra" or path.stem.startswith("pre-")


def _matches(part: str, path: Path) -> bool:
    case = _case(path)
    expected = case["expected"]
    if part == "decision":
        return bool(decision_view(_explained(path), expected) == expected_view(expected))
    if part == "postfilter":
        exact = _exact_victims(path)
        return bool(postfilter_view(_explained(path)["postfilter"], exact_victims=exact)
                    == postfilter_view(expected.get("postfilter"), exact_victims=exact))
    if part == "allocations":
        return bool(_explained(path).get("dra_allocations", {}) == expected.get("dra_allocations", {}))
    if part == "loop_outcome":
        return bool(outcome_view(_timeline(path)) == outcome_view(expected))
    if part == "loop_trace":
        return trace_matches(_timeline(path), expected)
    return explain_differences(case) == []


def _checked(part: str, path: Path) -> bool:
    """Whether ``part`` applies to ``path``: kube's PostFilter of a pod that already had a node is an
    artefact of the recording (the pod never reaches PostFilter in a real cluster)."""
    return not (part == "postfilter" and _case(path)["expected"].get("pod_has_nodename"))


def _params() -> Iterator[object]:
    for minor in MINORS:
        known = known_failing(_ratchet(minor))
        for folder in FOLDERS:
            for path in cases(minor, folder):
                for part in PARTS[folder]:
                    if not _checked(part, path):
                        continue
                    reason = known.get(part, {}).get(path.stem)
                    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
                    yield pytest.param(part, path, id=f"v{minor}/{folder}/{path.stem}/{part}", marks=marks)


@pytest.mark.parametrize(("part", "path"), list(_params()))
def test_matches_kube_scheduler_of_its_minor(part: str, path: Path) -> None:
    assert _matches(part, path)


@pytest.mark.parametrize("minor", MINORS)
def test_every_file_of_the_minor_is_replayed_with_its_minor(minor: str) -> None:
    for folder, count in COUNTS.items():
        files = cases(minor, folder)
        assert len(files) == (0 if folder == "dra" and minor < "1.34" else count), folder
        assert {case_version(_case(path)) for path in files} <= {minor}
    listed = {name for table in known_failing(_ratchet(minor)).values() for name in table}
    assert listed <= {path.stem for folder in FOLDERS for path in cases(minor, folder)}


@pytest.mark.parametrize("minor", MINORS[:-1])
def test_every_minor_recorded_the_same_scenarios(minor: str) -> None:
    """The samples differ only in what each kube-scheduler decided."""
    for folder in FOLDERS:
        for path in cases(minor, folder):
            assert _case(path)["scenario"] == _case(DATA_BY_VERSION["1.36"] / folder / path.name)["scenario"]


def _failure(part: str, path: Path) -> str | None:
    """``None`` when ``part`` matches (or does not apply), ``"differs"``, or the exception it raised."""
    if not _checked(part, path):
        return None
    try:
        return None if _matches(part, path) else "differs"
    except Exception as exc:
        return f"raises {type(exc).__name__}: {exc}"[:160]


def regenerate(minor: str, failure: Callable[[str, Path], str | None] = _failure) -> dict[str, dict[str, str]]:
    """Rerun every case of ``minor``; keep the reasons of cases that still fail, name new ones generically."""
    old = known_failing(_ratchet(minor))
    patch = str(_case(cases(minor, "loop")[0])["kube_version"])
    new: dict[str, dict[str, str]] = {part: {} for parts in PARTS.values() for part in parts}
    for folder in FOLDERS:
        for path in cases(minor, folder):
            for part in PARTS[folder]:
                why = failure(part, path)
                if why is not None:
                    new[part][path.stem] = old.get(part, {}).get(
                        path.stem, f"differs from kube-scheduler {patch}" if why == "differs" else why)
    return new


if __name__ == "__main__":
    for chosen in sys.argv[1:] or MINORS:
        table = regenerate(chosen)
        _ratchet(chosen).write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        failing = sum(len(entries) for entries in table.values())
        sys.stdout.write(f"{chosen}: {failing} case parts still differ\n")
