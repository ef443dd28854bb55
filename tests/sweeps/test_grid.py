"""Grid files: axes crossed in order, files read where the grid is, bad grids refused up front."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kschedlib.errors import ConfigError
from kschedlib.sweeps import QUESTIONS, Scenario, ask, load_grid, register_question
from kschedlib.sweeps.questions import question
from tests.sweeps.runs import cluster

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sweep" / "grid.yaml"

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
MOST_ALLOCATED = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                      {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cluster.json").write_text(json.dumps([NODE]))
    (tmp_path / "pods.json").write_text(json.dumps([POD]))
    (tmp_path / "most.json").write_text(json.dumps(MOST_ALLOCATED))
    return tmp_path


def test_the_example_grid_crosses_every_axis_in_order() -> None:
    grid = load_grid(EXAMPLE)
    assert grid.question == "simulate"
    assert len(grid) == 3 * 2 * 2 * 2
    assert grid.scenarios[0].name == "six-small/web/default/1.30"
    assert grid.scenarios[-1].name == "mixed/web+batch/bin-packing/1.36"
    assert dict(grid.labels[1]) == {"cluster": "six-small", "workload": "web", "config": "default",
                                    "kube_version": "1.36"}
    first = grid.scenarios[0]
    assert first.params == {"seed": 0, "config": None, "kube_version": "1.30"}
    assert grid.scenarios[2].params["config"]["kind"] == "KubeSchedulerConfiguration"
    # one object per cluster and workload name, shared by its scenarios (so it travels once)
    assert len({id(s.cluster) for s in grid.scenarios}) == 3
    assert len({id(s.workload) for s in grid.scenarios}) == 2


def test_defaults_lists_and_a_matrix(folder: Path) -> None:
    grid = load_grid({"clusters": ["cluster.json"], "configs": {"most": "most.json"},
                      "matrix": {"seed": [0, 1], "once": [True]}}, base=folder)
    assert [s.name for s in grid.scenarios] == ["cluster.json/most/seed=0/once=True",
                                                 "cluster.json/most/seed=1/once=True"]
    assert grid.scenarios[1].params["seed"] == 1
    assert grid.scenarios[1].params["config"] == MOST_ALLOCATED
    assert grid.scenarios[0].workload is None
    assert grid.labels[0] == {"cluster": "cluster.json", "workload": None, "config": "most", "kube_version": None,
                              "seed": 0, "once": True}


def test_a_grid_file_reads_its_files_beside_it(folder: Path) -> None:
    path = folder / "grid.json"
    path.write_text(json.dumps({"clusters": {"one": "cluster.json"}, "workloads": {"w": "pods.json"}}))
    (scenario,) = load_grid(path).scenarios
    assert [type(o).__name__ for o in scenario.cluster] == ["Node"]
    assert [type(o).__name__ for o in scenario.workload] == ["Pod"]


@pytest.mark.parametrize(("doc", "field", "message"), [
    ({}, "clusters", "is required"),
    ({"clusters": {}}, "clusters", "must not be empty"),
    ({"clusters": "cluster.json"}, "clusters", "expected a mapping of name to value"),
    ({"clusters": {"a": 3}}, "clusters.a", "expected a file or a list of files"),
    ({"clusters": ["cluster.json"], "question": "nope"}, "question", "unknown question"),
    ({"clusters": ["cluster.json"], "colour": 1}, "colour", "unknown key"),
    ({"clusters": ["cluster.json"], "kube_versions": [1.3]}, "kube_versions", "quote it"),
    ({"clusters": ["cluster.json"], "params": [1]}, "params", "expected a mapping"),
    ({"clusters": ["cluster.json"], "matrix": {"seed": 1}}, "matrix", "non-empty list"),
    ({"clusters": ["cluster.json"], "configs": {"bad": 5}}, "configs.bad", "expected a file, an inline"),
    ({"clusters": ["cluster.json"], "configs": {"bad": {"kind": "KubeSchedulerConfiguration", "profiles": 3}}},
     "configs.bad", "profiles: must be of type list"),
], ids=["no-clusters", "empty-clusters", "clusters-not-named", "cluster-not-a-file", "unknown-question",
        "unknown-key", "unquoted-version", "params-not-a-mapping", "matrix-not-lists", "config-not-a-file",
        "config-invalid"])
def test_bad_grids_are_refused_naming_the_field(folder: Path, doc: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        load_grid(doc, base=folder)
    assert caught.value.field == field


def test_a_grid_file_must_hold_one_mapping(tmp_path: Path) -> None:
    two = tmp_path / "two.json"
    two.write_text("{}\n{}\n")
    with pytest.raises(ConfigError, match="expected one grid document, found 2"):
        load_grid(two)
    listed = tmp_path / "list.json"
    listed.write_text("[1]")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_grid(listed)


def test_the_simulate_question_answers_compactly_or_in_full(folder: Path) -> None:
    (scenario,) = load_grid({"clusters": ["cluster.json"], "workloads": ["pods.json"]}, base=folder).scenarios
    assert ask("simulate", scenario) == {"kube_version": "1.36", "summary": {
        "pods": 1, "scheduled": 1, "unschedulable": 0, "gated": 0}, "pods_per_node": {"node-a": 1},
        "unschedulable": {}}
    full = ask("simulate", Scenario(scenario.cluster, scenario.workload, {**scenario.params, "full": True}))
    assert full["placements"] == {"default/web": "node-a"}


def test_the_explain_question(folder: Path) -> None:
    (scenario,) = load_grid({"question": "explain", "clusters": ["cluster.json"], "workloads": ["pods.json"],
                             "params": {"pod": "default/web"}}, base=folder).scenarios
    answer = ask("explain", scenario)
    assert answer["pod"] == "default/web"
    assert answer["selected"] == "node-a"


def test_questions_register_by_module_path() -> None:
    assert question("simulate").__name__ == "simulate_question"
    with pytest.raises(ConfigError, match="unknown question"):
        question("drain-everything")
    with pytest.raises(ConfigError, match=r"expected 'package\.module:function'"):
        register_question("x", "no-colon")
    with pytest.raises(ConfigError, match="already asks"):
        register_question("simulate", "tests.sweeps.runs:square")
    register_question("simulate", QUESTIONS["simulate"])  # the same entry again is harmless
    try:
        register_question("count", "tests.sweeps.test_grid:count_objects")
        assert ask("count", Scenario(cluster(nodes=2, pending=0), cluster(nodes=0, pending=1))) == 3
    finally:
        del QUESTIONS["count"]


def count_objects(cluster: Any, **params: Any) -> int:
    return len(cluster)


def test_at_nodes_in_the_matrix_is_each_node_of_each_cluster(folder: Path) -> None:
    second = {**NODE, "metadata": {"name": "node-b"}}
    (folder / "two.json").write_text(json.dumps([NODE, second]))
    grid = load_grid({"question": "explain", "clusters": {"one": "cluster.json", "two": "two.json"},
                      "matrix": {"node": "@nodes", "seed": [0]}}, base=folder)
    assert [s.name for s in grid.scenarios] == ["one/node=node-a/seed=0", "two/node=node-a/seed=0",
                                                 "two/node=node-b/seed=0"]
    assert [label["node"] for label in grid.labels] == ["node-a", "node-a", "node-b"]
