"""The command line never ends in a traceback: a closed pipe, Ctrl-C, an unexpected error."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kschedlib.simulation.simulator
from kschedlib.cli import main

ROOT = Path(__file__).resolve().parents[2]


def big_cluster(path: Path, pods: int = 1500) -> Path:
    amounts = {"cpu": "64", "memory": "256Gi", "pods": "110"}
    items: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:02d}"},
         "status": {"allocatable": amounts, "capacity": amounts}} for i in range(20)]
    items += [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i:05d}", "namespace": "default"},
               "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "10m"}}}]}}
              for i in range(pods)]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return path


def test_simulate_piped_into_a_reader_that_stops_early_exits_quietly(tmp_path: Path) -> None:
    cluster = big_cluster(tmp_path / "cluster.json")
    with subprocess.Popen([sys.executable, "-m", "kschedlib", "simulate", str(cluster), "--format", "json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        first = child.stdout.readline()
        child.stdout.close()  # like `| head -1`: the rest (far more than a pipe holds) has nowhere to go
        errors = child.stderr.read()
        code = child.wait(timeout=120)
    assert first == b"{\n"
    assert errors == b""
    assert code == 1


def test_a_broken_pipe_on_a_real_descriptor_is_silenced(tmp_path: Path) -> None:
    cluster = big_cluster(tmp_path / "cluster.json", pods=300)
    read_end, write_end = os.pipe()
    os.close(read_end)
    err = io.StringIO()
    with os.fdopen(write_end, "w") as out:
        assert main(["simulate", str(cluster), "--format", "json"], out=out, err=err) == 1
        out.write("x" * 100_000)
        out.flush()  # now goes to devnull: the flush at exit cannot fail again
    assert err.getvalue() == ""


class _Closed(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_broken_pipe_on_a_stream_without_a_descriptor() -> None:
    err = io.StringIO()
    assert main(["simulate"], out=_Closed(), err=err) == 1
    assert err.getvalue() == ""


@pytest.mark.parametrize(("raised", "code", "line"), [
    (RuntimeError("boom"), 1, "kschedlib: unexpected error: RuntimeError: boom\n"),
    (KeyboardInterrupt(), 130, "kschedlib: interrupted\n"),
], ids=["unexpected-error", "ctrl-c"])
def test_other_endings_are_one_line(monkeypatch: pytest.MonkeyPatch, raised: BaseException, code: int,
                                    line: str) -> None:
    def fail(*args: object, **kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(kschedlib.simulation.simulator, "simulate", fail)  # the command imports it when it runs
    out, err = io.StringIO(), io.StringIO()
    assert main(["simulate"], out=out, err=err) == code
    assert err.getvalue() == line
    assert out.getvalue() == ""
