"""Sweeps on a real Dask cluster: a ``distributed.LocalCluster`` of worker processes on loopback."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from concurrent.futures import Executor
from typing import Any

import pytest
from hypothesis import given, settings

from kschedlib.cli import main
from kschedlib.sweeps import Ask, dask_executor, load_grid, open_executor, sweep
from tests.sweeps.runs import (
    behave,
    check_errors_per_scenario,
    check_mix,
    check_serial_results,
    check_shipped_once_per_worker,
    mixes,
)
from tests.sweeps.test_grid import EXAMPLE

distributed = pytest.importorskip("distributed", reason="the dask extra is not installed: pip install -e '.[dev]'")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0") as local, distributed.Client(local) as connected:
        yield connected


@pytest.fixture
def executor(client: Any) -> Executor:
    return dask_executor(client)


def test_dask_gives_the_serial_results(executor: Executor) -> None:
    check_serial_results(executor)


def test_dask_ships_the_cluster_once_per_worker_process(executor: Executor) -> None:
    check_shipped_once_per_worker(executor)


def test_dask_errors_are_per_scenario(executor: Executor) -> None:
    check_errors_per_scenario(executor)


def test_a_dask_scheduler_address(client: Any) -> None:
    address = client.scheduler.address.removeprefix("tcp://")
    with open_executor(f"dask://{address}") as executor:
        assert executor is not None
        assert [r.value for r in sweep([{"value": 5}], behave, executor)] == [5]


def test_the_command_line_starts_a_local_dask_cluster() -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = ["sweep", str(EXAMPLE), "--executor", "dask", "--workers", "2", "--format", "jsonl"]
    status = main(argv, out=out, err=err)
    assert status == 0, err.getvalue()
    grid = load_grid(EXAMPLE)
    serial = [result.unwrap() for result in sweep(grid.scenarios, Ask(grid.question))]
    assert [json.loads(line)["result"] for line in out.getvalue().splitlines()] == serial


@settings(max_examples=3)
@given(kinds=mixes)
def test_any_mix_on_dask_ends_with_one_result_each_in_order(client: Any, kinds: list[str]) -> None:
    check_mix(dask_executor(client), kinds)
