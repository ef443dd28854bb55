"""v1.36 queueing hints of the in-tree plugins: which event may make which rejected pod schedulable.

Each case is (pod the plugin rejected, object before, object after) -> QUEUE or QUEUE_SKIP, as the
plugin's ``isSchedulableAfter*`` function in kube-scheduler v1.36.3 decides.  With kube 1.30 the
same plugins register v1.30's broader events and hint functions (tests/plugins/test_queueing_hints_v130.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from kschedlib.framework.events import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    EnqueueExtensions,
    QueueingHint,
    QueueingHintFn,
    pod_changes,
)
from kschedlib.model import Affinity, LabelSelector, PodAffinity, PodAffinityTerm, Taint, Toleration
from kschedlib.model.objects import TopologySpreadConstraint
from kschedlib.plugins.inter_pod_affinity import InterPodAffinity
from kschedlib.plugins.node_affinity import NodeAffinity
from kschedlib.plugins.node_name import NodeName
from kschedlib.plugins.node_ports import NodePorts
from kschedlib.plugins.node_resources_fit import NodeResourcesFit
from kschedlib.plugins.node_unschedulable import NodeUnschedulable
from kschedlib.plugins.pod_topology_spread import PodTopologySpread
from kschedlib.plugins.scheduling_gates import SchedulingGates
from kschedlib.plugins.taint_toleration import TaintToleration
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod

Q, SKIP = QueueingHint.QUEUE, QueueingHint.QUEUE_SKIP
HARD = Taint("dedicated", "NoSchedule", "x")
SOFT = Taint("soft", "PreferNoSchedule", "x")
ZONE = "topology.kubernetes.io/zone"
WEB = {"app": "web"}
Factory = Callable[[FakeHandle], EnqueueExtensions]


def _plugin(factory: Factory, kube_version: str = "1.36") -> EnqueueExtensions:
    return factory(FakeHandle(kube_version=kube_version))


def _hint(factory: Factory, resource: str, action: ActionType, kube_version: str = "1.36") -> QueueingHintFn:
    for registration in _plugin(factory, kube_version).events_to_register():
        if registration.event.matches(ClusterEvent(resource, action)):
            assert registration.hint is not None
            return registration.hint
    raise AssertionError(f"no {resource}/{action!r} registration")


FACTORIES: dict[str, Factory] = {
    "TaintToleration": lambda h: TaintToleration(None, h),
    "NodeUnschedulable": lambda h: NodeUnschedulable(None, h),
    "NodeAffinity": lambda h: NodeAffinity(None, h),
    "NodeResourcesFit": lambda h: NodeResourcesFit(None, h),
    "NodePorts": lambda h: NodePorts(None, h),
    "InterPodAffinity": lambda h: InterPodAffinity(None, h),
    "PodTopologySpread": lambda h: PodTopologySpread(None, h),
    "SchedulingGates": lambda h: SchedulingGates(None, h),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_v136_registrations_differ_from_v130s_and_carry_hints(name: str) -> None:
    old = _plugin(FACTORIES[name], "1.30").events_to_register()
    new = _plugin(FACTORIES[name], "1.36").events_to_register()
    assert any(registration.hint is not None for registration in new)
    assert old != new


def test_node_name_narrows_to_node_add_without_hint_function() -> None:
    old = _plugin(lambda h: NodeName(None, h), "1.30").events_to_register()
    new = _plugin(lambda h: NodeName(None, h), "1.36").events_to_register()
    assert [r.event.action for r in old] == [ActionType.ADD | ActionType.UPDATE]
    assert [(r.event.action, r.hint) for r in new] == [(ActionType.ADD, None)]


plain = make_pod("p", uid="p", requests={"cpu": "2"})
tolerant = attrs.evolve(plain, tolerations=(Toleration("dedicated", "Equal", "x", "NoSchedule"),))
n = make_node("n1")
NODE_CASES = [
    ("TaintToleration", plain, None, make_node("n9"), Q),
    ("TaintToleration", plain, None, make_node("n9", taints=[HARD]), SKIP),
    ("TaintToleration", plain, make_node("n1", taints=[HARD]), n, Q),
    ("TaintToleration", plain, n, make_node("n1", taints=[SOFT]), SKIP),
    ("TaintToleration", tolerant, make_node("n1", taints=[HARD]), make_node("n1", taints=[HARD, SOFT]), SKIP),
    ("NodeUnschedulable", plain, None, make_node("n9"), Q),
    ("NodeUnschedulable", plain, None, make_node("n9", unschedulable=True), SKIP),
    ("NodeUnschedulable", plain, make_node("n1", unschedulable=True), n, Q),
    ("NodeUnschedulable", plain, n, make_node("n1", taints=[HARD]), SKIP),
    ("NodeAffinity", make_pod("p", node_selector={"disk": "ssd"}), None, make_node("n9"), SKIP),
    ("NodeAffinity", make_pod("p", node_selector={"disk": "ssd"}), None,
     make_node("n9", labels={"disk": "ssd"}), Q),
    ("NodeAffinity", make_pod("p", node_selector={"disk": "ssd"}), n, make_node("n1", labels={"disk": "ssd"}), Q),
    ("NodeAffinity", make_pod("p", node_selector={"disk": "ssd"}), make_node("n1", labels={"disk": "ssd"}),
     make_node("n1", labels={"disk": "ssd", "x": "y"}), SKIP),
    ("NodeResourcesFit", plain, None, make_node("n9", allocatable={"cpu": "1", "pods": "10"}), SKIP),
    ("NodeResourcesFit", plain, None, make_node("n9"), Q),
    ("NodeResourcesFit", plain, make_node("n1", allocatable={"cpu": "1", "pods": "10"}), n, Q),
    ("NodeResourcesFit", plain, make_node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "10"}), n, Q),
    ("NodeResourcesFit", plain, make_node("n1", allocatable={"cpu": "4", "memory": "1Gi", "pods": "110"}), n,
     SKIP),
    ("NodeResourcesFit", plain, n, make_node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"},
                                             labels={"x": "y"}), SKIP),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "expected"), NODE_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(NODE_CASES)])
def test_node_event_hints(name: str, pod: object, old: object, new: object, expected: QueueingHint) -> None:
    hint = _hint(FACTORIES[name], NODE, ActionType.ADD)
    assert hint(pod, old, new) is expected  # type: ignore[arg-type]


def test_node_event_hints_queue_when_handed_something_else() -> None:
    for name in ("TaintToleration", "NodeUnschedulable", "NodeAffinity", "NodeResourcesFit", "InterPodAffinity"):
        assert _hint(FACTORIES[name], NODE, ActionType.ADD)(plain, None, "not a node") is Q


bound = make_pod("b", uid="b", node_name="n1", requests={"cpu": "1"}, host_ports=[80])
POD_CASES = [
    ("NodeResourcesFit", ActionType.DELETE, plain, bound, None, Q),
    ("NodeResourcesFit", ActionType.DELETE, plain, make_pod("u", uid="u"), None, SKIP),
    ("NodeResourcesFit", ActionType.DELETE, plain, make_pod("u", uid="u", nominated_node_name="n1"), None, Q),
    ("NodeResourcesFit", ActionType.UPDATE_POD_SCALE_DOWN, plain, bound,
     attrs.evolve(bound, containers=(attrs.evolve(bound.containers[0], requests={}),)), Q),
    ("NodeResourcesFit", ActionType.UPDATE_POD_SCALE_DOWN, plain, make_pod("u", uid="u", requests={"cpu": "1"}),
     make_pod("u", uid="u"), SKIP),
    ("NodeResourcesFit", ActionType.UPDATE_POD_SCALE_DOWN, plain, plain, plain, Q),
    ("NodePorts", ActionType.DELETE, make_pod("p", uid="p", host_ports=[80]), bound, None, Q),
    ("NodePorts", ActionType.DELETE, make_pod("p", uid="p", host_ports=[81]), bound, None, SKIP),
    ("NodePorts", ActionType.DELETE, make_pod("p", uid="p", host_ports=[80]),
     make_pod("b", uid="b", node_name="n1"), None, SKIP),
    ("NodePorts", ActionType.DELETE, make_pod("p", uid="p", host_ports=[80]),
     make_pod("u", uid="u", host_ports=[80]), None, SKIP),
    ("SchedulingGates", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, plain, plain, plain, Q),
    ("SchedulingGates", ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, plain, bound, bound, SKIP),
    ("TaintToleration", ActionType.UPDATE_POD_TOLERATION, plain, plain, tolerant, Q),
    ("NodeUnschedulable", ActionType.UPDATE_POD_TOLERATION, plain, plain, tolerant, SKIP),
    ("NodeUnschedulable", ActionType.UPDATE_POD_TOLERATION, plain, plain,
     attrs.evolve(plain, tolerations=(Toleration("node.kubernetes.io/unschedulable", "Exists"),)), Q),
]


@pytest.mark.parametrize(("name", "action", "pod", "old", "new", "expected"), POD_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(POD_CASES)])
def test_pod_event_hints(name: str, action: ActionType, pod: object, old: object, new: object,
                         expected: QueueingHint) -> None:
    assert _hint(FACTORIES[name], POD, action)(pod, old, new) is expected  # type: ignore[arg-type]


def _affine(*, required: bool) -> object:
    term = PodAffinityTerm(ZONE, LabelSelector(WEB))
    affinity = PodAffinity((term,), ()) if required else None
    anti = None if required else PodAffinity((term,), ())
    return make_pod("p", uid="p", affinity=Affinity(pod_affinity=affinity, pod_anti_affinity=anti))


web = make_pod("w", uid="w", node_name="n1", labels=WEB)
other = make_pod("o", uid="o", node_name="n1", labels={"app": "db"})
nominated_web = make_pod("nw", uid="nw", nominated_node_name="n1", labels=WEB)
hater = make_pod("h", uid="h", node_name="n1", labels={"app": "db"}, affinity=Affinity(
    pod_anti_affinity=PodAffinity((PodAffinityTerm(ZONE, LabelSelector({"app": "p"})),), ())))
target = make_pod("p", uid="p", labels={"app": "p"})
relabelled = attrs.evolve(_affine(required=True), labels=WEB)  # type: ignore[misc]  # the pod itself, labels changed
AFFINITY_CASES = [  # (minors, required affinity (else anti-affinity), old, new, expected)
    ("1.32-1.36", True, None, web, Q), ("1.32-1.36", True, None, other, SKIP), ("1.32-1.36", True, other, web, Q),
    ("1.32-1.36", True, web, other, SKIP), ("1.32-1.36", False, web, None, Q), ("1.32-1.36", False, other, None, SKIP),
    ("1.32-1.36", False, web, other, Q), ("1.32-1.36", False, other, web, SKIP),
    ("1.32-1.36", True, None, make_pod("u", uid="u", labels=WEB), SKIP), ("1.32-1.36", True, web, None, SKIP),
    # v1.36: nominated pods count like placed ones; the pod's own label update requeues
    ("1.35", False, nominated_web, None, SKIP), ("1.36", False, nominated_web, None, Q),
    ("1.35", True, None, nominated_web, SKIP), ("1.36", True, None, nominated_web, Q),
    ("1.35", True, _affine(required=True), relabelled, SKIP), ("1.36", True, _affine(required=True), relabelled, Q),
]


def _minors(spec: str) -> list[str]:
    first, _, last = spec.partition("-")
    return [f"1.{m}" for m in range(int(first[2:]), int((last or first)[2:]) + 1)]


@pytest.mark.parametrize(("minor", "required", "old", "new", "expected"),
                         [(minor, *case[1:]) for case in AFFINITY_CASES for minor in _minors(case[0])],
                         ids=[f"{minor}-{i}" for i, case in enumerate(AFFINITY_CASES) for minor in _minors(case[0])])
def test_inter_pod_affinity_pod_hints(minor: str, required: bool, old: object, new: object,
                                      expected: QueueingHint) -> None:
    hint = _hint(FACTORIES["InterPodAffinity"], POD, ActionType.ADD, minor)
    assert hint(_affine(required=required), old, new) is expected  # type: ignore[arg-type]
    assert hint(_affine(required=required), 1, 2) is Q  # type: ignore[arg-type]


@pytest.mark.parametrize(("minor", "expected"), [("1.35", SKIP), ("1.36", Q)])
def test_inter_pod_affinity_requeues_a_pod_a_deleted_pod_hated_from_1_36(minor: str, expected: QueueingHint) -> None:
    hint = _hint(FACTORIES["InterPodAffinity"], POD, ActionType.DELETE, minor)
    assert hint(target, hater, None) is expected


zoned_a, zoned_b, unzoned = (make_node("n9", labels={ZONE: "a"}), make_node("n9", labels={ZONE: "b"}),
                             make_node("n9"))
NODE_HINT_CASES = [  # (required affinity (else anti-affinity), old, new, v1.32, v1.33+)
    (True, None, zoned_a, Q, Q), (True, None, unzoned, SKIP, SKIP), (False, None, unzoned, SKIP, Q),
    (False, None, zoned_a, Q, Q), (True, zoned_a, attrs.evolve(zoned_a, labels={ZONE: "a", "x": "y"}), Q, SKIP),
    (True, unzoned, zoned_a, Q, Q), (True, zoned_a, zoned_b, Q, Q), (True, zoned_a, unzoned, SKIP, SKIP),
    (False, zoned_a, unzoned, SKIP, Q), (False, unzoned, zoned_a, Q, SKIP), (False, zoned_a, zoned_b, Q, Q),
]


@pytest.mark.parametrize(("required", "old", "new", "v132", "v133"), NODE_HINT_CASES,
                         ids=[str(i) for i in range(len(NODE_HINT_CASES))])
def test_inter_pod_affinity_node_hint_asks_about_the_topology_key(required: bool, old: object, new: object,
                                                                 v132: QueueingHint, v133: QueueingHint) -> None:
    for minor, expected in (("1.32", v132), ("1.33", v133), ("1.36", v133)):
        hint = _hint(FACTORIES["InterPodAffinity"], NODE, ActionType.ADD, minor)
        assert hint(_affine(required=required), old, new) is expected, minor  # type: ignore[arg-type]


spread = make_pod("p", uid="p", labels=WEB, topology_spread_constraints=(
    TopologySpreadConstraint(1, ZONE, "DoNotSchedule", LabelSelector(WEB), node_taints_policy="Honor"),))
zoned = make_node("n1", labels={ZONE: "a"})
SPREAD_POD_CASES = [
    (None, web, Q), (None, other, SKIP), (web, None, Q), (other, None, SKIP), (web, other, Q),
    (other, attrs.evolve(other, labels={"app": "db", "x": "y"}), SKIP), (other, other, SKIP),
    (None, make_pod("u", uid="u", labels=WEB), SKIP), (spread, attrs.evolve(spread, tolerations=(Toleration(),)), Q),
    (None, None, Q),
]
SPREAD_NODE_CASES = [
    (None, zoned, Q), (None, make_node("n9"), SKIP), (zoned, None, Q), (make_node("n1"), None, SKIP),
    (make_node("n1"), zoned, Q), (zoned, make_node("n1", labels={ZONE: "b"}), Q),
    (zoned, attrs.evolve(zoned, taints=(HARD,)), Q), (zoned, attrs.evolve(zoned, annotations={"a": "b"}), SKIP),
    (None, None, Q),
]


@pytest.mark.parametrize(("old", "new", "expected"), SPREAD_POD_CASES,
                         ids=[str(i) for i in range(len(SPREAD_POD_CASES))])
def test_pod_topology_spread_pod_hints(old: object, new: object, expected: QueueingHint) -> None:
    assert _hint(FACTORIES["PodTopologySpread"], POD, ActionType.ADD)(spread, old, new) is expected


@pytest.mark.parametrize(("old", "new", "expected"), SPREAD_NODE_CASES,
                         ids=[str(i) for i in range(len(SPREAD_NODE_CASES))])
def test_pod_topology_spread_node_hints(old: object, new: object, expected: QueueingHint) -> None:
    assert _hint(FACTORIES["PodTopologySpread"], NODE, ActionType.ADD)(spread, old, new) is expected


@pytest.mark.parametrize(("change", "actions"), [
    ({"labels": {"a": "b"}}, [ActionType.UPDATE_POD_LABEL]),
    ({"tolerations": (Toleration(),)}, [ActionType.UPDATE_POD_TOLERATION]),
    ({"containers": ()}, [ActionType.UPDATE_POD_SCALE_DOWN]),
    ({"phase": "Running"}, [ActionType.UPDATE_POD_OTHER]),
], ids=["label", "toleration", "scale-down", "other"])
def test_pod_changes_names_the_narrow_update_kinds(change: dict[str, Any], actions: list[ActionType]) -> None:
    assert [event.action for event in pod_changes(plain, attrs.evolve(plain, **change))] == actions


def test_pod_changes_sees_the_last_scheduling_gate_go() -> None:
    gated = attrs.evolve(plain, scheduling_gates=("g",))
    assert [e.action for e in pod_changes(gated, plain)] == [ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED]


def test_fit_pod_hint_queues_when_handed_something_else() -> None:
    hint = _hint(FACTORIES["NodeResourcesFit"], POD, ActionType.DELETE)
    assert hint(plain, "not a pod", None) is Q
    assert hint(plain, bound, "not a pod") is Q
