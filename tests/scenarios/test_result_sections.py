"""The sections results carry for their readers (and HTML reports): the config used, simulate's
utilisation and its unschedulable pods' per-node verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib import capacity
from kschedlib.framework import SchedulerConfig
from tests.helpers import make_node, make_pod

PACKING = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
               {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


def cluster() -> list[Any]:
    """Three nodes; two big pods that fit nowhere alike, one that needs a label no node has, one that fits."""
    nodes = [make_node(f"node-{i}", labels={"topology.kubernetes.io/zone": f"zone-{i % 2}"}) for i in range(3)]
    return [*nodes,
            make_pod("big-1", uid="big-1", requests={"cpu": "6"}),
            make_pod("big-2", uid="big-2", requests={"cpu": "6"}),
            make_pod("picky", uid="picky", requests={"cpu": "100m"}, node_selector={"disk": "ssd"}),
            make_pod("small", uid="small", requests={"cpu": "1", "memory": "1Gi"})]


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("configs") / "packing.json"
    path.write_text(json.dumps(PACKING), encoding="utf-8")
    return path


def test_simulate_groups_unschedulable_pods_by_their_verdicts_per_node() -> None:
    report = kschedlib.simulate(cluster()).to_dict()
    assert report["fit_errors"] == [
        {"pods": ["default/big-1", "default/big-2"], "message": report["unschedulable"]["default/big-1"],
         "rejections": [{"plugin": "NodeResourcesFit", "reason": "Insufficient cpu",
                         "nodes": ["node-0", "node-1", "node-2"]}]},
        {"pods": ["default/picky"], "message": report["unschedulable"]["default/picky"],
         "rejections": [{"plugin": "NodeAffinity", "reason": "node(s) didn't match Pod's node affinity/selector",
                         "nodes": ["node-0", "node-1", "node-2"]}]}]


def test_a_pod_placed_after_failing_leaves_no_fit_error() -> None:
    events = [{"op": "add_node", "node": {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "node-big", "labels": {"disk": "ssd"}}, "status": {"allocatable": {"cpu": "10", "pods": "110"}}}}]
    report = kschedlib.simulate(cluster(), events=events).to_dict()
    assert report["unschedulable"] == {"default/big-2": report["unschedulable"]["default/big-2"]}
    assert [entry["pods"] for entry in report["fit_errors"]] == [["default/big-2"]]


def test_simulate_reports_utilisation_and_fragmentation_before_and_after() -> None:
    report = kschedlib.simulate(cluster()).to_dict()
    before, after = report["utilisation"]["before"], report["utilisation"]["after"]
    assert before["total"]["cpu"]["requested"] == 0
    assert after["total"]["cpu"]["requested"] == 1000
    assert set(after["zones"]) == {"zone-0", "zone-1"}
    assert report["fragmentation"]["after"]["shapes"] == 3


CONFIGS = [
    ("default", None, {"source": "default", "document": None}),
    ("inline", PACKING, {"source": "inline", "document": PACKING}),
    ("parsed", SchedulerConfig(), {"source": "SchedulerConfig", "document": None}),
]


@pytest.mark.parametrize(("config", "section"), [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
def test_results_say_which_config_they_are_for(config: Any, section: dict[str, Any]) -> None:
    objects = cluster()
    assert kschedlib.simulate(objects, config).to_dict()["config"] == section
    assert kschedlib.explain(objects, "default/small", config).to_dict()["config"] == section
    assert capacity.max_replicas(objects, "default/small", config, limit=1).to_dict()["config"] == section
    assert capacity.drain(objects, ["node-0"], config).to_dict()["config"] == section


def test_a_config_file_is_named_and_shown(config_file: Path) -> None:
    objects = cluster()
    section = {"source": str(config_file), "document": PACKING}
    assert kschedlib.simulate(objects, config_file).to_dict()["config"] == section
    assert kschedlib.explain(objects, "default/small", str(config_file)).to_dict()["config"] == section
    template = make_node("pool")
    assert capacity.nodes_needed(objects, template, str(config_file), limit=2).to_dict()["config"] == section
    runs = capacity.compare(objects, [None, str(config_file)], labels=["a", "b"]).to_dict()["runs"]
    assert [runs[label]["config"]["source"] for label in ("a", "b")] == ["default", str(config_file)]
    assert [len(runs[label]["fit_errors"]) for label in ("a", "b")] == [2, 2]
