"""Sweeps on a real local Ray runtime (2 CPUs, no dashboard), shut down afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kschedlib.sweeps import RayExecutor, Scenario, open_executor, sweep
from tests.sweeps.runs import behave, cluster, pid_and_size, scheduled, square

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
    base = cluster(nodes=4, pending=14)
    scenarios = [Scenario(base, params={"drop": names, "seed": seed}, name=f"{names}-{seed}")
                 for names in ([], ["node-0"], ["node-1", "node-2"]) for seed in (0, 1)]
    serial = [r.value for r in sweep(scenarios, scheduled)]
    assert [r.value for r in sweep(scenarios, scheduled, executor)] == serial


def test_ray_ships_the_cluster_once_per_worker_process(executor: RayExecutor) -> None:
    base = cluster(nodes=40, pending=0)
    run = sweep([Scenario(base, params={"n": n}) for n in range(16)], pid_and_size, executor)
    results = [r.value for r in run]
    assert {size for _, size in results} == {40}
    (sent,) = run.shipped.values()
    assert sent <= len({pid for pid, _ in results}) + run.resent
    assert sent < 16


def test_ray_errors_are_per_scenario(executor: RayExecutor) -> None:
    results = list(sweep([{"value": 0, "fail": True}, {"value": 1}], behave, executor))
    assert results[0].error == "ValueError: scenario 0 fails"
    assert results[1].value == 1


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
