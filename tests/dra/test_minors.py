"""Dynamic Resource Allocation per kube minor: which API shapes, whether the plugin runs, and how it speaks.

resource.k8s.io/v1 is served from 1.34, where DynamicResourceAllocation is on by default.  1.32 serves
v1beta1 and 1.33 v1beta1 and v1beta2, with the gate off: the default profile has no DynamicResources
and ignores claims, and ``DynamicResourceAllocation=true`` runs the plugin as those minors do (no
Score, no ``no new claims to deallocate`` for pods without claims).  1.30 and 1.31 ran alpha APIs
kschedlib does not model, so the gate is refused there.
"""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import Scheduler, explain
from kschedlib.errors import ConfigError

DRA_ON = {"DynamicResourceAllocation": True}


def _node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, *, claim: str | None = None, cpu: str = "1") -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
    spec: dict[str, Any] = {"containers": [container]}
    if claim is not None:
        container["resources"]["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _beta_objects(api: str) -> list[dict[str, Any]]:
    """A GPU on n1 and a claim for it, in the shapes ``api`` (v1beta1 or v1beta2) has."""
    group = f"resource.k8s.io/{api}"
    device: dict[str, Any] = {"name": "gpu-0"}
    request: dict[str, Any] = {"name": "gpu"}
    attributes = {"model": {"string": "a100"}}
    exact = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
             "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "a100"'}}]}
    if api == "v1beta1":  # devices wrapped in "basic", request fields on the request itself
        device["basic"] = {"attributes": attributes}
        request.update(exact)
    else:
        device["attributes"] = attributes
        request["exactly"] = exact
    return [
        {"apiVersion": group, "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": group, "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "devices": [device],
                  "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}}},
        {"apiVersion": group, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [request]}}},
    ]


@pytest.mark.parametrize(("version", "api"), [("1.32", "v1beta1"), ("1.33", "v1beta1"), ("1.33", "v1beta2")])
def test_the_gate_runs_the_plugin_on_the_beta_shapes_of_its_minor(version: str, api: str) -> None:
    cluster = [_node("n0"), _node("n1"), *_beta_objects(api), _pod("p", claim="c")]
    out = explain(cluster, "default/p", kube_version=version, feature_gates=DRA_ON).to_dict()
    assert out["feasible"] == ["n1"]
    assert out["filtered"]["n0"] == {"plugin": "DynamicResources", "code": "UnschedulableAndUnresolvable",
                                     "reasons": ["cannot allocate all claims"]}
    assert out["dra_allocations"]["n1"][0]["devices"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]


@pytest.mark.parametrize("version", ["1.32", "1.33"])
def test_the_default_profile_of_a_beta_minor_ignores_claims(version: str) -> None:
    cluster = [_node("n0"), _node("n1"), *_beta_objects("v1beta1"), _pod("p", claim="c")]
    out = explain(cluster, "default/p", kube_version=version).to_dict()
    assert sorted(out["feasible"]) == ["n0", "n1"]
    assert "dra_allocations" not in out or not out["dra_allocations"]


@pytest.mark.parametrize(("version", "scored"), [("1.33", False), ("1.34", False), ("1.35", True)])
def test_dynamic_resources_scores_from_1_35(version: str, scored: bool) -> None:
    out = explain([_node("n0"), _node("n1"), _pod("p")], "default/p", kube_version=version,
                  feature_gates=DRA_ON if version == "1.33" else None).to_dict()
    assert all(("DynamicResources" in entry["plugins"]) is scored for entry in out["scores"].values())


@pytest.mark.parametrize(("version", "message"), [
    ("1.33", "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
    ("1.34", "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for "
             "scheduling."),
])
def test_a_pod_without_claims_gets_no_deallocation_reason_before_1_34(version: str, message: str) -> None:
    out = explain([_node("n0", cpu="1"), _pod("p", cpu="2")], "default/p", kube_version=version,
                  feature_gates=DRA_ON).to_dict()
    assert out["postfilter"]["message"] == message


@pytest.mark.parametrize("version", ["1.30", "1.31"])
def test_the_alpha_apis_are_not_modelled(version: str) -> None:
    with pytest.raises(ConfigError, match=r"models feature gate DynamicResourceAllocation on from 1\.32") as refused:
        Scheduler(kube_version=version, feature_gates=DRA_ON)
    assert refused.value.field == "feature_gates"
    assert Scheduler(kube_version=version, feature_gates={"DynamicResourceAllocation": False}) is not None
