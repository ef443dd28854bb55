"""Scenario functions for the sweep tests: module-level, so that worker processes can import them."""

from __future__ import annotations

import os
import time
from typing import Any

import kschedlib
from kschedlib.sweeps import Scenario
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
