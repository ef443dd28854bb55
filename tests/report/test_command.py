"""``--format html`` on every command, and ``kschedlib report RESULT.json``, through ``kschedlib.cli.main``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kschedlib.cli import main
from tests.report.results import PACKING, ROOT, TEMPLATE, TUTORIAL

SWEEP_GRID = ROOT / "examples" / "sweep" / "drain-every-node.yaml"


def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("sys.stdin", io.StringIO(stdin))
            status = main(list(argv), out=out, err=err)
    else:
        status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("inputs")
    (folder / "pool-node.json").write_text(json.dumps(TEMPLATE), encoding="utf-8")
    (folder / "packing.json").write_text(json.dumps(PACKING), encoding="utf-8")
    return {"template": str(folder / "pool-node.json"), "packing": str(folder / "packing.json"),
            "folder": str(folder)}


def commands(inputs: dict[str, str]) -> dict[str, list[str]]:
    cluster = str(TUTORIAL)
    return {
        "simulate": ["simulate", cluster],
        "explain": ["explain", cluster, "--pod", "default/big"],
        "capacity": ["capacity", cluster, "--pod", "default/web-1"],
        "drain": ["drain", cluster, "--node", "node-a"],
        "nodes-needed": ["nodes-needed", cluster, "--node-template", inputs["template"], "--max", "20"],
        "compare": ["compare", cluster, "--config", "default", "--config", inputs["packing"]],
        "sweep": ["sweep", str(SWEEP_GRID)],
    }


@pytest.mark.parametrize("kind", ["simulate", "explain", "capacity", "drain", "nodes-needed", "compare", "sweep"])
def test_format_html_is_the_page_of_the_saved_json(kind: str, inputs: dict[str, str]) -> None:
    argv = commands(inputs)[kind]
    status, page, _ = run(*argv, "--format", "html")
    assert status == 0
    assert page.startswith("<!DOCTYPE html>")
    assert f"<title>kschedlib {kind}" in page
    status, saved, _ = run(*argv, "--format", "json")
    assert status == 0
    result = Path(inputs["folder"]) / f"{kind}.json"
    result.write_text(saved, encoding="utf-8")
    status, again, _ = run("report", str(result))
    assert status == 0
    if kind != "sweep":  # a sweep's rows carry each scenario's seconds, which vary run to run
        assert again == page


def test_report_writes_a_file_and_reads_standard_input(tmp_path: Path) -> None:
    status, saved, _ = run("explain", str(TUTORIAL), "--pod", "default/web-1", "--format", "json")
    target = tmp_path / "web-1.html"
    status, out, err = run("report", "-", "-o", str(target), stdin=saved)
    assert (status, out) == (0, "")
    assert err.startswith(f"kschedlib: wrote {target} (")
    assert "<title>kschedlib explain default/web-1</title>" in target.read_text(encoding="utf-8")


def test_report_reads_a_sweeps_json_lines(tmp_path: Path) -> None:
    status, lines, _ = run("sweep", str(SWEEP_GRID), "--format", "jsonl")
    assert status == 0
    assert len(lines.splitlines()) == 8
    saved = tmp_path / "drains.jsonl"
    saved.write_text(lines, encoding="utf-8")
    status, page, _ = run("report", str(saved))
    assert status == 0
    assert "8 scenarios, 0 failed" in page


REFUSED = [
    ("a-cluster-file", str(TUTORIAL), None, "cluster.json: not the output of simulate", "Kubernetes List"),
    ("not-json", "-", "kind: Pod\n", "<standard input>: not JSON: Expecting value at line 1", ""),
    ("no-such-file", "/nonexistent/result.json", None, "/nonexistent/result.json: cannot read it", ""),
]


@pytest.mark.parametrize(("source", "stdin", "said", "hint"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_report_refuses_what_is_not_a_result(source: str, stdin: str | None, said: str, hint: str) -> None:
    status, out, err = run("report", source, stdin=stdin)
    assert (status, out) == (2, "")
    assert err.startswith("kschedlib: error: ")
    assert said in err
    assert hint in err


def test_report_of_another_kind_names_the_file_and_the_missing_key(tmp_path: Path) -> None:
    status, saved, _ = run("simulate", str(TUTORIAL), "--format", "json")
    result = tmp_path / "sim.json"
    result.write_text(saved, encoding="utf-8")
    status, _, err = run("report", str(result), "--kind", "drain")
    assert status == 2
    assert err == f"kschedlib: error: {result}, nodes: not a result of drain: no nodes, pdb_violations, pods\n"
