"""Scheduler.fork: an independent scheduler in the same state, whose changes never show on the other side."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Scheduler
from kschedlib.errors import CacheError
from kschedlib.framework import CycleState, Handle, PermitPlugin, Registry, Status, Wait
from kschedlib.model import Pod
from kschedlib.plugins import in_tree_registry
from tests.helpers import make_node, make_pod


def _cluster(sched: Scheduler, nodes: int = 4, bound: int = 3, pending: int = 5) -> None:
    for i in range(nodes):
        sched.add_node(make_node(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}",
                                                 "topology.kubernetes.io/zone": f"z{i % 2}"}))
    for i in range(bound):
        sched.add_pod(make_pod(f"b{i}", uid=f"b{i}", requests={"cpu": "1"}, node_name=f"n{i % nodes}"))
    for i in range(pending):
        sched.add_pod(make_pod(f"p{i}", uid=f"p{i}", requests={"cpu": "1500m"}))


def _state(sched: Scheduler) -> dict[str, Any]:
    """Everything observable about a scheduler's state."""
    snapshot = sched.snapshot()
    return {
        "nodes": sched.node_names(),
        "infos": {info.name: (info.node, sorted(p.pod.key for p in info.pods)) for info in snapshot.node_infos},
        "bound": sched.bound_pods(),
        "pending": {key: (queue, info.attempts, info.timestamp) for key, (queue, info) in sched.pending().items()},
        "nominations": sched.nominations(),
        "pods": sched.pods(),
        "now": sched.clock.now(),
    }


def _decisions(sched: Scheduler) -> list[tuple[str, str | None]]:
    return [(r.pod.key, r.node_name) for r in sched.run_until_idle()]


def test_a_fork_makes_the_same_decisions_as_the_original() -> None:
    sched = Scheduler(seed=3, clock=FakeClock())
    _cluster(sched, nodes=6, pending=12)
    sched.schedule_one()
    twin = sched.fork()
    assert _state(twin) == _state(sched)
    assert _decisions(twin) == _decisions(sched)


def test_changes_on_the_fork_never_show_on_the_original_and_back() -> None:
    sched = Scheduler(seed=0, clock=FakeClock())
    _cluster(sched)
    before = _state(sched)
    twin = sched.fork()
    twin.remove_node("n3")
    twin.add_node(make_node("extra"))
    twin.add_pod(make_pod("new", uid="new"))
    twin.remove_pod("default/b0")
    twin.run_until_idle()
    assert isinstance(twin.clock, FakeClock)
    twin.clock.advance(30)
    assert _state(sched) == before
    after_twin = _state(twin)
    sched.remove_node("n0")
    sched.run_until_idle()
    assert _state(twin) == after_twin


def test_a_fork_keeps_queue_bookkeeping_and_nominations() -> None:
    clock = FakeClock()
    sched = Scheduler(seed=0, clock=clock)
    sched.add_node(make_node("n0", allocatable={"cpu": "2", "memory": "4Gi", "pods": "10"}))
    sched.add_pod(make_pod("low", uid="low", requests={"cpu": "2"}, priority=0, node_name="n0"))
    sched.add_pod(make_pod("high", uid="high", requests={"cpu": "2"}, priority=100))
    result = sched.schedule_one()
    assert result is not None
    assert result.nominated_node_name == "n0"
    twin = sched.fork()
    assert twin.nominations() == sched.nominations() == {"default/high": "n0"}
    assert twin.pending()["default/high"][1].attempts == 1
    twin.remove_pod("default/high")
    assert sched.nominations() == {"default/high": "n0"}
    assert "default/high" in sched.pending()


def test_a_fork_of_a_scheduler_on_a_real_clock_shares_it() -> None:
    sched = Scheduler()
    assert sched.fork().clock is sched.clock
    clock = FakeClock(5)
    assert Scheduler(clock=FakeClock()).fork(clock=clock).clock is clock


class _Wait(PermitPlugin):
    name: ClassVar[str] = "WaitAlways"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        return Wait(10.0)


def test_a_fork_is_refused_while_a_pod_waits_in_permit() -> None:
    registry: Registry = in_tree_registry()
    registry.register(_Wait.name, lambda args, handle: _Wait(args, handle))
    config = {"profiles": [{"plugins": {"permit": {"enabled": [{"name": _Wait.name}]}}}]}
    sched = Scheduler(config, registry=registry, clock=FakeClock())
    _cluster(sched, pending=1)
    sched.schedule_one()
    assert sched.waiting_pods() == ["default/p0"]
    before = _state(sched)
    with pytest.raises(CacheError, match="cannot be forked while pods wait in Permit"):
        sched.fork()
    assert _state(sched) == before


_ops = st.lists(st.one_of(
    st.tuples(st.just("schedule"), st.integers(0, 3)),
    st.tuples(st.just("add_pod"), st.integers(0, 30)),
    st.tuples(st.just("remove_pod"), st.integers(0, 30)),
    st.tuples(st.just("add_node"), st.integers(0, 6)),
    st.tuples(st.just("remove_node"), st.integers(0, 6)),
    st.tuples(st.just("advance"), st.integers(1, 20)),
), max_size=12)


def _apply(sched: Scheduler, ops: list[tuple[str, int]]) -> None:
    for op, n in ops:
        if op == "schedule":
            for _ in range(n):
                sched.schedule_one()
        elif op == "add_pod":
            if sched.get_pod(f"default/x{n}") is None:
                sched.add_pod(make_pod(f"x{n}", uid=f"x{n}", requests={"cpu": f"{(n % 4) * 500 + 100}m"}))
        elif op == "remove_pod":
            sched.remove_pod(f"default/x{n}")
        elif op == "add_node":
            sched.add_node(make_node(f"m{n}"))
        elif op == "remove_node":
            if sched.has_node(f"m{n}"):
                sched.remove_node(f"m{n}")
        else:
            assert isinstance(sched.clock, FakeClock)
            sched.clock.advance(n)
            sched.tick()


@settings(max_examples=40)
@given(before=_ops, on_fork=_ops, on_original=_ops)
def test_fork_independence(before: list[tuple[str, int]], on_fork: list[tuple[str, int]],
                           on_original: list[tuple[str, int]]) -> None:
    """Whatever either side does after the fork, the other side's state is what it was."""
    sched = Scheduler(seed=1, clock=FakeClock())
    _cluster(sched)
    _apply(sched, before)
    twin = sched.fork()
    frozen = _state(sched)
    _apply(twin, on_fork)
    assert _state(sched) == frozen
    twin_state = _state(twin)
    _apply(sched, on_original)
    assert _state(twin) == twin_state


@settings(max_examples=30)
@given(before=_ops, after=_ops)
def test_a_fork_and_its_original_given_the_same_events_stay_alike(before: list[tuple[str, int]],
                                                                   after: list[tuple[str, int]]) -> None:
    sched = Scheduler(seed=2, clock=FakeClock())
    _cluster(sched, pending=8)
    _apply(sched, before)
    twin = sched.fork()
    _apply(sched, after)
    _apply(twin, after)
    assert _state(twin) == _state(sched)
