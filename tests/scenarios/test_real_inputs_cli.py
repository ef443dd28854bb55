"""explain and simulate on real-world inputs (tests/data/inputs): what they decide, skip and refuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from tests.helpers import cli

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

INPUTS = Path(__file__).resolve().parents[1] / "data" / "inputs"
LABEL_VALUE_ERROR = (
    'values[0][app]: Invalid value: "web server": a valid label must be an empty string or consist of alphanumeric '
    "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
pytest.importorskip("yaml")



def data(name: str) -> str:
    return str(INPUTS / name)


def test_several_cluster_files_on_the_command_line() -> None:
    code, out, _ = cli("simulate", data("raw-nodelist.json"), data("raw-podlist.json"), "--format", "json")
    assert code == 0
    assert json.loads(out)["placements"]["default/web"] in {"node-a", "node-b"}  # equal scores: seeded tie-break
    code, out, _ = cli("explain", data("raw-nodelist.json"), data("raw-podlist.json"), "--pod", "default/web",
                       "--format", "json")
    assert (code, json.loads(out)["feasible"]) == (0, ["node-a", "node-b"])


@pytest.mark.parametrize("file", ["concatenated.json", "utf16-bom.json", "utf8-bom.json", "unquoted-timestamps.yaml"])
def test_real_dump_shapes_simulate(file: str) -> None:
    code, out, _ = cli("simulate", data(file), "--format", "json")
    assert (code, json.loads(out)["placements"]) == (0, {"default/web": "node-a"})


def test_skipped_section_and_summary_line() -> None:
    code, out, _ = cli("simulate", data("mixed-kinds.json"), "--format", "json")
    report = json.loads(out)
    assert code == 0
    assert report["placements"] == {"default/web-1": "node-a"}
    assert report["skipped"] == {
        "kinds": {"Certificate": 1, "ConfigMap": 1, "DaemonSet": 1, "Deployment": 1, "StatefulSet": 1},
        "custom_resources": ["Certificate"],
        "other_schedulers": {"default/batch-job": "volcano"},
        "deleting": [],
        "finished": [],
        "duplicates": [],
    }
    _, text, _ = cli("simulate", data("mixed-kinds.json"))
    lines = text.splitlines()
    assert lines[lines.index("next:") - 2] == (
        "skipped: 1 DaemonSet, 1 Deployment, 1 StatefulSet (controllers: their pods are not created); "
        "1 Certificate (custom resources); 1 ConfigMap (not read by the scheduler); "
        "1 pending pod(s) for schedulers without a profile (volcano)")
    assert lines[lines.index("next:") + 1] == (  # the way to have the controllers' pods
        f"  kschedlib simulate {data('mixed-kinds.json')} --expand-controllers   # create the pods of its "
        "Deployments, StatefulSets, Jobs, ... first")
    _, text, _ = cli("explain", data("mixed-kinds.json"), "--pod", "default/web-1", "--format", "text")
    assert text.splitlines()[-1].startswith("skipped: 1 DaemonSet")


def test_nothing_skipped_prints_no_line() -> None:
    _, text, _ = cli("simulate", data("concatenated.json"))
    assert "skipped" not in text


def test_explain_for_a_pod_of_an_unknown_scheduler_exits_non_zero() -> None:
    code, out, err = cli("explain", data("other-scheduler-pod.json"), "--pod", "default/gang-1", "--format", "json")
    assert code == 1
    assert json.loads(out)["error"] == 'profile not found for scheduler name "volcano"'
    assert json.loads(out)["skipped"]["other_schedulers"] == {"default/gang-1": "volcano"}
    assert err == 'kschedlib: error: profile not found for scheduler name "volcano"\n'


def test_pod_file_holding_a_deployment() -> None:
    code, _, err = cli("explain", data("concatenated.json"), "--pod", data("deployment.json"))
    assert code == 2
    assert "expected exactly one Pod, found a Deployment; kschedlib schedules pods" in err


def test_helm_template_cluster_file() -> None:
    code, _, err = cli("simulate", data("helm-template.yaml"))
    assert code == 2
    assert "unrendered Helm template" in err
    assert "invalid" not in err


def test_pending_pod_being_deleted_is_skipped() -> None:
    code, out, _ = cli("simulate", data("deleting-pod.json"), "--format", "json")
    report = json.loads(out)
    assert report["placements"] == {"default/web": "node-a"}
    assert report["skipped"]["deleting"] == ["default/leaving"]
    code, out, _ = cli("explain", data("deleting-pod.json"), "--pod", "default/leaving", "--format", "json")
    result = json.loads(out)
    assert (code, result["skipped_pod"], result["selected"]) == (
        0, "skip schedule deleting pod: default/leaving", None)
    _, text, _ = cli("explain", data("deleting-pod.json"), "--pod", "default/leaving", "--format", "text")
    assert text.splitlines()[1] == "skip schedule deleting pod: default/leaving"


def test_scheduler_never_binds_a_pod_being_deleted() -> None:
    cluster = kschedlib.load_cluster(INPUTS / "deleting-pod.json")
    scheduler = kschedlib.Scheduler()
    scheduler.add_objects(cluster)
    results = scheduler.run_until_idle()
    assert [r.pod.key for r in results] == ["default/web"]


def test_required_affinity_term_with_a_bad_label_value_is_unresolvable_at_prefilter() -> None:
    result = kschedlib.explain(INPUTS / "affinity-bad-label-value.json", "default/required").to_dict()
    reason = f"parsing pod: requiredAffinityTerms: {LABEL_VALUE_ERROR}"
    assert result["prefilter"] == {"plugin": "InterPodAffinity", "code": "UnschedulableAndUnresolvable",
                                   "reasons": [reason]}
    assert result["message"] == f"0/2 nodes are available: {reason}."


def test_preferred_term_with_a_bad_label_value_fails_prefilter_in_the_default_profile() -> None:
    # kube's PreFilter parses all four term lists (framework.NewPodInfo), preferred ones included
    result = kschedlib.explain(INPUTS / "affinity-bad-label-value.json", "default/preferred").to_dict()
    assert result["prefilter"]["reasons"] == [f"parsing pod: preferredAntiAffinityTerms: {LABEL_VALUE_ERROR}"]


def test_preferred_term_with_a_bad_label_value_fails_prescore() -> None:
    result = kschedlib.explain(INPUTS / "affinity-bad-label-value.json", "default/preferred",
                               INPUTS / "config-prescore-only-affinity.yaml").to_dict()
    assert result["selected"] is None
    assert result["error"] == (f'running PreScore plugin "InterPodAffinity": failed to parse pod: '
                               f"preferredAntiAffinityTerms: {LABEL_VALUE_ERROR}")
    report = kschedlib.simulate(INPUTS / "affinity-bad-label-value.json",
                                INPUTS / "config-prescore-only-affinity.yaml", once=True)
    assert report.placements["default/preferred"] is None


@pytest.mark.parametrize(("selector", "error"), [
    pytest.param({"matchLabels": {"app": "-web"}}, 'values[0][app]: Invalid value: "-web": a valid label',
                 id="match-labels-value"),
    pytest.param({"matchLabels": {"bad key!": "web"}}, 'key: Invalid value: "bad key!": name part must consist',
                 id="match-labels-key"),
    pytest.param({"matchExpressions": [{"key": "app", "operator": "In", "values": ["ok", "x" * 64]}]},
                 "values[1][app]: Invalid value: \"" + "x" * 64 + '": must be no more than 63 characters',
                 id="too-long-value"),
    pytest.param({"matchExpressions": [{"key": "a b", "operator": "In", "values": ["c d"]}]},
                 '[key: Invalid value: "a b": name part must consist', id="key-and-value-aggregated"),
])
def test_selector_parse_errors_use_kubes_text(selector: dict[str, Any], error: str) -> None:
    term = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
    pod = {"kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [], "affinity": {"podAntiAffinity": {
               "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}}
    result = kschedlib.explain(INPUTS / "raw-nodelist.json", pod).to_dict()
    assert result["prefilter"]["reasons"][0].startswith(f"parsing pod: requiredAntiAffinityTerms: {error}")


def test_namespace_selector_values_are_checked_too() -> None:
    term = {"labelSelector": {}, "namespaceSelector": {"matchLabels": {"team": "a/b"}},
            "topologyKey": "kubernetes.io/hostname"}
    pod = {"kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [], "affinity": {"podAffinity": {
               "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}}
    result = kschedlib.explain(INPUTS / "raw-nodelist.json", pod).to_dict()
    assert 'values[0][team]: Invalid value: "a/b"' in result["prefilter"]["reasons"][0]


def test_match_fields_with_two_names_loads_and_matches_no_node() -> None:
    result = kschedlib.explain(INPUTS / "match-fields-two-values.json", "default/pinned").to_dict()
    assert result["prefilter_nodes"] == ["node-a", "node-b"]
    assert {n: s["reasons"] for n, s in result["filtered"].items()} == {
        "node-a": ["node(s) didn't match Pod's node affinity/selector"],
        "node-b": ["node(s) didn't match Pod's node affinity/selector"],
    }
    assert result["message"] == "0/3 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."


def test_priority_class_names_order_the_queue() -> None:
    report = kschedlib.simulate(INPUTS / "priority-classes.yaml")
    assert [entry["pod"] for entry in report.bind_order] == [
        "kube-system/kube-proxy", "kube-system/coredns", "default/web", "default/report", "default/pinned"]


def test_config_in_a_configmap_on_the_command_line() -> None:
    code, out, _ = cli("explain", data("concatenated.json"), "--pod", "default/web",
                       "--config", data("scheduler-configmap.yaml"), "--format", "json")
    assert code == 0
    assert json.loads(out)["evaluated_nodes"] == 1


@pytest.mark.parametrize(("file", "text"), [
    pytest.param("config-unknown-fields.yaml", 'strict decoding error: unknown field "percentageOfNodeToScore"',
                 id="unknown-field"),
    pytest.param("policy.json", "Policy API was removed", id="policy"),
])
def test_refused_configs_exit_2(file: str, text: str) -> None:
    code, _, err = cli("simulate", data("concatenated.json"), "--config", data(file))
    assert code == 2
    assert text in err
