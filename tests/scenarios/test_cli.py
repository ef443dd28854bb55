"""End-to-end tests of ``python -m kschedlib`` (DESIGN.md "The user-facing entry points")."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kschedlib.cli import main
from tests.helpers import cli

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

ROOT = Path(__file__).resolve().parents[2]
SIMULATE_KEYS = {"placements", "unschedulable", "gated", "nominations", "evicted", "summary", "pending", "attempts",
                 "bind_order"}
SUMMARY_KEYS = {"pods", "scheduled", "unschedulable", "gated", "seconds", "pods_per_second"}
EXPLAIN_KEYS = {"pod", "preenqueue", "prefilter", "prefilter_nodes", "feasible", "filtered", "scores", "best",
                "selected", "message", "postfilter", "num_all_nodes", "evaluated_nodes", "start_index",
                "next_start_index"}



def node(name: str, cpu: str = "4", taints: list[dict[str, str]] | None = None,
         labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def pod(name: str, cpu: str = "1", **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
                     **spec}}


SMALL = [
    node("node-a"),
    node("node-b", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
    node("node-c", cpu="1"),
    pod("web", cpu="2"),
]


def write_json(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return path


@pytest.fixture
def small(tmp_path: Path) -> Path:
    return write_json(tmp_path / "cluster.json", SMALL)


# --- simulate ---------------------------------------------------------------------------------


def test_simulate_the_bundled_example_as_text() -> None:
    code, out, err = cli("simulate")
    assert code == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == "kube-scheduler 1.30"  # the version in force heads the text
    assert lines[1].startswith("input: ")  # the file it read, where a user can open it
    assert lines[1].endswith("example-cluster.json (the bundled example)")
    assert Path(lines[1].removeprefix("input: ").removesuffix(" (the bundled example)")).is_file()
    assert lines[3].split() == ["pod", "node"]
    assert "unschedulable:" in lines
    assert "gated (not tried until their scheduling gates are removed):" in lines
    assert "  default/held: example.com/approval" in lines  # the gate, by name
    assert any(line.startswith("scheduled ") and " of " in line and " pods, " in line for line in lines)
    assert not any("pods/s" in line for line in lines)  # 8 pods: a rate would say nothing
    assert lines[lines.index("next:") + 1].startswith("  kubectl get nodes,pods")  # what to try next
    assert "  kschedlib explain " in "\n".join(lines[lines.index("next:"):])
    assert "(kubectl get node NAME -o json)" in lines[-1]  # where a node template comes from


def test_simulate_prints_each_failure_once(tmp_path: Path) -> None:
    """Regression: every FitError was printed twice (per pod, then counted in the summary)."""
    path = write_json(tmp_path / "full.json", [node("node-a", cpu="1"), *(pod(f"big-{i}", cpu="3") for i in range(3)),
                                               pod("huge", cpu="30")])
    code, out, _ = cli("simulate", str(path))
    assert code == 0
    message = "0/1 nodes are available: 1 Insufficient cpu."
    assert sum(line.count(message) for line in out.splitlines()) == 1  # the three big pods and huge share it
    assert any(line.startswith(f"  default/big-0, default/big-1, default/big-2, default/huge (4 pods): {message}")
               for line in out.splitlines())


def test_simulate_gives_its_speed_only_for_runs_big_enough_to_measure(tmp_path: Path) -> None:
    path = write_json(tmp_path / "many.json", [node("node-a", cpu="64"), *(pod(f"p-{i}", cpu="10m")
                                                                          for i in range(120))])
    assert re.search(r"^\d+\.\d+ s scheduling, [\d.]+ pods/s$", cli("simulate", str(path))[1], re.MULTILINE)


@pytest.mark.parametrize(("cluster", "status"), [
    (SMALL, 0), ([node("node-a", cpu="1"), pod("big", cpu="3")], 3)], ids=["all-placed", "one-unschedulable"])
def test_simulate_fail_on_unschedulable(tmp_path: Path, cluster: list[dict[str, Any]], status: int) -> None:
    path = write_json(tmp_path / "cluster.json", cluster)
    assert cli("simulate", str(path))[0] == 0
    code, out, _ = cli("simulate", str(path), "--fail-on-unschedulable", "--format", "json")
    assert code == status
    assert json.loads(out)["summary"]["unschedulable"] == (status != 0)


def test_simulate_the_bundled_example_as_json() -> None:
    code, out, err = cli("simulate", "--format", "json")
    assert code == 0
    assert err == ""
    report = json.loads(out)
    assert set(report) >= SIMULATE_KEYS
    summary = report["summary"]
    assert set(summary) == SUMMARY_KEYS
    placements = report["placements"]
    assert placements
    assert summary["pods"] == len(set(placements) | set(report["gated"]))
    assert summary["scheduled"] == sum(1 for n in placements.values() if n is not None)
    assert summary["unschedulable"] == len(report["unschedulable"])
    assert summary["gated"] == len(report["gated"])
    assert summary["scheduled"] > 0
    assert summary["unschedulable"] > 0
    assert summary["gated"] > 0
    assert summary["seconds"] >= 0
    assert summary["pods_per_second"] >= 0
    for key, message in report["unschedulable"].items():
        assert placements[key] is None
        assert message.startswith("0/")
        assert " nodes are available: " in message
    assert all(placements.get(key) is None for key in report["gated"])
    for key in report["gated"]:
        assert report["pending"][key]["queue"] == "gated"
        assert report["pending"][key]["plugins"] == ["SchedulingGates"]
    for entry in report["pending"].values():
        assert set(entry) == {"queue", "plugins", "attempts"}
        assert entry["queue"] in {"unschedulable", "gated", "backoff", "active"}
    bound = {entry["pod"]: entry["node"] for entry in report["bind_order"]}
    assert bound == {k: n for k, n in placements.items() if n is not None}
    for entry in report["bind_order"]:
        assert set(entry) == {"pod", "node", "attempt"}
        assert entry["attempt"] == report["attempts"][entry["pod"]]
    assert set(report["attempts"]) == set(placements) - set(report["gated"])


def test_simulate_is_reproducible() -> None:
    def decisions() -> dict[str, Any]:
        report: dict[str, Any] = json.loads(cli("simulate", "--format", "json", "--seed", "7")[1])
        del report["summary"]
        return report

    assert decisions() == decisions()


RETRY = [
    node("node-a"),
    pod("web", cpu="1", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}]}}),
    pod("db", cpu="1", labels={"app": "db"}),
]


def test_simulate_retries_a_pod_when_an_event_may_help(tmp_path: Path) -> None:
    path = write_json(tmp_path / "retry.json", RETRY)
    code, out, _ = cli("simulate", str(path), "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert report["placements"] == {"default/web": "node-a", "default/db": "node-a"}
    assert report["attempts"] == {"default/web": 2, "default/db": 1}
    assert [e["pod"] for e in report["bind_order"]] == ["default/db", "default/web"]
    assert report["unschedulable"] == {}


def test_simulate_once_gives_every_pod_one_attempt(tmp_path: Path) -> None:
    path = write_json(tmp_path / "retry.json", RETRY)
    code, out, _ = cli("simulate", str(path), "--once", "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert report["placements"] == {"default/web": None, "default/db": "node-a"}
    assert report["attempts"] == {"default/web": 1, "default/db": 1}
    assert report["unschedulable"]["default/web"].startswith(
        "0/1 nodes are available: 1 node(s) didn't match pod affinity rules.")
    assert report["pending"]["default/web"]["plugins"] == ["InterPodAffinity"]
    assert report["summary"]["scheduled"] == 1


def test_simulate_once_on_the_bundled_example() -> None:
    code, out, _ = cli("simulate", "--once", "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert set(report["attempts"].values()) == {1}


def test_simulate_a_cluster_file_as_text(small: Path) -> None:
    code, out, _ = cli("simulate", str(small))
    assert code == 0
    assert "default/web" in out
    assert "node-a" in out
    assert "scheduled 1 of 1 pods, 0 unschedulable, 0 gated" in out


def test_simulate_through_a_real_subprocess() -> None:
    done = subprocess.run([sys.executable, "-m", "kschedlib", "simulate", "--format", "json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) >= SIMULATE_KEYS
    assert report == {**json.loads(cli("simulate", "--format", "json")[1]), "summary": report["summary"]}


# --- explain ----------------------------------------------------------------------------------


def check_small_explanation(data: dict[str, Any]) -> None:
    assert set(data) >= EXPLAIN_KEYS
    assert data["pod"] == "default/web"
    assert data["feasible"] == ["node-a"]
    assert data["filtered"] == {
        "node-b": {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
                   "reasons": ["node(s) had untolerated taint {dedicated: gpu}"]},
        "node-c": {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reasons": ["Insufficient cpu"]},
    }
    assert set(data["scores"]) == {"node-a"}
    entry = data["scores"]["node-a"]
    assert entry["total"] == sum(entry["plugins"].values())
    assert entry["plugins"]["TaintToleration"] == 300
    assert data["best"] == ["node-a"]
    assert data["selected"] == "node-a"
    assert data["message"] is None
    assert data["postfilter"] is None
    assert data["num_all_nodes"] == data["evaluated_nodes"] == 3


def test_explain_json(small: Path) -> None:
    code, out, err = cli("explain", str(small), "--pod", "default/web", "--format", "json")
    assert code == 0
    assert err == ""
    check_small_explanation(json.loads(out))


def test_explain_text(small: Path) -> None:
    code, out, _ = cli("explain", str(small), "--pod", "default/web", "--format", "text")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "pod default/web (kube-scheduler 1.30)"
    header = lines[1].split()
    assert header[:2] == ["node", "verdict"]
    assert header[-1] == "total"
    assert "TaintToleration" in header
    rows = {line.split()[0]: line for line in lines[3:] if line.startswith("node-")}
    assert set(rows) == {"node-a", "node-b", "node-c"}
    assert rows["node-a"].split()[1] == "selected"
    data = json.loads(cli("explain", str(small), "--pod", "default/web", "--format", "json")[1])
    assert rows["node-a"].split()[-1] == str(data["scores"]["node-a"]["total"])
    assert "TaintToleration: node(s) had untolerated taint {dedicated: gpu}" in rows["node-b"]
    assert "NodeResourcesFit: Insufficient cpu" in rows["node-c"]
    assert "evaluated 3 of 3 nodes" in lines


def test_explain_a_pod_that_fits_nowhere(tmp_path: Path) -> None:
    path = write_json(tmp_path / "full.json", [node("node-a", cpu="1"), pod("big", cpu="3")])
    code, out, _ = cli("explain", str(path), "--pod", "default/big", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["feasible"] == []
    assert data["selected"] is None
    assert data["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    code, text, _ = cli("explain", str(path), "--pod", "default/big", "--format", "text")
    assert code == 0
    assert "0/1 nodes are available: 1 Insufficient cpu." in text.splitlines()


def test_explain_a_pod_file(tmp_path: Path, small: Path) -> None:
    pod_file = tmp_path / "pod.json"
    pod_file.write_text(json.dumps(pod("other", cpu="500m")), encoding="utf-8")
    code, out, _ = cli("explain", str(small), "--pod", str(pod_file), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["pod"] == "default/other"
    assert data["feasible"] == ["node-a", "node-c"]


def test_explain_multi_document_yaml(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(SMALL), encoding="utf-8")
    for form in ("json", "text"):
        code, out, err = cli("explain", str(path), "--pod", "default/web", "--format", form)
        assert code == 0, err
        if form == "json":
            check_small_explanation(json.loads(out))
        else:
            assert out.startswith("pod default/web (kube-scheduler 1.30)\n")


def test_explain_start_index_and_config(tmp_path: Path) -> None:
    path = write_json(tmp_path / "cluster.json", [node("node-a"), node("node-b"), pod("web")])
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                  "profiles": [{"plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}}]}),
                      encoding="utf-8")
    code, out, _ = cli("explain", str(path), "--pod", "default/web", "--config", str(config), "--start-index", "1",
                         "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["start_index"] == 1
    assert data["next_start_index"] == 1
    assert data["feasible"] == ["node-a", "node-b"]


def _many_nodes(tmp_path: Path, count: int) -> tuple[Path, Path]:
    path = write_json(tmp_path / "big.json", [*(node(f"n{i:03d}") for i in range(count)), pod("web")])
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                                  "percentageOfNodesToScore": 10}), encoding="utf-8")
    return path, config


def test_explain_evaluates_every_node_without_a_config(tmp_path: Path) -> None:
    path, _ = _many_nodes(tmp_path, 300)
    data = json.loads(cli("explain", str(path), "--pod", "default/web", "--format", "json")[1])
    assert data["evaluated_nodes"] == 300


def test_explain_honours_percentage_of_nodes_to_score_from_a_config_file(tmp_path: Path) -> None:
    path, config = _many_nodes(tmp_path, 300)
    data = json.loads(cli("explain", str(path), "--pod", "default/web", "--config", str(config), "--format",
                           "json")[1])
    # 300 nodes at 10 %: 100 feasible nodes are enough; the 101st passing node is dropped (reference §3 step 8)
    assert data["evaluated_nodes"] == 100
    assert data["next_start_index"] == 100


# --- bad input: exit code 2 and a clear message -----------------------------------------------


def _error(code: int, out: str, err: str) -> str:
    assert code == 2
    assert out == ""
    assert err.startswith("kschedlib: error: ")
    assert err.endswith("\n")
    return err


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_missing_cluster_file(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "nope.json"
    extra = ["--pod", "default/web"] if command == "explain" else []
    err = _error(*cli(command, str(missing), *extra))
    assert str(missing) in err
    assert "cannot read file" in err


MALFORMED = [
    ("invalid-json", '{"kind": "List", "items": [', "invalid JSON"),
    ("bad-quantity", json.dumps({"kind": "List", "items": [node("n1"), pod("web", cpu="two")]}),
     "spec.containers[0].resources.requests.cpu"),
    ("bad-taint-effect", json.dumps({"kind": "List", "items": [
        node("n1", taints=[{"key": "k", "effect": "Never"}]), pod("web")]}), "spec.taints[0].effect"),
    ("bad-selector-operator", json.dumps({"kind": "List", "items": [node("n1"), pod("web", affinity={
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "Like", "values": ["x"]}]}]}}})]}), "operator"),
]


@pytest.mark.parametrize(("text", "fragment"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_malformed_manifest(tmp_path: Path, command: str, text: str, fragment: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(text, encoding="utf-8")
    extra = ["--pod", "default/web"] if command == "explain" else []
    err = _error(*cli(command, str(path), *extra))
    assert fragment in err


BAD_CONFIGS = [
    ("bad-field", {"parallelism": 0}, "parallelism"),
    ("unknown-plugin", {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}]},
     'FilterPlugin "Nope" does not exist'),
    ("wrong-kind", {"kind": "Pod"}, "holds cluster objects (a Pod), not a KubeSchedulerConfiguration"),
]


@pytest.mark.parametrize(("config", "fragment"), [b[1:] for b in BAD_CONFIGS], ids=[b[0] for b in BAD_CONFIGS])
@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_bad_config(tmp_path: Path, small: Path, command: str, config: dict[str, Any], fragment: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    extra = ["--pod", "default/web"] if command == "explain" else []
    err = _error(*cli(command, str(small), *extra, "--config", str(path)))
    assert fragment in err


@pytest.mark.parametrize(("text", "why"), [(None, "cannot read file"), ("{bad", "invalid JSON")])
def test_unreadable_config_file(tmp_path: Path, small: Path, text: str | None, why: str) -> None:
    path = tmp_path / "config.json"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    err = _error(*cli("simulate", str(small), "--config", str(path)))
    assert err.startswith(f"kschedlib: error: {path}: {why}")
    assert err.count("config.json") == 1  # named once, with no placeholder field


def test_unknown_pod(small: Path) -> None:
    err = _error(*cli("explain", str(small), "--pod", "default/ghost"))
    assert "default/ghost" in err


def test_usage_errors_exit_2() -> None:
    code, out, err = cli("explain")
    assert (code, out) == (2, "")
    assert "the following arguments are required: --pod" in err
    code, out, err = cli("simulate", "--format", "xml")
    assert (code, out) == (2, "")
    assert "invalid choice: 'xml'" in err


def test_simulate_pops_by_priority_then_file_order(tmp_path: Path) -> None:
    items = [node("node-a", cpu="2"), pod("early", cpu="1"), pod("late", cpu="1"),
             pod("urgent", cpu="1", priority=1000, preemptionPolicy="Never")]
    path = write_json(tmp_path / "priority.json", items)
    report = json.loads(cli("simulate", str(path), "--once", "--format", "json")[1])
    assert [entry["pod"] for entry in report["bind_order"]] == ["default/urgent", "default/early"]
    assert report["placements"]["default/late"] is None


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_simulate_without_a_terminal_prints_no_progress() -> None:
    err = io.StringIO()
    assert main(["simulate"], out=io.StringIO(), err=err) == 0
    assert err.getvalue() == ""


def test_simulate_on_a_terminal_ends_its_progress_with_the_final_count() -> None:
    err = Terminal()
    assert main(["simulate"], out=io.StringIO(), err=err) == 0
    last = err.getvalue().rstrip("\n").rsplit("\r", 1)[-1]
    assert re.fullmatch(r"\d+ attempts, 8 pods: 5 scheduled", last), repr(err.getvalue())


def test_yaml_config_file(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    path = write_json(tmp_path / "cluster.json", [node("node-a"), node("node-b"), pod("web")])
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler",
                      "plugins": {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality"}]}}}],
    }), encoding="utf-8")
    data = json.loads(cli("explain", str(path), "--pod", "default/web", "--config", str(config), "--format",
                           "json")[1])
    assert {name: entry["plugins"] for name, entry in data["scores"].items()} == {
        "node-a": {"ImageLocality": 0}, "node-b": {"ImageLocality": 0}}
    assert data["best"] == ["node-a", "node-b"]
    code, out, _ = cli("simulate", str(path), "--config", str(config), "--format", "json")
    assert code == 0
    assert json.loads(out)["placements"]["default/web"] in {"node-a", "node-b"}


# --- what the text says about bound and gated pods ----------------------------------------------


def test_explain_of_a_bound_pod_says_where_it_is_bound(tmp_path: Path) -> None:
    path = write_json(tmp_path / "cluster.json", [node("node-a"), node("node-b"), pod("db", nodeName="node-b")])
    code, out, _ = cli("explain", str(path), "--pod", "default/db")
    assert code == 0
    assert out.splitlines()[1].startswith("bound to node-b: kube-scheduler never schedules a bound pod again")
    data = json.loads(cli("explain", str(path), "--pod", "default/db", "--format", "json")[1])
    assert data["bound_to"] == "node-b"
    pending = json.loads(cli("explain", str(path), "--pod", str(write_json(tmp_path / "p.json", [pod("p")])),
                             "--format", "json")[1])
    assert pending["bound_to"] is None


def test_a_gated_pod_names_its_gates(tmp_path: Path) -> None:
    """Regression: explain's text was an empty table."""
    gated = pod("held", schedulingGates=[{"name": "example.com/a"}, {"name": "example.com/b"}])
    path = write_json(tmp_path / "cluster.json", [node("node-a"), gated])
    code, out, _ = cli("explain", str(path), "--pod", "default/held")
    assert code == 0
    assert out.splitlines()[1] == ("not tried: SchedulingGates holds the pod back (waiting for scheduling gates: "
                                   "[example.com/a example.com/b]); it is tried once every gate is removed")
    code, out, _ = cli("explain", str(path), "--pod", "default/held", "--format", "csv")
    assert list(csv.DictReader(io.StringIO(out))) == [  # it was an empty line, not even a header
        {"pod": "default/held", "node": "", "verdict": "not tried", "plugin": "SchedulingGates",
         "reasons": "waiting for scheduling gates: [example.com/a example.com/b]", "total": ""}]
    report = json.loads(cli("simulate", str(path), "--format", "json")[1])
    assert report["gates"] == {"default/held": ["example.com/a", "example.com/b"]}
    assert "  default/held: example.com/a, example.com/b" in cli("simulate", str(path))[1].splitlines()


def test_simulate_csv_is_one_row_per_pending_pod_with_its_state() -> None:
    code, out, _ = cli("simulate", "--format", "csv")
    assert code == 0
    rows = {row["pod"]: row for row in csv.DictReader(io.StringIO(out))}
    assert (rows["default/held"]["state"], rows["default/held"]["reason"]) == ("gated", "example.com/approval")
    assert rows["default/batch-huge"]["state"] == "unschedulable"
    assert rows["default/batch-huge"]["reason"].startswith("0/6 nodes are available: ")
    assert {row["state"] for row in rows.values()} == {"scheduled", "unschedulable", "gated"}
