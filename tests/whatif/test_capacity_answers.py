"""Answers a planner can trust: held pods, preemption, pods that fit today, drains of a dump with
pending pods (issues: nodes-needed answered its search limit for a gated pod, capacity died on a held
template, a drain "moved" pods that were pending in the dump)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib import capacity
from kschedlib.report import render_html
from tests.helpers import cli
from tests.whatif.manifests import node, pdb, pod, write_files

GATES = "SchedulingGates: waiting for scheduling gates: [example.com/hold]"


def gated(name: str, cpu: str = "1") -> dict[str, Any]:
    held = pod(name, cpu=cpu)
    held["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
    return held


def deleting(name: str, cpu: str = "1") -> dict[str, Any]:
    leaving = pod(name, cpu=cpu)
    leaving["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return leaving



# --- nodes_needed ---------------------------------------------------------------------------


@pytest.mark.parametrize(("never_tried", "reason"), [
    (gated("held"), GATES),
    (deleting("held"), "skip schedule deleting pod: default/held"),
], ids=["gated", "deleting"])
def test_pods_never_tried_are_not_helped_and_the_search_is_right(never_tried: dict[str, Any], reason: str) -> None:
    """Regression: one gated (or deleting) pod made the answer the search limit."""
    objects = [node("a", cpu="2"), pod("big", cpu="3"), never_tried]
    report = capacity.nodes_needed(objects, node("pool", cpu="4"), limit=20)
    assert report.nodes_needed == 1
    assert report.not_helped == {"default/held": reason}
    assert report.placements == {"default/big": "pool-1"}


def test_pods_that_fit_today_go_to_the_existing_nodes_first() -> None:
    """Regression: small pods filled the new empty nodes first (5 nodes where 1 does)."""
    objects = [node("a", cpu="4"), *(pod(f"web-{i}", cpu="1") for i in range(4)), pod("huge", cpu="7")]
    report = capacity.nodes_needed(objects, node("pool", cpu="8"), limit=20)
    assert report.nodes_needed == 1
    assert report.new_node_pods == {"pool-1": ("default/huge",)}
    assert {report.placements[f"default/web-{i}"] for i in range(4)} == {"a"}
    assert report.not_helped == {}
    assert "  pool-1: default/huge" in report.text().splitlines()


def test_only_the_pods_that_fit_nowhere_today() -> None:
    # a and b each fit on their own, not together: all pending pods need a node, only big fits nowhere today
    objects = [node("n", cpu="2"), pod("a", cpu="2"), pod("b", cpu="2"), pod("big", cpu="3")]
    everything = capacity.nodes_needed(objects, node("pool", cpu="5"))
    assert (everything.nodes_needed, everything.new_node_pods) == (1, {"pool-1": ("default/b", "default/big")})
    today = capacity.nodes_needed(objects, node("pool", cpu="5"), only_unschedulable=True)
    assert (today.nodes_needed, today.fit_today) == (1, ("default/a", "default/b"))
    assert today.placements == {"default/big": "pool-1"}
    assert today.to_dict()["only_unschedulable"] is True
    assert {row["pod"]: row["reason"] for row in today.rows()}["default/a"] == \
        "fits on an existing node today (left out)"


def test_a_pod_that_preempts_its_way_in_needs_no_new_node() -> None:
    """Regression: its victims were never deleted, so it was planned for as if preemption did not exist (a
    new node for it, or none helps when the template lacks what it needs); simulate places it."""
    objects = [node("a", cpu="4", **{"nvidia.com/gpu": "2"}),
               pod("low", cpu="1", node_name="a", priority=1, extended={"nvidia.com/gpu": "2"}),
               pod("urgent", cpu="1", priority=1000, extended={"nvidia.com/gpu": "2"}), pod("web", cpu="3500m")]
    report = capacity.nodes_needed(objects, node("pool", cpu="4"))
    assert kschedlib.simulate(objects).placements == {"default/urgent": "a", "default/web": None}
    assert (report.nodes_needed, report.placements["default/urgent"], report.evicted) == (1, "a", ("default/low",))
    assert report.new_node_pods == {"pool-1": ("default/web",)}
    assert report.not_helped == {}
    assert "evicted by their preemptions: default/low" in report.text()
    assert "<td>default/low</td><td>evicted by preemption</td>" in render_html(report)
    today = capacity.nodes_needed(objects, node("pool", cpu="4"), only_unschedulable=True)
    assert (today.nodes_needed, today.fit_today, today.not_helped) == (1, ("default/urgent",), {})


def test_the_bundled_example_with_its_gated_pod_needs_one_node() -> None:
    code, out, err = cli("nodes-needed", str(Path(capacity.__file__).parents[1] / "simulation" / "data" /
                                             "example-cluster.json"),
                         "--node-template", str(Path(__file__).parents[2] / "docs" / "tutorial" / "pool-node.json"),
                         "--format", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["nodes_needed"] == 1  # it said 100, the search limit
    assert data["not_helped"]["default/held"].startswith("SchedulingGates: waiting for scheduling gates")


# --- max_replicas ---------------------------------------------------------------------------


def _held_by_a_claim_template(name: str) -> dict[str, Any]:
    template = pod(name)
    template["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]
    return template


def _held_by_a_missing_claim(name: str) -> dict[str, Any]:
    template = pod(name)
    template["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "missing"}]
    return template


@pytest.mark.parametrize(("template", "plugin", "reason"), [
    (gated("x"), "SchedulingGates", "waiting for scheduling gates: [example.com/hold]"),
    (_held_by_a_claim_template("x"), "DynamicResources", 'pod "default/x-0": ResourceClaim not created yet'),
    (_held_by_a_missing_claim("x"), "DynamicResources", 'could not find ResourceClaim "default/missing"'),
], ids=["scheduling-gates", "claim-template", "missing-claim"])
def test_a_template_held_before_scheduling_answers_zero_with_the_reason(template: dict[str, Any], plugin: str,
                                                                       reason: str) -> None:
    """Regression: a bare AssertionError."""
    report = capacity.max_replicas([node("a"), node("b")], template)
    assert (report.replicas, report.held_by, report.stopped_by, report.stopped_pod) == (0, plugin, reason,
                                                                                          "default/x")
    assert f"not tried: {plugin} holds default/x before scheduling: {reason}" in report.text()


def test_the_copy_that_would_fit_by_preemption_names_the_victims() -> None:
    """Regression: stopped_by said only Insufficient cpu."""
    objects = [node("a", cpu="4"), pod("low", cpu="3", node_name="a", priority=1), pod("other", cpu="1", node_name="a",
                                                                                       priority=1000)]
    report = capacity.max_replicas(objects, pod("urgent", cpu="2", priority=100))
    assert report.replicas == 0
    assert report.stopped_by is not None
    assert report.stopped_by.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert report.preemption == {"node": "a", "victims": ["default/low"]}
    assert "the next copy would fit on a by preempting lower-priority pod(s): default/low" in report.text()
    assert capacity.max_replicas(objects, pod("same", cpu="2", priority=1)).preemption is None


def test_pending_pods_scheduled_first_preempt_as_in_kube() -> None:
    """Regression: a pending pod that fits by preemption was dropped with its victims left running."""
    objects = [node("a", cpu="4"), pod("low", cpu="3", node_name="a", priority=1),
               pod("urgent", cpu="2", priority=1000)]
    report = capacity.max_replicas(objects, pod("web", cpu="1"), include_pending=True)
    assert report.pending == {"default/urgent": "a"}
    assert report.replicas == 2  # low evicted: 4 - 2 CPU
    assert report.to_dict()["evicted"] == ["default/low"]
    assert report.text().endswith("1 placed, 0 not; evicted by their preemptions: default/low")


def test_the_pending_pods_choice_is_in_the_answer() -> None:
    objects = [node("a"), pod("waiting", cpu="3")]
    left_out = capacity.max_replicas(objects, pod("x"))
    assert (left_out.include_pending, left_out.pending) == (False, {"default/waiting": None})
    assert "the cluster's 1 pending pod(s) were left out (--include-pending schedules them first)" in left_out.text()
    first = capacity.max_replicas(objects, pod("x"), include_pending=True)
    assert first.to_dict()["pending"] == {"default/waiting": "a"}
    assert "the cluster's 1 pending pod(s) were scheduled first: 1 placed, 0 not" in first.text()


DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "default"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "api"}},
                       "template": {"metadata": {"labels": {"app": "api"}}, "spec": {"containers": [
                           {"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}}}


def test_a_deployment_passed_as_the_pod_with_expand_controllers(tmp_path: Path) -> None:
    files = write_files(tmp_path, {"cluster": {"kind": "List", "items": [node("a"), node("b")]},
                                   "deploy": DEPLOYMENT})
    code, _, err = cli("capacity", files["cluster"], "--pod", files["deploy"])
    assert code == 2
    assert "expected exactly one Pod, found a Deployment" in err
    assert err.rstrip().endswith("or add --expand-controllers (expand_controllers=True) to copy its pod template")
    code, out, err = cli("capacity", files["cluster"], "--pod", files["deploy"], "--expand-controllers",
                         "--format", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["replicas"] == 4
    (template,) = data["templates"]
    assert template.startswith("default/api-")


def test_a_mistyped_pod_name_with_expand_controllers_gets_the_close_matches(tmp_path: Path) -> None:
    """Regression: with --expand-controllers the name was read as a controller file ("cannot read file")."""
    cluster = write_files(tmp_path, {"cluster": {"kind": "List", "items": [node("a"), pod("web-1")]}})["cluster"]
    code, _, err = cli("capacity", cluster, "--pod", "web", "--expand-controllers")
    assert code == 2
    assert "no such pod in the cluster, and not a readable pod file; did you mean web-1?" in err


# --- drain ------------------------------------------------------------------------------------


def _drain_files(tmp_path: Path, *extra: dict[str, Any]) -> str:
    items = [node("a"), node("b", cpu="4"),
             pod("web-1", cpu="2", node_name="a", owner="ReplicaSet/web", labels={"app": "web"}),
             pod("waiting", cpu="1"), *extra]
    return write_files(tmp_path, {"cluster": {"kind": "List", "items": items}})["cluster"]


def test_pods_pending_in_the_dump_are_not_moved_from_a_node(tmp_path: Path) -> None:
    """Regression: a pending pod placed on the drained node first was listed as moved from it."""
    report = capacity.drain(_drain_files(tmp_path), ["a"])
    assert set(report.pods) == {"default/web-1"}
    assert report.pending == {"default/waiting": "b"}


def test_drain_text_has_a_summary_and_the_budget_violations(tmp_path: Path) -> None:
    cluster = _drain_files(tmp_path, pdb("web", "web", 0))
    code, out, _ = cli("drain", cluster, "--node", "a")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "a: not drained: not enough pod disruption budget to move default/web-1 (default/web)"
    assert "PodDisruptionBudget violations on a (not drained):" in lines
    assert "  default/web-1: default/web allows 0 more disruption(s)" in lines
    assert lines[-1] == ("drained 0 of 1 node(s): 0 pod(s) moved, 0 placed, 0 unschedulable, "
                         "1 PodDisruptionBudget violation(s), 0 evicted")
    assert lines[-2] == "the cluster's 1 pending pod(s) were scheduled first: 1 placed, 0 not"
    code, out, _ = cli("drain", cluster, "--node", "a", "--ignore-pdbs")
    assert "PodDisruptionBudget violations on a (drained anyway: budgets ignored):" in out.splitlines()


def test_drain_text_names_the_pending_pods_that_found_no_node(tmp_path: Path) -> None:
    """Regression: the text said nothing of the dump's pending pods (only the JSON had them), so a pod that
    fit nowhere before the drain went unmentioned beside "0 unschedulable"."""
    cluster = _drain_files(tmp_path, pod("huge", cpu="64"))
    code, out, _ = cli("drain", cluster, "--node", "a")
    assert code == 0
    assert out.splitlines()[-2] == "the cluster's 2 pending pod(s) were scheduled first: 1 placed, 1 not (default/huge)"


def test_drain_says_why_a_moved_pod_got_no_attempt(tmp_path: Path) -> None:
    """Regression: a moved pod for a scheduler without a profile here read "unschedulable: None"."""
    other = pod("batch-on-a", node_name="a", owner="ReplicaSet/batch")
    other["spec"]["schedulerName"] = "volcano"
    cluster = _drain_files(tmp_path, other)
    code, out, _ = cli("drain", cluster, "--node", "a")
    assert code == 0
    assert ('default/batch-on-a: a -> unschedulable: profile not found for scheduler name "volcano"'
            in out.splitlines())
    assert "None" not in out


@pytest.mark.parametrize(("extra", "status"), [
    ((), 0), ((pod("big-on-a", cpu="2", node_name="a", owner="ReplicaSet/big"),), 3),
    ((pdb("web", "web", 0),), 3)], ids=["all-moved", "one-unschedulable", "blocked"])
def test_drain_fail_on_unschedulable(tmp_path: Path, extra: tuple[dict[str, Any], ...], status: int) -> None:
    cluster = _drain_files(tmp_path, *extra)
    assert cli("drain", cluster, "--node", "a")[0] == 0
    assert cli("drain", cluster, "--node", "a", "--fail-on-unschedulable")[0] == status


def test_a_pod_for_another_scheduler_is_not_helped_and_says_why() -> None:
    other = pod("batch")
    other["spec"]["schedulerName"] = "volcano"
    report = capacity.nodes_needed([node("a", cpu="1"), other, pod("big", cpu="3")], node("pool", cpu="4"))
    assert report.nodes_needed == 1
    assert report.not_helped == {"default/batch": 'profile not found for scheduler name "volcano"'}


def test_a_daemon_set_is_no_template_for_copies(tmp_path: Path) -> None:
    daemons = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "logs"},
               "spec": {"selector": {"matchLabels": {"app": "logs"}},
                        "template": {"metadata": {"labels": {"app": "logs"}}, "spec": {"containers": [{"name": "c"}]}}}}
    files = write_files(tmp_path, {"cluster": {"kind": "List", "items": [node("a")]}, "daemons": daemons})
    code, _, err = cli("capacity", files["cluster"], "--pod", files["daemons"], "--expand-controllers")
    assert code == 2
    assert "expected exactly one Pod, found a DaemonSet" in err
