"""kube v1.30 with ``SchedulerQueueingHints`` on, end to end: a rejected pod is retried only after events
its rejector's v1.30 hint function says may help; with the gate off every registered event retries it.

Each scenario leaves one pod unschedulable, then sends five events that cannot help it (a cordoned
node relabelled; a placed pod of another app deleted) and finally one that can.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from kschedlib import Scheduler
from kschedlib.clock import FakeClock
from kschedlib.model import Affinity, LabelSelector, Node, PodAffinity, PodAffinityTerm, Taint
from kschedlib.model.objects import TopologySpreadConstraint
from tests.helpers import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
WEB = {"app": "web"}
HARD = Taint("dedicated", "NoSchedule", "x")


def _cordoned(scheduler: Scheduler) -> Callable[[int], None]:
    """p is rejected by NodeUnschedulable: its only node is cordoned."""
    scheduler.add_objects([make_node("n1", unschedulable=True), make_pod("p", requests={"cpu": "1"})])

    def step(i: int) -> None:
        node = _node(scheduler, "n1")
        if i < 5:  # a label on the still-cordoned node: NodeUnschedulable's hint says QueueSkip
            scheduler.update_node(attrs.evolve(node, labels={**node.labels, "step": str(i)}))
        else:
            scheduler.update_node(attrs.evolve(node, unschedulable=False))

    return step


def _spread(scheduler: Scheduler) -> Callable[[int], None]:
    """p is rejected by PodTopologySpread on a1 (zone a holds two web pods, zone b one: maxSkew 1) and by
    TaintToleration on b1."""
    spread = (TopologySpreadConstraint(1, ZONE, "DoNotSchedule", LabelSelector(WEB)),)
    scheduler.add_objects([
        make_node("a1", labels={ZONE: "a"}), make_node("b1", labels={ZONE: "b"}, taints=[HARD]),
        make_pod("w1", labels=WEB, node_name="a1"), make_pod("w2", labels=WEB, node_name="a1"),
        *(make_pod(f"db{i}", labels={"app": "db"}, node_name="a1") for i in range(5)),
        make_pod("w3", labels=WEB, node_name="b1"),
        make_pod("p", labels=WEB, topology_spread_constraints=spread),
    ])

    def step(i: int) -> None:
        # a placed db pod deleted: PodTopologySpread's hint says QueueSkip (its selector wants web);
        # then a web pod leaves zone a, which evens the spread.
        scheduler.remove_pod(f"default/db{i}" if i < 5 else "default/w1")

    return step


@pytest.mark.parametrize("scenario", [_cordoned, _spread], ids=["NodeUnschedulable", "PodTopologySpread"])
@pytest.mark.parametrize(("gates", "attempts"), [
    (None, 7), ({"SchedulerQueueingHints": True}, 2),
], ids=["gate-off", "gate-on"])
def test_v130_hints_retry_a_rejected_pod_only_after_an_event_that_can_help(
    scenario: Callable[[Scheduler], Callable[[int], None]], gates: dict[str, bool] | None, attempts: int,
) -> None:
    clock = FakeClock(1000.0)
    scheduler = Scheduler(seed=0, clock=clock, kube_version="1.30", feature_gates=gates)
    step = scenario(scheduler)
    results = [r for r in scheduler.run_until_idle() if r.pod.name == "p"]
    for i in range(6):
        clock.set(clock.now() + 30)  # past any backoff
        step(i)
        results += [r for r in scheduler.tick() + scheduler.run_until_idle() if r.pod.name == "p"]
    assert len(results) == attempts
    assert [r.scheduled for r in results] == [False] * (attempts - 1) + [True]


def _node(scheduler: Scheduler, name: str) -> Node:
    info = scheduler.snapshot().find(name)
    assert info is not None
    assert info.node is not None
    return info.node


@pytest.mark.parametrize(("kube_version", "narrow"), [("1.30", False), ("1.31", False), ("1.32", True)])
def test_the_gate_on_before_1_32_gives_v130s_hints(kube_version: str, narrow: bool) -> None:
    switches = Scheduler(kube_version=kube_version, feature_gates={"SchedulerQueueingHints": True}).kube.switches
    assert switches.queueing_hints
    assert switches.narrow_queueing_hints is narrow


def test_an_assigned_pod_relabelled_to_match_requeues_a_pod_waiting_for_affinity() -> None:
    """v1.30 moves only pods whose affinity terms match the updated pod, through the hints (none here)."""
    clock = FakeClock(1000.0)
    scheduler = Scheduler(seed=0, clock=clock, kube_version="1.30", feature_gates={"SchedulerQueueingHints": True})
    term = PodAffinityTerm(ZONE, LabelSelector(WEB))
    scheduler.add_objects([
        make_node("a1", labels={ZONE: "a"}), make_pod("db", labels={"app": "db"}, node_name="a1"),
        make_pod("p", affinity=Affinity(pod_affinity=PodAffinity((term,), ()))),
    ])
    assert [r.scheduled for r in scheduler.run_until_idle()] == [False]
    clock.set(clock.now() + 30)
    db = scheduler._engine.store.pods["default/db"]
    scheduler.update_pod(attrs.evolve(db, labels={"app": "db", "x": "y"}))  # still no match: stays pooled
    assert scheduler.pending()["default/p"][0] == "unschedulable"
    scheduler.update_pod(attrs.evolve(db, labels=WEB))
    assert [(r.pod.name, r.node_name) for r in scheduler.run_until_idle()] == [("p", "a1")]
