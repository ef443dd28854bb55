"""DRA end to end with real CEL selectors: explain's dra_allocations and errors, simulate's device state."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import explain, simulate
from kschedlib.dra._cel_bridge import compile_selector
from kschedlib.dra._selectors import SelectorError, SelectorRuntimeError
from kschedlib.errors import ManifestError
from kschedlib.model._convert_dra import resource_claim_from_dict
from kschedlib.model.dra import Device, DeviceAttribute

DRIVER = "gpu.example.com"
CLASS: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def gpus(name: str, count: int = 1) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": "a100"}}}
                                 for i in range(count)]}}


def claim(name: str, selector: str | None = None) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    if selector is not None:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def pod(name: str, claim_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim_name}]}}


def test_simulation_holds_devices_and_frees_them_when_a_pod_goes() -> None:
    objects = [node("a"), node("b"), gpus("a"), gpus("b"), CLASS,
               *(claim(f"c{i}") for i in range(3)), *(pod(f"p{i}", f"c{i}") for i in range(3))]
    once = simulate(objects, kube_version="1.36", once=True).to_dict()
    assert sorted(node for node in once["placements"].values() if node) == ["a", "b"]
    assert once["unschedulable"]["default/p2"].startswith("0/2 nodes are available: 2 cannot allocate all claims.")
    assert once["dra"]["free_devices"] == {"a": {}, "b": {}}
    assert sorted(once["dra"]["allocations"]) == ["default/p0", "default/p1"]
    event = {"op": "delete_pod", "name": "p0", "at": {"attempts": {"pod": "default/p2", "n": 1}}}
    later = simulate(objects, kube_version="1.36", events=[event]).to_dict()
    assert later["placements"]["default/p2"] == once["placements"]["default/p0"]
    assert later["dra"]["allocations"]["default/p2"] == [
        {"claim": "default/c2", "devices": [f"{DRIVER}/{later['placements']['default/p2']}/gpu-0"]}]


def test_simulation_without_slices_reports_no_devices() -> None:
    assert "dra" not in simulate([node("a")], kube_version="1.36").to_dict()


def test_explain_reports_selector_errors_as_errors() -> None:
    cluster = [node("a"), gpus("a"), CLASS, claim("c1", 'device.attributes["gpu.example.com"].numa == 1')]
    out = explain(cluster, pod("p", "c1"), kube_version="1.36").to_dict()
    assert out["error"] == ('running "DynamicResources" filter plugin: claim default/c1: selector #0: '
                            'CEL runtime error: no such key: numa')
    with pytest.raises(ManifestError, match=r"ResourceClaim default/c1, field spec\.devices\.requests\[0\]\.exactly\."
                                            r"selectors\[0\]\.cel\.expression: Invalid value: \"device\.driver ==\": "
                                            "compilation failed: "):
        explain([node("a"), gpus("a"), CLASS, claim("c1", "device.driver ==")], pod("p", "c1"), kube_version="1.36")
    stored = resource_claim_from_dict(claim("c1", "device.driver =="), admission=False)  # e.g. a newer API's
    broken = [node("a"), gpus("a"), CLASS, stored]
    assert "CEL compile error" in explain(broken, pod("p", "c1"), kube_version="1.36").to_dict()["error"]


def test_cel_bridge_views_and_errors() -> None:
    matches = compile_selector('device.attributes["gpu.example.com"].v.isGreaterThan(semver("1.0.0"))')
    device = Device("g", {"v": DeviceAttribute("version", "1.2.0")})
    assert matches(device, DRIVER)
    assert matches(device, DRIVER)  # the view is reused
    with pytest.raises(SelectorError, match="Syntax error"):
        compile_selector("device.")
    failing = compile_selector('device.attributes["gpu.example.com"].missing == 1')
    with pytest.raises(SelectorRuntimeError, match=r"^no such key: missing$"):
        failing(device, DRIVER)


def test_explain_text_names_the_devices_of_the_selected_node() -> None:
    from kschedlib.simulation.report import explanation_text

    cluster = [node("a"), gpus("a"), CLASS, claim("c1")]
    text = explanation_text(explain(cluster, pod("p", "c1"), kube_version="1.36"))
    assert "devices for default/c1 on a: gpu.example.com/a/gpu-0" in text
    assert "dra_allocations" not in explain(cluster, pod("p", "c1"), kube_version="1.30").to_dict()


def test_simulation_text_counts_devices() -> None:
    from kschedlib.simulation.report import simulation_text

    objects = [node("a"), gpus("a", 2), CLASS, claim("c0"), pod("p0", "c0")]
    text = simulation_text(simulate(objects, kube_version="1.36"))
    assert "devices: 1 allocated to 1 pods, 1 free" in text


def test_a_timeline_applies_claims_and_slices_mid_run() -> None:
    """A controller takes node a's GPU with a claim of its own, then gives it back; a new slice adds a
    GPU on b: each pod lands as the devices allow at its time."""
    held = {**claim("held"), "status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "a", "device": "gpu-0"}]}}}}
    objects = [node("a"), node("b"), gpus("a"), CLASS, held, claim("c0"), pod("p0", "c0"), claim("c1"), claim("c2")]
    events = [
        {"op": "add_pod", "pod": pod("p1", "c1")},
        {"op": "apply", "object": claim("held")},  # the controller frees a's GPU: p1 may go there
        {"op": "apply", "object": gpus("b"), "at": "with_previous"},
        {"op": "add_pod", "pod": pod("p2", "c2")},
    ]
    out = simulate(objects, kube_version="1.36", events=events).to_dict()
    waiting = {"queue": "unschedulable", "plugins": ["DynamicResources"], "attempts": 1}
    assert out["checkpoints"][1]["pending"] == {"default/p0": waiting, "default/p1": waiting}
    assert out["placements"] == {"default/p0": "b", "default/p1": "a", "default/p2": None}
    assert out["unschedulable"]["default/p2"].startswith("0/2 nodes are available: 2 cannot allocate all claims.")
    assert out["dra"]["allocations"]["default/p1"] == [{"claim": "default/c1", "devices": [f"{DRIVER}/a/gpu-0"]}]


@pytest.mark.parametrize(("event", "field", "value"), [
    ({"op": "apply"}, "[0].object", None),
    ({"op": "apply", "object": pod("p", "c")}, "[0].object.kind", "Pod"),
    ({"op": "apply", "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}},
     "[0].object.kind", "ConfigMap"),
    ({"op": "apply", "object": {**claim("c"), "spec": {"devices": {"requests": "no"}}}}, None, None),
])
def test_a_timeline_refuses_a_bad_apply_before_it_runs(event: dict[str, Any], field: str | None,
                                                       value: object) -> None:
    from kschedlib.errors import ManifestError
    from kschedlib.simulation.timeline import parse_events

    with pytest.raises(ManifestError) as refused:
        parse_events([event])
    if field is not None:
        assert refused.value.field == field
        assert refused.value.value == value
