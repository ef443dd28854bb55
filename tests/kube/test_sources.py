"""Live sources: the read-only commands answer about the API server's cluster as they answer about its dump, one
consistent snapshot is read, and nothing is written to the cluster."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib.cli import main
from kschedlib.kube import KubeClient, dump, snapshot
from kschedlib.kube._resources import resource
from kschedlib.kube._snapshot import list_all
from tests.kube.cluster import create, namespace, node, pod, pods
from tests.kube.envtest import ControlPlane

NS = "sources"


@pytest.fixture(scope="module")
def cluster(admin: KubeClient) -> Iterator[None]:
    namespace(admin, NS)
    for name in ("src-a", "src-b"):
        create(admin, node(name, cpu="2", labels={"pool": "src"}))
    create(admin, pod("bound", NS, scheduler="default-scheduler", cpu="1500m", node_name="src-a",
                      labels={"app": "db"}))
    create(admin, pod("web", NS, scheduler="default-scheduler", cpu="1", node_selector={"pool": "src"}))
    create(admin, pod("huge", NS, scheduler="default-scheduler", cpu="3", node_selector={"pool": "src"}))
    create(admin, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": "db", "namespace": NS},
                   "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})
    yield
    admin.request("DELETE", f"/api/v1/namespaces/{NS}/pods", body={"gracePeriodSeconds": 0})
    for name in ("src-a", "src-b"):
        admin.request("DELETE", f"/api/v1/nodes/{name}")


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def without_timings(text: str) -> Any:
    data = json.loads(text)
    if isinstance(data, dict):
        data.get("summary", {}).pop("seconds", None)
        data.get("summary", {}).pop("pods_per_second", None)
    return data


COMMANDS = [
    ("explain", ["explain", "--pod", f"{NS}/web", "--format", "json"]),
    ("simulate", ["simulate", "--format", "json", "--seed", "3"]),
    ("capacity", ["capacity", "--pod", f"{NS}/web", "--format", "json"]),
    ("drain", ["drain", "--node", "src-a", "--format", "json"]),
    ("compare", ["compare", "--config", "default", "--config", "{most-allocated}", "--format", "json"]),
]


@pytest.mark.usefixtures("cluster")
@pytest.mark.parametrize(("name", "argv"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_live_answers_equal_the_dumps(plane: ControlPlane, admin: KubeClient, tmp_path: Path, name: str,
                                      argv: list[str]) -> None:
    before = {n: p["metadata"]["resourceVersion"] for n, p in pods(admin, NS).items()}
    packing = tmp_path / "most-allocated.json"
    packing.write_text(json.dumps({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "MostAllocated"}}}]}]}))
    argv = [str(packing) if arg == "{most-allocated}" else arg for arg in argv]
    file = tmp_path / "cluster.json"
    status, _, err = run_cli("dump", f"--kubeconfig={plane.kubeconfig}", "-o", str(file))
    assert status == 0, err
    from_file = run_cli(argv[0], str(file), *argv[1:])
    live = run_cli(argv[0], f"--kubeconfig={plane.kubeconfig}", *argv[1:])
    assert from_file[0] == live[0] == 0, (from_file[2], live[2])
    assert without_timings(live[1]) == without_timings(from_file[1])
    assert {n: p["metadata"]["resourceVersion"] for n, p in pods(admin, NS).items()} == before  # nothing written


@pytest.mark.usefixtures("cluster")
def test_nodes_needed_and_sweep_read_the_live_cluster(plane: ControlPlane, tmp_path: Path) -> None:
    template = tmp_path / "node.json"
    template.write_text(json.dumps(node("template", cpu="4", labels={"pool": "src"})))
    status, out, err = run_cli("nodes-needed", f"--kubeconfig={plane.kubeconfig}", "--node-template", str(template),
                               "--format", "json")
    assert status == 0, err
    assert json.loads(out)["nodes_needed"] == 1  # huge (3 CPU) needs a node of its own
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"question": "explain", "params": {"pod": f"{NS}/web"}}))
    status, out, err = run_cli("sweep", str(grid), f"--kubeconfig={plane.kubeconfig}", "--format", "json")
    assert status == 0, err
    [row] = json.loads(out)
    assert row["cluster"] == "live"
    assert row["ok"], row["error"]
    assert row["result"]["selected"] == "src-b"


@pytest.mark.usefixtures("cluster")
def test_a_snapshot_is_one_instant(admin: KubeClient) -> None:
    _, version = list_all(admin, resource("Node"))
    create(admin, pod("later", NS, scheduler="nobody"))
    at_version, _ = list_all(admin, resource("Pod"), resource_version=version)
    now, _ = list_all(admin, resource("Pod"))
    assert "later" not in {p["metadata"]["name"] for p in at_version}
    assert "later" in {p["metadata"]["name"] for p in now}
    admin.request("DELETE", f"/api/v1/namespaces/{NS}/pods/later")


@pytest.mark.usefixtures("cluster")
def test_dump_writes_what_snapshot_reads(admin: KubeClient) -> None:
    out = io.StringIO()
    count = dump(out, client=admin)
    document = json.loads(out.getvalue())
    assert document["kind"] == "List"
    assert len(document["items"]) == count
    assert all("managedFields" not in item["metadata"] for item in document["items"])
    from_dump = kschedlib.load_cluster(document)
    live = snapshot(client=admin)
    assert sorted(p.key for p in live.pods) == sorted(p.key for p in from_dump.pods)
    assert {p.name: p.node_name for p in live.pods if p.namespace == NS} == \
        {"bound": "src-a", "web": "", "huge": ""}
    assert [b.name for b in live.pod_disruption_budgets if b.namespace == NS] == ["db"]


def test_files_and_a_live_cluster_together_are_refused(plane: ControlPlane, tmp_path: Path) -> None:
    status, _, err = run_cli("explain", str(tmp_path / "x.json"), f"--kubeconfig={plane.kubeconfig}", "--pod", "a/b")
    assert status == 2
    assert "not both" in err
    status, _, err = run_cli("explain", "--pod", "a/b")
    assert status == 2
    assert "give cluster file(s) or --kubeconfig" in err
