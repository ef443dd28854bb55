"""DynamicResources' Filter verdicts kept per node position across cycles decide exactly as fresh ones.

The verdict of a pod's claims on a node depends on the node, the slices, the classes and which devices
of the node's pools are in use; the last is outside NodeInfo, so the plugin names the nodes whose
pools' use changed (:class:`~kschedlib.framework.ExternalNodeState`) and the column asks again there.
Every test compares against the same run with the columns switched off, where Filter runs on every
node it visits, and with device use changing both with NodeInfo (pods bound and deleted) and without
it (a claim another party allocates or frees, a shared pool, a PostFilter deallocation).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib._internal.reuse import memo as memo_module
from kschedlib._internal.reuse.columns import FilterColumn
from kschedlib.dra._pools import PoolIndex
from kschedlib.dra._store import DraStore
from kschedlib.framework import CycleState, ExternalNodeState, NodeInfo, Snapshot, Status
from kschedlib.model.dra import ResourceSlice
from kschedlib.model.labels import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.plugins.dynamic_resources import DynamicResources
from tests.helpers import make_node

DRIVER = "gpu.example.com"
Op = tuple[str, int, int]


def _node(name: str, zone: str) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": zone}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}}}


def _slice(name: str, devices: int, model: str, **placement: Any) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRIVER, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"d{i}", "attributes": {"model": {"string": model}}} for i in range(devices)],
                     **placement}}


CLASS: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def _claim(name: str, count: int, a100: bool, allocation: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
    if a100:
        exactly["selectors"] = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "a100"'}}]
    status: dict[str, Any] = {}
    if allocation is not None:
        status = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": pool, "device": device} for pool, device in allocation]}}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}, "status": status}


def _pod(name: str, claim: str) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}]}}


def _cluster(nodes: int, per_node: int, shared: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [CLASS]
    for i in range(nodes):
        out += [_node(f"n{i}", f"z{i % 2}"), _slice(f"n{i}", per_node, "a100" if i % 2 else "h100", nodeName=f"n{i}")]
    if shared:  # network-attached devices reachable from every node of zone z0
        out.append(_slice("rack", 2, "a100", nodeSelector={"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z0"]}]}]}))
    return out


def _load(manifests: Sequence[dict[str, Any]]) -> list[object]:
    return list(kschedlib.load_cluster(list(manifests)).objects)


def run(base: Sequence[dict[str, Any]], ops: Sequence[Op]) -> list[object]:
    """Apply ``ops`` to a scheduler over ``base``; what was decided and every claim's devices after each step.

    ``("pod", count, a100)`` adds a pod with its claim; ``("delete", i, _)`` removes the i-th pod of those left;
    ``("grab", node, n)`` lets another party allocate the first n + 1 devices of node ``node``'s pool (no
    pod, so no NodeInfo changes); ``("free", i, _)`` has it give back its i-th grab; ``("node", i, _)`` takes
    node i away with its pods (as the pod garbage collector does), or brings it back.
    """
    scheduler = kschedlib.Scheduler(seed=7, clock=kschedlib.FakeClock())
    scheduler.add_objects(_load(base))
    nodes = scheduler.node_names()
    pods: list[str] = []
    grabs: list[str] = []
    out: list[object] = []
    for index, (op, a, b) in enumerate(ops):
        if op == "pod":
            name = f"p{index}"
            pods.append(name)
            scheduler.add_objects(_load([_claim(name, a, bool(b)), _pod(name, name)]))
        elif op == "delete" and pods:
            scheduler.remove_pod(f"default/{pods.pop(a % len(pods))}")
        elif op == "grab":
            pool = nodes[a % len(nodes)]
            name = f"g{index}"
            grabs.append(name)
            scheduler.add_objects(_load([_claim(name, b + 1, False, [(pool, f"d{i}") for i in range(b + 1)])]))
        elif op == "free" and grabs:
            scheduler.add_objects(_load([_claim(grabs[a % len(grabs)], 1, False)]))
        elif op == "node":
            name = nodes[a % len(nodes)]
            if scheduler.has_node(name):
                for key, where in sorted(scheduler.bound_pods().items()):
                    if where == name:
                        scheduler.remove_pod(key)
                        pods.remove(key.partition("/")[2])
                scheduler.remove_node(name)
            else:
                scheduler.add_objects(_load([m for m in base if m["kind"] == "Node"
                                             and m["metadata"]["name"] == name]))
        out += [(r.pod.name, r.node_name, r.message) for r in scheduler.run_until_idle()]
        out.append(sorted((key, tuple(d.device for d in claim.allocation.devices))
                          for key, claim in scheduler.devices.claims.items() if claim.allocation is not None))
    return out


def _without_columns() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(memo_module.Memo, "column", lambda *args: None)
        yield


def _compare(base: Sequence[dict[str, Any]], ops: Sequence[Op]) -> list[object]:
    kept = run(base, ops)
    for _ in _without_columns():
        assert run(base, ops) == kept
    return kept


_ops = st.lists(st.one_of(
    st.tuples(st.just("pod"), st.sampled_from([1, 1, 2]), st.integers(0, 1)),
    st.tuples(st.just("delete"), st.integers(0, 50), st.just(0)),
    st.tuples(st.just("grab"), st.integers(0, 5), st.integers(0, 2)),
    st.tuples(st.just("free"), st.integers(0, 50), st.just(0)),
    st.tuples(st.just("node"), st.integers(0, 5), st.just(0)),
), min_size=4, max_size=30)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 3), st.integers(1, 2), st.booleans(), _ops)
def test_reused_verdicts_decide_as_fresh_ones(nodes: int, per_node: int, shared: bool, ops: list[Op]) -> None:
    _compare(_cluster(nodes, per_node, shared), ops)


def test_a_busy_cluster_decides_as_fresh_ones_and_asks_filter_less(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    original = DynamicResources.filter

    def counted(self: DynamicResources, state: CycleState, pod: Any, node_info: NodeInfo) -> Status:
        calls["n"] += 1
        return original(self, state, pod, node_info)

    monkeypatch.setattr(DynamicResources, "filter", counted)
    ops: list[Op] = [("pod", [1, 2, 1, 4][i % 4], i % 3 == 0) for i in range(60)]
    ops[20:20] = [("grab", 3, 0), ("grab", 4, 1), ("delete", 2, 0), ("free", 0, 0)]
    base = _cluster(12, 4, shared=False)
    kept = run(base, ops)
    with_columns, calls["n"] = calls["n"], 0
    for _ in _without_columns():
        assert run(base, ops) == kept
    assert with_columns * 3 < calls["n"]  # the verdicts were reused, not asked again
    last = [step for step in kept if isinstance(step, tuple)][-1]
    assert last[:2] == ("p63", None)  # the cluster filled up: 48 GPUs, 96 wanted
    assert str(last[2]).startswith("0/12 nodes are available: 12 cannot allocate all claims.")


def test_devices_taken_and_given_back_outside_the_scheduler_are_seen() -> None:
    """One node, one GPU: another party's claim takes it and gives it back, with no pod and no NodeInfo
    change; the one-GPU shape's kept verdict must follow both times."""
    ops: list[Op] = [("pod", 1, 0), ("delete", 0, 0)] * 3
    ops += [("grab", 0, 0), ("pod", 1, 0), ("free", 0, 0), ("pod", 1, 0)]
    steps = [step for step in _compare(_cluster(1, 1, shared=False), ops) if isinstance(step, tuple)]
    assert steps[3][:2] == ("p7", None)
    assert str(steps[3][2]).startswith("0/1 nodes are available: 1 cannot allocate all claims.")
    # giving the GPU back is a claim deallocation: p7 is requeued and takes it; p9 finds it used again
    assert steps[4] == ("p7", "n0", None)
    assert steps[5][:2] == ("p9", None)
    assert str(steps[5][2]).startswith("0/1 nodes are available: 1 cannot allocate all claims.")


def _deallocation_run() -> list[object]:
    """A claim allocated for n0 but reserved for nobody, for a pod held to n1: PostFilter deallocates it
    (device use changes on n0 with no NodeInfo change) and the pod, requeued by that claim update, gets
    n1's device; the one-GPU pods around it see n0's device."""
    base = [CLASS, _node("n0", "z0"), _node("n1", "z0"), _slice("n0", 1, "a100", nodeName="n0"),
            _slice("n1", 1, "a100", nodeName="n1")]
    scheduler = kschedlib.Scheduler(seed=1, clock=kschedlib.FakeClock())
    scheduler.add_objects(_load(base))
    steps: list[object] = []

    def settle() -> None:
        steps.extend((r.pod.name, r.node_name, r.message) for r in scheduler.run_until_idle())

    for i in range(3):  # the one-GPU shape gets its column
        scheduler.add_objects(_load([_claim(f"w{i}", 1, False), _pod(f"w{i}", f"w{i}")]))
        settle()
        scheduler.remove_pod(f"default/w{i}")
    held = _claim("held", 1, False, [("n0", "d0")])
    held["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}
    pinned = _pod("pinned", "held")
    pinned["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n1"}
    scheduler.add_objects(_load([held, pinned]))
    settle()
    allocation = scheduler.devices.claims["default/held"].allocation
    steps.append(None if allocation is None else [d.pool for d in allocation.devices])
    for name in ("a1", "a2"):
        scheduler.add_objects(_load([_claim(name, 1, False), _pod(name, name)]))
        settle()
    steps.append(scheduler.bound_pods())
    return steps


def test_a_post_filter_deallocation_is_seen_by_the_next_pods() -> None:
    steps = _deallocation_run()
    for _ in _without_columns():
        assert _deallocation_run() == steps
    pinned = [step for step in steps if isinstance(step, tuple) and step[0] == "pinned"]
    assert [step[1] for step in pinned] == [None, "n1"]  # deallocated, then requeued by that claim update
    assert ["n1"] in steps  # and allocated again where the pod fits
    assert ("a1", "n0", None) in steps  # n0's device, freed with no NodeInfo change, is used


# --- the parts ---------------------------------------------------------------------------------


class _Outside(ExternalNodeState):
    """Names the nodes given to ``change``; ``None`` before the first answer, or when told to fail."""

    name = "Outside"

    def __init__(self) -> None:
        self.changed: list[str] = []
        self.fail = False

    def node_state_changes(self, since: object) -> tuple[object, Sequence[str] | None]:
        if self.fail:
            raise RuntimeError("outside state unreadable")
        names, self.changed = self.changed, []
        return "now", None if since is None else names


def test_a_column_asks_again_where_outside_state_changed() -> None:
    snapshot = Snapshot([NodeInfo.of(make_node(f"n{i}")) for i in range(4)])
    asked: list[str] = []
    rejected = {"n2"}

    def verdict(info: NodeInfo) -> Status:
        asked.append(info.name)
        return Status.unschedulable("no") if info.name in rejected else Status.success()

    outside = _Outside()
    column = FilterColumn()
    column.sync(snapshot, verdict, (outside,))
    assert asked == ["n0", "n1", "n2", "n3"]
    assert column.rejected == [2]
    asked.clear()
    rejected = {"n1"}
    outside.changed = ["n1", "n2", "gone"]  # a node the snapshot does not hold is ignored
    column.sync(snapshot, verdict, (outside,))
    assert asked == ["n1", "n2"]
    assert column.rejected == [1]
    asked.clear()
    column.sync(snapshot, verdict, (outside,))
    assert asked == []
    outside.fail = True  # no answer: every node is asked again, and again until it answers
    column.sync(snapshot, verdict, (outside,))
    assert asked == ["n0", "n1", "n2", "n3"]
    assert column.outside == [None]


def test_the_store_says_which_pools_changed_since_a_position(monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _load([*_cluster(2, 2, shared=False), _claim("x", 1, False, [("n1", "d0")])])
    store = DraStore()
    position, changed = store.pools_changed(None)
    assert changed is None
    for obj in objects:
        store.add(obj)
    later, changed = store.pools_changed(position)
    assert changed == frozenset({(DRIVER, "n1")})
    assert store.pools_changed(later)[1] == frozenset()
    copy = store.copy()
    assert copy.epoch is not store.epoch
    assert copy.pools_changed(later)[1] is None
    monkeypatch.setattr(DraStore, "MAX_LOG", 0)  # the log starts again: older positions mean "all"
    store.deallocate(store.claims["default/x"])
    assert store.pools_changed(later)[1] is None


def test_a_pool_index_names_the_nodes_a_pool_serves() -> None:
    zone = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("z0",)),)),))
    index = PoolIndex((ResourceSlice("a", DRIVER, "a", 1, 1, node_name="n0"),
                       ResourceSlice("b", DRIVER, "b", 1, 1, node_selector=zone)))
    assert index.nodes_of((DRIVER, "a")) == frozenset({"n0"})
    assert index.nodes_of((DRIVER, "b")) is None
    assert index.nodes_of((DRIVER, "missing")) == frozenset()


def _plugin_and_state(objects: Sequence[dict[str, Any]], pod: dict[str, Any]) -> tuple[
        DynamicResources, CycleState, Any, kschedlib.Scheduler]:
    scheduler = kschedlib.Scheduler(seed=1)
    scheduler.add_objects(_load([*objects, {"kind": "Pod", "metadata": {"name": "plain", "namespace": "default"},
                                            "spec": {"containers": [{"name": "c", "image": "x"}]}}]))
    scheduler.run_until_idle()  # a cycle: the plugins' handle has the cluster's snapshot
    plugin = scheduler.plugin("DynamicResources")
    assert isinstance(plugin, DynamicResources)
    target = kschedlib.load_cluster([pod]).pods[0]
    state = CycleState()
    assert plugin.pre_filter(state, target).is_success  # type: ignore[union-attr]
    return plugin, state, target, scheduler


def test_reserve_finds_the_allocation_on_a_node_filter_did_not_visit() -> None:
    base = _cluster(2, 2, shared=False)
    plugin, state, target, scheduler = _plugin_and_state([*base, _claim("c", 2, False)], _pod("p", "c"))
    assert plugin.filter_key(state, target) is not None
    assert plugin.reserve(state, target, "n1").is_success
    allocation = scheduler.devices.in_flight["uid-c"].allocation
    assert allocation is not None
    assert sorted(d.device_id for d in allocation.devices) == [
        (DRIVER, "n1", "d0"), (DRIVER, "n1", "d1")]
    assert plugin.reserve(state, target, "gone").code is kschedlib.framework.Code.ERROR


def test_no_key_for_extended_resources_or_claims_allocated_with_a_node_selector() -> None:
    allocated = _claim("c", 1, False, [("n0", "d0")])
    allocated["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n0"]}]}]}
    plugin, state, target, _ = _plugin_and_state([*_cluster(1, 1, shared=False), allocated], _pod("p", "c"))
    assert plugin.filter_key(state, target) is None
    named = {**CLASS, "metadata": {"name": "named"},
             "spec": {**CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    extended = _pod("e", "c")
    extended["spec"]["resourceClaims"] = []
    extended["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    extended["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}  # as required
    plugin, state, target, _ = _plugin_and_state([*_cluster(1, 1, shared=False), named], extended)
    assert plugin.filter_key(state, target) is None
    assert plugin.filter(state, target, NodeInfo.of(make_node("n0"))).is_success


def test_a_shared_pool_changes_every_node() -> None:
    scheduler = kschedlib.Scheduler(seed=1)
    scheduler.add_objects(_load(_cluster(2, 1, shared=True)))
    plugin = scheduler.plugin("DynamicResources")
    assert isinstance(plugin, DynamicResources)
    position, _ = plugin.node_state_changes(None)
    scheduler.add_objects(_load([_claim("x", 1, False, [("n1", "d0")])]))
    position, names = plugin.node_state_changes(position)
    assert names == {"n1"}
    scheduler.add_objects(_load([_claim("y", 1, False, [("rack", "d0")])]))
    assert plugin.node_state_changes(position)[1] is None


def test_allocations_remembered_on_a_copy_of_the_devices_are_not_taken_for_the_live_ones() -> None:
    """``explain`` works on a copy of the device state; a pool's use version there can equal a later one
    of the live store while other devices are in use. A pod scheduled after must get the live free GPU."""
    scheduler = kschedlib.Scheduler(seed=1, clock=kschedlib.FakeClock())
    scheduler.add_objects(_load([CLASS, _node("n0", "z0"), _slice("n0", 2, "a100", nodeName="n0")]))
    engine = scheduler._engine
    live = engine.store.dra
    live.pool_index()  # built by the first cycle with claims, and shared by copies
    engine.store.dra = live.copy()  # as Scheduler.explain does for a pod with claims
    scheduler.add_objects(_load([_claim("copy", 1, False, [("n0", "d0")])]))  # use version 1 on the copy
    probe = kschedlib.load_cluster([_pod("probe", "probe"), _claim("probe", 1, False)])
    engine.store.dra.add(next(o for o in probe.objects if not isinstance(o, kschedlib.Pod)))
    assert scheduler.feasible_nodes(probe.pods[0]) == ["n0"]  # remembers d1 for the one-GPU shape on the copy
    engine.store.dra = live
    scheduler.add_objects(_load([_claim("live", 1, False, [("n0", "d1")]), _claim("p", 1, False), _pod("p", "p")]))
    assert [(r.pod.name, r.node_name) for r in scheduler.run_until_idle()] == [("p", "n0")]
    allocation = scheduler.devices.claims["default/p"].allocation
    assert allocation is not None
    assert [d.device for d in allocation.devices] == ["d0"]
