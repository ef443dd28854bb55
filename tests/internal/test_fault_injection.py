"""Fault injection: plugins that raise, binders that fail or hang, nodes that vanish under waiting pods.

Each fault must end in a clean state: the pod's reservation rolled back (Unreserve in reverse
order, the assumed pod forgotten), the pod requeued with backoff, other pods still scheduled,
nothing lost, and the metrics telling what happened (reference §4, §5, §11.1, §15).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import attrs
import pytest

from kschedlib import CacheError, Code, FakeClock, Scheduler, ScheduleResult
from kschedlib.framework import (
    BindPlugin,
    CycleState,
    FilterPlugin,
    Handle,
    NodeInfo,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PreBindPlugin,
    PreFilterPlugin,
    Registry,
    ReservePlugin,
    ScorePlugin,
    Status,
    Wait,
)
from kschedlib.model import Pod
from kschedlib.plugins import in_tree_registry
from tests.helpers import Recorder, make_node, make_pod

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

PROFILE = "default-scheduler"
BOOM = "injected fault"


def faulty(pod: Pod) -> bool:
    return pod.labels.get("fault") == "yes"


# --- fault-injecting plugins ---------------------------------------------------------------------


class RaisingPreFilter(PreFilterPlugin):
    name: ClassVar[str] = "RaisingPreFilter"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        if faulty(pod):
            raise RuntimeError(BOOM)
        return Status.success()


class RaisingFilter(FilterPlugin):
    name: ClassVar[str] = "RaisingFilter"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if faulty(pod):
            raise RuntimeError(BOOM)
        return Status.success()


class RaisingScore(ScorePlugin):
    name: ClassVar[str] = "RaisingScore"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        if faulty(pod):
            raise RuntimeError(BOOM)
        return 0


class ReserveLog:
    """Shared by the Reserve plugins: the order of their calls."""

    calls: ClassVar[list[str]] = []


class FirstReserve(ReservePlugin):
    name: ClassVar[str] = "FirstReserve"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        ReserveLog.calls.append(f"reserve {self.name} {pod.name}")
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        ReserveLog.calls.append(f"unreserve {self.name} {pod.name}")


class SecondReserve(ReservePlugin):
    """Reserves like FirstReserve but raises for faulty pods when ``raise_in_reserve`` is set."""

    name: ClassVar[str] = "SecondReserve"
    raise_in_reserve: ClassVar[bool] = False

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        ReserveLog.calls.append(f"reserve {self.name} {pod.name}")
        if faulty(pod) and SecondReserve.raise_in_reserve:
            raise RuntimeError(BOOM)
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        ReserveLog.calls.append(f"unreserve {self.name} {pod.name}")


class RaisingPermit(PermitPlugin):
    name: ClassVar[str] = "RaisingPermit"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        if faulty(pod):
            raise RuntimeError(BOOM)
        return Status.success()


class RaisingPreBind(PreBindPlugin):
    name: ClassVar[str] = "RaisingPreBind"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if faulty(pod):
            raise RuntimeError(BOOM)
        return Status.success()


class FailingBind(BindPlugin):
    """Binds, except faulty pods: ``mode`` says how it fails."""

    name: ClassVar[str] = "FailingBind"
    mode: ClassVar[str] = "error"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if not faulty(pod):
            return Status.success()
        if FailingBind.mode == "raise":
            raise RuntimeError(BOOM)
        if FailingBind.mode == "skip":
            return Status.skip()
        if FailingBind.mode == "unschedulable":
            return Status.unschedulable("node refused the pod")
        return Status.from_error(BOOM)


class RaisingPostBind(PostBindPlugin):
    name: ClassVar[str] = "RaisingPostBind"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        raise RuntimeError(BOOM)


class Waiter(PermitPlugin):
    """Pods labelled ``wait=<seconds>`` wait that long in Permit."""

    name: ClassVar[str] = "Waiter"
    handle: ClassVar[Handle | None] = None

    def __init__(self, args: object, handle: Handle) -> None:
        Waiter.handle = handle

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        seconds = pod.labels.get("wait")
        return Wait(float(seconds)) if seconds else Status.success()


TEST_PLUGINS: Sequence[type[Plugin]] = (RaisingPreFilter, RaisingFilter, RaisingScore, FirstReserve, SecondReserve,
                                        RaisingPermit, RaisingPreBind, FailingBind, RaisingPostBind, Waiter)


def new_scheduler(points: Mapping[str, Sequence[str]], *, clock: FakeClock | None = None,
                  listeners: Sequence[Recorder] = (), replace_binder: bool = False, **kwargs: Any) -> Scheduler:
    """The default profile plus the named test plugins at the given extension points."""
    registry = Registry()
    for plugin in TEST_PLUGINS:
        registry.register(plugin.name, plugin)
    plugins: dict[str, Any] = {point: {"enabled": [{"name": name} for name in names]}
                               for point, names in points.items()}
    if replace_binder:
        plugins.setdefault("bind", {"enabled": []})["disabled"] = [{"name": "DefaultBinder"}]
    return Scheduler({"profiles": [{"plugins": plugins}]}, clock=clock or FakeClock(),
                     registry=in_tree_registry().merge(registry), listeners=listeners, **kwargs)


def assumed(sched: Scheduler) -> list[str]:
    keys = sched.cache_dump()["assumed"]
    assert isinstance(keys, list)
    return [str(key) for key in keys]


def where(sched: Scheduler, key: str) -> str | None:
    entry = sched.pending().get(key)
    return entry[0] if entry is not None else None


def attempts(sched: Scheduler, result: str) -> float:
    return sched.metrics.counter("scheduler_schedule_attempts_total", result=result, profile=PROFILE)


@pytest.fixture(autouse=True)
def _reset_plugin_state() -> None:
    ReserveLog.calls.clear()
    SecondReserve.raise_in_reserve = False
    FailingBind.mode = "error"
    Waiter.handle = None


# --- plugins that raise --------------------------------------------------------------------------


def test_a_raising_filter_is_an_error_the_pod_backs_off_1_2_4_8_10_10_and_others_go_on() -> None:
    clock = FakeClock(100.0)
    recorder = Recorder()
    sched = new_scheduler({"filter": ["RaisingFilter"]}, clock=clock, listeners=[recorder])
    sched.add_node(make_node("n1"))
    sched.add_pod(make_pod("bad", labels={"fault": "yes"}, requests={"cpu": "1"}))
    for name in ("good-1", "good-2"):
        sched.add_pod(make_pod(name, requests={"cpu": "1"}))

    first = sched.schedule_one()
    assert first is not None
    assert first.pod.name == "bad"
    assert first.status.code is Code.ERROR
    assert first.status.plugin == "RaisingFilter"
    assert first.message == f'running "RaisingFilter" filter plugin: {BOOM}'
    assert where(sched, "default/bad") == "backoff"
    assert sched.next_wakeup() == 100.0  # the good pods are ready now

    # The scheduler carries on with the other pods while the faulty one backs off.
    results = sched.run_until_idle()
    assert [(r.pod.name, r.scheduled) for r in results] == [("good-1", True), ("good-2", True)]
    assert where(sched, "default/bad") == "backoff"
    assert sched.next_wakeup() == 101.0

    durations = []
    for attempt in range(2, 7):
        failed_at = clock.now()
        wakeup = sched.next_wakeup()
        assert wakeup is not None
        durations.append(wakeup - failed_at)
        clock.set(wakeup - 0.001)
        assert sched.schedule_one() is None, "still backing off"
        clock.set(wakeup)
        result = sched.schedule_one()
        assert result is not None
        assert result.pod.name == "bad"
        assert result.attempts == attempt
        assert result.status.code is Code.ERROR
        assert where(sched, "default/bad") == "backoff"
    last = sched.next_wakeup()
    assert last is not None
    durations.append(last - clock.now())
    assert durations == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert attempts(sched, "error") == 6
    assert attempts(sched, "scheduled") == 2
    assert assumed(sched) == []
    assert recorder.keys("failed") == ["default/bad"] * 6


FAULTS = {
    # extension point -> (test plugins, the ERROR message, whether Reserve ran)
    "PreFilter": ({"preFilter": ["RaisingPreFilter"]}, f'running PreFilter plugin "RaisingPreFilter": {BOOM}', False),
    "Filter": ({"filter": ["RaisingFilter"]}, f'running "RaisingFilter" filter plugin: {BOOM}', False),
    "Score": ({"score": ["RaisingScore"]},
              f'running Score plugins: plugin "RaisingScore" failed with: {BOOM}', False),
    "Reserve": ({}, f'running Reserve plugin "SecondReserve": {BOOM}', True),
    "Permit": ({"permit": ["RaisingPermit"]}, f'running Permit plugin "RaisingPermit": {BOOM}', True),
    "PreBind": ({"preBind": ["RaisingPreBind"]}, f'running PreBind plugin "RaisingPreBind": {BOOM}', True),
    "Bind": ({"bind": ["FailingBind"]}, f'running Bind plugin "FailingBind": {BOOM}', True),
}


@pytest.mark.parametrize("point", list(FAULTS))
def test_a_plugin_raising_at_any_point_leaves_a_clean_state(point: str) -> None:
    extra, message, reserved = FAULTS[point]
    SecondReserve.raise_in_reserve = point == "Reserve"
    FailingBind.mode = "raise"
    points = {"reserve": ["FirstReserve", "SecondReserve"], **extra}
    recorder = Recorder()
    sched = new_scheduler(points, listeners=[recorder], replace_binder=point == "Bind")
    for name in ("n1", "n2"):
        sched.add_node(make_node(name))
    sched.add_pod(make_pod("bad", labels={"fault": "yes"}, requests={"cpu": "1"}))
    sched.add_pod(make_pod("good", requests={"cpu": "1"}))

    results = sched.run_until_idle()
    assert [r.pod.name for r in results] == ["bad", "good"]
    bad, good = results
    assert bad.status.code is Code.ERROR
    assert bad.message == message
    assert good.scheduled
    assert where(sched, "default/bad") == "backoff"
    assert assumed(sched) == []
    assert sched.bound_pods() == {"default/good": good.node_name}
    requested = {info.name: info.requested.milli_cpu for info in sched.snapshot()}
    assert sorted(requested.values()) == [0, 1000]
    bad_calls = [call for call in ReserveLog.calls if call.endswith(" bad")]
    if reserved:
        assert bad_calls == ["reserve FirstReserve bad", "reserve SecondReserve bad",
                             "unreserve SecondReserve bad", "unreserve FirstReserve bad"]
    else:
        assert bad_calls == []
    assert recorder.keys("failed") == ["default/bad"]
    assert recorder.keys("bound") == ["default/good"]
    assert attempts(sched, "error") == 1
    assert attempts(sched, "scheduled") == 1


def test_a_raising_post_bind_does_not_undo_the_binding() -> None:
    sched = new_scheduler({"postBind": ["RaisingPostBind"]})
    sched.add_node(make_node("n1"))
    sched.add_pod(make_pod("a"))
    (result,) = sched.run_until_idle()
    assert result.scheduled
    assert sched.bound_pods() == {"default/a": "n1"}
    assert assumed(sched) == []


# --- binders that fail ---------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "code", "queue"), [
    ("error", Code.ERROR, "backoff"),
    ("raise", Code.ERROR, "backoff"),
    ("skip", Code.ERROR, "backoff"),  # no Bind plugin bound the pod
    ("unschedulable", Code.UNSCHEDULABLE, "backoff"),  # PreBind/Bind failures have no rejector plugin (§11.4)
])
def test_a_failing_bind_unreserves_in_reverse_order_forgets_and_requeues(mode: str, code: Code, queue: str) -> None:
    FailingBind.mode = mode
    clock = FakeClock()
    recorder = Recorder()
    sched = new_scheduler({"reserve": ["FirstReserve", "SecondReserve"], "bind": ["FailingBind"]},
                          clock=clock, listeners=[recorder], replace_binder=True)
    sched.add_node(make_node("n1", allocatable={"cpu": "2", "memory": "8Gi", "pods": "110"}))
    sched.add_pod(make_pod("bad", labels={"fault": "yes"}, requests={"cpu": "2"}))
    sched.add_pod(make_pod("waits-for-room", requests={"cpu": "2"}))

    result = sched.schedule_one()
    assert result is not None
    assert result.pod.name == "bad"
    assert result.status.code is code
    assert ReserveLog.calls == ["reserve FirstReserve bad", "reserve SecondReserve bad",
                                "unreserve SecondReserve bad", "unreserve FirstReserve bad"]
    assert assumed(sched) == []
    assert sched.bound_pods() == {}
    assert sched.snapshot().get("n1").requested.milli_cpu == 0
    assert where(sched, "default/bad") == queue
    # The freed node serves the next pod.
    follow = sched.schedule_one()
    assert follow is not None
    assert follow.pod.name == "waits-for-room"
    assert follow.scheduled
    assert attempts(sched, "error" if code is Code.ERROR else "unschedulable") == 1
    assert attempts(sched, "scheduled") == 1


# --- binders that hang ---------------------------------------------------------------------------


class HangingBind(BindPlugin):
    """Blocks on ``release`` for pods labelled ``hang=yes``; fails them if ``timed_out`` is set by then."""

    name: ClassVar[str] = "HangingBind"
    release = threading.Event()
    timed_out = threading.Event()
    entered = threading.Event()

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if pod.labels.get("hang") != "yes":
            return Status.success()
        HangingBind.entered.set()
        HangingBind.release.wait(timeout=10.0)  # the safety net: the test releases it well before
        if HangingBind.timed_out.is_set():
            return Status.from_error("bind timed out after 30s")
        return Status.success()


def tick_until(sched: Scheduler, done: Callable[[list[ScheduleResult]], bool], *,
               limit: float = 5.0) -> list[ScheduleResult]:
    """Call ``tick`` until ``done(results so far)``; fails after ``limit`` seconds of wall time."""
    results: list[ScheduleResult] = []
    deadline = time.monotonic() + limit
    while not done(results):
        assert time.monotonic() < deadline, f"gave up waiting; got {[r.pod.key for r in results]}"
        time.sleep(0.005)
        results.extend(sched.tick())
    return results


def hanging_scheduler(executor: ThreadPoolExecutor, recorder: Recorder, clock: FakeClock) -> Scheduler:
    registry = Registry()
    registry.register(HangingBind.name, HangingBind)
    registry.register(FirstReserve.name, FirstReserve)
    config = {"profiles": [{"plugins": {"reserve": {"enabled": [{"name": "FirstReserve"}]},
                                        "bind": {"enabled": [{"name": "HangingBind"}],
                                                 "disabled": [{"name": "DefaultBinder"}]}}}]}
    return Scheduler(config, clock=clock, registry=in_tree_registry().merge(registry), listeners=[recorder],
                     binding_executor=executor)


def test_a_hanging_binder_does_not_stall_scheduling_and_its_timeout_cleans_up() -> None:
    for event in (HangingBind.release, HangingBind.timed_out, HangingBind.entered):
        event.clear()
    clock = FakeClock()
    recorder = Recorder()
    with ThreadPoolExecutor(max_workers=2) as executor:
        try:
            sched = hanging_scheduler(executor, recorder, clock)
            sched.add_node(make_node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}))
            sched.add_pod(make_pod("slow", labels={"hang": "yes"}, requests={"cpu": "2"}))
            sched.add_pod(make_pod("a", requests={"cpu": "500m"}))
            sched.add_pod(make_pod("b", requests={"cpu": "500m"}))

            first = sched.run_until_idle()  # bindings that finish meanwhile may come back as well
            assert [(r.pod.name, r.message) for r in first if r.status.code is Code.WAIT] == [
                ("slow", "binding"), ("a", "binding"), ("b", "binding")]
            assert all(r.scheduled and r.pod.name in ("a", "b") for r in first if r.status.code is not Code.WAIT)
            assert HangingBind.entered.wait(timeout=5.0)
            tick_until(sched, lambda _: sorted(recorder.keys("bound")) == ["default/a", "default/b"])
            assert sorted(assumed(sched)) == ["default/slow"]  # still binding, its room still held

            # New pods are scheduled while the binding hangs, and see its reservation.
            sched.add_pod(make_pod("c", requests={"cpu": "500m"}))
            sched.add_pod(make_pod("too-big", requests={"cpu": "1500m"}))
            second = [r for r in sched.run_until_idle() if not r.scheduled]
            assert [(r.pod.name, r.status.code) for r in second] == [("c", Code.WAIT),
                                                                     ("too-big", Code.UNSCHEDULABLE)]
            assert second[1].message == "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are " \
                "available: 1 No preemption victims found for incoming pod."
            tick_until(sched, lambda _: "default/c" in recorder.keys("bound"))
            assert sorted(assumed(sched)) == ["default/slow"]
            assert "default/slow" not in recorder.keys("bound") + recorder.keys("failed")

            # The host's bind timeout fires: the binder gives up and the scheduler rolls back.
            HangingBind.timed_out.set()
            HangingBind.release.set()
            late = tick_until(sched, lambda rs: any(r.pod.name == "slow" for r in rs))
        finally:
            HangingBind.release.set()
    (slow,) = [r for r in late if r.pod.name == "slow"]
    assert slow.status.code is Code.ERROR
    assert slow.message == 'running Bind plugin "HangingBind": bind timed out after 30s'
    assert ReserveLog.calls.count("unreserve FirstReserve slow") == 1
    assert assumed(sched) == []
    assert where(sched, "default/slow") == "backoff"
    assert sched.snapshot().get("n1").requested.milli_cpu == 1500
    assert where(sched, "default/too-big") in ("backoff", "active")  # the freed room requeued it
    assert sorted(sched.bound_pods()) == ["default/a", "default/b", "default/c"]
    assert attempts(sched, "scheduled") == 3
    assert attempts(sched, "error") == 1
    assert attempts(sched, "unschedulable") == 1


def test_an_embedder_confirming_a_binding_still_in_flight_does_not_break_tick() -> None:
    for event in (HangingBind.release, HangingBind.timed_out, HangingBind.entered):
        event.clear()
    clock = FakeClock()
    recorder = Recorder()
    pod = make_pod("slow", labels={"hang": "yes"}, requests={"cpu": "1"})
    with ThreadPoolExecutor(max_workers=1) as executor:
        try:
            sched = hanging_scheduler(executor, recorder, clock)
            sched.add_node(make_node("n1"))
            sched.add_pod(pod)
            sched.run_until_idle()
            assert HangingBind.entered.wait(timeout=5.0)
            # The host's watch sees the binding its binder just made, before the scheduler's tick.
            sched.update_pod(attrs.evolve(pod, node_name="n1"))
            HangingBind.release.set()
            executor.shutdown(wait=True)
            try:
                sched.tick()
            except CacheError as exc:
                pytest.fail(f"tick raised {exc}")
        finally:
            HangingBind.release.set()
    assert sched.bound_pods() == {"default/slow": "n1"}
    assert assumed(sched) == []


# --- a node removed under waiting pods -----------------------------------------------------------


def test_a_node_removed_while_pods_wait_in_permit_rejects_and_requeues_them() -> None:
    clock = FakeClock()
    recorder = Recorder()
    sched = new_scheduler({"permit": ["Waiter"]}, clock=clock, listeners=[recorder])
    sched.add_node(make_node("n1"))
    sched.add_node(make_node("n2"))
    pods = [make_pod(f"w{i}", labels={"wait": "30"}, requests={"cpu": "1"},
                     node_selector={"kubernetes.io/hostname": node})
            for i, node in enumerate(["n1", "n1", "n2"])]
    for pod in pods:
        sched.add_pod(pod)
    sched.run_until_idle()
    assert sorted(sched.waiting_pods()) == ["default/w0", "default/w1", "default/w2"]

    sched.remove_node("n1")
    results = sched.tick()
    assert sorted((r.pod.name, r.status.code) for r in results) == [("w0", Code.UNSCHEDULABLE),
                                                                     ("w1", Code.UNSCHEDULABLE)]
    assert all('node "n1" was removed' in (r.message or "") for r in results)
    assert sched.waiting_pods() == ["default/w2"]
    assert assumed(sched) == ["default/w2"]
    assert sched.node_names() == ["n2"]
    assert "n1" not in sched.cache_dump()["nodes"]  # type: ignore[operator]
    # No rejector plugin: backoff, and nothing lost.
    assert where(sched, "default/w0") == where(sched, "default/w1") == "backoff"
    places = set(sched.pending()) | set(sched.waiting_pods()) | set(sched.bound_pods())
    assert places == {pod.key for pod in pods}

    # The node comes back: the pods are placed (and wait) again once their backoff is over.
    sched.add_node(make_node("n1"))
    clock.advance(1)
    sched.run_until_idle()
    assert sorted(sched.waiting_pods()) == ["default/w0", "default/w1", "default/w2"]
    assert attempts(sched, "unschedulable") == 2


def test_a_waiting_pod_deleted_is_rejected_and_forgotten() -> None:
    clock = FakeClock()
    recorder = Recorder()
    sched = new_scheduler({"reserve": ["FirstReserve"], "permit": ["Waiter"]}, clock=clock, listeners=[recorder])
    sched.add_node(make_node("n1"))
    sched.add_pod(make_pod("w", labels={"wait": "30"}, requests={"cpu": "1"}))
    sched.run_until_idle()
    assert sched.remove_pod("default/w")
    (result,) = sched.tick()
    assert result.status.code is Code.UNSCHEDULABLE
    assert result.message is not None
    assert result.message == "0/1 nodes are available: 1 removed."
    assert ReserveLog.calls == ["reserve FirstReserve w", "unreserve FirstReserve w"]
    assert assumed(sched) == []
    assert sched.pending() == {}
    assert sched.waiting_pods() == []
    assert sched.next_wakeup() is None


# --- Permit signals and timeouts -----------------------------------------------------------------


def waiting_scheduler(clock: FakeClock) -> Scheduler:
    sched = new_scheduler({"permit": ["Waiter"]}, clock=clock)
    sched.add_node(make_node("n1"))
    sched.add_pod(make_pod("w", labels={"wait": "5"}, requests={"cpu": "1"}))
    (result,) = sched.run_until_idle()
    assert result.waiting
    return sched


def test_a_permit_timeout_rejects_on_the_clock() -> None:
    clock = FakeClock()
    sched = waiting_scheduler(clock)
    assert sched.next_wakeup() == 5.0
    clock.set(4.999)
    assert sched.tick() == []
    clock.set(5.0)
    (result,) = sched.tick()
    assert result.status.code is Code.UNSCHEDULABLE
    assert result.message is not None
    assert "rejected due to timeout after waiting 5s at plugin Waiter" in result.message
    assert assumed(sched) == []
    assert sched.metrics.histogram_count("scheduler_permit_wait_duration_seconds", result="Unschedulable") == 1


def test_a_permit_rejection_is_a_fit_error_naming_the_plugin() -> None:
    clock = FakeClock()
    sched = waiting_scheduler(clock)
    clock.set(5.0)
    (result,) = sched.tick()
    assert result.message == "0/1 nodes are available: 1 rejected due to timeout after waiting 5s at plugin Waiter."
    entry = sched.pending()["default/w"]
    assert entry[1].unschedulable_plugins == frozenset({"Waiter"})


def test_a_tick_without_events_records_no_move_request() -> None:
    clock = FakeClock()
    sched = waiting_scheduler(clock)  # a node added (a move request at cycle 0), then one cycle
    queue = sched._engine.queue
    assert queue.scheduling_cycle == 1
    clock.advance(1)
    sched.tick()
    assert queue.move_request_cycle == 0


def test_the_first_permit_signal_wins() -> None:
    clock = FakeClock()
    sched = waiting_scheduler(clock)
    assert Waiter.handle is not None
    (waiting,) = Waiter.handle.iterate_waiting_pods()
    waiting.allow("Waiter")
    waiting.reject("Waiter", "too late")
    (result,) = sched.tick()
    assert result.scheduled


def test_allow_and_reject_through_the_handle() -> None:
    clock = FakeClock()
    sched = new_scheduler({"permit": ["Waiter"]}, clock=clock)
    sched.add_node(make_node("n1"))
    for name in ("yes", "no"):
        sched.add_pod(make_pod(name, labels={"wait": "60"}, requests={"cpu": "1"}))
    sched.run_until_idle()
    handle = Waiter.handle
    assert handle is not None
    by_name = {w.pod.name: w for w in handle.iterate_waiting_pods()}
    assert by_name["yes"].pending_plugins == ["Waiter"]
    by_name["yes"].allow("Waiter")
    by_name["no"].reject("Waiter", "quota exceeded")
    results = {r.pod.name: r for r in sched.tick()}
    assert results["yes"].scheduled
    assert results["no"].status.code is Code.UNSCHEDULABLE
    assert "quota exceeded" in (results["no"].message or "")
    assert sched.bound_pods() == {"default/yes": "n1"}
    assert handle.get_waiting_pod("default/no") is None
    assert not handle.reject_waiting_pod("default/no")


# --- metrics -------------------------------------------------------------------------------------


def test_attempt_counters_match_what_happened() -> None:
    clock = FakeClock()
    recorder = Recorder()
    sched = new_scheduler({"filter": ["RaisingFilter"], "permit": ["Waiter"]}, clock=clock, listeners=[recorder])
    sched.add_node(make_node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}))
    sched.add_pod(make_pod("ok-1", requests={"cpu": "1"}))
    sched.add_pod(make_pod("ok-2", requests={"cpu": "1"}))
    sched.add_pod(make_pod("huge", requests={"cpu": "64"}))
    sched.add_pod(make_pod("bad", labels={"fault": "yes"}))
    sched.add_pod(make_pod("patient", labels={"wait": "3"}, requests={"cpu": "1"}))
    sched.run_until_idle()
    assert attempts(sched, "scheduled") == 2
    assert attempts(sched, "unschedulable") == 1
    assert attempts(sched, "error") == 1
    clock.advance(3)
    sched.tick()  # the wait timed out: one more unschedulable attempt
    assert attempts(sched, "unschedulable") == 2
    assert sched.metrics.histogram_count("scheduler_pod_scheduling_attempts") == 2
    assert sched.metrics.histogram_count("scheduler_scheduling_attempt_duration_seconds",
                                         result="scheduled", profile=PROFILE) == 2
    assert sched.metrics.histogram_count("scheduler_permit_wait_duration_seconds", result="Unschedulable") == 1
    kinds = [kind for kind, _ in recorder.events]
    assert kinds.count("bound") == attempts(sched, "scheduled")
    assert kinds.count("failed") == attempts(sched, "unschedulable") + attempts(sched, "error")


_HELP = re.compile(r"^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$")
_TYPE = re.compile(r"^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$")
_SAMPLE = re.compile(
    r'^([a-zA-Z_:][a-zA-Z0-9_:]*)'
    r'(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*\})?'
    r' (-?[0-9.e+-]+|\+Inf|-Inf|NaN)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_prometheus(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """A strict reading of the text exposition format: samples by name, checking HELP/TYPE lines."""
    assert text.endswith("\n")
    types: dict[str, str] = {}
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for line in text.splitlines():
        if line.startswith("# HELP"):
            assert _HELP.match(line), line
            continue
        if line.startswith("# TYPE"):
            match = _TYPE.match(line)
            assert match, line
            assert match.group(1) not in types, f"second TYPE line for {match.group(1)}"
            types[match.group(1)] = match.group(2)
            continue
        match = _SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        name = match.group(1)
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
        assert family in types, f"{name} has no TYPE line before it"
        labels = dict(_LABEL.findall(match.group(2) or ""))
        samples.setdefault(name, []).append((labels, float(match.group(3))))
    return samples


def test_the_prometheus_export_parses_and_agrees_with_the_counters() -> None:
    clock = FakeClock()
    sched = new_scheduler({"filter": ["RaisingFilter"], "permit": ["Waiter"]}, clock=clock)
    sched.add_node(make_node("n1"))
    sched.add_pod(make_pod("ok", requests={"cpu": "1"}))
    sched.add_pod(make_pod("bad", labels={"fault": "yes"}))
    sched.add_pod(make_pod("huge", requests={"cpu": "64"}))
    sched.add_pod(make_pod("patient", labels={"wait": "2"}))
    sched.run_until_idle()
    clock.advance(2)
    sched.tick()
    samples = parse_prometheus(sched.metrics.to_prometheus_text())
    by_result = {labels["result"]: value for labels, value in samples["scheduler_schedule_attempts_total"]}
    assert by_result == {"scheduled": 1.0, "error": 1.0, "unschedulable": 2.0}
    assert all(labels["profile"] == PROFILE for labels, _ in samples["scheduler_schedule_attempts_total"])
    # Histograms: cumulative buckets ending with +Inf equal to _count.
    for name in samples:
        if not name.endswith("_bucket"):
            continue
        family = name.removesuffix("_bucket")
        series: dict[tuple[tuple[str, str], ...], list[tuple[str, float]]] = {}
        for labels, value in samples[name]:
            key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
            series.setdefault(key, []).append((labels["le"], value))
        counts = {tuple(sorted(labels.items())): value for labels, value in samples[f"{family}_count"]}
        for key, buckets in series.items():
            values = [value for _, value in buckets]
            assert values == sorted(values), f"{family} buckets are not cumulative"
            assert buckets[-1][0] == "+Inf"
            assert buckets[-1][1] == counts[key]
    gauges = {labels["queue"]: value for labels, value in samples["scheduler_pending_pods"]}
    assert set(gauges) == {"active", "backoff", "unschedulable", "gated"}
