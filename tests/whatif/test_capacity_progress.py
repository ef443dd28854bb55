"""Progress of the capacity questions: what each one counts, on a terminal only, and no decision changed."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kschedlib import capacity
from kschedlib.cli import main
from kschedlib.progress import Progress
from tests.sweeps.test_progress import Clock, Terminal, segments
from tests.whatif.manifests import node, pod, write_files

MOST = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}

Calls = list[tuple[int, int | None]]


def _cluster() -> list[dict[str, Any]]:
    return [node("a", zone="z1"), node("b", zone="z2"),
            pod("web-1", node_name="a", owner="ReplicaSet/web", labels={"app": "web"}),
            pod("logs-a", node_name="a", owner="DaemonSet/logs")]


def _needing_nodes() -> list[dict[str, Any]]:
    return [node("a", cpu="1"), *(pod(f"p{i}", cpu="3") for i in range(5)), pod("huge", cpu="64")]


QUESTIONS: dict[str, Callable[..., Any]] = {
    "max-replicas": lambda **kw: capacity.max_replicas(_cluster(), pod("x", cpu="1"), **kw),
    "max-replicas-limit": lambda **kw: capacity.max_replicas(_cluster(), pod("x", cpu="1"), limit=3, **kw),
    "drain": lambda **kw: capacity.drain([*_cluster(), pod("p", cpu="1")], ["a"], **kw),
    "nodes-needed": lambda **kw: capacity.nodes_needed(_needing_nodes(), node("pool", cpu="4"), limit=10, **kw),
    "compare": lambda **kw: capacity.compare([node("a"), node("b"), pod("p", cpu="500m")], [None, MOST], **kw),
}

EXPECTED: dict[str, Calls] = {
    "max-replicas": [(n, None) for n in range(1, 7)],  # copies placed, no limit: no total
    "max-replicas-limit": [(1, 3), (2, 3), (3, 3)],
    "drain": [(1, 1), (2, 2)],  # the pending pod first, then the moved web-1 joins the pods to place
    # the first pass on the cluster as it is, the limit, 3 bisection steps (of 4 at most), the confirmation
    "nodes-needed": [(1, 7), (2, 7), (3, 7), (4, 7), (5, 7), (6, 6)],
    "compare": [(1, 2), (2, 2)],  # configs run
}


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_each_question_reports_its_count_and_total(question: str) -> None:
    calls: Calls = []
    QUESTIONS[question](progress=lambda done, total: calls.append((done, total)))
    assert calls == EXPECTED[question]


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_progress_changes_no_decision(question: str) -> None:
    quiet = QUESTIONS[question]().to_dict()
    told = QUESTIONS[question](progress=lambda done, total: None).to_dict()
    assert told == quiet


def test_nodes_needed_total_covers_the_tries_when_bisection_takes_every_step() -> None:
    calls: Calls = []
    capacity.nodes_needed([node("a", cpu="1"), pod("p", cpu="3")], node("pool", cpu="4"), limit=4,
                          progress=lambda done, total: calls.append((done, total)))
    assert calls[-1][0] == calls[-1][1] == len(calls)
    assert all(done <= total for done, total in calls if total is not None)


def test_a_progress_meter_on_a_terminal_shows_rate_and_eta() -> None:
    stream, clock = Terminal(), Clock()
    meter = Progress(unit="copies placed", label="capacity", stream=stream, clock=clock, interval=0)

    def tick(done: int, total: int | None) -> None:
        clock.now += 1
        meter.update(done, total)

    capacity.max_replicas(_cluster(), pod("x", cpu="1"), limit=4, progress=tick)
    assert segments(stream) == ["capacity: 1/4 copies placed (25%), 1.0/s, ETA 0:03",
                                "capacity: 2/4 copies placed (50%), 1.0/s, ETA 0:02",
                                "capacity: 3/4 copies placed (75%), 1.0/s, ETA 0:01",
                                "capacity: 4/4 copies placed (100%), 1.0/s"]


def test_off_a_terminal_the_meter_writes_nothing() -> None:
    stream = io.StringIO()
    meter = Progress(unit="tries", stream=stream)
    capacity.nodes_needed(_needing_nodes(), node("pool", cpu="4"), limit=10, progress=meter.update)
    meter.close()
    assert stream.getvalue() == ""


# --- the command line -------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return write_files(tmp_path, {
        "cluster": {"apiVersion": "v1", "kind": "List", "items": [*_cluster(), pod("big", cpu="3")]},
        "pod": pod("x", cpu="1"), "node": node("pool", cpu="4"),
        "most": {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **MOST}})


def _args(files: dict[str, str], command: str) -> list[str]:
    return {"capacity": ["--pod", files["pod"]], "drain": ["--node", "a"],
            "nodes-needed": ["--node-template", files["node"]],
            "compare": ["--config", "default", "--config", files["most"]]}[command]


COMMANDS = {"capacity": "copies placed", "drain": "pods tried", "nodes-needed": "tries", "compare": "configs run"}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_cli_stderr_that_is_not_a_terminal_stays_empty(files: dict[str, str], command: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main([command, files["cluster"], *_args(files, command)], out=out, err=err) == 0
    assert out.getvalue().strip()
    assert err.getvalue() == ""


@pytest.mark.parametrize("command", list(COMMANDS))
def test_cli_shows_progress_on_a_terminal_and_ends_the_line(files: dict[str, str], command: str) -> None:
    out, err, quiet = io.StringIO(), Terminal(), io.StringIO()
    argv = [command, files["cluster"], *_args(files, command), "--format", "json"]
    assert main(argv, out=out, err=err) == 0
    lines = segments(err)
    assert lines
    assert all(line.startswith(f"{command}: ") and COMMANDS[command] in line for line in lines)
    assert err.getvalue().endswith("\n")
    assert main(argv, out=quiet, err=io.StringIO()) == 0
    assert out.getvalue() == quiet.getvalue()  # the answer is the same with the meter on
