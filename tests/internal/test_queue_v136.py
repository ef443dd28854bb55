"""kube-scheduler v1.36's queue behind its switches: queueing hints, in-flight events, backoffQ pops,
NominatedNodeName kept on failure and the asynchronous-preemption hold; each shown on and off."""

from __future__ import annotations

import attrs
import pytest

from kschedlib import Scheduler
from kschedlib._internal.queue import EventRegistration, SchedulingQueue
from kschedlib.clock import FakeClock
from kschedlib.framework import PodInfo, QueuedPodInfo, Status
from kschedlib.framework.events import NODE, NODE_ADD, POD, ActionType, ClusterEvent, QueueingHint
from kschedlib.model import Affinity, LabelSelector, Pod, PodAffinity, PodAffinityTerm, Taint
from kschedlib.plugins.priority_sort import less
from tests.helpers import make_node, make_pod

HARD = Taint("dedicated", "NoSchedule", "x")


def _scheduler(kube_version: str, **gates: bool) -> Scheduler:
    return Scheduler(seed=0, clock=FakeClock(1000.0), kube_version=kube_version, feature_gates=gates or None)


def _stuck_pod(kube_version: str, **gates: bool) -> Scheduler:
    """p wants disk=ssd: n1 lacks the label, n2 has it but is tainted and full (loop-precheck-stuck)."""
    scheduler = _scheduler(kube_version, **gates)
    scheduler.add_objects([
        make_node("n1", allocatable={"cpu": "8", "memory": "16Gi", "pods": "110"}),
        make_node("n2", labels={"disk": "ssd"}, taints=[HARD]),
        make_pod("f", requests={"cpu": "4"}, node_name="n2"),
        make_pod("p", requests={"cpu": "1"}, node_selector={"disk": "ssd"}),
    ])
    result = scheduler.schedule_one()
    assert result is not None
    assert not result.scheduled
    return scheduler


@pytest.mark.parametrize(("kube_version", "gates", "moved"), [
    ("1.30", {}, False), ("1.36", {}, True), ("1.33", {"SchedulerQueueingHints": False}, False),
    ("1.30", {"SchedulerQueueingHints": True}, False),
], ids=["v1.30-precheck", "v1.36-hint", "v1.33-gate-off", "v1.30-gate-on-keeps-precheck"])
def test_queueing_hints_replace_the_node_pre_check(kube_version: str, gates: dict[str, bool], moved: bool) -> None:
    scheduler = _stuck_pod(kube_version, **gates)
    n2 = scheduler.snapshot().find("n2")
    assert n2 is not None
    assert n2.node is not None
    scheduler.update_node(attrs.evolve(n2.node, taints=()))
    # v1.30 pre-checks the pod against n2 (full: not moved), with its gate on too; v1.36 has no
    # pre-check and TaintToleration's hint says Queue.
    assert (scheduler.pending()["default/p"][0] != "unschedulable") is moved


def test_queueing_hints_skip_an_event_the_rejector_does_not_care_about() -> None:
    scheduler = _stuck_pod("1.36")
    n1 = scheduler.snapshot().find("n1")
    assert n1 is not None
    assert n1.node is not None
    scheduler.update_node(attrs.evolve(n1.node, taints=(HARD,)))  # a taint added: no hint queues
    assert scheduler.pending()["default/p"][0] == "unschedulable"
    scheduler.update_node(attrs.evolve(n1.node, labels={"disk": "ssd"}))  # NodeAffinity: now matches
    assert scheduler.pending()["default/p"][0] in ("active", "backoff")


def test_deleting_a_placed_pod_requeues_through_node_resources_fit_hint() -> None:
    scheduler = _stuck_pod("1.36")
    n2 = scheduler.snapshot().find("n2")
    assert n2 is not None
    assert n2.node is not None
    scheduler.update_node(attrs.evolve(n2.node, taints=()))
    scheduler.clock.set(scheduler.clock.now() + 2)  # type: ignore[attr-defined]
    second = scheduler.schedule_one()
    assert second is not None
    assert second.diagnosis is not None
    assert sorted(second.diagnosis.unschedulable_plugins) == ["NodeAffinity", "NodeResourcesFit"]
    scheduler.remove_pod("default/f")
    scheduler.clock.set(scheduler.clock.now() + 10)  # type: ignore[attr-defined]
    assert [r.node_name for r in scheduler.run_until_idle() if r.scheduled] == ["n2"]


# --- the queue on its own: in-flight events, strategies, backoffQ pops --------------------------------


def _hinted_queue(*, pop_from_backoff: bool = False, verdict: QueueingHint = QueueingHint.QUEUE,
                  clock: FakeClock | None = None, narrow: bool = True) -> tuple[SchedulingQueue, FakeClock]:
    clock = clock or FakeClock(1000.0)
    registrations = {"default-scheduler": [
        EventRegistration("NodeFilter", ClusterEvent(NODE, ActionType.ADD), lambda pod, old, new: verdict),
        EventRegistration("Failing", ClusterEvent(NODE, ActionType.ADD), _raise),
        EventRegistration("PodFilter", ClusterEvent(POD, ActionType.DELETE)),
    ]}
    queue = SchedulingQueue(less, lambda pod: Status.success(), clock.now, registrations=registrations,
                            hints=True, narrow=narrow, pop_from_backoff=pop_from_backoff)
    return queue, clock


def _raise(pod: Pod, old: object, new: object) -> QueueingHint:
    raise RuntimeError("a broken hint")


def _popped(queue: SchedulingQueue, name: str, priority: int | None = None) -> QueuedPodInfo:
    queue.add(PodInfo.of(make_pod(name, priority=priority)))
    info = queue.pop()
    assert info is not None
    return info


def _fail(queue: SchedulingQueue, info: QueuedPodInfo, *rejectors: str, pending: tuple[str, ...] = ()) -> str:
    info.unschedulable_plugins = frozenset(rejectors)
    info.pending_plugins = frozenset(pending)
    return queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)


@pytest.mark.parametrize(("verdict", "pending", "where"), [
    (QueueingHint.QUEUE_SKIP, (), "unschedulable"),
    (QueueingHint.QUEUE, (), "backoff"),
    (QueueingHint.QUEUE, ("NodeFilter",), "active"),
], ids=["skip-stays-in-pool", "queue-backs-off", "pending-plugin-queues-immediately"])
def test_events_seen_in_flight_are_replayed_when_the_pod_fails(
        verdict: QueueingHint, pending: tuple[str, ...], where: str) -> None:
    queue, _ = _hinted_queue(verdict=verdict)
    info = _popped(queue, "p")
    queue.move_all(NODE_ADD, new=make_node("n9"))  # arrives while p is in flight
    assert _fail(queue, info, "NodeFilter", pending=pending) == where


def test_no_event_in_flight_leaves_a_rejected_pod_in_the_pool() -> None:
    queue, _ = _hinted_queue()
    assert _fail(queue, _popped(queue, "p"), "NodeFilter") == "unschedulable"
    assert _fail(queue, _popped(queue, "e")) == "backoff"  # no rejector: an error backs off


def test_a_hint_function_that_raises_means_queue() -> None:
    queue, _ = _hinted_queue(verdict=QueueingHint.QUEUE_SKIP)
    _fail(queue, _popped(queue, "p"), "Failing")
    assert queue.move_all(NODE_ADD, new=make_node("n9")) == 1
    assert queue.where("default/p") == "backoff"


def test_in_flight_events_are_forgotten_once_no_pod_is_in_flight() -> None:
    queue, _ = _hinted_queue()
    first = _popped(queue, "a")
    queue.move_all(NODE_ADD, new=make_node("n9"))
    queue.done(first.pod.key)
    second = _popped(queue, "b")
    assert _fail(queue, second, "NodeFilter") == "unschedulable"


@pytest.mark.parametrize("pop_from_backoff", [False, True], ids=["v1.30-waits", "v1.33-pops"])
def test_pop_from_backoff_queue_when_active_is_empty(pop_from_backoff: bool) -> None:
    queue, _ = _hinted_queue(pop_from_backoff=pop_from_backoff)
    _fail(queue, _popped(queue, "p"), "NodeFilter")
    queue.move_all(NODE_ADD, new=make_node("n9"))
    assert queue.where("default/p") == "backoff"
    assert queue.has_poppable_backoff() is pop_from_backoff
    popped = queue.pop()
    assert (popped is not None and popped.pod.name == "p") is pop_from_backoff


def test_pods_backing_off_after_an_error_are_not_popped_early() -> None:
    queue, clock = _hinted_queue(pop_from_backoff=True)
    _fail(queue, _popped(queue, "e"))
    assert not queue.has_poppable_backoff()
    assert queue.pop() is None
    clock.set(clock.now() + 1)
    queue.flush_backoff_completed()
    popped = queue.pop()
    assert popped is not None
    assert popped.pod.name == "e"


def test_backoff_ends_on_whole_seconds_ordered_by_priority_within_one() -> None:
    queue, clock = _hinted_queue(pop_from_backoff=True, clock=FakeClock(1000.25))
    low = _popped(queue, "low", priority=1)
    _fail(queue, low, "NodeFilter")
    clock.set(1000.5)
    high = _popped(queue, "high", priority=10)
    _fail(queue, high, "NodeFilter")
    queue.move_all(NODE_ADD, new=make_node("n9"))
    assert queue.next_backoff_expiry() == 1001.0  # 1000.25 + 1 s and 1000.5 + 1 s, both truncated
    first, second = queue.pop(), queue.pop()
    assert first is not None
    assert second is not None
    assert [first.pod.name, second.pod.name] == ["high", "low"]


# --- NominatedNodeName kept on failure ---------------------------------------------------------------


@pytest.mark.parametrize(("kube_version", "kept"), [("1.30", ""), ("1.36", "n1")])
def test_nominated_node_name_kept_on_failure(kube_version: str, kept: str) -> None:
    scheduler = _scheduler(kube_version)
    scheduler.add_pod(make_pod("p", nominated_node_name="n1"))
    result = scheduler.schedule_one()  # no node at all: an error, not a FitError
    assert result is not None
    assert not result.scheduled
    assert result.pod.nominated_node_name == kept


# --- asynchronous preemption -------------------------------------------------------------------------


def _preempted(kube_version: str) -> Scheduler:
    scheduler = _scheduler(kube_version)
    scheduler.add_objects([
        make_node("n1", allocatable={"cpu": "2", "memory": "8Gi", "pods": "110"}),
        make_pod("v1", requests={"cpu": "1"}, node_name="n1", priority=1),
        make_pod("v2", requests={"cpu": "1"}, node_name="n1", priority=1),
        make_pod("p", requests={"cpu": "2"}, priority=100),
    ])
    result = scheduler.schedule_one()
    assert result is not None
    assert sorted(result.victims) == ["default/v1", "default/v2"]
    return scheduler


@pytest.mark.parametrize(("kube_version", "held"), [("1.30", False), ("1.36", True)])
def test_async_preemption_holds_the_preemptor_until_its_victims_are_gone(kube_version: str, held: bool) -> None:
    scheduler = _preempted(kube_version)
    scheduler.remove_pod("default/v1")
    scheduler.clock.set(scheduler.clock.now() + 5)  # type: ignore[attr-defined]
    scheduler.tick()
    queue, info = scheduler.pending()["default/p"]
    assert (queue == "gated") is held
    assert ("DefaultPreemption" in info.unschedulable_plugins) is held
    scheduler.remove_pod("default/v2")  # the last victim: the hold ends before its delete event
    scheduler.clock.set(scheduler.clock.now() + 10)  # type: ignore[attr-defined]
    assert [r.node_name for r in scheduler.run_until_idle() if r.scheduled] == ["n1"]


def test_a_failed_preemption_releases_the_preemptor_at_once() -> None:
    scheduler = _preempted("1.36")
    assert scheduler.preemption_failed("default/p")  # evicting a victim was refused
    assert scheduler.pending()["default/p"][0] == "active"  # no backoff, as kube's Activate
    assert not scheduler.preemption_failed("default/p")
    assert not scheduler.preemption_failed("default/gone")


def test_a_deleted_preemptor_is_no_longer_held() -> None:
    scheduler = _preempted("1.36")
    scheduler.remove_pod("default/p")
    assert scheduler._engine._preempting == {}


def test_a_registration_without_hint_function_queues() -> None:
    queue, _ = _hinted_queue()
    _fail(queue, _popped(queue, "p"), "PodFilter")
    assert queue.move_all(ClusterEvent(POD, ActionType.DELETE), old=make_pod("gone")) == 1


def test_a_deleted_pod_is_not_popped_from_backoff() -> None:
    queue, _ = _hinted_queue(pop_from_backoff=True)
    _fail(queue, _popped(queue, "p"), "NodeFilter")
    queue.move_all(NODE_ADD, new=make_node("n9"))
    assert queue.delete(make_pod("p"))
    assert queue.pop() is None


def test_a_pooled_pod_update_goes_through_the_hints() -> None:
    queue, _ = _hinted_queue()
    info = _popped(queue, "p")
    _fail(queue, info, "NodeFilter")
    queue.update(PodInfo.of(attrs.evolve(info.pod, labels={"a": "b"})))  # nothing watches pod labels
    assert queue.where("default/p") == "unschedulable"
    queue.update(PodInfo.of(attrs.evolve(info.pod, labels={"a": "c"}, priority=5)))
    assert queue.where("default/p") == "unschedulable"


def test_v130_hints_leave_a_pooled_pod_update_to_the_spec_check() -> None:
    """kube v1.30 with its gate on moves an updated pooled pod whenever its spec changed (isPodUpdated)."""
    queue, _ = _hinted_queue(narrow=False)
    info = _popped(queue, "p")
    _fail(queue, info, "NodeFilter")
    queue.update(PodInfo.of(attrs.evolve(info.pod, labels={"a": "b"})), changed=False)
    assert queue.where("default/p") == "unschedulable"
    queue.update(PodInfo.of(attrs.evolve(info.pod, labels={"a": "b"})))
    assert queue.where("default/p") == "backoff"


def test_a_pooled_pod_without_rejectors_is_moved_by_any_event() -> None:
    queue, _ = _hinted_queue()
    info = _popped(queue, "p")
    info.unschedulable_plugins = frozenset({"NodeFilter"})
    queue.add_unschedulable_if_not_present(info, queue.scheduling_cycle)
    info.unschedulable_plugins = frozenset()
    assert queue.move_all(ClusterEvent(POD, ActionType.DELETE), old=make_pod("gone")) == 1


def test_bound_pod_updates_reach_the_hints_as_narrow_events() -> None:
    scheduler = _scheduler("1.36")
    scheduler.add_objects([
        make_node("n1", labels={"kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "a"}),
        make_pod("w", node_name="n1", labels={"app": "db"}),
        make_pod("p", affinity=Affinity(pod_affinity=PodAffinity(
            (PodAffinityTerm("topology.kubernetes.io/zone", LabelSelector({"app": "web"})),), ()))),
    ])
    result = scheduler.schedule_one()
    assert result is not None
    assert not result.scheduled
    w = scheduler._engine.store.pods["default/w"]
    scheduler.update_pod(attrs.evolve(w, annotations={"x": "y"}))  # UpdatePodOther: nobody cares
    assert scheduler.pending()["default/p"][0] == "unschedulable"
    scheduler.update_pod(attrs.evolve(w, labels={"app": "web"}))  # now matches the affinity term
    assert scheduler.pending()["default/p"][0] in ("active", "backoff")
