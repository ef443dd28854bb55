"""The gang-scheduling example: competing gangs never deadlock, a timed-out gang frees everything.

``examples/gang_scheduling.py`` is imported as a module (its Coscheduling plugin and helpers are
exercised directly) and run as a script (its output must equal ``gang_scheduling.out``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib import Code, ConfigError, FakeClock, Scheduler, ScheduleResult
from kschedlib.model import Pod

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "gang_scheduling.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gang_scheduling", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gang_scheduling", module)
    spec.loader.exec_module(module)
    return module


gs = _load()
NodeSpec = tuple[str, str, dict[str, str]]
ARGS = {"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 30}


class Recorder:
    """A listener keeping every result it is told about."""

    def __init__(self) -> None:
        self.bound: list[ScheduleResult] = []
        self.failed: list[ScheduleResult] = []
        self.waiting: list[ScheduleResult] = []
        self.preempting: list[ScheduleResult] = []

    def on_bound(self, result: ScheduleResult) -> None:
        self.bound.append(result)

    def on_failed(self, result: ScheduleResult) -> None:
        self.failed.append(result)

    def on_waiting(self, result: ScheduleResult) -> None:
        self.waiting.append(result)

    def on_preempting(self, result: ScheduleResult) -> None:
        self.preempting.append(result)


def scheduler(clock: FakeClock, nodes: Sequence[NodeSpec], *,
              args: dict[str, Any] | None = None) -> tuple[Scheduler, Recorder]:
    recorder = Recorder()
    sched = gs.new_scheduler(clock, args=ARGS if args is None else args, listeners=[recorder])
    for name, cpu, labels in nodes:
        sched.add_node(gs.make_node(name, cpu, labels=labels))
    return sched, recorder


def members_bound(sched: Scheduler, pods: Sequence[Pod]) -> int:
    assumed = set(assumed_pods(sched))
    bound = sched.bound_pods()
    return sum(1 for pod in pods if pod.key in bound and pod.key not in assumed)


def assumed_pods(sched: Scheduler) -> list[str]:
    assumed = sched.cache_dump()["assumed"]
    assert isinstance(assumed, list)
    return [str(key) for key in assumed]


def cpu_requested(sched: Scheduler) -> dict[str, int]:
    return {info.name: info.requested.milli_cpu for info in sched.snapshot()}


def interleave(*gangs: Sequence[Pod]) -> list[Pod]:
    out: list[Pod] = []
    for index in range(max(len(g) for g in gangs)):
        out.extend(g[index] for g in gangs if index < len(g))
    return out


TWO_NODES: tuple[NodeSpec, ...] = (("n1", "4", {}), ("n2", "4", {}))


# --- competing gangs -----------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["interleaved", "alpha-first", "beta-first", "reversed"])
def test_two_competing_gangs_never_deadlock(order: str) -> None:
    clock = FakeClock()
    sched, recorder = scheduler(clock, TWO_NODES)
    alpha, beta = gs.gang("alpha", 3, "2"), gs.gang("beta", 3, "2")
    arrivals = {"interleaved": interleave(alpha, beta), "alpha-first": alpha + beta, "beta-first": beta + alpha,
                "reversed": list(reversed(interleave(alpha, beta)))}[order]
    for pod in arrivals:
        sched.add_pod(pod)
    gs.drive(sched, clock, until=120)

    counts = sorted([members_bound(sched, alpha), members_bound(sched, beta)])
    assert counts == [0, 3], "one gang is bound entirely, the other not at all"
    winner, loser = (alpha, beta) if members_bound(sched, alpha) == 3 else (beta, alpha)
    assert winner is (alpha if order in ("interleaved", "alpha-first") else beta)  # first arrival wins
    assert sched.waiting_pods() == []
    assert assumed_pods(sched) == []
    pending = sched.pending()
    assert sorted(pending) == sorted(pod.key for pod in loser)
    assert {where for where, _ in pending.values()} == {"unschedulable"}
    assert all(r.pod.key in {p.key for p in loser} for r in recorder.failed)
    wakeup = sched.next_wakeup()  # quiescent: only the 5-minute flush of the pool is left
    assert wakeup is None or wakeup >= clock.now() + 250

    # The winner finishes: the loser gets the room and runs.
    clock.advance(5)
    for pod in winner:
        sched.remove_pod(pod)
    gs.drive(sched, clock, until=240)
    assert members_bound(sched, loser) == 3
    assert sched.pending() == {}
    assert assumed_pods(sched) == []


def test_a_gang_is_scheduled_back_to_back_even_when_its_pods_arrive_apart() -> None:
    clock = FakeClock()
    sched, recorder = scheduler(clock, (("n1", "16", {}),))
    alpha, beta = gs.gang("alpha", 3, "1"), gs.gang("beta", 3, "1")
    for pod in interleave(alpha, beta):
        sched.add_pod(pod)
        clock.advance(1)
    results = sched.run_until_idle()
    assert [(r.pod.name, r.status.code.label) for r in results] == [
        ("alpha-0", "Wait"), ("alpha-1", "Wait"), ("alpha-2", "Success"), ("alpha-0", "Success"),
        ("alpha-1", "Success"),
        ("beta-0", "Wait"), ("beta-1", "Wait"), ("beta-2", "Success"), ("beta-0", "Success"), ("beta-1", "Success"),
    ]
    assert [r.pod.name for r in recorder.bound] == ["alpha-2", "alpha-0", "alpha-1", "beta-2", "beta-0", "beta-1"]
    assert members_bound(sched, alpha) == members_bound(sched, beta) == 3


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    cpus=st.tuples(st.sampled_from(["1", "2", "3"]), st.sampled_from(["1", "2", "3"])),
    node_cpus=st.lists(st.sampled_from(["2", "4", "6"]), min_size=1, max_size=3),
    order=st.permutations(range(8)),
)
def test_competing_gangs_property(sizes: tuple[int, int], cpus: tuple[str, str], node_cpus: list[str],
                                  order: list[int]) -> None:
    """Whatever the arrival order: no gang is half bound, nothing stays assumed, and if either gang
    alone fits the cluster then some gang is bound."""
    nodes: tuple[NodeSpec, ...] = tuple((f"n{i}", cpu, {}) for i, cpu in enumerate(node_cpus))
    gangs = [gs.gang("alpha", sizes[0], cpus[0]), gs.gang("beta", sizes[1], cpus[1])]
    pods = [*gangs[0], *gangs[1]]
    arrivals = [pods[i] for i in order if i < len(pods)]

    def fits_alone(members: Sequence[Pod]) -> bool:
        clock = FakeClock()
        alone, _ = scheduler(clock, nodes)
        for pod in members:
            alone.add_pod(pod)
        gs.drive(alone, clock, until=100)
        return members_bound(alone, members) == len(members)

    clock = FakeClock()
    sched, _ = scheduler(clock, nodes)
    for pod in arrivals:
        sched.add_pod(pod)
    gs.drive(sched, clock, until=200)
    bound = [members_bound(sched, g) for g in gangs]
    for count, members in zip(bound, gangs, strict=True):
        assert count in (0, len(members)), f"gang half bound: {count}/{len(members)}"
    assert assumed_pods(sched) == []
    assert sched.waiting_pods() == []
    if any(fits_alone(g) for g in gangs):
        assert any(bound), "a gang that fits alone was starved: deadlock"


# --- timeouts release everything -----------------------------------------------------------------


SSD = {"disk": "ssd"}


def test_a_timed_out_gang_frees_its_resources() -> None:
    """Two members wait on the ssd nodes, the third fits nowhere: the timeout releases both."""
    clock = FakeClock()
    sched, recorder = scheduler(clock, (("n1", "8", {}), ("n3", "4", SSD), ("n4", "1", SSD)))
    before = cpu_requested(sched)
    members = gs.gang("gpu", 3, "2", node_selector=SSD)
    for pod in members:
        sched.add_pod(pod)
    sched.run_until_idle()
    assert sorted(sched.waiting_pods()) == ["default/gpu-0", "default/gpu-1"]
    assert sorted(assumed_pods(sched)) == ["default/gpu-0", "default/gpu-1"]
    assert cpu_requested(sched)["n3"] == 4000
    assert sched.next_wakeup() == 10.0

    clock.set(9.999)
    assert sched.tick() == []
    assert len(sched.waiting_pods()) == 2

    clock.set(10.0)
    results = sched.tick()
    assert sorted(r.pod.key for r in results) == ["default/gpu-0", "default/gpu-1"]
    assert all(r.status.code is Code.UNSCHEDULABLE for r in results)
    messages = sorted(r.message or "" for r in results)
    assert any("rejected due to timeout after waiting 10s at plugin Coscheduling" in m for m in messages)
    assert any("rejection in Unreserve" in m for m in messages)
    assert sched.waiting_pods() == []
    assert assumed_pods(sched) == []
    assert cpu_requested(sched) == before
    assert sched.bound_pods() == {}
    assert sorted(sched.pending()) == [pod.key for pod in members]
    assert recorder.bound == []
    assert sched.metrics.histogram_count("scheduler_permit_wait_duration_seconds", result="Unschedulable") == 2


def test_the_group_backs_off_after_a_timeout_then_schedules_when_room_appears() -> None:
    clock = FakeClock()
    sched, recorder = scheduler(clock, (("n1", "8", {}), ("n3", "4", SSD)))
    members = gs.gang("gamma", 2, "3", node_selector=SSD)
    for pod in members:
        sched.add_pod(pod)
    gs.drive(sched, clock, until=25)
    assert assumed_pods(sched) == []
    assert any("failed recently" in (r.message or "") for r in recorder.failed)
    wakeup = sched.next_wakeup()
    assert wakeup is None or wakeup >= clock.now() + 250
    clock.set(50)
    sched.add_node(gs.make_node("n4", "4", labels=SSD))
    gs.drive(sched, clock, until=100)
    assert members_bound(sched, members) == 2


def test_pre_filter_rejects_a_group_that_cannot_reach_min_member() -> None:
    clock = FakeClock()
    sched, recorder = scheduler(clock, TWO_NODES)
    for pod in gs.gang("short", 2, "1", min_member=3):
        sched.add_pod(pod)
    sched.run_until_idle()
    assert [r.status.code for r in recorder.failed] == [Code.UNSCHEDULABLE] * 2
    assert all("cannot find enough sibling pods, current pods number: 2, minMember of group: 3" in (r.message or "")
               for r in recorder.failed)
    assert recorder.preempting == []
    assert {where for where, _ in sched.pending().values()} == {"unschedulable"}
    assert assumed_pods(sched) == []


def test_declared_pod_groups_override_the_annotation() -> None:
    clock = FakeClock()
    sched, recorder = scheduler(clock, TWO_NODES, args={
        "permitWaitingTimeSeconds": 5, "podGroups": [{"name": "pair", "minMember": 2}]})
    for pod in gs.gang("pair", 2, "1", min_member=5):
        sched.add_pod(pod)
    sched.run_until_idle()
    assert len(recorder.bound) == 2


def test_pods_outside_groups_keep_priority_sort_order() -> None:
    clock = FakeClock()
    sched, recorder = scheduler(clock, (("n1", "16", {}),))
    low = gs.gang("x", 1, "1")[0]
    plain = [Pod(f"p{i}", priority=p, containers=low.containers) for i, p in enumerate([0, 10, 5])]
    for pod in plain:
        sched.add_pod(pod)
    sched.run_until_idle()
    assert [r.pod.name for r in recorder.bound] == ["p1", "p2", "p0"]


def test_invalid_args_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="minMember"):
        gs.decode_args({"podGroups": [{"name": "g", "minMember": 0}]})
    with pytest.raises(ConfigError, match="permitWaitingTimeSeconds"):
        gs.decode_args({"permitWaitingTimeSeconds": -1})


# --- the script ----------------------------------------------------------------------------------


def test_example_output_equals_the_saved_output() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    env["PYTHONHASHSEED"] = "0"
    completed = subprocess.run([sys.executable, str(SCRIPT)], cwd=SCRIPT.parent, env=env, capture_output=True,
                               text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert completed.stdout == SCRIPT.with_suffix(".out").read_text(encoding="utf-8")
