"""After nodes are removed, the rotating search start is taken modulo the nodes left (kube-scheduler's rule)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

import kschedlib
from kschedlib.framework import CycleState, FilterPlugin, NodeInfo, Status
from kschedlib.model import Pod
from tests.helpers import Recorder, make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]


class Anywhere(FilterPlugin):
    """Accepts every node; not node-local, so the search goes node by node."""

    name: ClassVar[str] = "Anywhere"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.success()


class FailsOn(FilterPlugin):
    """An error on one node, for one pod: the search stops there."""

    name: ClassVar[str] = "FailsOn"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if pod.name == "bad" and node_info.name == "n3":
            raise RuntimeError("backend down")
        return Status.success()


def scheduler(search: str, recorder: Recorder) -> kschedlib.Scheduler:
    registry = kschedlib.in_tree_registry()
    registry.register(Anywhere.name, lambda args, handle: Anywhere())
    config = None
    if search == "node-by-node":
        config = {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Anywhere"}],
                                                       "disabled": [{"name": "*"}]}}}]}
    return kschedlib.Scheduler(config, registry=registry, listeners=[recorder])


@pytest.mark.parametrize("search", ["column", "node-by-node"])
def test_a_pod_added_after_the_cluster_shrank_below_the_start_index_is_scheduled(search: str) -> None:
    recorder = Recorder()
    sched = scheduler(search, recorder)
    for i in range(400):
        sched.add_node(make_node(f"n{i:03d}"))
    for i in range(30):
        sched.add_pod(make_pod(f"p{i}", requests={"cpu": "100m"}))
    assert all(r.scheduled for r in sched.run_until_idle())
    start = sched._engine.next_start_index
    assert start > 10
    for i in range(start - 10, 400):
        sched.remove_node(f"n{i:03d}")
    assert sched.snapshot().num_nodes == start - 10
    for name in ("late", "later"):
        sched.add_pod(make_pod(name, requests={"cpu": "100m"}))
    results = sched.run_until_idle()
    assert [(r.pod.key, r.scheduled) for r in results] == [("default/late", True), ("default/later", True)]
    assert {"default/late", "default/later"} <= sched.bound_pods().keys()
    assert recorder.keys("bound")[-2:] == ["default/late", "default/later"]
    assert 0 <= sched._engine.next_start_index < sched.snapshot().num_nodes


def test_a_filter_error_that_ended_the_search_early_then_two_nodes_removed() -> None:
    registry = kschedlib.in_tree_registry()
    registry.register(FailsOn.name, lambda args, handle: FailsOn())
    config = {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "FailsOn"}]}}}]}
    recorder = Recorder()
    sched = kschedlib.Scheduler(config, registry=registry, listeners=[recorder])
    for i in range(4):
        sched.add_node(make_node(f"n{i}"))
    sched.add_pod(make_pod("bad"))
    (failed,) = sched.run_until_idle()
    assert failed.status.code is kschedlib.Code.ERROR
    assert sched._engine.next_start_index == 3  # the search stopped at the error on n3
    sched.remove_node("n0")
    sched.remove_node("n1")
    sched.add_pod(make_pod("good"))
    (result,) = sched.run_until_idle()
    assert result.scheduled
    assert result.node_name in {"n2", "n3"}
    assert recorder.keys("bound") == ["default/good"]


def shrinking_cluster(tmp_path: Path) -> tuple[Path, Path]:
    def node(name: str) -> dict[str, Any]:
        amounts = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": amounts, "capacity": amounts}}

    def pod(name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]}}

    items = [node(f"n{i:03d}") for i in range(400)] + [pod(f"p{i:02d}") for i in range(30)]
    cluster = tmp_path / "cluster.json"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    events: list[dict[str, Any]] = [{"op": "delete_node", "name": f"n{i:03d}"} for i in range(20, 400)]
    for event in events[1:]:
        event["at"] = "with_previous"
    events.append({"op": "add_pod", "pod": pod("late"), "at": "with_previous"})
    timeline = tmp_path / "events.json"
    timeline.write_text(json.dumps(events), encoding="utf-8")
    return cluster, timeline


def test_simulate_schedules_a_pod_added_after_the_cluster_shrank(tmp_path: Path) -> None:
    cluster, timeline = shrinking_cluster(tmp_path)
    report = kschedlib.simulate(cluster, events=timeline)
    assert report.placements["default/late"] in {f"n{i:03d}" for i in range(20)}
    deleted = {pod for removal in report.node_removals for pod in removal["deleted"]}
    assert deleted
    assert all(report.placements[pod] is None for pod in deleted)  # gone with their nodes
    assert report.scheduled == 31 - len(deleted)


def test_the_cli_simulates_a_shrinking_cluster(tmp_path: Path) -> None:
    cluster, timeline = shrinking_cluster(tmp_path)
    done = subprocess.run([sys.executable, "-m", "kschedlib", "simulate", str(cluster), "--events", str(timeline),
                           "--format", "json"], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout)["placements"]["default/late"] is not None
