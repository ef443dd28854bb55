"""The Scheduler as a long-running host under chaos (issue 11, "What must hold afterwards").

:class:`HostMachine` extends the lifecycle machine of ``tests/internal/test_lifecycle.py`` (node
and pod events, cycles, a FakeClock, Permit allow/reject/timeout, failing binds) with what a host
meets over days: more nodes joining and leaving, cordons and capacity changes, pods updated with a
new uid, uid reuse, wrong arguments, Permit plugins that error, Bind plugins that raise, and chaos
Filter/Score plugins that raise or return the wrong type.  After every step, through the public
API: nothing escapes, no pod is lost or bound twice, nothing is over-committed, and ``pending()``,
``waiting_pods()``, ``bound_pods()``, ``nominations()`` and ``cache_dump()`` agree with the model.

``benchmarks/soak.py`` runs the same machine for hundreds of thousands of steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule

from kschedlib import CacheError, ModelError
from kschedlib.framework import (
    CycleState,
    FilterPlugin,
    NodeInfo,
    Registry,
    ScorePlugin,
    Status,
    Wait,
)
from kschedlib.model import Node, Pod
from tests.helpers import make_pod
from tests.internal.test_lifecycle import FlakyBind, LifecycleMachine, TestPermit, cpus
from tests.internal.test_refused_calls import observed

ENGINE_FIXES_MERGED = True
"""Chaos the engine only survives with issue 11's engine fixes (start index modulo the node count,
plugin return values checked, the unschedulable flush due at its time).  Off, those rules stay out:
node removals keep the node count above the rotating start index, no plugin returns a wrong type,
and the host loop is not required to make progress past a due flush."""
WRONG_TYPES = ENGINE_FIXES_MERGED
"""Plugins may return None, a bool, a string or 3.7 (issue 11, defect 4)."""
REMOVE_BELOW_START_INDEX = ENGINE_FIXES_MERGED
"""Nodes may be removed until fewer remain than the rotating start index (defect 1)."""
LOOP_MUST_ADVANCE = ENGINE_FIXES_MERGED
"""After ``tick()``, ``next_wakeup()`` lies in the future (defect 2)."""

NODE_NAMES = tuple(f"n{i}" for i in range(1, 7))
WRONG_RETURNS = ("none", "true", "text", "float")


# --- chaos plugins: each pod says through its labels how they treat it ----------------------------


def _wrong(kind: str) -> object:
    return {"none": None, "true": True, "text": "no", "float": 3.7}[kind]


class ChaosFilter(FilterPlugin):
    """``filter=reject`` rejects even-numbered nodes, ``raise`` raises, the wrong-return kinds return them."""

    name: ClassVar[str] = "ChaosFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        verdict = pod.labels.get("filter", "")
        if verdict == "reject" and node_info.name[-1] in "246":
            return Status.unschedulable("rejected by ChaosFilter")
        if verdict == "raise":
            raise RuntimeError(f"ChaosFilter broke on {node_info.name}")
        if verdict in WRONG_RETURNS:
            return _wrong(verdict)  # type: ignore[return-value]
        return Status.success()


class ChaosScore(ScorePlugin):
    """Scores by node name; ``score=raise`` raises, the wrong-return kinds return them."""

    name: ClassVar[str] = "ChaosScore"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        verdict = pod.labels.get("score", "")
        if verdict == "raise":
            raise RuntimeError(f"ChaosScore broke on {node_info.name}")
        if verdict in WRONG_RETURNS:
            return _wrong(verdict)  # type: ignore[return-value]
        return 10 * int(node_info.name[1:])


class ChaosPermit(TestPermit):
    """TestPermit, plus ``permit=error`` (an error status) and the wrong-return kinds."""

    __test__ = False

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        verdict = pod.labels.get("permit", "")
        if verdict == "error":
            return Status.from_error("ChaosPermit failed")
        if verdict in WRONG_RETURNS:
            return _wrong(verdict)  # type: ignore[return-value]
        return super().permit(state, pod, node_name)


class ChaosBind(FlakyBind):
    """FlakyBind, plus ``bind=raise`` and the wrong-return kinds."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        verdict = pod.labels.get("bind", "")
        if verdict == "raise":
            raise RuntimeError(f"ChaosBind broke on {node_name}")
        if verdict in WRONG_RETURNS:
            self.calls.append(pod.key)
            return _wrong(verdict)  # type: ignore[return-value]
        return super().bind(state, pod, node_name)


CHAOS_CONFIG: Mapping[str, Any] = {"profiles": [{"plugins": {
    "filter": {"enabled": [{"name": ChaosFilter.name}]},
    "score": {"enabled": [{"name": ChaosScore.name, "weight": 1}]},
    "permit": {"enabled": [{"name": ChaosPermit.name}]},
    "bind": {"enabled": [{"name": ChaosBind.name}], "disabled": [{"name": "DefaultBinder"}]},
}}]}


def _choices(safe: list[str], wrong: tuple[str, ...]) -> st.SearchStrategy[str]:
    return st.sampled_from(safe + list(wrong) if WRONG_TYPES else safe)


chaos_labels = st.fixed_dictionaries({
    "permit": _choices(["", "", "", "wait", "wait", "deny", "error"], ("none", "true")),
    "bind": _choices(["", "", "", "", "fail", "raise"], ("none", "true")),
    "filter": _choices(["", "", "", "", "reject", "raise"], WRONG_RETURNS[:3]),
    "score": _choices(["", "", "", "", "raise"], WRONG_RETURNS),
})
node_specs = st.fixed_dictionaries({
    "cpu": st.sampled_from(["1", "2", "4"]),
    "pods": st.sampled_from(["2", "110"]),
    "zone": st.sampled_from(["a", "b"]),
    "tainted": st.sampled_from([False, False, False, True]),
    "unschedulable": st.sampled_from([False, False, False, True]),
})


class HostMachine(LifecycleMachine):
    """The lifecycle machine with more nodes, chaos plugins, uid changes and refused calls."""

    config: ClassVar[Mapping[str, Any]] = CHAOS_CONFIG
    permit_class: ClassVar[type[TestPermit]] = ChaosPermit
    binder_class: ClassVar[type[FlakyBind]] = ChaosBind
    steps = 0
    """Steps run by every instance so far (the soak script reports it)."""

    def plugin_registry(self) -> Registry:
        registry = super().plugin_registry()
        registry.register(ChaosFilter.name, lambda args, handle: ChaosFilter())
        registry.register(ChaosScore.name, lambda args, handle: ChaosScore())
        return registry

    # --- nodes: six names, removals, cordons, capacity ---------------------------------------------

    @rule(name=st.sampled_from(NODE_NAMES), spec=node_specs)
    def add_node(self, name: str, spec: dict[str, Any]) -> None:
        super().add_node(name, spec)

    def _removable(self) -> list[str]:
        """Known nodes; without the engine fixes only while the rest outnumber the rotating start index."""
        if not REMOVE_BELOW_START_INDEX and len(self.nodes) - 1 <= self.sched._engine.next_start_index:
            return []
        return sorted(self.nodes)

    @precondition(lambda self: self._removable())
    @rule(data=st.data())
    def remove_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self._removable()))
        self.sched.remove_node(name)
        del self.nodes[name]
        self._absorb()

    @rule(name=st.sampled_from(["n0", "n9", *NODE_NAMES]))
    def remove_unknown_node(self, name: str) -> None:
        if name in self.nodes:
            return
        before = observed(self.sched)
        with pytest.raises(CacheError):
            self.sched.remove_node(name)
        assert observed(self.sched) == before

    @precondition(lambda self: self.nodes)
    @rule(data=st.data())
    def cordon_or_uncordon(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        node = attrs.evolve(self.nodes[name], unschedulable=not self.nodes[name].unschedulable)
        self.sched.update_node(node)
        self.nodes[name] = node
        self._absorb()

    @precondition(lambda self: self.nodes)
    @rule(data=st.data(), cpu=st.sampled_from(["1", "2", "4", "8"]))
    def change_capacity(self, data: st.DataObject, cpu: str) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        old = self.nodes[name]
        allocatable = {**old.allocatable, "cpu": cpu}
        node = Node(name, labels=old.labels, taints=old.taints, unschedulable=old.unschedulable,
                    allocatable=allocatable, capacity=allocatable)  # type: ignore[arg-type]
        if node.allocatable["cpu"] < old.allocatable["cpu"]:
            self.overcommit_ok.add(name)
        self.sched.update_node(node)
        self.nodes[name] = node
        self._absorb()

    # --- pods: chaos labels, uid changes and reuse, wrong arguments ---------------------------------

    @rule(cpu=cpus, labels=chaos_labels, gated=st.booleans(), priority=st.sampled_from([None, 0, 10]))
    def add_pending_pod(self, cpu: str, labels: dict[str, str], gated: bool, priority: int | None) -> None:
        super().add_pending_pod(cpu, labels, gated, priority)

    @rule(node=st.sampled_from(NODE_NAMES), cpu=cpus)
    def add_bound_pod(self, node: str, cpu: str) -> None:
        super().add_bound_pod(node, cpu)

    @precondition(lambda self: self.pods)
    @rule(data=st.data())
    def reuse_a_uid(self, data: st.DataObject) -> None:
        """A new pod carrying a known pod's uid is refused; removing it then touches nothing."""
        owner = self.pods[data.draw(st.sampled_from(sorted(self.pods)))]
        thief = make_pod(self._new_name("t"), uid=owner.uid, node_name=data.draw(st.sampled_from(["", "n1"])))
        before = observed(self.sched)
        with pytest.raises(CacheError, match="belongs to pod"):
            self.sched.add_pod(thief)
        assert observed(self.sched) == before
        assert self.sched.remove_pod(thief.key) is False
        assert observed(self.sched) == before

    @precondition(lambda self: self.pods)
    @rule(data=st.data(), cpu=cpus, labels=chaos_labels)
    def replace_with_a_new_uid(self, data: st.DataObject, cpu: str, labels: dict[str, str]) -> None:
        """An update with a new uid is a new pod under the old name (delete + add)."""
        key = data.draw(st.sampled_from(sorted(self.pods)))
        old = self.pods[key]
        new = make_pod(old.name, uid=self._new_name("uid-"), requests={"cpu": cpu, "memory": "128Mi"},
                       labels=labels, node_name=old.node_name)
        self.sched.update_pod(new)
        self.pods[key] = new
        self.told.pop(key, None)
        if new.node_name:
            self.external.add(key)
            self.overcommit_ok.add(new.node_name)
        else:
            self.external.discard(key)
        self._absorb()

    @precondition(lambda self: len(self.pods) >= 2)
    @rule(data=st.data())
    def change_uid_onto_another_pods(self, data: st.DataObject) -> None:
        first, second = data.draw(st.lists(st.sampled_from(sorted(self.pods)), min_size=2, max_size=2,
                                           unique=True))
        before = observed(self.sched)
        with pytest.raises(CacheError, match="belongs to pod"):
            self.sched.update_pod(attrs.evolve(self.pods[first], uid=self.pods[second].uid))
        assert observed(self.sched) == before

    @rule(call=st.sampled_from(["add_pod", "update_pod", "add_node", "update_node", "remove_pod"]),
          value=st.sampled_from([None, "default/p1", {"name": "x"}, 3.7]))
    def wrong_argument(self, call: str, value: object) -> None:
        if call == "remove_pod" and isinstance(value, str):
            return  # a key is a valid argument
        before = observed(self.sched)
        with pytest.raises(ModelError):
            getattr(self.sched, call)(value)
        assert observed(self.sched) == before

    # --- time: the documented host loop --------------------------------------------------------------

    @rule()
    def host_loop_turn(self) -> None:
        """docs/how-to/long-running-host.md: schedule until idle, tick, sleep until the next wake-up."""
        results = self.sched.run_until_idle()
        self._placement_fits()
        self._absorb()
        self._returned(results, drained=True)
        self._returned(self.sched.tick(), drained=False)
        self._absorb()
        wakeup = self.sched.next_wakeup()
        if wakeup is not None:
            if LOOP_MUST_ADVANCE:
                assert wakeup > self.clock.now(), f"tick() left {wakeup} due at {self.clock.now()}"
            self.clock.set(max(wakeup, self.clock.now()))
        results = self.sched.tick()
        self._absorb()
        self._returned(results, drained=True)

    # --- invariants through the public API -----------------------------------------------------------

    @invariant()
    def count_step(self) -> None:
        HostMachine.steps += 1

    @invariant()
    def no_pod_is_lost_and_none_is_bound_twice(self) -> None:
        pending = self.sched.pending()
        waiting = set(self.sched.waiting_pods())
        bound = self.sched.bound_pods()
        placed = [*pending, *waiting, *(key for key in bound if key not in waiting)]
        assert Counter(placed) == Counter(list(self.pods)), "a pod is lost, unknown, or in two places"
        dumped = [key for pods in self.sched.cache_dump()["nodes"].values() for key in pods]  # type: ignore[attr-defined]
        assert Counter(dumped) == Counter(list(bound)), "cache_dump() and bound_pods() disagree"
        uids = Counter(state.pod_info.pod.uid for state in self.sched._engine.cache.pods())
        assert all(count == 1 for count in uids.values())

    @invariant()
    def the_public_views_agree_with_the_model(self) -> None:
        dump = self.sched.cache_dump()
        bound = self.sched.bound_pods()
        waiting = set(self.sched.waiting_pods())
        assert set(dump["assumed"]) == waiting  # type: ignore[call-overload]
        for node, keys in dump["nodes"].items():  # type: ignore[attr-defined]
            assert node in self.nodes or keys, f"{node} is neither known nor holding pods"
            for key in keys:
                assert bound[key] == node
        for key in self.external:
            assert bound.get(key) == self.pods[key].node_name, f"{key} was added bound elsewhere"
        for key in waiting:
            assert self.told.get(key, ("", None))[0] == "waiting", f"{key} waits but nobody was told"
        pending = self.sched.pending()
        for key, node in self.sched.nominations().items():
            assert key in pending, f"{key} is nominated to {node} but not queued"
            if key not in self.preemptors:  # a preemptor waits gated, nominated, for its victims to go
                assert pending[key][0] != "gated", f"{key} is nominated to {node} but gated"
        for key, (where, info) in pending.items():
            assert info.pod.uid == self.pods[key].uid, f"{key} is queued with a stale uid"
            if key in self.external:
                continue
            if self.pods[key].scheduling_gates:
                assert where == "gated", f"gated {key} is {where}"
            elif where == "gated":  # only a preemptor waits gated without gates, for its victims to go
                assert key in self.preemptors, f"ungated {key} is gated"


HostMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=60, deadline=None)
TestLongRunningHost = HostMachine.TestCase
