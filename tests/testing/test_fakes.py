"""FakeHandle: a real Handle over a cluster, able to run the profile's Filter plugins for preemption."""

from __future__ import annotations

import attrs

from kschedlib import FakeClock
from kschedlib.framework import (
    CycleState,
    FilterPlugin,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterExtensions,
    Snapshot,
    Status,
)
from kschedlib.model import Container, Namespace, Node, OwnerSelector, Pod, PodDisruptionBudget, parse_quantity
from kschedlib.plugins.default_preemption import DefaultPreemption
from kschedlib.plugins.node_resources_fit import NodeResourcesFit
from kschedlib.plugins.pod_topology_spread import PodTopologySpread
from kschedlib.simulation import Cluster
from kschedlib.testing import FakeClock as ReexportedClock
from kschedlib.testing import FakeHandle, snapshot_of


def _node(name: str, zone: str, cpu: str = "2") -> Node:
    amounts = {"cpu": parse_quantity(cpu), "memory": parse_quantity("4Gi"), "pods": parse_quantity("10")}
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    return Node(name, labels=labels, allocatable=amounts, capacity=amounts)


def _pod(name: str, cpu: str, node_name: str = "", priority: int | None = None) -> Pod:
    container = Container("app", requests={"cpu": parse_quantity(cpu)})
    return Pod(name, labels={"app": "web"}, node_name=node_name, containers=(container,), priority=priority)


CLUSTER = Cluster((
    Namespace("default", {"kubernetes.io/metadata.name": "default"}),
    _node("a1", "a"), _node("a2", "a"), _node("b1", "b"),
    _pod("low", "2", "a1", priority=0),
    PodDisruptionBudget("pdb"),
    OwnerSelector("Service", "web"),
))


def test_the_snapshot_is_the_schedulers() -> None:
    handle = FakeHandle(CLUSTER)
    assert [info.name for info in handle.snapshot] == ["a1", "b1", "a2"]  # zones interleaved
    assert [p.pod.name for p in handle.snapshot.get("a1").pods] == ["low"]
    assert handle.snapshot.namespace_labels("default") == {"kubernetes.io/metadata.name": "default"}
    assert snapshot_of(CLUSTER) is snapshot_of(CLUSTER)


def test_what_plugins_read() -> None:
    incoming = _pod("high", "2", priority=100)
    handle = FakeHandle(CLUSTER, pods=[incoming], seed=7)
    assert handle.get_pod("default", "high") is incoming
    assert handle.get_pod("default", "low") is not None
    assert handle.get_pod("default", "nope") is None
    assert [p.name for p in handle.pod_disruption_budgets()] == ["pdb"]
    assert [o.name for o in handle.owner_selectors("default")] == ["web"]
    assert not handle.owner_selectors("other")
    assert isinstance(handle.clock, FakeClock)
    assert ReexportedClock is FakeClock
    first = handle.rng.random()
    handle.reseed()
    assert handle.rng.random() == first
    assert not handle.iterate_waiting_pods()
    assert handle.get_waiting_pod("x") is None
    assert not handle.reject_waiting_pod("x")
    assert not handle.extenders
    assert handle.nominated_pods_for_node("a1") == ()


def test_other_sources_of_nodes() -> None:
    infos = [NodeInfo.of(_node("n", "z"))]
    assert FakeHandle(infos).snapshot.node_infos == tuple(infos)
    snapshot = Snapshot(infos)
    assert FakeHandle(snapshot).snapshot is snapshot
    labelled = FakeHandle(snapshot, namespaces=[Namespace("x", {"k": "v"})])
    assert labelled.snapshot.namespace_labels("x") == {"k": "v"}
    assert FakeHandle(CLUSTER, namespaces=[Namespace("x")]).snapshot.namespaces.keys() == {"default", "x"}


def test_the_filter_plugins_run_as_the_profiles_would() -> None:
    handle = FakeHandle(CLUSTER, plugins=[NodeResourcesFit])
    pod = _pod("high", "2", priority=100)
    state = CycleState()
    assert handle.plugins[0].name == "NodeResourcesFit"
    handle.plugins[0].pre_filter(state, pod)  # type: ignore[attr-defined]
    assert handle.run_filter_plugins_with_nominated_pods(state, pod, handle.snapshot.get("b1")).is_success
    full = handle.run_filter_plugins_with_nominated_pods(state, pod, handle.snapshot.get("a1"))
    assert full == Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit")
    skipping = state.clone()
    skipping.skip_filter_plugins = frozenset({"NodeResourcesFit"})
    assert handle.run_filter_plugins_with_nominated_pods(skipping, pod, handle.snapshot.get("a1")).is_success


def test_nominated_pods_count_in_the_first_pass() -> None:
    nominated = PodInfo.of(_pod("nominated", "2", priority=100))
    handle = FakeHandle(CLUSTER, plugins=[NodeResourcesFit, PodTopologySpread], nominated={"b1": [nominated]})
    pod = _pod("high", "1", priority=50)
    state = CycleState()
    skipped = {p.name for p in handle.plugins if p.pre_filter(state, pod) == Status.skip()}  # type: ignore[attr-defined]
    state.skip_filter_plugins = frozenset(skipped)
    assert skipped == {"PodTopologySpread"}
    status = handle.run_filter_plugins_with_nominated_pods(state, pod, handle.snapshot.get("b1"))
    assert status.reasons == ("Insufficient cpu",)
    lower = attrs.evolve(pod, priority=200)
    assert handle.run_filter_plugins_with_nominated_pods(state, lower, handle.snapshot.get("b1")).is_success


def test_preemption_runs_through_the_fake() -> None:
    pod = _pod("high", "2", priority=100)
    handle = FakeHandle(CLUSTER, pods=[pod], plugins=[NodeResourcesFit])
    preemption = handle.build(DefaultPreemption)
    assert handle.plugins[-1] is preemption
    state = CycleState()
    handle.plugins[0].pre_filter(state, pod)  # type: ignore[attr-defined]
    statuses = {name: Status.unschedulable("Insufficient cpu") for name in ("a1", "a2", "b1")}
    result = preemption.post_filter(state, pod, statuses)  # type: ignore[attr-defined]
    assert result.nominated_node_name == "a1"
    assert result.victims == ("default/low",)


def test_extension_runners_report_failures() -> None:
    handle = FakeHandle(CLUSTER, plugins=[PodTopologySpread])
    info = PodInfo.of(_pod("x", "1", "a1"))
    status = handle.run_pre_filter_extension_add_pod(CycleState(), info.pod, info, handle.snapshot.get("a1"))
    assert status.code.label == "Error"
    assert 'running AddPod on PreFilter plugin "PodTopologySpread"' in status.message()
    removal = handle.run_pre_filter_extension_remove_pod(CycleState(), info.pod, info, handle.snapshot.get("a1"))
    assert not removal.is_success


def test_it_is_a_handle() -> None:
    handle: Handle = FakeHandle().as_handle()
    assert len(handle.snapshot) == 0


class _Broken(FilterPlugin, PreFilterExtensions):
    """A Filter that raises, or answers with an error: the fake reports both as errors of the plugin."""

    name = "Broken"

    def __init__(self, args: object, handle: Handle, *, raises: bool = True) -> None:
        self.raises = raises

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if self.raises:
            raise RuntimeError("boom")
        return Status.from_error("bad state")

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        raise RuntimeError("no adding")

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        return Status.success()


def test_failing_plugins_become_error_statuses() -> None:
    handle = FakeHandle(CLUSTER)
    raising = handle.add_plugin(_Broken(None, handle))
    pod = _pod("p", "1")
    node = handle.snapshot.get("b1")
    status = handle.run_filter_plugins_with_nominated_pods(CycleState(), pod, node)
    assert (status.code.label, status.plugin) == ("Error", "Broken")
    assert status.message() == 'running "Broken" filter plugin: boom'
    assert isinstance(raising, _Broken)
    raising.raises = False
    assert handle.run_filter_plugins_with_nominated_pods(CycleState(), pod, node).message() == (
        'running "Broken" filter plugin: bad state')
    added = handle.run_pre_filter_extension_add_pod(CycleState(), pod, PodInfo.of(pod), node)
    assert added.message() == 'running AddPod on PreFilter plugin "Broken": no adding'


def test_set_snapshot_replaces_what_plugins_see() -> None:
    handle = FakeHandle(CLUSTER)
    empty = Snapshot(())
    handle.set_snapshot(empty)
    assert handle.snapshot is empty
