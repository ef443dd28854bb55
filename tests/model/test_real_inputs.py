"""Cluster files as kubectl and the API produce them (tests/data/inputs), read as kubectl reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib._internal import documents
from kschedlib.errors import ManifestError, QuantityError
from kschedlib.model.objects import Node, Pod
from kschedlib.simulation.cluster import load_cluster, resolve_pod

INPUTS = Path(__file__).resolve().parents[1] / "data" / "inputs"
yaml = pytest.importorskip("yaml")


def names(cluster: kschedlib.Cluster) -> list[str]:
    return [o.key if isinstance(o, Pod) else o.name for o in cluster.objects if isinstance(o, Pod | Node)]


@pytest.mark.parametrize(("file", "expected"), [
    pytest.param("raw-nodelist.json", ["node-a", "node-b"], id="kind-less-items-of-a-NodeList"),
    pytest.param("concatenated.json", ["node-a", "default/web"], id="two-json-documents-appended"),
    pytest.param("utf16-bom.json", ["node-a", "default/web"], id="utf16-with-bom-from-powershell"),
    pytest.param("utf8-bom.json", ["node-a", "default/web"], id="utf8-with-bom"),
    pytest.param("unquoted-timestamps.yaml", ["node-a", "default/web"], id="yaml-unquoted-timestamps"),
])
def test_accepted_shapes(file: str, expected: list[str]) -> None:
    assert names(load_cluster(INPUTS / file)) == expected


def test_kind_less_items_take_the_list_kind_for_every_list_type() -> None:
    pods = {"kind": "PodList", "items": [{"metadata": {"name": "p"}, "spec": {"containers": []}}]}
    assert [type(o).__name__ for o in load_cluster(pods).objects] == ["Pod"]
    generic = {"kind": "List", "items": [{"metadata": {"name": "p"}}]}
    with pytest.raises(ManifestError, match="every object needs a kind"):
        load_cluster(generic)


def test_utf8_bom_json_stays_on_the_json_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_yaml(text: str, source: str) -> list[Any]:
        raise AssertionError("JSON must not be read by the YAML parser")

    monkeypatch.setattr(documents, "_yaml_documents", no_yaml)
    assert len(load_cluster(INPUTS / "utf8-bom.json")) == 2
    assert len(load_cluster(INPUTS / "utf16-bom.json")) == 2


def test_unquoted_timestamps_are_read_as_the_strings_kubectl_reads() -> None:
    docs = documents.read_documents(INPUTS / "unquoted-timestamps.yaml")
    item = docs[0]["items"][0]
    assert item["metadata"]["creationTimestamp"] == "2019-08-09T05:12:19Z"
    pod = load_cluster(INPUTS / "unquoted-timestamps.yaml").pods[0]
    assert pod.creation_timestamp == 1565327580.0
    assert pod.start_time == 1565327581.0


def test_yaml_uses_libyaml_when_pyyaml_has_it() -> None:
    loader = documents._yaml_loader()
    expected = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader
    assert issubclass(loader, expected)
    assert documents.parse_documents("a: 2019-08-09\nb: 1\n") == [{"a": "2019-08-09", "b": 1}]


@pytest.mark.parametrize(("text", "docs"), [
    pytest.param('{"a": 1}\n{"b": 2}\n', [{"a": 1}, {"b": 2}], id="two-objects"),
    pytest.param('[1]\n\n  {"b": 2}  ', [[1], {"b": 2}], id="array-then-object"),
    pytest.param('\ufeff{"a": 1}', [{"a": 1}], id="decoded-bom-kept-in-text"),
])
def test_concatenated_json(text: str, docs: list[Any]) -> None:
    assert documents.parse_documents(text) == docs


def test_bad_json_after_a_first_document_is_invalid_json() -> None:
    with pytest.raises(ManifestError, match="invalid JSON"):
        documents.parse_documents('{"a": 1}\n{"b": ')


@pytest.mark.parametrize(("data", "message"), [
    pytest.param(b"\xff\xfe{\x00\x00\xd8", "cannot decode utf-16", id="broken-utf16"),
    pytest.param(b'{"a": "\xe9"}', "not UTF-8 text", id="latin1"),
])
def test_undecodable_text(data: bytes, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        documents.decode(data)


def test_utf32_with_bom() -> None:
    text = '{"kind": "List", "items": []}'
    assert documents.decode("\ufeff".encode("utf-32-le") + text.encode("utf-32-le")) == text


@pytest.mark.parametrize("file", ["helm-template.yaml"])
def test_unrendered_helm_template_says_so(file: str) -> None:
    with pytest.raises(ManifestError, match="unrendered Helm template"):
        load_cluster(INPUTS / file)
    with pytest.raises(ManifestError, match="unrendered Helm template"):
        documents.parse_documents('{{- if .Values.enabled }}\n{"kind": "Pod"}\n{{- end }}')


def test_python_client_to_dict_output_gets_a_clear_message() -> None:
    with pytest.raises(ManifestError, match=r"Python client's to_dict\(\)"):
        load_cluster(INPUTS / "python-client-to-dict.json")
    with_kind = {"api_version": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"node_name": "n"}}
    with pytest.raises(ManifestError, match=r"Python client's to_dict\(\)"):
        load_cluster({"api_version": "v1", "kind": "PodList", "items": [with_kind]})


def test_several_files_read_as_one() -> None:
    cluster = load_cluster([INPUTS / "raw-nodelist.json", str(INPUTS / "raw-podlist.json")])
    assert names(cluster) == ["node-a", "node-b", "default/web"]


@pytest.mark.parametrize(("file", "obj", "field", "value"), [
    pytest.param("negative-request.json", "Pod default/hog", "spec.containers[0].resources.requests[cpu]", None,
                 id="negative-request"),  # kube's words carry the value: Invalid value: "-4": must be ...
    pytest.param("negative-allocatable.json", "Node node-a", "status.allocatable[memory]", None,
                 id="negative-allocatable"),
    pytest.param("duplicate-node.json", "Node node-a", "metadata.name", "node-a", id="duplicate-node"),
    pytest.param("duplicate-pod.json", "Pod shop/web", "metadata.name", "web", id="duplicate-pod"),
    pytest.param("host-port-out-of-range.json", "Pod default/web", "spec.containers[0].ports[0].hostPort", 70000,
                 id="host-port-70000"),
    pytest.param("container-port-zero.json", "Pod default/web", "spec.containers[0].ports[0].containerPort", 0,
                 id="container-port-0"),
    pytest.param("unknown-priority-class.yaml", "Pod shop/web", "spec.priorityClassName", "high-priority",
                 id="unknown-priority-class"),
])
def test_refused_as_the_api_server_refuses(file: str, obj: str, field: str, value: object) -> None:
    with pytest.raises(ManifestError) as caught:
        load_cluster(INPUTS / file)
    assert (caught.value.obj, caught.value.field, caught.value.value) == (obj, field, value)


def test_negative_quantity_is_a_quantity_error_everywhere() -> None:
    for section in ("limits", "requests"):
        pod = {"kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "resources": {section: {"memory": "-1"}}}]}}
        with pytest.raises(QuantityError, match="must be greater than or equal to 0"):
            load_cluster(pod)
    node = {"kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": -2}}}
    with pytest.raises(QuantityError, match=r"status\.capacity\[cpu\]: Invalid value: \"-2\""):
        load_cluster(node)
    zero = {"kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "-0"}}}
    assert load_cluster(zero).nodes[0].capacity["cpu"].amount == 0


def test_duplicates_across_files_are_refused_and_nothing_is_loaded() -> None:
    with pytest.raises(ManifestError, match='nodes "node-a" already exists'):
        load_cluster([INPUTS / "raw-nodelist.json", INPUTS / "concatenated.json"])


def test_host_network_port_zero_host_port_defaults_and_passes() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "p"},
           "spec": {"hostNetwork": True, "containers": [{"name": "c", "ports": [{"containerPort": 65535}]}]}}
    assert load_cluster(pod).pods[0].containers[0].ports[0].host_port == 65535


def test_priority_from_priority_class_name() -> None:
    cluster = load_cluster(INPUTS / "priority-classes.yaml")
    got = {p.key: (p.priority, p.preemption_policy) for p in cluster.pods}
    assert got == {
        "kube-system/coredns": (2000000000, "PreemptLowerPriority"),
        "kube-system/kube-proxy": (2000001000, "PreemptLowerPriority"),
        "default/report": (100, "Never"),
        "default/web": (1000, "PreemptLowerPriority"),  # the lower of two global defaults
        "default/pinned": (7, None),  # spec.priority set: admitted already, kept
    }
    assert [c.name for c in cluster.priority_classes] == ["batch-low", "everyday", "everyday-old"]


def test_pod_file_for_explain_uses_the_clusters_priority_classes(tmp_path: Path) -> None:
    cluster = load_cluster(INPUTS / "priority-classes.yaml")
    probe = {"kind": "Pod", "metadata": {"name": "probe"},
             "spec": {"priorityClassName": "batch-low", "containers": [{"name": "c"}]}}
    assert resolve_pod(cluster, probe).priority == 100
    file = tmp_path / "probe.json"
    file.write_text(json.dumps(probe))
    assert resolve_pod(cluster, str(file)).priority == 100
    assert resolve_pod(load_cluster([]), {**probe, "spec": {"containers": []}}).priority is None


def test_class_policy_conflicting_with_the_pods_is_refused_with_admissions_text() -> None:
    docs = [{"kind": "PriorityClass", "metadata": {"name": "low"}, "value": 1, "preemptionPolicy": "Never"},
            {"kind": "Pod", "metadata": {"name": "p"},
             "spec": {"priorityClassName": "low", "preemptionPolicy": "PreemptLowerPriority", "containers": []}}]
    with pytest.raises(ManifestError, match=r"the string value of PreemptionPolicy \(PreemptLowerPriority\) must "
                                            "not be provided in pod spec"):
        load_cluster(docs)


@pytest.mark.parametrize(("doc", "field"), [
    pytest.param({"kind": "PriorityClass", "metadata": {"name": "x"}}, "value", id="class-without-value"),
    pytest.param({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"priorityClassName": 3}},
                 "spec.priorityClassName", id="class-name-not-a-string"),
])
def test_malformed_priority_input(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(ManifestError) as caught:
        load_cluster(doc)
    assert caught.value.field == field


def test_skipped_kinds_are_counted() -> None:
    cluster = load_cluster(INPUTS / "mixed-kinds.json")
    assert dict(cluster.skipped) == {"Deployment": 1, "DaemonSet": 1, "ConfigMap": 1, "Certificate": 1}
    assert cluster.custom_kinds == frozenset({"Certificate"})
    again = load_cluster([cluster, INPUTS / "deployment.json"])
    assert again.skipped["Deployment"] == 2
    assert again.without_pod(again.pods[0]).skipped == again.skipped


def test_resolve_pod_says_what_it_found_instead() -> None:
    cluster = load_cluster(INPUTS / "raw-nodelist.json")
    with pytest.raises(ManifestError, match="found a Deployment; kschedlib schedules pods"):
        resolve_pod(cluster, str(INPUTS / "deployment.json"))
    with pytest.raises(ManifestError, match="found ConfigMap, DaemonSet"):
        resolve_pod(cluster, {"kind": "List", "items": [
            {"kind": "ConfigMap", "metadata": {"name": "a"}}, {"kind": "DaemonSet", "metadata": {"name": "b"}}]})
    with pytest.raises(ManifestError, match="found no object"):
        resolve_pod(cluster, str(INPUTS / "raw-nodelist.json"))
    with pytest.raises(ManifestError, match="expected one Pod, found a Deployment"):
        resolve_pod(cluster, json.loads((INPUTS / "deployment.json").read_text()))
    with pytest.raises(ManifestError, match="found 2"):
        resolve_pod(cluster, str(INPUTS / "affinity-bad-label-value.json"))
    with pytest.raises(ManifestError, match="unrendered Helm template"):
        resolve_pod(cluster, str(INPUTS / "helm-template.yaml"))
    with pytest.raises(ManifestError, match="no such pod in the cluster"):
        resolve_pod(cluster, "default/nowhere")


# --- finished pods and the same object twice ---------------------------------------------------


def _dumped_pod(name: str, *, uid: str, phase: str = "Running", node: str = "node-a", cpu: str = "1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
            "spec": {"nodeName": node, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": phase}}


NODE_A = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a", "uid": "n-a"},
          "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_finished_pods_are_dropped_as_documented(phase: str) -> None:
    """Regression: they stayed in Cluster.bound_pods, and explain found them."""
    cluster = load_cluster([NODE_A, _dumped_pod("job", uid="u-1", phase=phase), _dumped_pod("web", uid="u-2")])
    assert [pod.key for pod in cluster.bound_pods] == ["default/web"]
    assert cluster.finished == ("default/job",)
    with pytest.raises(ManifestError, match=r"it has finished \(Succeeded or Failed\)"):
        kschedlib.explain(cluster, "default/job")
    assert "1 finished pod(s)" in (kschedlib.simulation.skipped.skipped_text(
        kschedlib.simulate(cluster).skipped) or "")


def test_the_same_object_twice_is_read_once_the_later_copy_in_the_first_place() -> None:
    """Overlapping dumps (kubectl get pods and kubectl get all) hold the same objects."""
    first, later = _dumped_pod("web", uid="u-1", cpu="1"), _dumped_pod("web", uid="u-1", cpu="2")
    cluster = load_cluster([{"kind": "List", "items": [NODE_A, first, _dumped_pod("db", uid="u-3")]},
                            {"kind": "List", "items": [later, NODE_A]}])
    assert names(cluster) == ["node-a", "default/web", "default/db"]
    assert str(cluster.pods[0].containers[0].requests["cpu"]) == "2"
    assert cluster.duplicates == ("Pod default/web", "Node node-a")
    report = kschedlib.simulate(cluster)
    assert report.skipped["duplicates"] == ["Pod default/web", "Node node-a"]


def test_two_objects_of_one_name_and_different_uids_are_refused() -> None:
    with pytest.raises(ManifestError, match=r'pods "web" already exists \(the input holds two objects of this name, '
                                            r"uids u-1 and u-2\)") as caught:
        load_cluster([NODE_A, _dumped_pod("web", uid="u-1"), _dumped_pod("web", uid="u-2")])
    assert (caught.value.obj, caught.value.field) == ("Pod default/web", "metadata.uid")


def test_a_scheduler_configuration_is_not_a_cluster() -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    with pytest.raises(ManifestError, match=r"<cluster>: holds a KubeSchedulerConfiguration \(a scheduler "
                                            r"configuration\), not cluster objects: give it with --config"):
        load_cluster([NODE_A, config])
