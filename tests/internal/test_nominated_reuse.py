"""The two-pass rule on composed NodeInfos kept across cycles decides as composing them afresh.

``filter_with_nominated`` given ``composed`` (no PreFilter extension listens, verdicts memoized per
NodeInfo) judges a node with its nominated pods on the NodeInfo composed the last time the node and
its nominated pods were the same.  This property changes the node's pods and the nominations step by
step and compares every verdict with the plain path (a state clone, a fresh NodeInfo, no memo).
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib._internal import cycle
from kschedlib._internal.cycle import filter_with_nominated
from kschedlib._internal.nominator import Nominator
from kschedlib.framework import CycleState, NodeInfo, PodInfo, Snapshot, Status
from tests.helpers import make_node, make_pod

_NODE = make_node("n0", allocatable={"cpu": "3", "memory": "8Gi", "pods": "4"})
_LOWS = [make_pod(f"low{i}", node_name="n0", requests={"cpu": f"{300 + 400 * i}m"}, priority=0) for i in range(4)]
_NOMINATED = [PodInfo.of(make_pod(f"nom{i}", requests={"cpu": f"{500 + 500 * i}m"}, priority=3 + i % 3))
              for i in range(4)]
_STEPS = st.lists(st.tuples(st.sets(st.integers(0, 3)), st.lists(st.integers(0, 3), unique=True)),
                  min_size=1, max_size=8)


def _verdicts(steps: list[tuple[set[int], list[int]]], cpu: str, reuse: bool) -> list[tuple[str, tuple[str, ...]]]:
    runtime = kschedlib.Scheduler()._engine.profiles["default-scheduler"]
    pod = make_pod("p", requests={"cpu": cpu}, priority=4)
    state = CycleState()
    assert runtime.run_pre_filter(state, pod).status.is_success
    plan = runtime.reuse.filter_plan(state, pod)
    run = runtime.filter_runner(state, pod, plan) if reuse else runtime.filter_runner(state)
    composed = runtime.reuse.nominated_infos(run, runtime.pre_filter_extensions_listen(state)) if reuse else None
    assert (composed is not None) is reuse
    out = []
    infos: dict[frozenset[int], NodeInfo] = {}  # one NodeInfo per set of pods, as an unchanged node keeps its own
    for lows, nominated in steps:
        pods = tuple(PodInfo.of(_LOWS[i]) for i in sorted(lows))
        node_info = infos.setdefault(frozenset(lows), NodeInfo.of(_NODE, pods))
        nominator = Nominator()
        for i in nominated:
            nominator.add(_NOMINATED[i], "n0")
        status: Status = filter_with_nominated(runtime, run, state, pod, node_info, nominator, composed)
        out.append((status.code.label, status.reasons))
        again = filter_with_nominated(runtime, run, state, pod, node_info, nominator, composed)
        assert (again.code, again.reasons) == (status.code, status.reasons)
    return out


@settings(max_examples=60)
@given(_STEPS, st.sampled_from(["200m", "700m", "1500m"]))
def test_composed_node_infos_decide_as_composing_afresh(steps: list[tuple[set[int], list[int]]], cpu: str) -> None:
    assert _verdicts(steps, cpu, reuse=True) == _verdicts(steps, cpu, reuse=False)


def test_a_node_changed_under_the_same_nominations_is_composed_again() -> None:
    steps = [({0, 1, 2, 3}, [1]), (set(), [1])]  # full, then emptied: the same nominated pod on both
    assert _verdicts(steps, "700m", reuse=True) == _verdicts(steps, "700m", reuse=False)
    assert [code for code, _ in _verdicts(steps, "700m", reuse=True)] == ["Unschedulable", "Success"]


_PRIORITIES = st.integers(2, 6)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 4), _PRIORITIES, st.booleans()), max_size=8), _PRIORITIES,
       st.sampled_from(["200m", "700m", "1500m"]), st.booleans())
def test_nominated_positions_judge_as_the_two_pass_rule(
    nominations: list[tuple[int, int, bool]], priority: int, cpu: str, reuse: bool,
) -> None:
    """The search's nominated positions, with the counted pods worked out once per cycle, are exactly
    the nodes where the two-pass rule counts a pod, and judge each as ``filter_with_nominated`` does."""
    runtime = kschedlib.Scheduler()._engine.profiles["default-scheduler"]
    pod = make_pod("p", requests={"cpu": cpu}, priority=priority)
    state = CycleState()
    assert runtime.run_pre_filter(state, pod).status.is_success
    plan = runtime.reuse.filter_plan(state, pod)
    run = runtime.filter_runner(state, pod, plan) if reuse else runtime.filter_runner(state)
    composed = runtime.reuse.nominated_infos(run, runtime.pre_filter_extensions_listen(state)) if reuse else None
    nodes = [NodeInfo.of(make_node(f"n{i}", allocatable={"cpu": "3", "memory": "8Gi", "pods": "4"}),
                         (PodInfo.of(_LOWS[i % 4]),)) for i in range(4)]  # n4 is not in the snapshot
    snapshot = Snapshot(nodes)
    nominator = Nominator()
    for i, (node, nominated_priority, itself) in enumerate(nominations):
        nominee = pod if itself else make_pod(f"nom{i}", requests={"cpu": "1"}, priority=nominated_priority)
        nominator.add(PodInfo.of(nominee), f"n{node}")

    special = cycle._nominated_positions(runtime, run, state, pod, snapshot, nominator, composed)
    counted = {p for p, info in enumerate(nodes)
               if any(i.pod.effective_priority >= priority and i.pod.uid != pod.uid
                      for i in nominator.pods_for_node(info.name))}
    assert set(special) == counted
    for position, info in enumerate(nodes):
        plain = filter_with_nominated(runtime, run, state, pod, info, nominator, composed)
        got = special[position](info) if position in special else run(state, pod, info)
        assert (got.code, got.reasons, got.plugin) == (plain.code, plain.reasons, plain.plugin)


_PODS = [PodInfo.of(make_pod(f"q{i}", priority=2 + i % 4)) for i in range(6)]
_OPS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 5), st.sampled_from(["", "n0", "n1", "n2"])),
    st.tuples(st.just("remove"), st.integers(0, 5), st.just("")),
    st.tuples(st.just("ask"), st.sampled_from([2, 4]), st.sampled_from(["default/q0", "default/q3", "default/x"])),
    st.tuples(st.just("exchange"), st.just(0), st.just("")),
), max_size=25)


@settings(max_examples=150)
@given(_OPS)
@example([("add", 0, "n0"), ("ask", 2, "default/x"), ("add", 1, "n0"), ("ask", 2, "default/x")])
def test_counted_nominated_pods_are_those_sorted_out_afresh(ops: list[tuple[str, int, str]]) -> None:
    """``Nominator.counted`` (pods of at least a priority kept per node while its tuple stands) gives
    every node's pods of at least the priority but the asking pod, as sorting them out afresh does."""
    nominator, other = Nominator(), Nominator()
    for op, number, text in ops:
        if op == "add":
            nominator.add(_PODS[number], text)
        elif op == "remove":
            nominator.remove(_PODS[number].pod.uid)
        elif op == "exchange":
            nominator.exchange(other)
        else:
            plain = [(name, tuple(i for i in nominator.pods_for_node(name)
                                  if i.pod.effective_priority >= number and i.pod.uid != text))
                     for name in nominator.node_names()]
            assert nominator.counted(number, text) == [(name, pods) for name, pods in plain if pods]
