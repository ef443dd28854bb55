"""Scheduler.filter_nodes / score_nodes: a profile's plugins on nodes the caller names (the extender verbs)."""

from __future__ import annotations

import pytest

from kschedlib import Scheduler, Snapshot, Status, load_cluster
from kschedlib.framework import NodeInfo
from kschedlib.model.objects import Taint
from tests.helpers import make_node, make_pod


def _nodes() -> list[NodeInfo]:
    return [NodeInfo.of(make_node("a")), NodeInfo.of(make_node("b", taints=(Taint("x", "NoSchedule"),))),
            NodeInfo.of(make_node("c", allocatable={"cpu": "1", "memory": "1Gi", "pods": "10"}))]


def test_filter_nodes_gives_each_node_its_status_and_changes_nothing() -> None:
    sched = Scheduler()
    nodes = _nodes()
    verdicts = sched.filter_nodes(make_pod("p", requests={"cpu": "2"}), Snapshot(nodes), nodes)
    assert isinstance(verdicts, dict)
    assert list(verdicts) == ["a", "b", "c"]
    assert verdicts["a"].is_success
    assert verdicts["b"].reasons == ("node(s) had untolerated taint(s)",)
    assert verdicts["c"].reasons == ("Insufficient cpu",)
    assert sched.node_names() == []
    assert sched.snapshot().num_nodes == 0


def test_nodes_a_pre_filter_result_leaves_out_get_no_entry() -> None:
    nodes = _nodes()
    pinned = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}
    pod = load_cluster([{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": [{"name": "c"}], "affinity": {"nodeAffinity": pinned}}}]).pods[0]
    verdicts = Scheduler().filter_nodes(pod, Snapshot(nodes), nodes)
    assert isinstance(verdicts, dict)
    assert set(verdicts) == {"a"}
    assert verdicts["a"].is_success


def test_score_nodes_totals_in_order_with_the_highest_possible() -> None:
    nodes = [_nodes()[0], _nodes()[2]]
    scores = Scheduler().score_nodes(make_pod("p", requests={"cpu": "500m"}), Snapshot(nodes), nodes)
    assert not isinstance(scores, Status)
    assert len(scores.totals) == 2
    assert scores.totals[0] > scores.totals[1]  # the bigger node is the emptier one after the pod
    assert scores.max_total >= max(scores.totals)


def test_progress_may_stop_the_work() -> None:
    nodes = _nodes()

    def stop(stage: str) -> None:
        raise TimeoutError(stage)

    with pytest.raises(TimeoutError, match=r"filtering \(0 of 3 nodes done\)"):
        Scheduler().filter_nodes(make_pod("p"), Snapshot(nodes), nodes, progress=stop)
    with pytest.raises(TimeoutError, match="running PreScore"):
        Scheduler().score_nodes(make_pod("p"), Snapshot(nodes), nodes, progress=stop)
