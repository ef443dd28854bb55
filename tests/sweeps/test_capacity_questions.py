"""The capacity questions in sweeps: one registry entry each, the same answers as ``kschedlib.capacity``."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib import capacity
from kschedlib.errors import ConfigError
from kschedlib.sweeps import Ask, Scenario, ask, load_grid, sweep
from tests.whatif.manifests import node, pod

OBJECTS = [node("n1"), node("n2"), node("n3", cpu="8"),
           pod("web-1", node_name="n1", owner="ReplicaSet/web"), pod("web-2", node_name="n2", owner="ReplicaSet/web"),
           pod("db", cpu="3", node_name="n3", owner="StatefulSet/db"), pod("pending", cpu="2")]
MOST_ALLOCATED = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                      {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


@pytest.fixture(scope="module")
def cluster() -> kschedlib.Cluster:
    return kschedlib.load_cluster(OBJECTS)


CASES: list[tuple[str, dict[str, Any], Callable[[kschedlib.Cluster], Any]]] = [
    ("max_replicas", {"pod": "default/pending", "limit": 5},
     lambda c: capacity.max_replicas(c, "default/pending", limit=5)),
    ("drain", {"node": "n3"}, lambda c: capacity.drain(c, ["n3"])),
    ("drain", {"node": ["n1", "n2"]}, lambda c: capacity.drain(c, ["n1", "n2"])),
    ("nodes_needed", {"node_template": node("template", cpu="2")},
     lambda c: capacity.nodes_needed(c, node("template", cpu="2"))),
    ("compare", {"configs": [None, MOST_ALLOCATED], "labels": ["default", "most"]},
     lambda c: capacity.compare(c, [None, MOST_ALLOCATED], labels=["default", "most"])),
]


@pytest.mark.parametrize(("name", "params", "direct"), CASES,
                         ids=["max_replicas", "drain-one", "drain-two", "nodes_needed", "compare"])
def test_each_question_answers_as_the_capacity_function(cluster: kschedlib.Cluster, name: str,
                                                         params: dict[str, Any], direct: Any) -> None:
    answer = ask(name, Scenario(cluster, params={**params, "config": None, "kube_version": None}))
    assert answer == direct(cluster).to_dict()


def test_compare_refuses_the_configs_axis(cluster: kschedlib.Cluster) -> None:
    with pytest.raises(ConfigError, match="compare takes its configs in params or matrix"):
        ask("compare", Scenario(cluster, params={"configs": [None], "config": MOST_ALLOCATED}))


def test_a_drain_of_every_node_on_two_processes_equals_the_serial_run(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text(json.dumps(OBJECTS))
    grid = load_grid({"question": "drain", "clusters": {"c": "cluster.json"}, "matrix": {"node": "@nodes"}},
                     base=tmp_path)
    assert [s.name for s in grid.scenarios] == ["c/node=n1", "c/node=n2", "c/node=n3"]
    serial = [r.unwrap() for r in sweep(grid.scenarios, Ask("drain"))]
    with ProcessPoolExecutor(max_workers=2) as pool:
        assert [r.unwrap() for r in sweep(grid.scenarios, Ask("drain"), pool)] == serial
    assert serial[2] == capacity.drain(kschedlib.load_cluster(OBJECTS), ["n3"]).to_dict()


def test_the_example_drain_grid_from_the_command_line() -> None:
    import io

    from kschedlib.cli import main

    example = Path(__file__).resolve().parents[2] / "examples" / "sweep" / "drain-every-node.yaml"
    out, err = io.StringIO(), io.StringIO()
    argv = ["sweep", str(example), "--executor", "process", "--workers", "2", "--format", "jsonl"]
    assert main(argv, out=out, err=err) == 0
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [row["node"] for row in rows] == [*(f"small-{i}" for i in range(6)), "large-0", "large-1"]
    (cluster,) = {id(s.cluster): s.cluster for s in load_grid(example).scenarios}.values()
    assert rows[6]["result"] == capacity.drain(cluster, ["large-0"]).to_dict()
