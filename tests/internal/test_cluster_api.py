"""A Scheduler given a :class:`~kschedlib.framework.ClusterApi` makes kube-scheduler's writes through it, at kube's
points, and leaves the controllers' part to the cluster; without one it simulates both.  Here the API is a fake
that records each call and answers as an API server would (the real one: ``tests/kube``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from kschedlib import Scheduler, load_cluster
from kschedlib.framework import ClusterApi, CycleState, PreBindPlugin, Status
from kschedlib.model import Pod
from kschedlib.model.convert import pod_from_dict
from kschedlib.plugins import in_tree_registry
from tests.dra.test_simulation import CLASS, claim, gpus, node, pod
from tests.helpers import RecordingApi


class Refuse(PreBindPlugin):
    """Fails every PreBind (after the in-tree ones): the binding cycle then unreserves."""

    name: ClassVar[str] = "Refuse"

    def __init__(self, args: object, handle: object) -> None:
        pass

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status.from_error("refused")


def scheduler(api: ClusterApi | None, objects: Sequence[dict[str, Any]], *, refuse: bool = False) -> Scheduler:
    registry = in_tree_registry()
    registry.register("Refuse", Refuse)
    config = {"profiles": [{"schedulerName": "default-scheduler",
                            "plugins": {"preBind": {"enabled": [{"name": "Refuse"}]}} if refuse else {}}]}
    s = Scheduler(config, api=api, registry=registry, kube_version="1.36")
    s.add_objects(load_cluster(objects))
    return s


def extended_pod(name: str) -> dict[str, Any]:
    made = pod(name, "unused")
    del made["spec"]["resourceClaims"]
    made["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    made["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
    return made


DEVICES = [node("a"), gpus("a", 2), {**CLASS, "spec": {**CLASS["spec"], "extendedResourceName": "example.com/gpu"}}]


def test_prebind_nominates_then_reserves_each_claim_through_the_api() -> None:
    api = RecordingApi()
    s = scheduler(api, [*DEVICES, claim("c1"), pod("p1", "c1"), extended_pod("p2")])
    results = s.run_until_idle()
    assert [r.node_name for r in results] == ["a", "a"]
    assert api.calls == [("nominate", "p1", "a"), ("reserve", "c1", "p1", True, ()),
                         ("nominate", "p2", "a"), ("create", "p2-extended-resources", "p2"),
                         ("reserve", "p2-extended-resources-x1", "p2", True, ("container-0-request-1",))]


def test_a_failed_binding_unreserves_and_deletes_the_extended_claim_through_the_api() -> None:
    api = RecordingApi()
    s = scheduler(api, [*DEVICES, claim("c1"), pod("p1", "c1")], refuse=True)
    s.schedule_one()
    assert api.calls == [("nominate", "p1", "a"), ("reserve", "c1", "p1", True, ()), ("unreserve", "c1", "p1")]
    api = RecordingApi()
    s = scheduler(api, [*DEVICES, extended_pod("p2")], refuse=True)
    s.schedule_one()
    assert api.calls[-1] == ("delete", "p2-extended-resources-x1")
    api = RecordingApi(fail="reserve")  # made, then refused: Unreserve deletes what was made, as kube does
    s = scheduler(api, [*DEVICES, extended_pod("p2")])
    s.schedule_one()
    assert api.calls[-2:] == [("reserve", "p2-extended-resources-x1", "p2", True, ("container-0-request-1",)),
                              ("delete", "p2-extended-resources-x1")]


def test_an_api_error_fails_prebind_with_its_message() -> None:
    api = RecordingApi(fail="reserve")
    s = scheduler(api, [*DEVICES, claim("c1"), pod("p1", "c1")])
    result = s.schedule_one()
    assert result is not None
    assert not result.scheduled
    assert result.message == 'running PreBind plugin "DynamicResources": reserve refused'


def stuck() -> dict[str, Any]:
    """A claim allocated on another node, reserved for nobody: PostFilter deallocates it."""
    made = claim("c1")
    made["status"] = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                              "pool": "b", "device": "gpu-0"}]},
                                     "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                         {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}
    return made


def test_postfilter_deallocates_through_the_api() -> None:
    api = RecordingApi()
    s = scheduler(api, [*DEVICES, stuck(), pod("p1", "c1")])
    result = s.schedule_one()
    assert result is not None
    assert "deallocation of ResourceClaim completed" in (result.message or "")
    assert api.calls == [("deallocate", "c1")]
    failing = RecordingApi(fail="deallocate")
    result = scheduler(failing, [*DEVICES, stuck(), pod("p1", "c1")]).schedule_one()
    assert result is not None
    assert (result.message or "").endswith("deallocate refused")


def test_explain_and_removed_pods_write_nothing() -> None:
    api = RecordingApi()
    explained = scheduler(api, [*DEVICES, stuck()]).explain(pod_from_dict(pod("p1", "c1")))
    assert "deallocation of ResourceClaim completed" in str(explained.to_dict())
    assert api.calls == []
    s = scheduler(api, [*DEVICES, claim("c1"), pod("p1", "c1")])
    s.run_until_idle()
    s.remove_pod("default/p1")  # the resourceclaim controller releases the claim, not the scheduler
    assert api.calls == [("nominate", "p1", "a"), ("reserve", "c1", "p1", True, ())]


VOLUMES: list[dict[str, Any]] = [
    node("a"),
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
     "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "dyn"},
     "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"},
    {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
     "spec": {"storageClassName": "local", "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
              "local": {"path": "/d"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                  {"key": "kubernetes.io/hostname", "operator": "In", "values": ["a"]}]}]}}},
     "status": {"phase": "Available"}},
    *({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
       "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
       "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}
      for name, cls in (("static", "local"), ("dynamic", "dyn"))),
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "v", "namespace": "default", "uid": "uid-v"},
     "spec": {"containers": [{"name": "c", "image": "x"}],
              "volumes": [{"name": "s", "persistentVolumeClaim": {"claimName": "static"}},
                          {"name": "d", "persistentVolumeClaim": {"claimName": "dynamic"}}]}},
]


@pytest.mark.parametrize("fail", [None, "bind_volumes"], ids=["bound", "failed"])
def test_volumes_are_bound_through_the_api_and_put_back_as_the_cluster_has_them(fail: str | None) -> None:
    api = RecordingApi(fail=fail)
    result = scheduler(api, VOLUMES).schedule_one()
    assert result is not None
    assert result.scheduled is (fail is None)
    assert api.calls[:2] == [("nominate", "v", "a"),  # only kube's assumptions: the volume is not Bound yet
                             ("bind_volumes", "v", "a", (("pv", "static", "Available"),),
                              (("dynamic", {"volume.kubernetes.io/selected-node": "a"}),), 600)]
    assert api.calls[2:] == ([] if fail is None else [("latest", ("pv",), ("default/dynamic",))])
