"""expand_controllers: the pods controllers would create, named and owned as the controllers name them."""

from __future__ import annotations

from typing import Any

from kschedlib.capacity import expand_controllers
from kschedlib.model.objects import NO_SCHEDULE, Pod
from tests.whatif.manifests import node, pod


def _controller(kind: str, name: str, replicas: int | None = None, template: dict[str, Any] | None = None,
                **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"selector": {"matchLabels": {"app": name}},
                            "template": {"metadata": {"labels": {"app": name}},
                                         "spec": {"containers": [{"name": "c", "resources": {
                                             "requests": {"cpu": "100m"}}}], **(template or {})}}, **spec}
    if replicas is not None:
        body["replicas"] = replicas
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "team"}, "spec": body}


def _pods(objects: list[Any]) -> list[Pod]:
    return list(expand_controllers(objects).pending_pods)


def test_a_deployment_becomes_a_replica_set_and_its_pods() -> None:
    pods = _pods([_controller("Deployment", "web", 3)])
    assert len(pods) == 3
    rs_name = pods[0].owner_references[0].name
    assert rs_name.startswith("web-")
    assert len(rs_name) == len("web-") + 10
    assert all(p.name.startswith(rs_name + "-") and len(p.name) == len(rs_name) + 6 for p in pods)
    assert len({p.name for p in pods}) == 3
    owner = pods[0].owner_references[0]
    assert (owner.kind, owner.controller) == ("ReplicaSet", True)
    assert pods[0].labels["pod-template-hash"] == rs_name.removeprefix("web-")
    assert pods[0].namespace == "team"
    again = _pods([_controller("Deployment", "web", 3)])
    assert [p.name for p in again] == [p.name for p in pods]  # the same input gives the same pods


def test_stateful_set_pods_are_numbered_and_a_job_runs_its_parallelism() -> None:
    stateful = _pods([_controller("StatefulSet", "db", 2)])
    assert [p.name for p in stateful] == ["db-0", "db-1"]
    assert stateful[1].labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    job = _pods([_controller("Job", "batch", parallelism=4, completions=3)])
    assert len(job) == 3
    assert job[0].labels["job-name"] == "batch"
    assert job[0].owner_references[0].kind == "Job"
    assert len(_pods([_controller("ReplicaSet", "rs")])) == 1  # replicas default to 1


def test_a_daemon_set_runs_one_pod_per_eligible_node_pinned_there() -> None:
    tainted = node("gpu")
    tainted["spec"] = {"taints": [{"key": "gpu", "effect": NO_SCHEDULE}]}
    cordoned = node("cordoned")
    cordoned["spec"] = {"unschedulable": True, "taints": [{"key": "node.kubernetes.io/unschedulable",
                                                           "effect": NO_SCHEDULE}]}
    other = node("other")
    other["metadata"]["labels"]["role"] = "edge"
    objects = [node("a"), tainted, cordoned, other, _controller("DaemonSet", "agent")]
    pods = _pods(objects)
    pinned = sorted(p.affinity.node_affinity.required.terms[0].match_fields[0].values[0]  # type: ignore[union-attr]
                    for p in pods)
    assert pinned == ["a", "cordoned", "other"]  # the taint without toleration keeps it off "gpu"
    selective = _pods([*objects[:4], _controller("DaemonSet", "edge", template={"nodeSelector": {"role": "edge"}})])
    assert len(selective) == 1
    assert selective[0].owner_references[0].kind == "DaemonSet"


def test_controllers_whose_pods_the_input_holds_are_not_expanded_again() -> None:
    existing = pod("web-abc-x1", owner="ReplicaSet/web-abc", namespace="team")
    rs = _controller("ReplicaSet", "web-abc", 3)
    assert [p.name for p in _pods([node("a"), rs, existing])] == ["web-abc-x1"]
    deployment = _controller("Deployment", "web", 2)
    owned_rs = _controller("ReplicaSet", "web-abc", 0)
    owned_rs["metadata"]["ownerReferences"] = [{"kind": "Deployment", "name": "web", "controller": True}]
    assert _pods([deployment, owned_rs]) == []


def test_a_v1_list_and_files_are_read_too(tmp_path: Any) -> None:
    import json
    path = tmp_path / "apps.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": [node("a"), _controller("StatefulSet", "db", 1)]}))
    assert [p.name for p in expand_controllers(str(path)).pending_pods] == ["db-0"]
