"""Per-position memo columns: the same search and scores as node by node, re-evaluating only what changed."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib._internal.cache import Cache
from kschedlib._internal.reuse import memo as memo_module
from kschedlib._internal.reuse.columns import FilterColumn, ScoreColumn, search_column, search_nodes
from kschedlib._internal.reuse.spans import take
from kschedlib.framework import CycleState, NodeInfo, PodInfo, Snapshot, Status
from kschedlib.framework.snapshot import NodeCursor
from kschedlib.simulation import Cluster
from kschedlib.testing import strategies as ks
from tests.helpers import make_node, make_pod

OK = Status.success()
NO = Status.unschedulable("no")
BAD = Status.from_error("kaput")
VERDICTS = {"ok": OK, "no": NO, "bad": BAD}


def infos(count: int) -> list[NodeInfo]:
    return [NodeInfo.of(make_node(f"n{i:03d}")) for i in range(count)]


def synced(nodes: Sequence[NodeInfo], verdicts: Sequence[Status]) -> FilterColumn:
    by_name = {info.name: status for info, status in zip(nodes, verdicts, strict=True)}
    column = FilterColumn()
    column.sync(Snapshot(nodes), lambda info: by_name[info.name])
    return column


# --- the search over a column is the node-by-node search -----------------------------------------

@settings(max_examples=300)
@given(st.data())
def test_search_column_matches_the_node_by_node_search(data: st.DataObject) -> None:
    count = data.draw(st.integers(1, 24), label="nodes")
    nodes = infos(count)
    prefix = data.draw(st.lists(st.sampled_from(sorted(VERDICTS)), min_size=count, max_size=count), label="prefix")
    rest = data.draw(st.none() | st.lists(st.sampled_from(sorted(VERDICTS)), min_size=count, max_size=count),
                     label="rest")
    special = data.draw(st.dictionaries(st.integers(0, count - 1), st.sampled_from(sorted(VERDICTS))),
                        label="nominated")  # nodes judged by their own check (the two-pass rule)
    start = data.draw(st.integers(0, count - 1), label="start")
    to_find = data.draw(st.integers(1, count + 2), label="to_find")
    position = {info.name: i for i, info in enumerate(nodes)}

    def later(info: NodeInfo) -> Status:
        assert rest is not None
        return VERDICTS[rest[position[info.name]]]

    def own(info: NodeInfo) -> Status:
        return VERDICTS[special[position[info.name]]]

    def whole(state: CycleState, pod: kschedlib.Pod, info: NodeInfo) -> Status:
        if position[info.name] in special:
            return own(info)
        first = VERDICTS[prefix[position[info.name]]]
        return first if first is not OK or rest is None else later(info)

    expected = search_nodes(nodes, start, to_find, lambda info: whole(CycleState(), make_pod("p"), info))
    column = synced(nodes, [VERDICTS[v] for v in prefix])
    got = search_column(column, nodes, start, to_find, later if rest is not None else None,
                        dict.fromkeys(special, own))

    assert got.feasible == expected.feasible
    assert take(nodes, got.feasible) == [nodes[p] for p in expected.feasible]  # by the runs it kept
    assert got.statuses == expected.statuses
    assert list(got.statuses) == list(expected.statuses)  # visiting order
    assert got.stopped_at == expected.stopped_at
    assert got.error == expected.error


def test_runs_of_feasible_nodes_are_taken_whole_up_to_the_quota() -> None:
    nodes = infos(10)
    column = synced(nodes, [NO if i in (2, 7) else OK for i in range(10)])
    got = search_column(column, nodes, 5, 4)
    assert got.feasible == [5, 6, 8, 9]
    assert list(got.statuses) == ["n007"]
    assert got.stopped_at == "n000"


# --- keeping a column in step with the snapshots -------------------------------------------------

class ScoreFailure(Exception):
    """What the test's scorer raises for a node it cannot score (the caller names its failure types)."""


_FAILURES = (ScoreFailure,)


class Counting:
    """A verdict that records the nodes it was asked about and rejects nodes with pods."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, info: NodeInfo) -> Status:
        self.asked.append(info.name)
        return NO if info.pods else OK


def cache_with(count: int) -> Cache:
    cache = Cache()
    for i in range(count):
        cache.add_node(make_node(f"n{i:03d}"))
    return cache


def place(cache: Cache, pod_name: str, node: str) -> None:
    cache.add_pod(PodInfo.of(make_pod(pod_name, node_name=node)))


def test_a_sync_re_evaluates_only_the_nodes_that_changed() -> None:
    cache = cache_with(6)
    first = cache.snapshot()
    verdict = Counting()
    column = FilterColumn()
    column.sync(first, verdict)
    assert len(verdict.asked) == 6
    place(cache, "a", "n002")
    place(cache, "b", "n004")
    second = cache.snapshot()
    verdict.asked.clear()
    column.sync(second, verdict)
    assert sorted(verdict.asked) == ["n002", "n004"]
    assert column.rejected == [2, 4]
    verdict.asked.clear()
    column.sync(first, verdict)  # back to an older snapshot of the same layout
    assert sorted(verdict.asked) == ["n002", "n004"]
    assert column.rejected == []
    verdict.asked.clear()
    column.sync(first, verdict)
    assert verdict.asked == []


def test_a_new_node_order_is_compared_node_by_node() -> None:
    cache = cache_with(4)
    column = FilterColumn()
    verdict = Counting()
    column.sync(cache.snapshot(), verdict)
    cache.add_node(make_node("n100"))
    place(cache, "a", "n001")
    snapshot = cache.snapshot()
    column.sync(snapshot, verdict)
    assert column.infos == list(snapshot.node_infos)
    assert [column.statuses[i] for i in column.rejected] == [NO]
    assert snapshot.node_infos[column.rejected[0]].name == "n001"


def test_untracked_snapshots_are_compared_node_by_node() -> None:
    nodes = infos(3)
    column = FilterColumn()
    verdict = Counting()
    column.sync(Snapshot(nodes), verdict)
    changed = [nodes[0], nodes[1].with_pod(PodInfo.of(make_pod("a", node_name="n001"))), nodes[2]]
    verdict.asked.clear()
    column.sync(Snapshot(changed), verdict)
    assert verdict.asked == ["n001"]
    assert column.rejected == [1]


def test_errors_are_not_kept_and_are_asked_again() -> None:
    nodes = infos(3)
    answers = iter([OK, BAD, OK, OK])
    column = FilterColumn()
    snapshot = Snapshot(nodes)
    column.sync(snapshot, lambda info: next(answers))
    assert column.rejected == [1]
    column.sync(snapshot, lambda info: next(answers))
    assert column.rejected == []
    assert column.errors == set()


def test_snapshots_say_which_positions_changed_between_them() -> None:
    cache = cache_with(5)
    first = cache.snapshot()
    place(cache, "a", "n003")
    second = cache.snapshot()
    place(cache, "b", "n000")
    third = cache.snapshot()
    assert third.changed_between(first.revision) == [3, 0]
    assert first.changed_between(third.revision) == [3, 0]
    assert third.changed_between(second.revision) == [0]
    assert third.changed_between(third.revision) == []
    assert third.changed_between(None) is None
    assert Snapshot(third.node_infos).changed_between(first.revision) is None
    cache.add_node(make_node("n200"))
    assert cache.snapshot().changed_between(third.revision) is None  # another node order


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from(["place", "remove", "add_node", "snapshot", "untracked"]),
                          st.integers(min_value=0, max_value=5)), max_size=25))
def test_a_cursor_names_every_position_whose_node_info_was_replaced(steps: list[tuple[str, int]]) -> None:
    """``NodeCursor.changes`` never misses a replaced NodeInfo; ``None`` (look at all) whenever it cannot tell."""
    cache = cache_with(4)
    cursor = NodeCursor()
    held: tuple[NodeInfo, ...] = ()
    assert cursor.changes(cache.snapshot(), len(held)) is None
    held = cache.snapshot().node_infos
    placed: list[str] = []
    for step, number in steps:
        if step == "place":
            placed.append(f"p{len(placed)}")
            place(cache, placed[-1], f"n{number % 4:03d}")
            continue
        if step == "remove" and placed:
            cache.remove_pod(PodInfo.of(make_pod(placed.pop(), node_name="n000")).pod)
            continue
        if step == "add_node":
            cache.add_node(make_node(f"n{100 + number:03d}"))
            continue
        snapshot = cache.snapshot() if step == "snapshot" else Snapshot(cache.snapshot().node_infos)
        changed = cursor.changes(snapshot, len(held))
        nodes = snapshot.node_infos
        if changed is not None:
            assert len(nodes) == len(held)
            replaced = {i for i, (now, before) in enumerate(zip(nodes, held, strict=True)) if now is not before}
            assert replaced <= set(changed)
        held = nodes
    cursor.forget()
    assert cursor.changes(cache.snapshot(), len(held)) is None


# --- score columns ------------------------------------------------------------------------------

def test_a_failing_score_matters_only_where_nodes_are_scored() -> None:
    nodes = infos(4)
    problem = ScoreFailure(RuntimeError("kaput"))
    scored: list[str] = []

    def score(info: NodeInfo) -> tuple[tuple[int, ...], int]:
        scored.append(info.name)
        if info.name in ("n002", "n003"):
            raise problem if info.name == "n002" else ScoreFailure(RuntimeError("other"))
        return (int(info.name[1:]), 7), 10

    column = ScoreColumn(2)
    snapshot = Snapshot(nodes)
    column.sync(snapshot)
    column.gather(snapshot, [1, 0], score, _FAILURES)
    assert sorted(scored) == ["n000", "n001"]  # lazily: only what is asked for
    assert column.raw[0][:2] == [0, 1]
    assert column.partial[:2] == [10, 10]
    with pytest.raises(ScoreFailure) as raised:
        column.gather(snapshot, [0, 2, 3], score, _FAILURES)
    assert raised.value is problem  # the first failing position in the order asked
    scored.clear()
    column.sync(snapshot)
    column.gather(snapshot, [0, 1], score, _FAILURES)
    assert scored == []


def test_a_score_column_rescores_changed_nodes_when_they_are_asked_for() -> None:
    cache = cache_with(3)
    first = cache.snapshot()
    column = ScoreColumn(1)
    column.sync(first)
    column.gather(first, [0, 1, 2], lambda info: ((len(info.pods),), len(info.pods)), _FAILURES)
    place(cache, "a", "n001")
    second = cache.snapshot()
    column.sync(second)
    assert column.pending == {1}
    column.gather(second, [2, 1], lambda info: ((len(info.pods),), 5 * len(info.pods)), _FAILURES)
    assert column.raw == [[0, 1, 0]]
    assert column.partial == [0, 5, 0]


def _capped(info: NodeInfo, cap: int) -> tuple[tuple[int, ...], int]:
    return (len(info.pods), min(len(info.pods), cap)), 0


@settings(max_examples=60)
@given(st.integers(1, 6), st.lists(st.tuples(st.lists(st.integers(0, 5)), st.integers(0, 3)), max_size=12))
def test_a_tallied_column_knows_when_every_position_holds_one_score(
    count: int, rounds: list[tuple[list[int], int]]
) -> None:
    """Each round re-places pods (new NodeInfos), then scores the positions asked for; ``uniform``
    must say the one raw score every position holds, or ``None``."""
    cache = cache_with(count)
    column = ScoreColumn(2, tallied=[1])
    names = (f"p{i}" for i in range(1000))
    for placed, seed in rounds:
        for position in placed:
            place(cache, next(names), f"n{position % count:03d}")
        snapshot = cache.snapshot()
        column.sync(snapshot)
        asked = random.Random(seed).sample(range(count), k=max(1, count - seed % count))
        column.gather(snapshot, asked, functools.partial(_capped, cap=seed), _FAILURES)
        held = set(column.raw[1])
        assert column.uniform(1) == (held.pop() if len(held) == 1 else None)
        assert column.uniform(0) is None  # not tallied


# --- whole runs decide the same with and without columns ----------------------------------------

@pytest.fixture
def without_columns(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    def disable() -> None:
        monkeypatch.setattr(memo_module.Memo, "column", lambda *args: None)
    return disable


def decisions(objects: Sequence[object], seed: int = 3) -> list[tuple[str, str | None, str | None]]:
    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(seed=seed, clock=clock)
    scheduler.add_objects(objects)
    out = []
    for _ in range(3):  # a few backoff rounds, so failed pods come back to a changed cluster
        out += [(r.pod.key, r.node_name, r.message) for r in scheduler.run_until_idle()]
        wakeup = scheduler.next_wakeup()
        if wakeup is None:
            break
        clock.set(wakeup)
        out += [(r.pod.key, r.node_name, r.message) for r in scheduler.tick()]
    return out


def _workload(nodes: int, pods: int, seed: int) -> list[object]:
    """Nodes of three sizes in three zones (some tainted); pods of three shapes, one spread over zones."""
    rnd = random.Random(seed)
    manifests: list[dict[str, Any]] = []
    for i in range(nodes):
        name = f"node-{i:04d}"
        node_spec = {"taints": [{"key": "gpu", "value": "x", "effect": "NoSchedule"}]} if i % 7 == 3 else {}
        manifests.append({"kind": "Node", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"z{i % 3}"}}, "spec": node_spec,
            "status": {"allocatable": {"cpu": rnd.choice(["2", "4", "8"]), "memory": "8Gi", "pods": "20"}}})
    shapes = [("web", "500m"), ("api", "1"), ("batch", "1500m")]
    for i in range(pods):
        app, cpu = shapes[rnd.randrange(len(shapes))]
        spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
        if app == "api":
            spec["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": app}}}]
        manifests.append({"kind": "Pod", "metadata": {"name": f"{app}-{i:04d}", "namespace": "default",
                                                      "labels": {"app": app}}, "spec": spec})
    return list(kschedlib.load_cluster(manifests).objects)


@pytest.mark.parametrize("nodes", [40, 150])
def test_columns_do_not_change_any_decision(nodes: int, without_columns: Callable[[], None]) -> None:
    objects = _workload(nodes, 5 * nodes, seed=nodes)
    with_columns = decisions(objects)
    without_columns()
    assert decisions(objects) == with_columns
    assert any(node is None for _, node, _ in with_columns)  # the cluster fills up: rejections happen


def _with_preemptors(objects: Sequence[object]) -> list[tuple[str, str | None, str | None]]:
    """Fill the cluster, then let high-priority pods arrive: they nominate nodes (victims are not
    evicted), so later cycles run the two-pass rule on those nodes."""
    scheduler = kschedlib.Scheduler(seed=5, clock=kschedlib.FakeClock())
    scheduler.add_objects(objects)
    out = [(r.pod.key, r.node_name, r.message) for r in scheduler.run_until_idle()]
    for i in range(12):
        manifest = {"kind": "Pod", "metadata": {"name": f"vip-{i:02d}", "namespace": "default"},
                    "spec": {"priority": 1000 + i % 3, "containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "1500m"}}}]}}
        scheduler.add_pod(kschedlib.load_cluster([manifest]).pods[0])
        out += [(r.pod.key, r.node_name, r.message) for r in scheduler.run_until_idle()]
    return out


def test_nominated_pods_decide_the_same_without_columns(without_columns: Callable[[], None]) -> None:
    objects = _workload(150, 800, seed=9)
    with_columns = _with_preemptors(objects)
    assert any("preemption" in (message or "") for _, _, message in with_columns)
    without_columns()
    assert _with_preemptors(objects) == with_columns


@settings(max_examples=40, deadline=None)
@given(ks.clusters(max_nodes=5, max_bound_pods=6, min_pending_pods=2, max_pending_pods=6))
def test_generated_clusters_decide_the_same_without_columns(cluster: Cluster) -> None:
    with_columns = decisions(cluster.objects)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(memo_module.Memo, "column", lambda *args: None)
        assert decisions(cluster.objects) == with_columns
