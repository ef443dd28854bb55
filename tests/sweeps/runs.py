"""Scenario functions for the sweep tests: module-level, so that worker processes can import them."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Executor
from typing import Any

from hypothesis import strategies as st

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


class Custom(BaseException):
    """A ``BaseException`` of a scenario's own."""


class Unprintable(Exception):
    """An exception whose ``str()`` fails."""

    def __str__(self) -> str:
        raise RuntimeError("no words for it")


RAISES: dict[str, tuple[BaseException, str]] = {
    "exception": (ValueError("bad input"), "ValueError: bad input"),
    "exit": (SystemExit(3), "SystemExit: 3"),
    "bare-exit": (SystemExit(), "SystemExit"),
    "custom": (Custom("boom"), "Custom: boom"),
    "interrupt": (KeyboardInterrupt("its own"), "KeyboardInterrupt: its own"),
    "unprintable": (Unprintable(), "Unprintable: <exception str() failed>"),
}
"""What a scenario may raise (``{"raise": kind}``), and the error every executor reports for it."""

RELEASE = threading.Event()
"""Set to end the hung scenarios of this process (``{"hang": seconds}`` waits at most that long)."""


def behave(scenario: Any) -> Any:
    """Do what the scenario (a dict) says: sleep, hang, fail, raise, kill the worker, or echo its value."""
    time.sleep(scenario.get("sleep", 0))
    if scenario.get("hang"):
        RELEASE.wait(scenario["hang"])
    if scenario.get("fail"):
        raise ValueError(f"scenario {scenario['value']} fails")
    if scenario.get("raise"):
        prototype = RAISES[scenario["raise"]][0]
        raise type(prototype)(*prototype.args)
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


# -- the sweep property: any mix of returning, raising and hanging scenarios -----------------------

MIX_KINDS = ("return", *RAISES, "hang")
mixes = st.lists(st.sampled_from(MIX_KINDS), min_size=1, max_size=5)
"""Sweeps of up to five scenarios, each returning, raising one of :data:`RAISES` or hanging."""
HANG = 30.0
"""How long a hung scenario of the property waits: longer than any sweep of it, so only its timeout ends it."""
MIX_TIMEOUT = 0.2
SLACK = 15.0
"""Seconds a mix may take beyond its hung scenarios' timeouts (process start-up, a busy machine)."""


def mix_scenario(index: int, kind: str) -> dict[str, Any]:
    """The scenario ``behave`` runs for one kind of the mix."""
    if kind == "return":
        return {"value": index}
    if kind == "hang":
        return {"value": index, "hang": HANG}
    return {"value": index, "raise": kind}


def mix_answer(index: int, kind: str) -> tuple[Any, str | None]:
    """The value and error every executor must give for it."""
    if kind == "return":
        return index, None
    if kind == "hang":
        return None, f"TimeoutError: no result within {MIX_TIMEOUT:g} s"
    return None, RAISES[kind][1]


def check_mix(executor: Executor | None, kinds: list[str]) -> None:
    """One result per scenario, in input order, each the one its kind gives, in bounded time."""
    started = time.monotonic()
    results = list(sweep([mix_scenario(i, kind) for i, kind in enumerate(kinds)], behave, executor,
                         timeout=MIX_TIMEOUT))
    elapsed = time.monotonic() - started
    assert [r.index for r in results] == list(range(len(kinds)))
    assert [(r.value, r.error) for r in results] == [mix_answer(i, kind) for i, kind in enumerate(kinds)]
    assert elapsed < kinds.count("hang") * MIX_TIMEOUT + SLACK
