"""End to end: ``kschedlib capacity | drain | nodes-needed | compare`` and the timeline's node removals."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import kschedlib
from tests.helpers import cli
from tests.whatif.manifests import node, pdb, pod, write_files

MOST = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
                       "template": {"metadata": {"labels": {"app": "api"}}, "spec": {"containers": [
                           {"name": "c", "resources": {"requests": {"cpu": "500m"}}}]}}}}



@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    items = [node("a", zone="z1"), node("b", zone="z2"),
             pod("web-1", node_name="a", owner="ReplicaSet/web", labels={"app": "web"}),
             pod("logs-a", node_name="a", owner="DaemonSet/logs"), pod("big", cpu="3"), pdb("db", "db", 0),
             DEPLOYMENT]
    return write_files(tmp_path, {"cluster": {"apiVersion": "v1", "kind": "List", "items": items},
                                  "pod": pod("x", cpu="1"), "node": node("pool", cpu="4"), "most": MOST})


def test_capacity_json_has_the_documented_fields(files: dict[str, str]) -> None:
    code, out, _ = cli("capacity", files["cluster"], "--pod", files["pod"], "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert {"replicas", "stopped_by", "placements", "templates", "utilisation", "fragmentation"} <= data.keys()
    assert data["replicas"] == sum(data["placements"].values()) == 6
    assert data["stopped_by"].startswith("0/2 nodes are available: 2 Insufficient cpu.")


@pytest.mark.parametrize("command", ["capacity", "drain", "nodes-needed", "compare"])
@pytest.mark.parametrize("fmt", ["json", "yaml", "csv", "text"])
def test_every_subcommand_in_every_format(files: dict[str, str], command: str, fmt: str) -> None:
    args = {"capacity": ["--pod", files["pod"]], "drain": ["--node", "a"],
            "nodes-needed": ["--node-template", files["node"]],
            "compare": ["--config", "default", "--config", files["most"]]}[command]
    code, out, err = cli(command, files["cluster"], *args, "--expand-controllers", "--format", fmt)
    assert (code, err) == (0, "")
    if fmt == "json":
        assert isinstance(json.loads(out), dict)
    elif fmt == "yaml":
        assert yaml.safe_load(out) == json.loads(cli(command, files["cluster"], *args, "--expand-controllers",
                                                     "--format", "json")[1])
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert rows
    else:
        assert out.strip()


def test_drain_cli_reports_a_blocked_node_and_ignoring_budgets(files: dict[str, str], tmp_path: Path) -> None:
    cluster = json.loads(Path(files["cluster"]).read_text())
    cluster["items"].append(pdb("web", "web", 0))
    path = tmp_path / "with-pdb.json"
    path.write_text(json.dumps(cluster))
    data = json.loads(cli("drain", str(path), "--node", "a", "--format", "json")[1])
    assert data["blocked"] == {"a": "not enough pod disruption budget to move default/web-1 (default/web)"}
    forced = json.loads(cli("drain", str(path), "--node", "a", "--ignore-pdbs", "--format", "json")[1])
    assert forced["blocked"] == {}
    assert forced["pdb_violations"] == [{"pod": "default/web-1", "pdb": "default/web", "disruptions_allowed": 0}]


def test_bad_input_is_one_line_and_status_2(files: dict[str, str]) -> None:
    code, out, err = cli("drain", files["cluster"], "--node", "nowhere")
    assert (code, out) == (2, "")
    assert err.startswith("kschedlib: error: ")
    assert "nowhere" in err


def test_simulate_expands_controllers(files: dict[str, str]) -> None:
    data = json.loads(cli("simulate", files["cluster"], "--expand-controllers", "--format", "json")[1])
    assert len([key for key in data["placements"] if key.startswith("default/api-")]) == 2


# --- timelines --------------------------------------------------------------------------------


def _timeline(op: str, **args: Any) -> dict[str, Any]:
    objects = [node("a"), node("b"),
               pod("web-1", node_name="a", owner="ReplicaSet/web", labels={"app": "web"}),
               pod("logs-a", node_name="a", owner="DaemonSet/logs"), pod("bare", node_name="a")]
    return kschedlib.simulate(objects, events=[{"op": op, "name": "a", **args}]).to_dict()


def test_a_deleted_node_no_longer_keeps_its_pods() -> None:
    """Regression: a timeline's delete_node left the node's pods counted on a ghost node, silently."""
    data = _timeline("delete_node")
    assert data["node_removals"] == [{"index": 0, "op": "delete_node", "node": "a",
                                      "rescheduled": ["default/web-1"],
                                      "deleted": ["default/logs-a", "default/bare"]}]
    assert data["placements"]["default/web-1"] == "b"
    assert set(data["deleted_by_events"]) == {"default/logs-a", "default/bare"}


def test_a_drain_step_moves_what_a_drain_moves() -> None:
    data = _timeline("drain_node")
    entry = data["node_removals"][0]
    assert (entry["op"], entry["moved"], entry["left"]) == ("drain_node", ["default/web-1", "default/bare"],
                                                             {"default/logs-a": "DaemonSet pod"})
    assert entry["flags"] == {"default/bare": ["no controller"]}
    assert data["placements"] == {"default/web-1": "b", "default/bare": "b"}


def test_a_drain_step_refuses_a_non_boolean_respect_pdbs() -> None:
    with pytest.raises(kschedlib.ManifestError, match="respect_pdbs"):
        _timeline("drain_node", respect_pdbs="no")
