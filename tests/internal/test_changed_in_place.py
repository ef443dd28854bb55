"""Inputs a host gets slightly wrong must not leave the scheduler deciding on stale reuse or stuck.

A node whose label map is changed in place and handed to ``update_node`` again (the model's objects
are meant to be replaced, not changed) is taken as changed in every map: the scheduler then decides as
one built afresh.  A plugin giving its reasons as a list, not a tuple, is answered as before.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

import kschedlib
from kschedlib.framework import CycleState, FilterPlugin, Handle, NodeInfo, Status
from kschedlib.framework.status import Code
from kschedlib.model import LabelSelector, Pod, TopologySpreadConstraint
from tests.helpers import make_node, make_pod, rebuilt


def _spread_pod(name: str, node: str = "") -> Pod:
    pod = make_pod(name, requests={"cpu": "100m"}, labels={"app": "a"}, node_name=node)
    constraint = TopologySpreadConstraint(max_skew=1, topology_key="zone", when_unsatisfiable="DoNotSchedule",
                                          label_selector=LabelSelector(match_labels={"app": "a"}))
    return attrs.evolve(pod, topology_spread_constraints=(constraint,))



def test_a_node_relabelled_in_place_is_judged_by_its_new_labels() -> None:
    zones = {"n0": "z0", "n1": "z0", "n2": "z1", "n3": "z2", "n5": "z2"}
    nodes = {name: make_node(name, labels={"zone": zone, "kubernetes.io/hostname": name})
             for name, zone in zones.items()}
    scheduler = kschedlib.Scheduler(seed=0, clock=kschedlib.FakeClock())
    scheduler.add_objects(list(nodes.values()))
    for i, name in enumerate(["n0", "n1", "n2", "n3"]):
        scheduler.add_pod(_spread_pod(f"p{i}", name))
    for _ in range(3):  # long enough for the reused per-domain verdicts and tallies to be built
        scheduler.explain(_spread_pod("probe"))
    labels: Any = nodes["n5"].labels
    labels["zone"] = "z0"
    scheduler.update_node(nodes["n5"])
    ours = scheduler.explain(_spread_pod("probe")).to_dict()
    assert ours["feasible"] == ["n2", "n3"]
    fresh = rebuilt(scheduler).explain(_spread_pod("probe")).to_dict()
    assert (ours["feasible"], ours["filtered"]) == (fresh["feasible"], fresh["filtered"])


def test_a_node_changed_in_place_requeues_the_pods_its_labels_may_help() -> None:
    node = make_node("n1", labels={"kubernetes.io/hostname": "n1"})
    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(seed=0, clock=clock)
    scheduler.add_node(node)
    scheduler.add_pod(make_pod("p", node_selector={"disk": "ssd"}))
    result = scheduler.schedule_one()
    assert result is not None
    assert not result.scheduled
    labels: Any = node.labels
    labels["disk"] = "ssd"
    scheduler.update_node(node)
    assert scheduler.pending()["default/p"][0] != "unschedulable"
    clock.set(clock.now() + 60)  # past the pod's backoff
    scheduler.tick()
    result = scheduler.schedule_one()
    assert result is not None
    assert result.node_name == "n1"


class _ListReasons(FilterPlugin):
    name: ClassVar[str] = "ListReasons"

    def __init__(self, args: Any, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.name == "n2" and pod.name == "p":
            return Status.success()
        return Status(Code.UNSCHEDULABLE, ["refused"])  # type: ignore[arg-type]


def test_reasons_given_as_a_list_are_attributed_and_counted() -> None:
    registry = kschedlib.in_tree_registry()
    registry.register(_ListReasons.name, _ListReasons)
    config = {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "ListReasons"}]}}}]}
    scheduler = kschedlib.Scheduler(config, registry=registry, seed=0, clock=kschedlib.FakeClock())
    scheduler.add_objects([make_node("n1"), make_node("n2")])
    scheduler.add_pod(make_pod("p"))
    scheduler.add_pod(make_pod("q"))
    first = scheduler.schedule_one()
    assert first is not None
    assert first.node_name == "n2"
    second = scheduler.schedule_one()
    assert second is not None
    assert second.message is not None
    assert second.message.startswith("0/2 nodes are available: 2 refused. ")


def test_every_change_made_in_place_to_the_same_node_is_seen() -> None:
    """The first in-place change makes the scheduler keep its own copy; the next ones are diffs against it."""
    node = make_node("n1", labels={"kubernetes.io/hostname": "n1"})
    labels: Any = node.labels  # the host's own dict, which it then changes in place
    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(seed=0, clock=clock, flush_unschedulable=False)
    scheduler.add_node(node)
    labels["tier"] = "x"
    scheduler.update_node(node)
    scheduler.add_pod(make_pod("p", node_selector={"disk": "ssd"}))
    first = scheduler.schedule_one()
    assert first is not None
    assert not first.scheduled
    labels["disk"] = "ssd"
    scheduler.update_node(node)
    assert scheduler.pending()["default/p"][0] != "unschedulable"
    clock.set(clock.now() + 60)
    scheduler.tick()
    placed = scheduler.schedule_one()
    assert placed is not None
    assert placed.node_name == "n1"
