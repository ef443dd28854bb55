"""The scheduling queue (reference §11): activeQ order, gating, backoff, the unschedulable pool, events."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib._internal.queue import EventRegistration, SchedulingQueue
from kschedlib.clock import FakeClock
from kschedlib.framework import PodInfo, QueuedPodInfo, Status
from kschedlib.framework.events import (
    ASSIGNED_POD_DELETE,
    NODE,
    NODE_ADD,
    NODE_LABEL_CHANGE,
    POD,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
)
from kschedlib.model import Pod
from kschedlib.plugins.priority_sort import less, sort_key
from kschedlib.plugins.scheduling_gates import gates_message
from tests.helpers import make_pod

REGISTRATIONS = {
    "default-scheduler": [
        EventRegistration("NodeFilter", ClusterEvent(NODE, ActionType.ADD)),
        EventRegistration("PodFilter", ClusterEvent(POD, ActionType.DELETE)),
        EventRegistration("SchedulingGates", ClusterEvent(POD, ActionType.UPDATE)),
    ],
}


def pre_enqueue(pod: Pod) -> Status:
    message = gates_message(pod)
    return Status.success() if message is None else Status.unresolvable(message, plugin="SchedulingGates")


def new_queue(clock: FakeClock | None = None, initial_backoff: float = 1.0,
              max_backoff: float = 10.0) -> tuple[SchedulingQueue, FakeClock]:
    clock = clock or FakeClock(1000.0)
    queue = SchedulingQueue(less, pre_enqueue, clock.now, registrations=REGISTRATIONS,
                            initial_backoff=initial_backoff, max_backoff=max_backoff)
    return queue, clock


def pod(name: str, priority: int | None = None, gates: Sequence[str] = ()) -> PodInfo:
    return PodInfo.of(make_pod(name, priority=priority, scheduling_gates=tuple(gates)))


def fail(queue: SchedulingQueue, info: QueuedPodInfo, *rejectors: str) -> str:
    """The failure handler's part: record rejectors and requeue."""
    info.unschedulable_plugins = frozenset(rejectors)
    return queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)


def pop_name(queue: SchedulingQueue) -> str | None:
    info = queue.pop()
    return info.pod.name if info is not None else None


def drain(queue: SchedulingQueue) -> list[str]:
    out = []
    while (name := pop_name(queue)) is not None:
        out.append(name)
    return out


# --- activeQ ----------------------------------------------------------------------------------


def test_pods_leave_by_priority_then_arrival() -> None:
    queue, clock = new_queue()
    for name, priority in [("low", None), ("high", 100), ("mid", 10), ("high2", 100), ("neg", -5), ("zero", 0)]:
        queue.add(pod(name, priority))
        clock.advance(0.001)
    assert drain(queue) == ["high", "high2", "mid", "low", "zero", "neg"]


def test_equal_timestamps_keep_arrival_order() -> None:
    queue, _ = new_queue()
    for name in ["c", "a", "b", "e", "d"]:
        queue.add(pod(name))
    assert drain(queue) == ["c", "a", "b", "e", "d"]


def test_pop_counts_the_attempt_and_the_cycle() -> None:
    queue, _ = new_queue()
    queue.add(pod("a"))
    assert queue.scheduling_cycle == 0
    info = queue.pop()
    assert info is not None
    assert info.attempts == 1
    assert queue.scheduling_cycle == 1
    assert info.initial_attempt_timestamp == 1000.0
    assert queue.pop() is None
    assert len(queue) == 0


def test_adding_a_queued_pod_again_replaces_it() -> None:
    queue, _ = new_queue()
    queue.add(pod("a"))
    queue.add(pod("a", 5))
    assert queue.where("default/a") == "active"
    info = queue.pop()
    assert info is not None
    assert info.pod.priority == 5
    assert queue.pop() is None


# --- PreEnqueue (gates) -----------------------------------------------------------------------


def test_gated_pods_are_parked_with_the_gating_plugin() -> None:
    queue, _ = new_queue()
    info = queue.add(pod("held", gates=["wait-for-quota"]))
    assert info.gated
    assert info.unschedulable_plugins == {"SchedulingGates"}
    assert queue.where("default/held") == "gated"
    assert queue.pop() is None
    assert queue.counts() == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 1}
    assert info.initial_attempt_timestamp is None


def test_removing_the_gates_releases_the_pod() -> None:
    queue, clock = new_queue()
    held = make_pod("held", scheduling_gates=("g",))
    queue.add(PodInfo.of(held))
    clock.advance(60)
    queue.update(PodInfo.of(attrs.evolve(held, scheduling_gates=())))
    assert queue.where("default/held") == "active"
    info = queue.pop()
    assert info is not None
    assert not info.gated
    assert info.attempts == 1


def test_gated_pods_are_not_moved_by_events_or_the_flush() -> None:
    queue, clock = new_queue()
    queue.add(pod("held", gates=["g"]))
    assert queue.move_all(NODE_ADD) == 0
    assert queue.move_all(UNSCHEDULABLE_TIMEOUT) == 0
    clock.advance(3600)
    assert queue.flush_unschedulable_leftover(UNSCHEDULABLE_TIMEOUT) == 0
    assert queue.where("default/held") == "gated"


# --- after a failed attempt (§11.4) -----------------------------------------------------------


def test_failure_with_rejectors_goes_to_the_unschedulable_pool() -> None:
    queue, _ = new_queue()
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    assert fail(queue, info, "NodeFilter") == "unschedulable"
    assert queue.where("default/a") == "unschedulable"
    assert queue.incoming[("unschedulable", "ScheduleAttemptFailure")] == 1


def test_failure_without_rejectors_goes_to_backoff() -> None:
    queue, _ = new_queue()
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    assert fail(queue, info) == "backoff"
    assert queue.where("default/a") == "backoff"


def test_failure_after_an_event_during_the_attempt_goes_to_backoff() -> None:
    queue, _ = new_queue()
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    cycle = queue.scheduling_cycle
    queue.move_all(NODE_ADD)  # an interesting event while the pod was in flight
    info.unschedulable_plugins = frozenset({"NodeFilter"})
    assert queue.add_unschedulable_if_not_present(info, cycle) == "backoff"


def test_uninteresting_events_do_not_count_as_moves() -> None:
    queue, _ = new_queue()
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    cycle = queue.scheduling_cycle
    queue.move_all(NODE_LABEL_CHANGE)  # nobody registered it
    info.unschedulable_plugins = frozenset({"NodeFilter"})
    assert queue.add_unschedulable_if_not_present(info, cycle) == "unschedulable"


def test_requeue_of_a_pod_already_queued_is_a_no_op() -> None:
    queue, _ = new_queue()
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    queue.add(pod("a"))
    assert fail(queue, info, "NodeFilter") == "present"
    assert queue.where("default/a") == "active"


def test_failure_restamps_the_pod() -> None:
    queue, clock = new_queue()
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    clock.advance(7)
    fail(queue, info)
    assert info.timestamp == 1007.0
    assert info.initial_attempt_timestamp == 1000.0


# --- backoff (§11.1) --------------------------------------------------------------------------

BACKOFF = [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (6, 10.0), (50, 10.0)]


@pytest.mark.parametrize(("attempts", "seconds"), BACKOFF, ids=[f"attempt-{a}" for a, _ in BACKOFF])
def test_default_backoff(attempts: int, seconds: float) -> None:
    queue, _ = new_queue()
    assert queue.backoff_duration(attempts) == seconds


def test_configured_backoff() -> None:
    queue, _ = new_queue(initial_backoff=3.0, max_backoff=20.0)
    assert [queue.backoff_duration(a) for a in range(1, 6)] == [3.0, 6.0, 12.0, 20.0, 20.0]


def test_backoff_expires_on_the_clock() -> None:
    queue, clock = new_queue()
    queue.add(pod("a"))
    for _ in range(2):  # two failed attempts: 2 s of backoff after the second
        info = queue.pop()
        assert info is not None
        fail(queue, info)
        clock.advance(queue.backoff_duration(info.attempts))
        assert queue.flush_backoff_completed() == 1
    info = queue.pop()
    assert info is not None
    assert info.attempts == 3
    fail(queue, info)
    assert queue.next_backoff_expiry() == clock.now() + 4.0
    clock.advance(3.9)
    assert queue.flush_backoff_completed() == 0
    assert queue.pop() is None
    clock.advance(0.1)
    assert queue.flush_backoff_completed() == 1
    assert pop_name(queue) == "a"
    assert queue.next_backoff_expiry() is None


def test_backoff_flush_moves_pods_in_expiry_order() -> None:
    queue, clock = new_queue()
    for name in ("a", "b"):
        queue.add(pod(name))
    first = queue.pop()
    second = queue.pop()
    assert first is not None
    assert second is not None
    second.attempts = 3  # 4 s
    fail(queue, second)
    fail(queue, first)  # 1 s
    clock.advance(1)
    assert queue.flush_backoff_completed() == 1
    assert pop_name(queue) == "a"
    clock.advance(3)
    assert queue.flush_backoff_completed() == 1
    assert pop_name(queue) == "b"


# --- moving pods on cluster events (§11.5) ----------------------------------------------------


def parked(queue: SchedulingQueue, clock: FakeClock, *pods: tuple[str, str]) -> None:
    for name, _ in pods:
        queue.add(pod(name))
    infos = {name: queue.pop() for name, _ in pods}
    for name, rejector in pods:
        info = infos[name]
        assert info is not None
        assert fail(queue, info, rejector) == "unschedulable"
    clock.advance(20)  # past any backoff


def test_an_event_moves_only_pods_whose_rejectors_registered_it() -> None:
    queue, clock = new_queue()
    parked(queue, clock, ("by-node", "NodeFilter"), ("by-pod", "PodFilter"), ("by-other", "Unregistered"))
    assert queue.move_all(NODE_ADD) == 1
    assert queue.where("default/by-node") == "active"
    assert queue.where("default/by-pod") == "unschedulable"
    assert queue.incoming[("active", "NodeAdd")] == 1
    assert queue.move_all(ASSIGNED_POD_DELETE) == 1
    assert queue.where("default/by-pod") == "active"
    assert queue.where("default/by-other") == "unschedulable"


def test_an_event_nobody_registered_moves_nothing() -> None:
    queue, clock = new_queue()
    parked(queue, clock, ("a", "NodeFilter"))
    before = queue.move_request_cycle
    assert queue.move_all(NODE_LABEL_CHANGE) == 0
    assert queue.move_request_cycle == before
    assert queue.where("default/a") == "unschedulable"


def test_wildcard_events_move_every_pod() -> None:
    queue, clock = new_queue()
    parked(queue, clock, ("a", "NodeFilter"), ("b", "Unregistered"))
    assert queue.move_all(UNSCHEDULABLE_TIMEOUT) == 2
    assert sorted(drain(queue)) == ["a", "b"]


def test_the_pre_check_filters_candidates() -> None:
    queue, clock = new_queue()
    parked(queue, clock, ("a", "NodeFilter"), ("b", "NodeFilter"))
    assert queue.move_all(NODE_ADD, lambda p: p.name == "b") == 1
    assert queue.where("default/a") == "unschedulable"
    assert queue.where("default/b") == "active"


def test_a_moved_pod_still_backing_off_goes_to_backoff() -> None:
    queue, clock = new_queue()
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    fail(queue, info, "NodeFilter")
    clock.advance(0.5)
    assert queue.move_all(NODE_ADD) == 1
    assert queue.where("default/a") == "backoff"
    assert queue.incoming[("backoff", "NodeAdd")] == 1


def test_leftover_pods_are_flushed_after_five_minutes() -> None:
    queue, clock = new_queue()
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    fail(queue, info, "Unregistered")
    clock.advance(299.5)
    assert queue.flush_unschedulable_leftover(UNSCHEDULABLE_TIMEOUT) == 0
    assert queue.next_unschedulable_flush() == clock.now() + 0.5
    clock.advance(0.5)  # due at exactly the time next_unschedulable_flush() gives
    assert queue.flush_unschedulable_leftover(UNSCHEDULABLE_TIMEOUT) == 1
    assert queue.where("default/a") == "active"


def test_without_retries_failed_pods_stay_parked() -> None:
    queue, clock = new_queue()
    queue.retry_failed = False
    queue.add(pod("a"))
    info = queue.pop()
    assert info is not None
    assert fail(queue, info) == "unschedulable"
    clock.advance(1000)
    assert queue.move_all(UNSCHEDULABLE_TIMEOUT) == 0
    assert queue.flush_backoff_completed() == 0
    assert queue.where("default/a") == "unschedulable"


def test_activate_skips_the_wait() -> None:
    queue, _ = new_queue()
    for name in ("pooled", "backing-off"):
        queue.add(pod(name))
    pooled, backing = queue.pop(), queue.pop()
    assert pooled is not None
    assert backing is not None
    fail(queue, pooled, "Unregistered")
    fail(queue, backing)
    assert queue.activate(["default/pooled", "default/backing-off", "default/unknown"]) == 2
    assert drain(queue) == ["pooled", "backing-off"]


# --- update and delete ------------------------------------------------------------------------


def test_update_in_active_keeps_the_place() -> None:
    queue, clock = new_queue()
    old = make_pod("a")
    queue.add(PodInfo.of(old))
    clock.advance(1)
    queue.add(pod("b"))
    clock.advance(1)
    updated = queue.update(PodInfo.of(attrs.evolve(old, labels={"x": "y"})))
    assert updated.timestamp == 1000.0
    info = queue.pop()
    assert info is not None
    assert (info.pod.name, info.pod.labels) == ("a", {"x": "y"})


def test_update_in_backoff_stays_in_backoff() -> None:
    queue, _ = new_queue()
    old = make_pod("a")
    queue.add(PodInfo.of(old))
    info = queue.pop()
    assert info is not None
    fail(queue, info)
    queue.update(PodInfo.of(attrs.evolve(old, labels={"x": "y"})))
    assert queue.where("default/a") == "backoff"
    got = queue.get("default/a")
    assert got is not None
    assert got.pod.labels == {"x": "y"}


def test_relevant_update_moves_a_pooled_pod() -> None:
    queue, clock = new_queue()
    old = make_pod("a")
    queue.add(PodInfo.of(old))
    info = queue.pop()
    assert info is not None
    fail(queue, info, "Unregistered")
    clock.advance(30)
    queue.update(PodInfo.of(attrs.evolve(old, labels={"x": "y"})))
    assert queue.where("default/a") == "active"
    assert queue.incoming[("active", "PodUpdate")] == 1


def test_irrelevant_update_leaves_a_pooled_pod_in_place() -> None:
    queue, clock = new_queue()
    old = make_pod("a")
    queue.add(PodInfo.of(old))
    info = queue.pop()
    assert info is not None
    fail(queue, info, "Unregistered")
    clock.advance(30)
    queue.update(PodInfo.of(old), changed=False)
    assert queue.where("default/a") == "unschedulable"


def test_update_of_an_unknown_pod_adds_it() -> None:
    queue, _ = new_queue()
    queue.update(pod("new"))
    assert queue.where("default/new") == "active"


@pytest.mark.parametrize("where", ["active", "backoff", "unschedulable", "gated"])
def test_delete_from_anywhere(where: str) -> None:
    queue, _ = new_queue()
    queue.add(pod("a", gates=["g"] if where == "gated" else []))
    if where in {"backoff", "unschedulable"}:
        info = queue.pop()
        assert info is not None
        fail(queue, info, *(["NodeFilter"] if where == "unschedulable" else []))
    assert queue.where("default/a") == where
    assert queue.delete(make_pod("a"))
    assert queue.where("default/a") is None
    assert not queue.delete(make_pod("a"))
    assert queue.pop() is None
    assert len(queue) == 0


# --- property: every pod is in exactly one place ----------------------------------------------

OPS = st.lists(st.tuples(st.sampled_from(["add", "gate", "pop-fail", "pop-fail-none", "move", "tick", "delete",
                                          "update"]),
                         st.sampled_from("abcdef"), st.integers(-1, 2)), max_size=40)


@settings(max_examples=80)
@given(OPS)
def test_every_pod_is_in_exactly_one_place(ops: list[tuple[str, str, int]]) -> None:
    queue, clock = new_queue()
    known: set[str] = set()
    for op, name, priority in ops:
        key = f"default/{name}"
        if op in {"add", "gate"}:
            queue.add(pod(name, priority, gates=["g"] if op == "gate" else []))
            known.add(key)
        elif op.startswith("pop-fail"):
            info = queue.pop()
            if info is not None:
                assert queue.where(info.pod.key) is None  # in flight
                fail(queue, info, *([] if op == "pop-fail-none" else ["NodeFilter"]))
        elif op == "move":
            queue.move_all(NODE_ADD)
        elif op == "tick":
            clock.advance(priority + 1.5)
            queue.flush_backoff_completed()
        elif op == "delete":
            queue.delete(make_pod(name))
            known.discard(key)
        elif key in known:
            current = queue.get(key)
            assert current is not None
            queue.update(PodInfo.of(attrs.evolve(current.pod, scheduling_gates=())))
        places = queue.pending()
        assert set(places) == known
        assert len(queue) == len(known)
        counts = queue.counts()
        assert sum(counts.values()) == len(known)
        for k in known:
            assert queue.where(k) == places[k][0]
    heads = []
    while (info := queue.pop()) is not None:
        heads.append(info)
    for first, second in itertools.pairwise(heads):
        assert not less(second, first)


# --- the sort key ---------------------------------------------------------------------------

_OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 7), st.one_of(st.none(), st.integers(-2, 2))),
    st.tuples(st.just("pop"), st.just(0), st.none()),
    st.tuples(st.just("fail"), st.just(0), st.none()),
    st.tuples(st.just("update"), st.integers(0, 7), st.one_of(st.none(), st.integers(-2, 2))),
    st.tuples(st.just("tick"), st.integers(1, 3), st.none()),
), max_size=40)


def _popped(ops: list[tuple[str, int, int | None]], keyed: bool) -> list[str | None]:
    clock = FakeClock(1000.0)
    queue = SchedulingQueue(less, pre_enqueue, clock.now, registrations=REGISTRATIONS,
                            sort_key=sort_key if keyed else None)
    out: list[str | None] = []
    held: list[QueuedPodInfo] = []
    for op, index, priority in ops:
        if op == "add":
            queue.add(pod(f"p{index}", priority))
        elif op == "update":
            queue.update(pod(f"p{index}", priority))
        elif op == "pop":
            info = queue.pop()
            out.append(info.pod.name if info is not None else None)
            if info is not None:
                held.append(info)
        elif op == "fail" and held:
            fail(queue, held.pop(0))
        elif op == "tick":
            clock.advance(index)
            queue.flush_backoff_completed()
            queue.flush_unschedulable_leftover(UNSCHEDULABLE_TIMEOUT)
    return out + drain(queue)


@settings(max_examples=80)
@given(_OPS)
def test_a_keyed_active_queue_pops_as_the_less_function(ops: list[tuple[str, int, int | None]]) -> None:
    assert _popped(ops, keyed=True) == _popped(ops, keyed=False)


@pytest.mark.parametrize("hints", [False, True])
def test_an_event_with_an_empty_pool_leaves_what_moving_nobody_leaves(hints: bool) -> None:
    """move_all's shortcut for an empty pool records the request (its cycle, the event for pods in flight)
    exactly as move_pods does when it moves nobody, so the pod in flight is requeued alike."""
    queues = []
    for _ in range(2):
        clock = FakeClock(1000.0)
        queue = SchedulingQueue(less, pre_enqueue, clock.now, registrations=REGISTRATIONS, hints=hints)
        queue.add(pod("a"))
        info = queue.pop()
        assert info is not None
        queues.append((queue, info))
    (fast, fast_info), (plain, plain_info) = queues
    assert fast.move_all(NODE_ADD, new=None) == 0
    assert plain.move_pods([], NODE_ADD, new=None) == 0
    assert fast.move_request_cycle == plain.move_request_cycle == 1
    assert fast._flight_events == plain._flight_events
    assert fail(fast, fast_info, "NodeFilter") == fail(plain, plain_info, "NodeFilter") == "backoff"
    assert fast.pending().keys() == plain.pending().keys()
