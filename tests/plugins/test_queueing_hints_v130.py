"""v1.30 queueing hints of the in-tree plugins (kube-scheduler v1.30.6 with ``SchedulerQueueingHints`` on).

v1.30 registers broader events than v1.36 and its hint functions judge differently: NodeUnschedulable
and NodeAffinity queue for any matching node (not only one that changed), NodeResourcesFit asks only
whether the pod fits the node empty, a deleted pod that was only nominated frees nothing, and
PodTopologySpread neither singles out the pod's own update nor looks at values or taints.  Each case
is (pod the plugin rejected, object before, object after) -> QUEUE or QUEUE_SKIP; cases marked
``differs`` get the other verdict from v1.36's hint for the same event.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import pytest

from kschedlib.framework.events import (
    NODE,
    POD,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    QueueingHint,
    QueueingHintFn,
)
from kschedlib.model import LabelSelector, Taint, Toleration
from kschedlib.model.labels import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.model.objects import NodeAffinity as NodeAffinitySpec
from kschedlib.model.objects import TopologySpreadConstraint
from kschedlib.plugins.batch.capacity_scheduling import CapacityScheduling
from kschedlib.plugins.batch.coscheduling import Coscheduling
from kschedlib.plugins.inter_pod_affinity import InterPodAffinity
from kschedlib.plugins.node_affinity import NodeAffinity, NodeAffinityArgs
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
GATE_ON = {"SchedulerQueueingHints": True}
ZONE = "topology.kubernetes.io/zone"
WEB = {"app": "web"}
HARD = Taint("dedicated", "NoSchedule", "x")
Factory = Callable[[FakeHandle], EnqueueExtensions]

FACTORIES: dict[str, Factory] = {
    "NodeName": lambda h: NodeName(None, h),
    "NodePorts": lambda h: NodePorts(None, h),
    "NodeUnschedulable": lambda h: NodeUnschedulable(None, h),
    "TaintToleration": lambda h: TaintToleration(None, h),
    "SchedulingGates": lambda h: SchedulingGates(None, h),
    "NodeAffinity": lambda h: NodeAffinity(None, h),
    "NodeResourcesFit": lambda h: NodeResourcesFit(None, h),
    "InterPodAffinity": lambda h: InterPodAffinity(None, h),
    "PodTopologySpread": lambda h: PodTopologySpread(None, h),
}

ALL_NODE = ActionType.ADD | ActionType.UPDATE
SPREAD_NODE = ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT
# plugin -> [(resource, action, carries a hint function)], as v1.30.6's EventsToRegister.
REGISTRATIONS = {
    "NodeName": [(NODE, ALL_NODE, False)],
    "NodePorts": [(POD, ActionType.DELETE, True), (NODE, ALL_NODE, False)],
    "NodeUnschedulable": [(NODE, ALL_NODE, True)],
    "TaintToleration": [(NODE, ALL_NODE, False)],
    "SchedulingGates": [],
    "NodeAffinity": [(NODE, ALL_NODE, True)],
    "NodeResourcesFit": [(POD, ActionType.DELETE, True), (NODE, ALL_NODE, True)],
    "InterPodAffinity": [(POD, ActionType.ALL, False),
                         (NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT, False)],
    "PodTopologySpread": [(POD, ActionType.ALL, True), (NODE, SPREAD_NODE, True)],
    "Coscheduling": [(POD, ActionType.ADD, False),
                     ("podgroups.v1alpha1.scheduling.x-k8s.io", ActionType.ADD | ActionType.UPDATE, False)],
    "CapacityScheduling": [(POD, ActionType.DELETE, False),
                           ("elasticquotas.v1alpha1.scheduling.x-k8s.io", ActionType.ALL, False)],
}


def _registrations(name: str, gates: dict[str, bool] | None = GATE_ON,
                   kube_version: str = "1.30") -> tuple[ClusterEventWithHint, ...]:
    handle = FakeHandle(kube_version=kube_version, feature_gates=gates)
    if name == "Coscheduling":
        return tuple(Coscheduling(None, handle).events_to_register())
    if name == "CapacityScheduling":
        return tuple(CapacityScheduling(None, handle).events_to_register())
    return tuple(FACTORIES[name](handle).events_to_register())


def _hint(name: str, resource: str, action: ActionType, *, plugin: EnqueueExtensions | None = None) -> QueueingHintFn:
    registrations = (plugin.events_to_register() if plugin is not None else _registrations(name))
    for registration in registrations:
        if registration.event.matches(ClusterEvent(resource, action)):
            assert registration.hint is not None
            return registration.hint
    raise AssertionError(f"no {resource}/{action!r} registration")


def _shape(registrations: tuple[ClusterEventWithHint, ...]) -> list[tuple[ClusterEvent, str | None]]:
    return [(r.event, getattr(r.hint, "__qualname__", None)) for r in registrations]


@pytest.mark.parametrize("name", sorted(REGISTRATIONS))
def test_v130_registrations_are_v130s_events_with_its_hint_functions(name: str) -> None:
    got = [(r.event.resource, r.event.action, r.hint is not None) for r in _registrations(name)]
    assert got == REGISTRATIONS[name]


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_the_gate_does_not_change_v130s_registrations(name: str) -> None:
    """kube v1.30 registers the same events either way; only whether the queue asks the hints differs."""
    assert _shape(_registrations(name, None)) == _shape(_registrations(name))


@pytest.mark.parametrize("name", ["Coscheduling", "CapacityScheduling"])
def test_batch_plugins_register_the_same_events_without_hints_in_every_version(name: str) -> None:
    """scheduler-plugins d250c4b9 gives neither plugin a hint function: each registered event queues."""
    assert _shape(_registrations(name, None, "1.36")) == _shape(_registrations(name))


plain = make_pod("p", uid="p", requests={"cpu": "2"})
ssd_pod = make_pod("p", uid="p", node_selector={"disk": "ssd"})
n1 = make_node("n1")
ssd = make_node("n1", labels={"disk": "ssd"})
small = {"cpu": "1", "pods": "10"}
NODE_CASES = [
    ("NodeUnschedulable-added", "NodeUnschedulable", plain, None, make_node("n9"), Q),
    ("NodeUnschedulable-added-cordoned", "NodeUnschedulable", plain, None, make_node("n9", unschedulable=True), SKIP),
    ("NodeUnschedulable-uncordoned", "NodeUnschedulable", plain, make_node("n1", unschedulable=True), n1, Q),
    ("NodeUnschedulable-taint-on-open-node-differs", "NodeUnschedulable", plain, n1,
     make_node("n1", taints=[HARD]), Q),
    ("NodeUnschedulable-still-cordoned", "NodeUnschedulable", plain, make_node("n1", unschedulable=True),
     make_node("n1", unschedulable=True, labels={"x": "y"}), SKIP),
    ("NodeAffinity-added-unmatched", "NodeAffinity", ssd_pod, None, make_node("n9"), SKIP),
    ("NodeAffinity-added-matched", "NodeAffinity", ssd_pod, None, make_node("n9", labels={"disk": "ssd"}), Q),
    ("NodeAffinity-now-matches", "NodeAffinity", ssd_pod, n1, ssd, Q),
    ("NodeAffinity-matched-before-differs", "NodeAffinity", ssd_pod, ssd,
     make_node("n1", labels={"disk": "ssd", "x": "y"}), Q),
    ("NodeAffinity-no-longer-matches", "NodeAffinity", ssd_pod, ssd, n1, SKIP),
    ("NodeResourcesFit-added-too-small", "NodeResourcesFit", plain, None, make_node("n9", allocatable=small), SKIP),
    ("NodeResourcesFit-added-fits", "NodeResourcesFit", plain, None, make_node("n9"), Q),
    ("NodeResourcesFit-grew", "NodeResourcesFit", plain, make_node("n1", allocatable=small), n1, Q),
    ("NodeResourcesFit-label-on-roomy-node-differs", "NodeResourcesFit", plain, n1,
     make_node("n1", labels={"x": "y"}), Q),
    ("NodeResourcesFit-still-too-small", "NodeResourcesFit", plain, make_node("n1", allocatable=small),
     make_node("n1", allocatable=small, labels={"x": "y"}), SKIP),
    ("NodeResourcesFit-no-pod-room", "NodeResourcesFit", plain, None,
     make_node("n9", allocatable={"cpu": "4", "pods": "0"}), SKIP),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "expected"), [c[1:] for c in NODE_CASES],
                         ids=[c[0] for c in NODE_CASES])
def test_node_event_hints(name: str, pod: object, old: object, new: object, expected: QueueingHint) -> None:
    assert _hint(name, NODE, ActionType.ADD)(pod, old, new) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["NodeUnschedulable", "NodeAffinity", "NodeResourcesFit"])
def test_node_hints_queue_when_handed_something_else(name: str) -> None:
    assert _hint(name, NODE, ActionType.ADD)(plain, None, "not a node") is Q


def test_node_affinity_added_affinity_skips_nodes_outside_it() -> None:
    required = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("pool", "In", ("gpu",)),)),))
    plugin = NodeAffinity(NodeAffinityArgs(NodeAffinitySpec(required=required)),
                          FakeHandle(feature_gates=GATE_ON, kube_version="1.30"))
    hint = _hint("NodeAffinity", NODE, ActionType.ADD, plugin=plugin)
    assert hint(ssd_pod, None, ssd) is SKIP
    assert hint(ssd_pod, None, make_node("n9", labels={"disk": "ssd", "pool": "gpu"})) is Q


bound = make_pod("b", uid="b", node_name="n1", requests={"cpu": "1"}, host_ports=[80])
nominated = make_pod("u", uid="u", nominated_node_name="n1", requests={"cpu": "1"}, host_ports=[80])
wants_80 = make_pod("p", uid="p", host_ports=[80])
POD_CASES = [
    ("NodeResourcesFit-placed-deleted", "NodeResourcesFit", ActionType.DELETE, plain, bound, None, Q),
    ("NodeResourcesFit-pending-deleted", "NodeResourcesFit", ActionType.DELETE, plain, make_pod("u", uid="u"),
     None, SKIP),
    ("NodeResourcesFit-nominated-deleted-differs", "NodeResourcesFit", ActionType.DELETE, plain, nominated, None,
     SKIP),
    ("NodeResourcesFit-update-never-helps", "NodeResourcesFit", ActionType.DELETE, plain, bound,
     attrs.evolve(bound, containers=(attrs.evolve(bound.containers[0], requests={}),)), SKIP),
    ("NodeResourcesFit-not-a-pod", "NodeResourcesFit", ActionType.DELETE, plain, "x", None, Q),
    ("NodePorts-port-freed", "NodePorts", ActionType.DELETE, wants_80, bound, None, Q),
    ("NodePorts-other-port", "NodePorts", ActionType.DELETE, make_pod("p", uid="p", host_ports=[81]), bound,
     None, SKIP),
    ("NodePorts-no-ports-held", "NodePorts", ActionType.DELETE, wants_80, make_pod("b", uid="b", node_name="n1"),
     None, SKIP),
    ("NodePorts-pending-deleted", "NodePorts", ActionType.DELETE, wants_80, make_pod("u", uid="u", host_ports=[80]),
     None, SKIP),
    ("NodePorts-nominated-deleted-differs", "NodePorts", ActionType.DELETE, wants_80, nominated, None, SKIP),
    ("NodePorts-not-a-pod", "NodePorts", ActionType.DELETE, wants_80, "x", None, Q),
]


@pytest.mark.parametrize(("name", "action", "pod", "old", "new", "expected"), [c[1:] for c in POD_CASES],
                         ids=[c[0] for c in POD_CASES])
def test_pod_event_hints(name: str, action: ActionType, pod: object, old: object, new: object,
                         expected: QueueingHint) -> None:
    assert _hint(name, POD, action)(pod, old, new) is expected  # type: ignore[arg-type]


spread = make_pod("p", uid="p", labels=WEB, topology_spread_constraints=(
    TopologySpreadConstraint(1, ZONE, "DoNotSchedule", LabelSelector(WEB), node_taints_policy="Honor"),))
web = make_pod("w", uid="w", node_name="n1", labels=WEB)
db = make_pod("o", uid="o", node_name="n1", labels={"app": "db"})
zoned = make_node("n1", labels={ZONE: "a"})
SPREAD_POD_CASES = [
    ("matching-added", None, web, Q), ("other-added", None, db, SKIP), ("matching-deleted", web, None, Q),
    ("other-deleted", db, None, SKIP), ("label-flips", web, db, Q),
    ("label-change-no-flip", db, attrs.evolve(db, labels={"app": "db", "x": "y"}), SKIP),
    ("same-labels", db, db, SKIP), ("pending-pod", None, make_pod("u", uid="u", labels=WEB), SKIP),
    ("other-namespace", None, make_pod("w", uid="w", node_name="n1", labels=WEB, namespace="x"), SKIP),
    ("own-toleration-differs", spread, attrs.evolve(spread, tolerations=(Toleration(),)), SKIP),
    ("not-pods", None, None, Q),
]
SPREAD_NODE_CASES = [
    ("keyed-added", None, zoned, Q), ("unkeyed-added", None, make_node("n9"), SKIP), ("keyed-deleted", zoned, None, Q),
    ("unkeyed-deleted", make_node("n1"), None, SKIP), ("gains-key", make_node("n1"), zoned, Q),
    ("loses-key", zoned, make_node("n1"), SKIP),
    ("annotation-on-keyed-node-differs", zoned, attrs.evolve(zoned, annotations={"a": "b"}), Q),
    ("not-nodes", None, None, Q),
]


@pytest.mark.parametrize(("old", "new", "expected"), [c[1:] for c in SPREAD_POD_CASES],
                         ids=[c[0] for c in SPREAD_POD_CASES])
def test_pod_topology_spread_pod_hints(old: object, new: object, expected: QueueingHint) -> None:
    assert _hint("PodTopologySpread", POD, ActionType.ADD)(spread, old, new) is expected


@pytest.mark.parametrize(("old", "new", "expected"), [c[1:] for c in SPREAD_NODE_CASES],
                         ids=[c[0] for c in SPREAD_NODE_CASES])
def test_pod_topology_spread_node_hints(old: object, new: object, expected: QueueingHint) -> None:
    assert _hint("PodTopologySpread", NODE, ActionType.ADD)(spread, old, new) is expected


DIFFERS = [c for c in NODE_CASES + POD_CASES if c[0].endswith("-differs")]


@pytest.mark.parametrize("case", DIFFERS, ids=[c[0] for c in DIFFERS])
def test_cases_marked_differs_get_the_other_verdict_from_v136(case: tuple[object, ...]) -> None:
    name, *rest = case[1:]
    assert isinstance(name, str)
    pod, old, new, expected = rest[-4:]
    resource, action = (POD, rest[0]) if len(rest) == 5 else (NODE, ActionType.ADD)
    assert isinstance(action, ActionType)
    v136 = FACTORIES[name](FakeHandle(kube_version="1.36"))
    hint = _hint(name, resource, action, plugin=v136)
    assert hint(pod, old, new) is not expected  # type: ignore[arg-type]
