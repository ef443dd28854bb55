"""The whole pod lifecycle under random interleavings (issue 4's stateful test).

A Hypothesis ``RuleBasedStateMachine`` drives :class:`kschedlib.Scheduler` on a
:class:`~kschedlib.FakeClock` with node and pod events, scheduling cycles,
clock advances, Permit allow/reject through the handle (a test Permit plugin
makes some pods wait) and a Bind plugin that fails for some pods.  After every
step it checks:

- no node holds more than its allocatable (for nodes where only the scheduler
  placed pods and the allocatable did not shrink under them);
- every known pod is in exactly one place: a queue (active, backoff,
  unschedulable, gated), waiting in Permit, bound, or gone;
- the snapshot equals a from-scratch rebuild from the cache's pods;
- nothing the listener was told conflicts with the cache, and the attempt
  counters match what the listener was told.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kschedlib import FakeClock, Scheduler, ScheduleResult
from kschedlib.framework import (
    BindPlugin,
    CycleState,
    Handle,
    NodeInfo,
    PermitPlugin,
    PodInfo,
    Registry,
    Status,
    Wait,
)
from kschedlib.model import Node, Pod, Resources, Taint
from kschedlib.model.objects import NO_SCHEDULE
from kschedlib.plugins import in_tree_registry
from tests.helpers import Recorder, make_node, make_pod
from tests.whatif.test_explain_changes_nothing import state as scheduler_state

NODE_NAMES = ("n1", "n2", "n3")
PERMIT_TIMEOUT = 4.0
PROFILE = "default-scheduler"


# --- test plugins --------------------------------------------------------------------------------


class TestPermit(PermitPlugin):
    """``permit=wait`` pods wait (4 s), ``permit=deny`` pods are rejected, others pass."""

    __test__ = False
    name: ClassVar[str] = "TestPermit"

    def __init__(self, args: object, handle: Handle) -> None:
        self.handle = handle

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        verdict = pod.labels.get("permit", "")
        if verdict == "wait":
            return Wait(PERMIT_TIMEOUT)
        if verdict == "deny":
            return Status.unschedulable("denied by TestPermit")
        return Status.success()


class FlakyBind(BindPlugin):
    """Binds, except pods labelled ``bind=fail`` (an error status)."""

    name: ClassVar[str] = "FlakyBind"

    def __init__(self, args: object, handle: Handle) -> None:
        self.calls: list[str] = []

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.calls.append(pod.key)
        if pod.labels.get("bind") == "fail":
            return Status.from_error(f"bind of {pod.key} failed")
        return Status.success()


CONFIG: Mapping[str, Any] = {"profiles": [{"plugins": {
    "permit": {"enabled": [{"name": TestPermit.name}]},
    "bind": {"enabled": [{"name": FlakyBind.name}], "disabled": [{"name": "DefaultBinder"}]},
}}]}


def _node(name: str, cpu: str, pods: str, zone: str, tainted: bool, unschedulable: bool) -> Node:
    return make_node(
        name,
        labels={"kubernetes.io/hostname": name, "zone": zone},
        taints=(Taint("dedicated", NO_SCHEDULE, "x"),) if tainted else (),
        unschedulable=unschedulable,
        allocatable={"cpu": cpu, "memory": "4Gi", "pods": pods},
    )


def _fits(requested: Resources, pods: int, info: NodeInfo) -> bool:
    alloc = info.allocatable
    return (requested.milli_cpu <= alloc.milli_cpu and requested.memory <= alloc.memory
            and pods <= alloc.allowed_pod_number)


def _strip(resources: Resources) -> tuple[int, int, int, int, tuple[tuple[str, int], ...]]:
    return (resources.milli_cpu, resources.memory, resources.ephemeral_storage, resources.allowed_pod_number,
            tuple(sorted((k, v) for k, v in resources.scalar.items() if v)))


node_specs = st.fixed_dictionaries({
    "cpu": st.sampled_from(["1", "2", "4"]),
    "pods": st.sampled_from(["2", "110"]),
    "zone": st.sampled_from(["a", "b"]),
    "tainted": st.sampled_from([False, False, False, True]),
    "unschedulable": st.sampled_from([False, False, False, True]),
})
pod_labels = st.fixed_dictionaries({
    "permit": st.sampled_from(["", "", "wait", "wait", "deny"]),
    "bind": st.sampled_from(["", "", "", "fail"]),
})
cpus = st.sampled_from(["0", "250m", "500m", "1", "2"])


class LifecycleMachine(RuleBasedStateMachine):
    """Random node and pod events, cycles, ticks and Permit signals against the invariants.

    Subclasses may change the profile (:attr:`config`), the Permit and Bind plugins' classes and the
    other test plugins (:meth:`plugin_registry`).
    """

    config: ClassVar[Mapping[str, Any]] = CONFIG
    permit_class: ClassVar[type[TestPermit]] = TestPermit
    binder_class: ClassVar[type[FlakyBind]] = FlakyBind

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock(1000.0)
        self.listener = Recorder()
        self.permit: TestPermit | None = None
        self.binder: FlakyBind | None = None
        self.sched = Scheduler(dict(self.config), clock=self.clock,
                               registry=in_tree_registry().merge(self.plugin_registry()), listeners=[self.listener])
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, Pod] = {}
        """Known pods by key: the latest object the embedder knows (bound ones with their node)."""
        self.external: set[str] = set()
        """Pods added already bound by the embedder."""
        self.deleted: set[str] = set()
        self.overcommit_ok: set[str] = set()
        """Nodes whose requests may legitimately exceed allocatable (external pods, shrunk allocatable)."""
        self.counter = 0
        self.seen_events = 0
        self.victims: set[str] = set()
        self.preemptors: set[str] = set()
        """Pods held at PreEnqueue until the victims they named are evicted (asynchronous preemption)."""
        self.unreturned: dict[int, ScheduleResult] = {}
        """Notices whose result no call returned yet (kept alive so that ids stay unique)."""
        self.told: dict[str, tuple[str, ScheduleResult]] = {}
        """The last notice per pod key."""

    def plugin_registry(self) -> Registry:
        """The test plugins the profile names."""
        registry = Registry()
        registry.register(self.permit_class.name, self._make_permit)
        registry.register(self.binder_class.name, self._make_binder)
        return registry

    def _make_permit(self, args: object, handle: Handle) -> TestPermit:
        self.permit = self.permit_class(args, handle)
        return self.permit

    def _make_binder(self, args: object, handle: Handle) -> FlakyBind:
        self.binder = self.binder_class(args, handle)
        return self.binder

    def _absorb(self, results: list[ScheduleResult] | ScheduleResult | None = None) -> None:
        """Read the listener's new notices into the model (bound pods now carry their node)."""
        for kind, result in self.listener.events[self.seen_events:]:
            key = result.pod.key
            if kind != "preempting":
                self.unreturned[id(result)] = result
            if kind == "preempting":
                self.victims.update(result.victims)
                self.preemptors.add(key)
                continue
            self.told[key] = (kind, result)
            if kind == "bound" and key in self.pods:
                assert key not in self.deleted
                self.pods[key] = result.pod
                assert result.pod.node_name == result.node_name
        self.seen_events = len(self.listener.events)

    def _returned(self, results: list[ScheduleResult], *, drained: bool) -> None:
        """Every returned result was told to the listener; after a draining call, nothing told is unreturned."""
        for result in results:
            assert self.unreturned.pop(id(result), None) is result, f"{result.pod.key} returned but never told"
        if drained:
            assert not self.unreturned, f"told but never returned: {[r.pod.key for r in self.unreturned.values()]}"

    def _placement_fits(self) -> None:
        """Right after a cycle placed a pod, the node it chose is not over-committed."""
        for kind, result in self.listener.events[self.seen_events:]:
            if kind not in ("bound", "waiting") or result.node_name is None:
                continue
            info = self.sched.snapshot().find(result.node_name)
            if info is None or result.node_name in self.overcommit_ok:
                continue
            assert _fits(info.requested, len(info.pods), info), f"{result.pod.key} over-commits {result.node_name}"

    def _new_name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    @initialize(cpu=st.sampled_from(["2", "4"]), pods=st.lists(st.tuples(cpus, pod_labels), max_size=4))
    def start(self, cpu: str, pods: list[tuple[str, dict[str, str]]]) -> None:
        for name in NODE_NAMES[:2]:
            self.add_node(name, {"cpu": cpu, "pods": "110", "zone": "a", "tainted": False, "unschedulable": False})
        for pod_cpu, labels in pods:
            self.add_pending_pod(pod_cpu, labels, False, None)

    # --- node events -----------------------------------------------------------------------------

    @rule(name=st.sampled_from(NODE_NAMES), spec=node_specs)
    def add_node(self, name: str, spec: dict[str, Any]) -> None:
        node = _node(name, **spec)
        before = self.sched._engine.cache.node(name)
        if before is not None and before.pods:
            self.overcommit_ok.add(name)  # a re-added or changed node may be smaller than what it holds
        self.sched.add_node(node)
        self.nodes[name] = node

    @precondition(lambda self: self.nodes)
    @rule(data=st.data(), spec=node_specs)
    def update_node(self, data: st.DataObject, spec: dict[str, Any]) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        node = _node(name, **spec)
        old = self.nodes[name]
        if node.allocatable != old.allocatable:
            self.overcommit_ok.add(name)
        self.sched.update_node(node)
        self.nodes[name] = node

    @precondition(lambda self: self.nodes)
    @rule(data=st.data())
    def remove_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        self.sched.remove_node(name)
        del self.nodes[name]
        self._absorb()

    # --- pod events ------------------------------------------------------------------------------

    @rule(cpu=cpus, labels=pod_labels, gated=st.booleans(), priority=st.sampled_from([None, 0, 10]))
    def add_pending_pod(self, cpu: str, labels: dict[str, str], gated: bool, priority: int | None) -> None:
        name = self._new_name("p")
        pod = make_pod(name, requests={"cpu": cpu, "memory": "128Mi"}, labels=labels, priority=priority,
                       scheduling_gates=("example.com/gate",) if gated else ())
        self.sched.add_pod(pod)
        self.pods[pod.key] = pod

    @rule(node=st.sampled_from(NODE_NAMES), cpu=cpus)
    def add_bound_pod(self, node: str, cpu: str) -> None:
        name = self._new_name("b")
        pod = make_pod(name, requests={"cpu": cpu, "memory": "128Mi"}, node_name=node)
        self.sched.add_pod(pod)
        self.pods[pod.key] = pod
        self.external.add(pod.key)
        self.overcommit_ok.add(node)

    @precondition(lambda self: self.pods)
    @rule(data=st.data())
    def delete_pod(self, data: st.DataObject) -> None:
        self.delete_known(data.draw(st.sampled_from(sorted(self.pods))))

    def delete_known(self, key: str) -> None:
        assert self.sched.remove_pod(key)
        del self.pods[key]
        self.deleted.add(key)
        self.external.discard(key)
        self._absorb()

    @precondition(lambda self: any(not pod.node_name for pod in self.pods.values()))
    @rule(data=st.data(), node=st.sampled_from(NODE_NAMES))
    def bind_externally(self, data: st.DataObject, node: str) -> None:
        """The embedder binds a pending (maybe waiting) pod itself; the scheduler confirms it."""
        key = data.draw(st.sampled_from(sorted(k for k, pod in self.pods.items() if not pod.node_name)))
        bound = attrs.evolve(self.pods[key], node_name=node, scheduling_gates=())
        self.sched.update_pod(bound)
        self.pods[key] = bound
        self.external.add(key)
        self.overcommit_ok.add(node)
        self._absorb()
        self.told.pop(key, None)

    @precondition(lambda self: self.victims)
    @rule()
    def evict_victims(self) -> None:
        """The embedder evicts the victims preemption asked for."""
        for key in sorted(self.victims):
            if key in self.pods:
                self.delete_known(key)
        self.victims.clear()
        self.preemptors.clear()

    @rule(key=st.sampled_from(["default/gone1", "default/p0"]))
    def delete_unknown_pod(self, key: str) -> None:
        if key not in self.pods:
            assert not self.sched.remove_pod(key)

    @precondition(lambda self: self.pods)
    @rule(data=st.data(), labels=pod_labels, ungate=st.booleans())
    def update_pod(self, data: st.DataObject, labels: dict[str, str], ungate: bool) -> None:
        key = data.draw(st.sampled_from(sorted(self.pods)))
        old = self.pods[key]
        new = attrs.evolve(old, labels=labels, scheduling_gates=() if ungate else old.scheduling_gates)
        self.sched.update_pod(new)
        self.pods[key] = new
        self._absorb()

    # --- scheduling ------------------------------------------------------------------------------

    @rule()
    def schedule_one(self) -> None:
        result = self.sched.schedule_one()
        self._placement_fits()
        self._absorb()
        self._returned([result] if result is not None else [], drained=False)
        if result is not None:
            assert result.pod.key in self.pods
            assert result.pod.key not in self.deleted

    @rule()
    def run_until_idle(self) -> None:
        results = self.sched.run_until_idle()
        self._placement_fits()
        self._absorb()
        self._returned(results, drained=True)
        assert not any(where == "active" for where, _ in self.sched.pending().values())

    @rule(seconds=st.sampled_from([0.5, 1.0, 2.0, 4.0, 11.0, 301.0]))
    def advance_clock_and_tick(self, seconds: float) -> None:
        self.clock.advance(seconds)
        results = self.sched.tick()
        self._absorb()
        self._returned(results, drained=True)

    @precondition(lambda self: self.sched.waiting_pods())
    @rule(data=st.data(), allow=st.booleans())
    def permit_signal(self, data: st.DataObject, allow: bool) -> None:
        assert self.permit is not None
        waiting = list(self.permit.handle.iterate_waiting_pods())
        if not waiting:
            return
        target = data.draw(st.sampled_from(sorted(waiting, key=lambda w: w.pod.key)))
        assert self.permit.handle.get_waiting_pod(target.pod.uid) is target
        if allow:
            target.allow(TestPermit.name)
        else:
            target.reject(TestPermit.name, "rejected by the test")

    @rule(data=st.data(), cpu=cpus, labels=pod_labels, priority=st.sampled_from([0, 1000]), feasible=st.booleans())
    def explain_changes_nothing(self, data: st.DataObject, cpu: str, labels: dict[str, str], priority: int,
                                feasible: bool) -> None:
        """A what-if answer for a known pod (queued, waiting, bound) or a new one -- maybe one that would
        preempt pods waiting in Permit -- leaves every state as it was."""
        known = sorted(self.pods)
        key = data.draw(st.sampled_from([*known, ""]))
        pod = self.pods[key] if key else make_pod(self._new_name("whatif"), requests={"cpu": cpu}, labels=labels,
                                                   priority=priority)
        before, told = scheduler_state(self.sched), len(self.listener.events)
        if feasible:
            self.sched.feasible_nodes(pod)
        else:
            self.sched.explain(pod)
        assert scheduler_state(self.sched) == before
        assert len(self.listener.events) == told  # nobody is told of a what-if cycle

    # --- invariants ------------------------------------------------------------------------------

    def _places(self) -> dict[str, list[str]]:
        places: dict[str, list[str]] = {}
        for key, (where, _info) in self.sched.pending().items():
            places.setdefault(key, []).append(where)
        waiting = set(self.sched.waiting_pods())
        for key in waiting:
            places.setdefault(key, []).append("waiting")
        for state in self.sched._engine.cache.pods():
            key = state.pod_info.pod.key
            if key in waiting:
                assert state.assumed, f"{key} waits in Permit but is not assumed"
                continue
            places.setdefault(key, []).append("binding" if state.assumed else "bound")
        return places

    @invariant()
    def every_pod_is_in_exactly_one_place(self) -> None:
        places = self._places()
        for key in places:
            assert key in self.pods, f"{key} is in {places[key]} but the embedder does not know it"
        for key, pod in self.pods.items():
            where = places.get(key, [])
            assert len(where) == 1, f"{key} is in {where or 'no place'}"
            if where[0] in ("bound", "binding") or key in self.external:
                continue
            if pod.scheduling_gates:
                assert where[0] == "gated", f"gated {key} is {where[0]}"
            elif key not in self.preemptors:
                assert where[0] != "gated", f"ungated {key} is still gated"
        for key in self.deleted:
            assert key not in places, f"deleted {key} is still in {places[key]}"

    @invariant()
    def no_scheduler_placed_node_is_over_committed(self) -> None:
        for info in self.sched.snapshot():
            if info.name in self.overcommit_ok:
                continue
            assert _fits(info.requested, len(info.pods), info), (
                f"{info.name}: {info.requested} for {len(info.pods)} pods exceeds {info.allocatable}")

    @invariant()
    def snapshot_equals_a_rebuild_from_the_cache(self) -> None:
        snapshot = self.sched.snapshot()
        names = [info.name for info in snapshot]
        assert names == self.sched.node_names()
        assert sorted(names) == sorted(self.nodes)
        by_node: dict[str, list[PodInfo]] = {}
        for state in self.sched._engine.cache.pods():
            by_node.setdefault(state.pod_info.pod.node_name, []).append(state.pod_info)
        for info in snapshot:
            fresh = NodeInfo.of(self.nodes[info.name], tuple(by_node.get(info.name, ())))
            assert info.node == self.nodes[info.name]
            assert Counter(p.pod.uid for p in info.pods) == Counter(p.pod.uid for p in fresh.pods)
            assert _strip(info.requested) == _strip(fresh.requested)
            assert _strip(info.non_zero_requested) == _strip(fresh.non_zero_requested)
            assert _strip(info.allocatable) == _strip(fresh.allocatable)
            assert info.used_ports == fresh.used_ports
        for state in self.sched._engine.cache.pods():  # pods on removed nodes stay counted as ghosts
            node = state.pod_info.pod.node_name
            ghost = self.sched._engine.cache.node(node)
            assert ghost is not None
            assert ghost.has_pod(state.pod_info.pod.uid)

    @invariant()
    def the_listener_agrees_with_the_cache(self) -> None:
        bound = self.sched.bound_pods()
        assumed = {s.pod_info.pod.key for s in self.sched._engine.cache.pods() if s.assumed}
        for key, (kind, result) in self.told.items():
            if key in self.deleted:
                assert key not in bound
                continue
            if kind == "bound":
                assert bound.get(key) == result.node_name, f"{key} was reported bound on {result.node_name}"
                assert key not in assumed
            elif kind == "waiting":
                assert key in self.sched.waiting_pods() or key not in bound, f"{key} waiting but {bound.get(key)}"
            elif kind == "failed":
                assert key not in bound, f"{key} was reported failed but the cache holds it"
        for key in bound:
            if key in self.external or key in assumed:
                continue
            assert self.told.get(key, ("", None))[0] == "bound", f"{key} is bound but nobody was told"

    @invariant()
    def attempt_counters_match_the_notices(self) -> None:
        metrics = self.sched.metrics
        kinds = Counter(kind for kind, _ in self.listener.events)
        errors = sum(1 for kind, r in self.listener.events if kind == "failed" and r.status.code.label == "Error")
        assert metrics.counter("scheduler_schedule_attempts_total", result="scheduled", profile=PROFILE) == \
            kinds["bound"]
        assert metrics.counter("scheduler_schedule_attempts_total", result="error", profile=PROFILE) == errors
        assert metrics.counter("scheduler_schedule_attempts_total", result="unschedulable", profile=PROFILE) == \
            kinds["failed"] - errors

    @invariant()
    def next_wakeup_is_in_the_future_or_due(self) -> None:
        wakeup = self.sched.next_wakeup()
        backoff = any(where == "backoff" for where, _ in self.sched.pending().values())
        if backoff:
            assert wakeup is not None


LifecycleMachine.TestCase.settings = settings(max_examples=120, stateful_step_count=40, deadline=None)
TestLifecycle = LifecycleMachine.TestCase


# --- targeted lifecycle checks -------------------------------------------------------------------


def _single_node_scheduler() -> tuple[Scheduler, FakeClock, list[TestPermit]]:
    clock = FakeClock()
    permits: list[TestPermit] = []

    def make_permit(args: object, handle: Handle) -> TestPermit:
        permits.append(TestPermit(args, handle))
        return permits[-1]

    registry = Registry()
    registry.register(TestPermit.name, make_permit)
    registry.register(FlakyBind.name, FlakyBind)
    sched = Scheduler(dict(CONFIG), clock=clock, registry=in_tree_registry().merge(registry))
    sched.add_node(_node("n1", "4", "110", "a", False, False))
    return sched, clock, permits


def test_a_waiting_pod_is_bound_once_allowed_and_counted_while_it_waits() -> None:
    sched, _clock, (permit,) = _single_node_scheduler()
    sched.add_pod(make_pod("w", labels={"permit": "wait"}, requests={"cpu": "3"}))
    sched.add_pod(make_pod("x", requests={"cpu": "2"}))
    results = sched.run_until_idle()
    assert [(r.pod.name, r.status.code.label) for r in results] == [("w", "Wait"), ("x", "Unschedulable")]
    assert sched.snapshot().get("n1").requested.milli_cpu == 3000
    (waiting,) = permit.handle.iterate_waiting_pods()
    waiting.allow(TestPermit.name)
    (bound,) = sched.tick()
    assert bound.scheduled
    assert sched.bound_pods() == {"default/w": "n1"}
    assert sched.cache_dump()["assumed"] == []


def test_an_update_sent_while_a_pod_waits_survives_its_binding() -> None:
    sched, _clock, (permit,) = _single_node_scheduler()
    pod = make_pod("w", labels={"permit": "wait", "version": "1"}, requests={"cpu": "1"})
    sched.add_pod(pod)
    sched.run_until_idle()
    sched.update_pod(attrs.evolve(pod, labels={"permit": "wait", "version": "2"}))
    (waiting,) = permit.handle.iterate_waiting_pods()
    waiting.allow(TestPermit.name)
    (bound,) = sched.tick()
    assert bound.scheduled
    assert permit.handle.get_pod("default", "w") is not None
    (cached,) = sched.snapshot().get("n1").pods
    assert cached.pod.labels["version"] == "2"
    assert permit.handle.get_pod("default", "w").labels["version"] == "2"  # type: ignore[union-attr]
