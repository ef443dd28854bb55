"""The capacity questions' less travelled paths: inputs in other forms, flags, texts, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib import capacity
from kschedlib.errors import ManifestError
from tests.whatif.manifests import node, pdb, pod


def test_compare_labels_configs_by_file_name_default_and_position(tmp_path: Path) -> None:
    config = tmp_path / "packing.json"
    config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                  "kind": "KubeSchedulerConfiguration"}))
    result = capacity.compare([node("a"), pod("p")], [None, str(config), {"profiles": []}])
    assert result.configs == ("default", str(config), "config-3")
    assert result.differences == {}
    assert "0 pod(s) placed differently" in result.text()


@pytest.mark.parametrize(("annotations", "namespace", "budgets", "flag"), [
    pytest.param({"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}, "default", [], "not safe to evict",
                 id="not-safe"),
    pytest.param(None, "kube-system", [], "kube-system pod without a PodDisruptionBudget", id="kube-system"),
    pytest.param(None, "kube-system", [pdb("dns", "dns", 1, namespace="kube-system")], None, id="kube-system-pdb"),
])
def test_drain_flags(annotations: dict[str, str] | None, namespace: str, budgets: list[dict[str, Any]],
                     flag: str | None) -> None:
    moved = pod("dns", node_name="a", owner="ReplicaSet/dns", labels={"app": "dns"}, namespace=namespace,
                annotations=annotations)
    report = capacity.drain([node("a"), node("b"), moved, *budgets], ["a"])
    assert report.pods[f"{namespace}/dns"]["flags"] == ([flag] if flag else [])


def test_drain_reports_what_moved_pods_preempted() -> None:
    objects = [node("a", cpu="2"), node("b", cpu="2"),
               pod("low", cpu="2", node_name="b", owner="ReplicaSet/low", priority=0),
               pod("high", cpu="2", node_name="a", owner="ReplicaSet/high", priority=1000)]
    report = capacity.drain(objects, ["a"])
    assert report.evicted == ("default/low",)
    assert report.pods["default/high"]["to"] == "b"
    assert "evicted: default/low" in report.text()


def test_nodes_needed_reads_a_node_template_file_or_a_node(tmp_path: Path) -> None:
    path = tmp_path / "node.json"
    path.write_text(json.dumps(node("pool", cpu="8")))
    objects = [node("a", cpu="1"), pod("p", cpu="3"), pod("q", cpu="3")]
    from_file = capacity.nodes_needed(objects, str(path))
    from_node = capacity.nodes_needed(objects, kschedlib.load_cluster([node("pool", cpu="8")]).nodes[0])
    assert from_file.nodes_needed == from_node.nodes_needed == 1
    assert "1 node(s) of template pool needed" in from_file.text()
    assert from_file.rows()[0] == {"pod": "default/p", "node": "pool-1", "new_node": True, "reason": ""}


def test_nodes_needed_says_which_pods_no_node_helps_in_text() -> None:
    report = capacity.nodes_needed([node("a"), pod("huge", cpu="100")], node("pool"), limit=2)
    assert report.nodes_needed == 0
    lead = f"no number of such nodes helps (scheduling messages from the try with {report.limit} added):"
    assert lead in report.text().splitlines()
    assert report.rows() == [{"pod": "default/huge", "node": "", "new_node": False,
                              "reason": report.not_helped["default/huge"]}]


@pytest.mark.parametrize(("template", "limit", "message"), [
    pytest.param(node("pool"), -1, "whole number", id="negative-limit"),
    pytest.param("two-nodes", 5, "exactly one Node", id="two-nodes"),
])
def test_nodes_needed_refuses_bad_input(tmp_path: Path, template: Any, limit: int, message: str) -> None:
    if template == "two-nodes":
        path = tmp_path / "nodes.json"
        path.write_text(json.dumps([node("x"), node("y")]))
        template = str(path)
    with pytest.raises(ManifestError, match=message):
        capacity.nodes_needed([node("a")], template, limit=limit)


def test_pending_pods_left_pending_do_not_take_part_in_max_replicas() -> None:
    objects = [node("a", cpu="2"), pod("never", cpu="64")]
    report = capacity.max_replicas(objects, pod("x", cpu="1"), include_pending=True)
    assert report.pending == {"default/never": None}
    assert report.replicas == 2


def test_expand_controllers_takes_model_objects_and_clusters() -> None:
    cluster = kschedlib.load_cluster([node("a")])
    stateful = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}}
    extra = kschedlib.load_cluster([node("b")]).nodes[0]
    expanded = capacity.expand_controllers([cluster, extra, stateful])
    assert [n.name for n in expanded.nodes] == ["a", "b"]
    assert [p.name for p in expanded.pending_pods] == ["db-0"]


def test_a_daemon_set_respects_required_node_affinity() -> None:
    daemon = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "gpu-agent"},
              "spec": {"template": {"spec": {"containers": [{"name": "c"}], "affinity": {"nodeAffinity": {
                  "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z2"]}]}]}}}}}}}
    pods = capacity.expand_controllers([node("a", zone="z1"), node("b", zone="z2"), daemon]).pending_pods
    assert [p.affinity.node_affinity.required.terms[0].match_fields[0].values  # type: ignore[union-attr]
            for p in pods] == [("b",)]


def test_explanation_of_a_pod_being_deleted_and_a_refused_pod() -> None:
    sched = kschedlib.Scheduler()
    sched.add_node(kschedlib.load_cluster([node("a")]).nodes[0])
    leaving = kschedlib.load_cluster([pod("p")]).pods[0]
    import attrs
    answer = sched.explain(attrs.evolve(leaving, deletion_timestamp=1.0))
    assert answer.to_dict()["skipped_pod"] == "skip schedule deleting pod: default/p"
    assert answer.selected is None
    assert not answer.refused
    other = sched.explain(attrs.evolve(leaving, scheduler_name="other"))
    assert other.refused


def test_answers_survive_pickling_for_process_pools() -> None:
    import pickle
    objects = [node("a"), node("b"), pod("w", node_name="a", owner="ReplicaSet/w"), pod("p")]
    answers: list[capacity.ReplicaReport | capacity.DrainReport | capacity.NodesNeededReport | capacity.Comparison]
    answers = [capacity.max_replicas(objects, pod("x"), feature_gates={"SchedulerPopFromBackoffQ": False}),
               capacity.drain(objects, ["a"]), capacity.nodes_needed(objects, node("pool")),
               capacity.compare(objects, [None, None], labels=["x", "y"])]
    for answer in answers:
        back = pickle.loads(pickle.dumps(answer))
        assert back.to_dict() == answer.to_dict()
    replicas = answers[0]
    assert isinstance(replicas, capacity.ReplicaReport)
    assert pickle.loads(pickle.dumps(replicas.kube)) == replicas.kube


def test_copies_skip_names_the_cluster_already_uses() -> None:
    objects = [node("a"), pod("web-0", node_name="a"), pod("web-2", node_name="a")]
    report = capacity.max_replicas(objects, pod("web", cpu="1"), limit=2)
    assert report.replicas == 2
    assert report.stopped_by is None
