"""Reused dry-run answers and composed nominated NodeInfos decide exactly as working everything out again.

``VictimsMemo`` hands a preemptor the dry-run answer an earlier preemptor got on a node when the node,
the nominated pods counted there, the priority, the filter key and the budgets are the same;
``NominatedNodeInfos`` hands the node search the same NodeInfo-with-nominated-pods while the node and
its nominations are the same.  These properties run whole preemption sequences (the host evicting the
victims, or not, budgets changing midway) with both tricks and with both turned off.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib._internal.reuse.fast_path import Reuse
from kschedlib._internal.reuse.nominated import NominatedNodeInfos
from kschedlib.framework import Handle, NodeInfo, PodInfo
from kschedlib.model import LabelSelector, Pod
from kschedlib.model.objects import PodDisruptionBudget
from kschedlib.plugins import default_preemption
from kschedlib.plugins._helpers import preemption_reuse
from kschedlib.plugins._helpers.preemption_reuse import VictimsMemo
from kschedlib.plugins._helpers.preemption_victims import budgets_of
from kschedlib.plugins.default_preemption import Candidate
from kschedlib.testing import FakeClock
from tests.helpers import make_node, make_pod

_APPS = ("a", "b", "c")


@contextmanager
def _plain() -> Iterator[None]:
    """Every dry run worked out afresh, every nominated NodeInfo composed afresh."""
    table, infos = VictimsMemo.table, Reuse.nominated_infos
    VictimsMemo.table = lambda self, *args: None  # type: ignore[method-assign]
    Reuse.nominated_infos = lambda self, run, listening: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        VictimsMemo.table = table  # type: ignore[method-assign]
        Reuse.nominated_infos = infos  # type: ignore[method-assign]


@contextmanager
def _counting(calls: list[int]) -> Iterator[None]:
    """Count the dry runs actually worked out (not answered from the memo)."""
    select = preemption_reuse.select_victims_on_node  # type: ignore[attr-defined]

    def counted(*args: Any) -> Any:
        calls.append(1)
        return select(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(preemption_reuse, "select_victims_on_node", counted)
        yield


def _low(name: str, node: str, cpu: int, priority: int, app: str, start: float | None) -> Pod:
    return make_pod(name, node_name=node, requests={"cpu": f"{cpu}m"}, priority=priority, labels={"app": app},
                    start_time=start)


def _pdb(app: str, allowed: int) -> PodDisruptionBudget:
    return PodDisruptionBudget(f"pdb-{app}", "default", LabelSelector({"app": app}), allowed)


class _Cluster:
    def __init__(self, nodes: int, lows: list[Pod], highs: list[Pod], pdbs: list[PodDisruptionBudget],
                 evicts: bool, later_pdb: PodDisruptionBudget | None, removals: dict[int, str] | None = None) -> None:
        self.nodes, self.lows, self.highs, self.pdbs = nodes, lows, highs, pdbs
        self.evicts, self.later_pdb, self.removals = evicts, later_pdb, removals or {}

    def __repr__(self) -> str:
        return (f"_Cluster(nodes={self.nodes}, lows={[(p.name, p.node_name) for p in self.lows]}, "
                f"highs={[p.name for p in self.highs]}, evicts={self.evicts}, later_pdb={self.later_pdb}, "
                f"removals={self.removals})")


def _run(cluster: _Cluster) -> list[object]:
    """Every attempt's decision, and before it the candidates each preemption weighed."""
    scheduler = kschedlib.Scheduler(seed=5, clock=FakeClock())
    scheduler.add_objects([make_node(f"n{i}", allocatable={"cpu": "3", "memory": "8Gi", "pods": "110"},
                                     labels={"kubernetes.io/hostname": f"n{i}", "zone": f"z{i % 2}"})
                           for i in range(cluster.nodes)])
    scheduler.add_objects([*cluster.lows, *cluster.pdbs, *cluster.highs])
    out: list[object] = []
    pick = default_preemption.pick_one_candidate

    def picking(candidates: Sequence[Candidate]) -> Candidate | None:
        out.append([(c.name, [p.name for p in c.victims], c.num_pdb_violations) for c in candidates])
        return pick(candidates)

    default_preemption.pick_one_candidate = picking
    try:
        while (result := scheduler.schedule_one()) is not None and len(out) < 80:
            out.append((result.pod.key, result.node_name, result.nominated_node_name, result.victims))
            if cluster.evicts:
                for victim in result.victims:
                    scheduler.remove_pod(victim)
            if len(out) == 2 and cluster.later_pdb is not None:
                scheduler.add_objects([cluster.later_pdb])
            gone = cluster.removals.get(len(out))
            if gone is not None:
                scheduler.remove_pod(f"default/{gone}")
    finally:
        default_preemption.pick_one_candidate = pick
    return out


@st.composite
def _clusters(draw: st.DrawFn) -> _Cluster:
    nodes = draw(st.integers(2, 6))
    lows = [_low(f"low{i}", f"n{draw(st.integers(0, nodes - 1))}", draw(st.sampled_from([300, 500, 900, 1400])),
                 draw(st.integers(0, 2)), draw(st.sampled_from(_APPS)), draw(st.none() | st.floats(0, 10)))
            for i in range(draw(st.integers(2, 14)))]
    highs = []
    for i in range(draw(st.integers(2, 7))):
        selector = {"zone": "z0"} if draw(st.booleans()) and draw(st.booleans()) else {}
        highs.append(make_pod(f"high{i}", requests={"cpu": draw(st.sampled_from(["700m", "1200m", "1500m", "2500m"]))},
                              priority=draw(st.sampled_from([5, 5, 7])), node_selector=selector))
    pdbs = [_pdb(app, draw(st.integers(0, 2))) for app in draw(st.sets(st.sampled_from(_APPS)))]
    later = _pdb(draw(st.sampled_from(_APPS)), draw(st.integers(0, 1))) if draw(st.booleans()) else None
    removals = draw(st.dictionaries(st.integers(1, 12), st.sampled_from([p.name for p in lows]), max_size=3))
    return _Cluster(nodes, lows, highs, pdbs, draw(st.booleans()), later, removals)


@settings(max_examples=60)
@given(_clusters())
def test_reused_answers_decide_as_working_everything_out(cluster: _Cluster) -> None:
    reused = _run(cluster)
    with _plain():
        plain = _run(cluster)
    assert reused == plain


def test_preemptors_of_one_shape_reuse_the_answers_of_unchanged_nodes() -> None:
    lows = [_low(f"low{i}", f"n{i % 6}", 900, 0, _APPS[i % 3], float(i)) for i in range(12)]
    highs = [make_pod(f"high{i}", requests={"cpu": "1500m"}, priority=5) for i in range(4)]
    cluster = _Cluster(6, lows, highs, [_pdb("a", 0)], evicts=False, later_pdb=None)
    worked: list[int] = []
    with _counting(worked):
        reused = _run(cluster)
    afresh: list[int] = []
    with _plain(), _counting(afresh):
        plain = _run(cluster)
    assert reused == plain
    nominated = [d[2] for d in reused if isinstance(d, tuple) and d[2]]
    assert len(set(nominated)) == len(nominated) == 4  # each preemptor nominated somewhere else
    assert len(worked) < len(afresh) / 2


def test_a_listening_extension_or_an_outside_state_filter_reuses_nothing() -> None:
    handle = kschedlib.testing.FakeHandle()
    memo = VictimsMemo()
    state = kschedlib.framework.CycleState()
    assert memo.table(handle, state, make_pod("p"), ()) is None  # a handle that cannot say: no reuse


def test_changed_budgets_forget_every_answer() -> None:
    memo = VictimsMemo()

    class _Handle:
        snapshot = kschedlib.framework.Snapshot([NodeInfo.of(make_node("n0"))])

        @staticmethod
        def node_local_filter_key(state: object, pod: object) -> object:
            return ("filter",)

    handle, state, pod = cast(Handle, _Handle()), kschedlib.framework.CycleState(), make_pod("p")
    table = memo.table(handle, state, pod, budgets_of([_pdb("a", 1)]))
    assert table is not None
    table["n0"] = cast(Any, "kept")
    assert memo.table(handle, state, pod, budgets_of([_pdb("a", 1)])) is table  # equal budgets: kept
    assert memo.table(handle, state, pod, budgets_of([_pdb("a", 0)])) == {}


def _info(name: str, *pods: Pod) -> NodeInfo:
    return NodeInfo.of(make_node(name), tuple(PodInfo.of(p) for p in pods))


def test_a_composed_node_info_is_handed_out_again_while_nothing_changed() -> None:
    infos = NominatedNodeInfos()
    node = _info("n0", _low("low", "n0", 500, 0, "a", None))
    nominated = [PodInfo.of(make_pod("high", requests={"cpu": "1"}, priority=5))]
    first = infos.with_pods(node, nominated)
    assert infos.with_pods(node, list(nominated)) is first
    assert [i.pod.name for i in first.pods] == ["low", "high"]
    assert first.requested == node.with_pod(nominated[0]).requested
    other = PodInfo.of(make_pod("other", requests={"cpu": "1"}, priority=5))
    assert infos.with_pods(node, [*nominated, other]) is not first
    moved = _info("n0")
    assert [i.pod.name for i in infos.with_pods(moved, nominated).pods] == ["high"]


def test_a_node_keeps_both_verdicts_of_the_two_pass_rule() -> None:
    """The verdict table is keyed by node name: the composed NodeInfo's verdict must not take the place
    of the node's own, or every judgement would work both out again."""
    from kschedlib._internal.reuse.memo import MemoizedFilter
    from kschedlib.framework import CycleState, Status

    judged: list[NodeInfo] = []

    def run(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        judged.append(node_info)
        return Status.success()

    infos, memo = NominatedNodeInfos(), MemoizedFilter(run, {})
    node = _info("n0", _low("low", "n0", 500, 0, "a", None))
    nominated = (PodInfo.of(make_pod("high", priority=5)),)
    pod = make_pod("p", priority=5)
    for _ in range(3):
        assert infos.judge(memo, CycleState(), pod, nominated, node).is_success
    assert [len(info.pods) for info in judged] == [2, 1]  # the composed node, then the node itself, once each
    assert memo(CycleState(), pod, node).is_success
    assert len(judged) == 2


def test_composed_node_infos_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(NominatedNodeInfos, "MAX_ENTRIES", 2)
    infos = NominatedNodeInfos()
    nominated = [PodInfo.of(make_pod("high", priority=5))]
    for i in range(5):
        infos.with_pods(_info(f"n{i}"), nominated)
    assert len(infos._composed) <= 2


_NOMINEES = [PodInfo.of(make_pod(name, priority=priority)) for name, priority in
             (("p0", 5), ("p1", 3), ("other", 5), ("low", 1))]
_NOMINATED = [(), (_NOMINEES[2],), (_NOMINEES[0], _NOMINEES[2]), (_NOMINEES[1], _NOMINEES[3]), (_NOMINEES[3],)]


class _Nominated:
    """A handle that only hands out the same nominated pods for every node."""

    def __init__(self, pods: tuple[PodInfo, ...]) -> None:
        self.pods = pods

    def nominated_pods_for_node(self, node: str) -> Sequence[PodInfo]:
        return self.pods


@settings(max_examples=300)
@given(st.lists(st.tuples(st.sampled_from(["p0", "p1", "p2"]), st.sampled_from([3, 5]),
                          st.integers(0, len(_NOMINATED) - 1), st.booleans(), st.booleans()), max_size=14))
@example([("p2", 5, 2, False, False), ("p0", 5, 2, False, False)])  # the same tuple, now holding the preemptor
@example([("p0", 5, 2, False, False), ("p2", 5, 2, False, False)])  # the same tuple, no longer holding it
def test_a_node_is_worked_out_again_exactly_when_what_it_reads_changed(
    steps: list[tuple[str, int, int, bool, bool]],
) -> None:
    """The selector reuses a node's answer exactly when the NodeInfo, the priority and the nominated
    pods that count (equal or higher priority, not the preemptor) are those it was worked out with,
    whether the handle hands out the same tuple of nominated pods again or an equal copy."""
    infos = [_info("n0"), _info("n0")]
    answers: dict[str, Any] = {}
    calls: list[int] = []
    kept: tuple[object, ...] | None = None
    for name, priority, which, other_info, copied in steps:
        nominated = _NOMINATED[which]
        handed = tuple(info for info in nominated) if copied else nominated  # an equal tuple, not the same one
        pod = make_pod(name, priority=priority)
        node_info = infos[other_info]
        counted = tuple(i for i in nominated if i.pod.effective_priority >= priority and i.pod.uid != pod.uid)
        def worked_out(*args: object) -> kschedlib.framework.Status:
            calls.append(1)
            return kschedlib.framework.Status.unschedulable(str(len(calls)))

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(preemption_reuse, "select_victims_on_node", worked_out)
            select = preemption_reuse.victims_selector(cast(Handle, _Nominated(handed)),
                                                       kschedlib.framework.CycleState(), pod, (), answers)
            before = len(calls)
            select(node_info)
        worked = len(calls) > before
        assert worked == (kept != (node_info, priority, counted))
        if worked:
            kept = (node_info, priority, counted)
