"""Pod-level in-place resize (v1.36, InPlacePodLevelResourcesVerticalScaling): switch ``pod_level_resize_requests``.

A bound pod's pod-level request of a resource is max(``spec.resources``, ``status.resources``,
``status.allocatedResources``) -- or max(status, allocated) while its resize is ``Infeasible`` -- as
kube's ``PodRequests`` with ``InPlacePodLevelResourcesVerticalScalingEnabled`` counts it.  The pod
being scheduled is fitted by its spec alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import pytest

from kschedlib import explain
from kschedlib.model import Container, Pod, parse_quantity
from kschedlib.model.convert import pod_from_dict
from kschedlib.model.objects import PodCondition
from kschedlib.model.quantity import Quantity
from kschedlib.model.resources import Accounting, RequestRules, accounting_for
from kschedlib.versions import resolve


def q(text: str) -> Quantity:
    return parse_quantity(text)


def accounting(version: str, gates: Mapping[str, bool] | None = None) -> Accounting:
    return accounting_for(resolve(version, gates).switches)


RESIZING = Pod(
    "r", node_name="n", containers=(Container("app", requests={"cpu": q("500m")}),),
    pod_level_requests={"cpu": q("1"), "memory": q("1Gi")}, overhead={"cpu": q("10m")},
    pod_level_status_requests={"cpu": q("2"), "memory": q("512Mi")},
    pod_level_allocated={"cpu": q("3")},
)


def test_pod_level_resize_requests() -> None:
    resized = accounting("1.36").requests(RESIZING)
    # cpu: max(spec 1, status 2, allocated 3) + overhead; memory: max(spec 1Gi, status 512Mi)
    assert (resized.milli_cpu, resized.memory) == (3010, 1024**3)
    spec_only = accounting("1.35").requests(RESIZING)
    assert (spec_only.milli_cpu, spec_only.memory) == (1010, 1024**3)
    off = accounting("1.36", {"InPlacePodLevelResourcesVerticalScaling": False}).requests(RESIZING)
    assert off == spec_only


@pytest.mark.parametrize(("status", "allocated", "expected_cpu", "expected_memory"), [
    pytest.param({"cpu": q("1500m"), "memory": q("1Gi")}, {}, 1500, 1024**3, id="status-only"),
    pytest.param({"cpu": q("1")}, {"cpu": q("1200m")}, 1200, 0, id="memory-missing-counts-zero"),
    pytest.param({}, {}, 0, 0, id="nothing-actuated"),
])
def test_pod_level_resize_infeasible_uses_status_and_allocated_only(
        status: dict[str, Quantity], allocated: dict[str, Quantity], expected_cpu: int, expected_memory: int) -> None:
    pod = Pod("r", node_name="n", pod_level_requests={"cpu": q("4"), "memory": q("2Gi")},
              pod_level_status_requests=status, pod_level_allocated=allocated,
              conditions=(PodCondition("PodResizePending", "True", "Infeasible"),))
    requests = accounting("1.36").requests(pod)
    assert (requests.milli_cpu, requests.memory) == (expected_cpu, expected_memory)
    deferred = attrs.evolve(pod, conditions=(PodCondition("PodResizePending", "True", "Deferred"),))
    assert accounting("1.36").requests(deferred).milli_cpu == max(4000, expected_cpu)


def test_pod_level_allocation_without_status_resources_is_ignored() -> None:
    pod = attrs.evolve(RESIZING, pod_level_status_requests=None)
    assert accounting("1.36").requests(pod).milli_cpu == 1010


def test_pod_level_status_needs_pod_level_requests_and_status_resources() -> None:
    no_level = attrs.evolve(RESIZING, pod_level_requests=None)
    assert accounting("1.36").requests(no_level).milli_cpu == 510  # the containers' sum and overhead
    without_status = Accounting(RequestRules(pod_level=True, pod_level_status=True))
    assert without_status.requests(RESIZING).milli_cpu == 1010
    without_pod_level = Accounting(RequestRules(status_resources=True, pod_level_status=True))
    assert without_pod_level.requests(RESIZING).milli_cpu == 510


def test_pod_level_resize_is_not_used_for_the_pod_being_fitted() -> None:
    assert accounting("1.36").fit_requests(RESIZING).milli_cpu == 1010


def test_pod_level_resize_reaches_non_zero_requests() -> None:
    assert accounting("1.36").non_zero_requests(RESIZING) == (3010, 1024**3)
    assert accounting("1.35").non_zero_requests(RESIZING) == (1010, 1024**3)


def _cluster() -> list[dict[str, Any]]:
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    bound = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "resized"},
             "spec": {"nodeName": "n", "resources": {"requests": {"cpu": "1"}},
                      "containers": [{"name": "app"}]},
             "status": {"phase": "Running", "resources": {"requests": {"cpu": "3500m"}},
                        "allocatedResources": {"cpu": "3500m"}}}
    return [node, bound]


def test_pod_level_resize_requests_through_explain() -> None:
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}
    assert explain(_cluster(), pod, kube_version="1.35").to_dict()["selected"] == "n"
    result = explain(_cluster(), pod, kube_version="1.36").to_dict()
    assert result["selected"] is None
    assert result["message"] == "0/1 nodes are available: 1 Insufficient cpu."


def test_pod_level_status_round_trips() -> None:
    pod = pod_from_dict(_cluster()[1])
    assert pod.pod_level_status_requests == {"cpu": q("3500m")}
    assert pod.pod_level_allocated == {"cpu": q("3500m")}
    bare = pod_from_dict({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "b"},
                          "spec": {"containers": [{"name": "c"}]}, "status": {"allocatedResources": {"cpu": "1"}}})
    assert bare.pod_level_status_requests is None
