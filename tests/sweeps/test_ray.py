"""Sweeps on a real local Ray runtime (2 CPUs, no dashboard), shut down afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings

from kschedlib.sweeps import RayExecutor, open_executor, sweep
from tests.sweeps.runs import (
    check_errors_per_scenario,
    check_mix,
    check_serial_results,
    check_shipped_once_per_worker,
    mixes,
    square,
)

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[dev]'")


@pytest.fixture(scope="module")
def executor() -> Iterator[RayExecutor]:
    started = RayExecutor(max_workers=2)
    try:
        yield started
    finally:
        started.shutdown()
    assert not ray.is_initialized()


def test_ray_gives_the_serial_results(executor: RayExecutor) -> None:
    check_serial_results(executor)


def test_ray_ships_the_cluster_once_per_worker_process(executor: RayExecutor) -> None:
    check_shipped_once_per_worker(executor)


def test_ray_errors_are_per_scenario(executor: RayExecutor) -> None:
    check_errors_per_scenario(executor)


def test_a_second_executor_joins_the_running_runtime_and_leaves_it_running(executor: RayExecutor) -> None:
    joined = RayExecutor()
    assert joined.max_workers >= 1
    assert joined.submit(square, 3).result(timeout=60) == 9
    joined.shutdown()
    joined.shutdown()  # twice is harmless
    assert ray.is_initialized()
    with pytest.raises(RuntimeError, match="after shutdown"):
        joined.submit(square, 3)


def test_the_command_line_joins_the_ray_runtime(executor: RayExecutor) -> None:
    with open_executor("ray") as joined:
        assert isinstance(joined, RayExecutor)
        assert [r.value for r in sweep([2, 3], square, joined)] == [4, 9]
    assert ray.is_initialized()  # the runtime it joined keeps running


@settings(max_examples=3)
@given(kinds=mixes)
def test_any_mix_on_ray_ends_with_one_result_each_in_order(executor: RayExecutor, kinds: list[str]) -> None:
    check_mix(executor, kinds)
