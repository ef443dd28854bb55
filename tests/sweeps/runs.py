"""Scenario functions for the sweep tests: module-level, so that worker processes can import them."""

from __future__ import annotations

import os
import time
from concurrent.futures import Executor
from typing import Any

import kschedlib
from kschedlib.sweeps import Scenario, sweep
from tests.helpers import make_node, make_pod


def cluster(nodes: int = 3, pending: int = 6, cpu: str = "4") -> kschedlib.Cluster:
    """``nodes`` nodes of ``cpu`` CPUs and ``pending`` pods of 1 CPU each."""
    objects: list[object] = [make_node(f"node-{i}", allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"})
                             for i in range(nodes)]
    objects += [make_pod(f"web-{i}", requests={"cpu": "1"}) for i in range(pending)]
    return kschedlib.load_cluster(objects)


def scheduled(scenario: Scenario) -> dict[str, Any]:
    """Simulate the scenario's cluster (minus the nodes in ``drop``): where its pods went."""
    base: kschedlib.Cluster = scenario.cluster
    drop = set(scenario.params.get("drop", ()))
    objects = [o for o in base.objects if not (isinstance(o, kschedlib.Node) and o.name in drop)]
    report = kschedlib.simulate(objects, seed=scenario.params.get("seed", 0))
    return {"placements": report.placements, "unschedulable": report.unschedulable}


def behave(scenario: Any) -> Any:
    """Do what the scenario (a dict) says: sleep, fail, kill the worker, or echo its value."""
    time.sleep(scenario.get("sleep", 0))
    if scenario.get("fail"):
        raise ValueError(f"scenario {scenario['value']} fails")
    if scenario.get("exit"):
        os._exit(3)  # the worker process dies
    return scenario["value"]


def pid_and_size(scenario: Scenario) -> tuple[int, int]:
    """Which process ran it, and the size of the cluster it saw."""
    return os.getpid(), len(scenario.cluster)


def square(value: int) -> int:
    return value * value


def forever(cluster: Any, **params: Any) -> None:
    """A question that never ends (a scenario stuck in its run)."""
    while True:
        time.sleep(1)


# -- what every executor must do (the Dask and Ray tests call these with a real cluster) -----------


def check_serial_results(executor: Executor) -> None:
    """The executor gives the serial answers, in input order."""
    base = cluster(nodes=4, pending=14)
    scenarios = [Scenario(base, params={"drop": names, "seed": seed}, name=f"{names}-{seed}")
                 for names in ([], ["node-0"], ["node-1", "node-2"]) for seed in (0, 1)]
    serial = [r.value for r in sweep(scenarios, scheduled)]
    parallel = list(sweep(scenarios, scheduled, executor))
    assert [r.value for r in parallel] == serial
    assert [r.index for r in parallel] == list(range(len(scenarios)))


def check_shipped_once_per_worker(executor: Executor) -> None:
    """A cluster shared by 16 scenarios crosses the wire about once per worker process."""
    base = cluster(nodes=40, pending=0)
    run = sweep([Scenario(base, params={"n": n}) for n in range(16)], pid_and_size, executor)
    results = [r.value for r in run if r.value is not None]
    assert len(results) == 16
    assert {size for _, size in results} == {40}
    (sent,) = run.shipped.values()
    assert sent <= len({pid for pid, _ in results}) + run.resent
    assert sent < 16


def check_errors_per_scenario(executor: Executor) -> None:
    """An exception in one scenario is that scenario's result."""
    results = list(sweep([{"value": 0, "fail": True}, {"value": 1}], behave, executor))
    assert results[0].error == "ValueError: scenario 0 fails"
    assert results[1].value == 1
