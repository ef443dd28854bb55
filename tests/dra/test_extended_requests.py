"""The requests of the claim DynamicResources makes for a pod's DRA-backed extended resources.

kube-scheduler v1.36 (``createRequestsAndMappings``) names each request ``container-<i>-request-<j>``:
``i`` indexes init containers then containers, ``j`` the resource among the container's sorted
requests (cpu and memory included).  Containers that run for the pod's life get a request each; an
init container that runs to completion first reuses the devices of those starting after it, and such
init containers share one request, the largest.  Requests are sorted by name; the mappings list the
long-lived containers first, per resource in name order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from kschedlib.dra._extended import extended_requests
from kschedlib.errors import ManifestError
from kschedlib.model.convert import pod_from_dict
from kschedlib.model.resources import is_overcommit_allowed

GPU = "example.com/gpu"
NIC = "example.com/nic"
IMPLICIT = "deviceclass.resource.kubernetes.io/gpu-class"
CLASSES = {GPU: "gpu-class", NIC: "nic-class", IMPLICIT: "gpu-class"}


def c(name: str, requests: Mapping[str, str], *, sidecar: bool = False) -> dict[str, Any]:
    """A container with these requests, extended ones also its limits as the API server requires
    (``sidecar``: an init container with ``restartPolicy: Always``)."""
    limits = {resource: amount for resource, amount in requests.items() if not is_overcommit_allowed(resource)}
    out: dict[str, Any] = {"name": name, "image": "x", "resources": {"requests": dict(requests), "limits": limits}}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


@dataclass
class Case:
    containers: Sequence[dict[str, Any]]
    requests: dict[str, tuple[str, int]]
    """request name -> (device class, count)"""
    mappings: list[tuple[str, str, str]]
    """(container, resource, request name) in kube's order"""
    init: Sequence[dict[str, Any]] = ()
    resources: Sequence[str] = (GPU,)
    """The resources the node leaves to DRA."""


CASES = {
    "one-container-one-resource": Case(
        [c("a", {GPU: "2"})], {"container-0-request-0": ("gpu-class", 2)}, [("a", GPU, "container-0-request-0")]),
    "index-among-all-sorted-requests": Case(
        [c("a", {"cpu": "1", "memory": "1Gi", GPU: "1"})], {"container-0-request-1": ("gpu-class", 1)},
        [("a", GPU, "container-0-request-1")]),
    "two-containers": Case(
        [c("a", {GPU: "1"}), c("b", {GPU: "2"})],
        {"container-0-request-0": ("gpu-class", 1), "container-1-request-0": ("gpu-class", 2)},
        [("a", GPU, "container-0-request-0"), ("b", GPU, "container-1-request-0")]),
    "implicit-and-explicit-names-of-one-class": Case(
        [c("a", {IMPLICIT: "1"}), c("b", {GPU: "2"})],
        {"container-0-request-0": ("gpu-class", 1), "container-1-request-0": ("gpu-class", 2)},
        [("a", IMPLICIT, "container-0-request-0"), ("b", GPU, "container-1-request-0")],
        resources=(GPU, IMPLICIT)),
    "several-resources-in-one-container": Case(
        [c("a", {NIC: "1", IMPLICIT: "1", GPU: "2"})],
        {"container-0-request-0": ("gpu-class", 1), "container-0-request-1": ("gpu-class", 2),
         "container-0-request-2": ("nic-class", 1)},
        [("a", IMPLICIT, "container-0-request-0"), ("a", GPU, "container-0-request-1"),
         ("a", NIC, "container-0-request-2")],
        resources=(GPU, NIC, IMPLICIT)),
    "only-the-resources-left-to-dra": Case(
        [c("a", {NIC: "1", GPU: "2"})], {"container-0-request-1": ("nic-class", 1)},
        [("a", NIC, "container-0-request-1")], resources=(NIC,)),
    "container-without-the-resource": Case(
        [c("a", {"cpu": "1"}), c("b", {GPU: "1"})], {"container-1-request-0": ("gpu-class", 1)},
        [("b", GPU, "container-1-request-0")]),
    "zero-requests-are-skipped": Case(
        [c("a", {GPU: "0"}), c("c", {GPU: "1"})],
        {"container-1-request-0": ("gpu-class", 1)}, [("c", GPU, "container-1-request-0")]),
    "init-container-reuses-a-later-containers-devices": Case(
        [c("main", {GPU: "2"})], {"container-1-request-0": ("gpu-class", 2)},
        [("main", GPU, "container-1-request-0"), ("init", GPU, "container-1-request-0")],
        init=[c("init", {GPU: "1"})]),
    "init-container-asks-for-more-than-it-can-reuse": Case(
        [c("main", {GPU: "1"})],
        {"container-0-request-0": ("gpu-class", 2), "container-1-request-0": ("gpu-class", 1)},
        [("main", GPU, "container-1-request-0"), ("init", GPU, "container-1-request-0"),
         ("init", GPU, "container-0-request-0")],
        init=[c("init", {GPU: "3"})]),
    "init-containers-share-the-largest-request": Case(
        [c("main", {"cpu": "1"})], {"container-1-request-0": ("gpu-class", 3)},
        [("init-1", GPU, "container-1-request-0"), ("init-2", GPU, "container-1-request-0")],
        init=[c("init-1", {GPU: "2"}), c("init-2", {GPU: "3"})]),
    "first-largest-init-request-wins-a-tie": Case(
        [], {"container-0-request-0": ("gpu-class", 2)},
        [("init-1", GPU, "container-0-request-0"), ("init-2", GPU, "container-0-request-0")],
        init=[c("init-1", {GPU: "2"}), c("init-2", {GPU: "2"})]),
    "sidecar-gets-its-own-request-and-earlier-init-containers-reuse-it": Case(
        [c("main", {GPU: "1"})],
        {"container-1-request-0": ("gpu-class", 1), "container-2-request-0": ("gpu-class", 1)},
        [("sidecar", GPU, "container-1-request-0"), ("main", GPU, "container-2-request-0"),
         ("init", GPU, "container-1-request-0"), ("init", GPU, "container-2-request-0")],
        init=[c("init", {GPU: "2"}), c("sidecar", {GPU: "1"}, sidecar=True)]),
    "init-container-after-a-sidecar-does-not-reuse-it": Case(
        [c("main", {"cpu": "1"})],
        {"container-0-request-0": ("gpu-class", 1), "container-1-request-0": ("gpu-class", 1)},
        [("sidecar", GPU, "container-0-request-0"), ("init", GPU, "container-1-request-0")],
        init=[c("sidecar", {GPU: "1"}, sidecar=True), c("init", {GPU: "1"})]),
    "requests-sort-by-name-as-strings": Case(
        [*(c(f"c{i}", {GPU: "1"} if i in (2, 10) else {"cpu": "1"}) for i in range(11))],
        {"container-10-request-0": ("gpu-class", 1), "container-2-request-0": ("gpu-class", 1)},
        [("c2", GPU, "container-2-request-0"), ("c10", GPU, "container-10-request-0")]),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_extended_claim_requests_and_mappings(case: Case) -> None:
    pod = pod_from_dict({"kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": list(case.containers), "initContainers": list(case.init)}})
    requests, mappings = extended_requests(pod, {name: CLASSES[name] for name in case.resources})
    assert [r.name for r in requests] == sorted(case.requests)
    got = {}
    for request in requests:
        assert request.exactly is not None
        assert request.exactly.name == request.name
        assert request.exactly.allocation_mode == "ExactCount"
        got[request.name] = (request.exactly.device_class_name, request.exactly.count)
    assert got == case.requests
    assert [(m.container_name, m.resource_name, m.request_name) for m in mappings] == case.mappings


def test_a_fractional_extended_request_never_reaches_the_plugin() -> None:
    """The API server refuses it (extended resources are whole), and so does kschedlib's reader."""
    with pytest.raises(ManifestError, match=r'limits\[example.com/gpu\]: Invalid value: "500m": must be an integer'):
        pod_from_dict({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [c("b", {GPU: "500m"})]}})
