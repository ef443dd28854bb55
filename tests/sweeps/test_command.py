"""``kschedlib sweep GRID``: the example grid from the command line, its formats, executors and errors."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from kschedlib.cli import main
from kschedlib.errors import ExtraNotInstalledError
from kschedlib.sweeps import QUESTIONS, Ask, load_grid, open_executor, register_question, sweep
from kschedlib.sweeps.executors import RayExecutor, dask_executor
from tests.sweeps.test_grid import EXAMPLE, NODE, POD
from tests.sweeps.test_progress import Terminal


def cli(*argv: str, err: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), err if err is not None else io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def answers(rows: list[dict[str, Any]]) -> list[Any]:
    return [row["result"] for row in rows]


@pytest.fixture(scope="module")
def serial_rows() -> list[dict[str, Any]]:
    status, out, err = cli("sweep", str(EXAMPLE), "--format", "jsonl")
    assert (status, err) == (0, "")
    return [json.loads(line) for line in out.splitlines()]


def test_jsonl_one_row_per_scenario_in_grid_order(serial_rows: list[dict[str, Any]]) -> None:
    grid = load_grid(EXAMPLE)
    assert [row["index"] for row in serial_rows] == list(range(len(grid)))
    first = serial_rows[0]
    assert {key: first[key] for key in ("scenario", "cluster", "workload", "config", "kube_version", "ok",
                                         "error")} == {
        "scenario": "six-small/web/default/1.30", "cluster": "six-small", "workload": "web", "config": "default",
        "kube_version": "1.30", "ok": True, "error": None}
    library = [result.unwrap() for result in sweep(grid.scenarios, Ask(grid.question))]
    assert answers(serial_rows) == library


def test_a_process_pool_writes_the_same_answers(serial_rows: list[dict[str, Any]], tmp_path: Path) -> None:
    output = tmp_path / "out.json"
    status, out, _ = cli("sweep", str(EXAMPLE), "--executor", "process", "--workers", "2", "--format", "json",
                         "--output", str(output))
    assert (status, out) == (0, "")
    assert answers(json.loads(output.read_text())) == answers(serial_rows)


SUMMARY_COLUMNS = ["index", "scenario", "cluster", "workload", "config", "kube_version", "ok", "error", "seconds",
                   "pods", "scheduled", "unschedulable", "gated"]


def test_csv_is_one_summary_row_per_scenario(serial_rows: list[dict[str, Any]]) -> None:
    """Regression: the CSV had a column per pod, node and FitError sentence (1,663 on a real grid)."""
    status, out, _ = cli("sweep", str(EXAMPLE), "--format", "csv")
    assert status == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == len(serial_rows)
    assert list(rows[0]) == SUMMARY_COLUMNS
    assert rows[4]["scenario"] == "six-small/web+batch/default/1.30"
    assert rows[4]["scheduled"] == "18"
    assert [row["pods"] for row in rows] == [str(row["result"]["summary"]["pods"]) for row in serial_rows]


def test_text_is_a_table_of_the_same_summary(serial_rows: list[dict[str, Any]]) -> None:
    status, out, _ = cli("sweep", str(EXAMPLE))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == [c for c in SUMMARY_COLUMNS if c not in ("error", "seconds")]
    assert len(lines) == 2 + len(serial_rows)
    assert lines[6].split()[:2] == ["4", "six-small/web+batch/default/1.30"]


def test_csv_summary_of_an_explain_question(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(json.dumps([NODE, POD]))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"question": "explain", "clusters": ["cluster.json"], "params": {"pod": "default/web"}}))
    status, out, _ = cli("sweep", str(grid), "--format", "csv")
    assert status == 0
    (row,) = csv.DictReader(io.StringIO(out))
    assert (row["pod"], row["selected"], row["evaluated_nodes"]) == ("default/web", "node-a", "1")
    assert "feasible" not in row


def test_progress_on_a_terminal_only(tmp_path: Path) -> None:
    status, _, err = cli("sweep", str(EXAMPLE), err=Terminal())
    assert status == 0
    assert re.search(r"\rsweep: 24/24 scenarios \(100%\)(, [\d.]+/s)?\n$", err), repr(err)


def test_failed_scenarios_are_reported_and_the_status_is_1(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(json.dumps([NODE, POD]))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"question": "explain", "clusters": ["cluster.json"],
                                "matrix": {"pod": ["default/web", "default/ghost"]}}))
    status, out, err = cli("sweep", str(grid), "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert status == 1
    assert [row["ok"] for row in rows] == [True, False]
    assert rows[1]["error"].startswith("ManifestError: default/ghost: no such pod in the cluster")
    assert err == "kschedlib: 1 of 2 scenarios failed (see their 'error')\n"


@pytest.mark.parametrize(("argv", "message"), [
    (["--executor", "spark"], "--executor: expected serial, process, dask, dask://HOST:PORT, ray or ray://HOST:PORT "
                              "(got 'spark')"),
    (["--executor", "process", "--workers", "0"], "--workers: must be at least 1 (got 0)"),
], ids=["unknown-executor", "no-workers"])
def test_bad_options_exit_2(argv: list[str], message: str) -> None:
    status, out, err = cli("sweep", str(EXAMPLE), *argv)
    assert (status, out) == (2, "")
    assert err == f"kschedlib: error: {message}\n"


def test_a_bad_grid_exits_2_before_any_scenario(tmp_path: Path) -> None:
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"clusters": ["missing.json"]}))
    status, out, err = cli("sweep", str(grid))
    assert (status, out) == (2, "")
    assert "missing.json: cannot read file" in err


def test_serial_is_no_executor() -> None:
    with open_executor("serial") as executor:
        assert executor is None
    with open_executor(None) as executor:
        assert executor is None


@pytest.mark.parametrize(("module", "extra", "call"), [
    ("distributed", "dask", lambda: dask_executor("tcp://127.0.0.1:1")),
    ("ray", "ray", lambda: RayExecutor(1)),
    ("distributed", "dask", lambda: open_executor("dask").__enter__()),
], ids=["dask", "ray", "dask-command-line"])
def test_a_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch, module: str, extra: str, call: Any) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    expected = rf"needs the '{module}' package: pip install 'kschedlib\[{extra}\]'"
    with pytest.raises(ExtraNotInstalledError, match=expected):
        call()


def test_a_missing_extra_on_the_command_line_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    status, _, err = cli("sweep", str(EXAMPLE), "--executor", "ray")
    assert status == 2
    assert err.startswith("kschedlib: error: a Ray executor needs the 'ray' package: pip install 'kschedlib[ray]'")
    assert err.endswith(" (from this checkout: pip install -e '.[ray]' in " f"{Path(__file__).resolve().parents[2]})\n")


def test_a_scenario_that_never_ends_times_out_and_the_command_still_returns(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(json.dumps([NODE]))
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"question": "forever", "clusters": ["cluster.json"]}))
    register_question("forever", "tests.sweeps.runs:forever")
    try:
        started = time.monotonic()
        status, out, err = cli("sweep", str(grid), "--executor", "process", "--workers", "1", "--timeout", "0.5",
                               "--format", "jsonl")
    finally:
        del QUESTIONS["forever"]
    assert status == 1
    assert json.loads(out)["error"] == "TimeoutError: no result within 0.5 s"
    assert err == "kschedlib: 1 of 1 scenarios failed (see their 'error')\n"
    assert time.monotonic() - started < 30  # the stuck worker was terminated, not waited for
