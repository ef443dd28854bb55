"""ResourceClaims end to end on a real API server: what ``run`` allocated is taken for the next pod after ``run``
restarts (its state read back from the API server), and a binding that fails after PreBind reserved the claims
gives them back as kube-scheduler does (the reservation patched away, the extended-resource claim deleted).

No resourceclaim controller runs here: the test releases a deleted pod's claim itself, as that controller would."""

from __future__ import annotations

import threading
from typing import Any

from kschedlib.kube import KubeClient
from kschedlib.model import Pod
from tests.kube.cluster import (
    PLUGINS,
    check_invariants,
    condition,
    config,
    create,
    hooked,
    namespace,
    node,
    pods,
    running,
    wait_for,
    workload,
)

RESOURCE = "/apis/resource.k8s.io/v1"
DRIVER = "gpu.example.com"


def devices(client: KubeClient, prefix: str, count: int) -> None:
    create(client, node(f"{prefix}-1", labels={"pool": prefix}))
    create(client, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": prefix},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                             "extendedResourceName": f"example.com/{prefix}"}})
    create(client, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": prefix},
                    "spec": {"driver": DRIVER, "nodeName": f"{prefix}-1",
                             "pool": {"name": prefix, "generation": 1, "resourceSliceCount": 1},
                             "devices": [{"name": f"d{i}"} for i in range(count)]}})


def claim(client: KubeClient, ns: str, name: str, device_class: str) -> None:
    create(client, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": name, "namespace": ns},
                    "spec": {"devices": {"requests": [{"name": "d", "exactly": {"deviceClassName": device_class}}]}}})


def claims(client: KubeClient, ns: str) -> dict[str, dict[str, Any]]:
    listed = client.request("GET", f"{RESOURCE}/namespaces/{ns}/resourceclaims")["items"]
    return {c["metadata"]["name"]: c for c in listed}


def reserved_for(c: dict[str, Any]) -> list[str]:
    return [r["name"] for r in (c.get("status") or {}).get("reservedFor") or ()]


def remove(client: KubeClient, ns: str, prefix: str) -> None:
    client.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    for c in claims(client, ns).values():  # their finalizers first: no controller takes them off here
        c["metadata"]["finalizers"] = []
        client.request("PUT", f"{RESOURCE}/namespaces/{ns}/resourceclaims/{c['metadata']['name']}", body=c)
    client.request("DELETE", f"{RESOURCE}/namespaces/{ns}/resourceclaims")
    for path in (f"{RESOURCE}/deviceclasses/{prefix}", f"{RESOURCE}/resourceslices/{prefix}",
                 f"/api/v1/nodes/{prefix}-1"):
        client.request("DELETE", path)


def test_a_claim_run_allocated_stays_taken_after_a_restart(admin: KubeClient, as_scheduler: KubeClient) -> None:
    ns, me, prefix = namespace(admin, "claims-restart"), "claims-restart", "cr"
    devices(admin, prefix, 1)
    claim(admin, ns, "first", prefix)
    claim(admin, ns, "second", prefix)
    with running(as_scheduler, config(me)) as live:
        create(admin, workload("first", ns, me, prefix, claim="first"))
        wait_for("the first pod bound", lambda: bool(pods(admin, ns)["first"]["spec"].get("nodeName")))
        check_invariants(admin, live, ns, me)
    first = claims(admin, ns)["first"]
    assert first["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert [r["device"] for r in first["status"]["allocation"]["devices"]["results"]] == ["d0"]
    assert reserved_for(first) == ["first"]

    with running(as_scheduler, config(me)) as live:  # a new process: all it knows, it reads from the API server
        create(admin, workload("second", ns, me, prefix, claim="second"))
        wait_for("the second pod refused", lambda: condition(pods(admin, ns)["second"]) is not None)
        assert "cannot allocate all claims" in condition(pods(admin, ns)["second"])["message"]  # type: ignore[index]
        check_invariants(admin, live, ns, me)
        admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods/first", body={"gracePeriodSeconds": 0})
        first = claims(admin, ns)["first"]  # the resourceclaim controller's part: released, deallocated
        first["status"] = {}
        first = admin.request("PUT", f"{RESOURCE}/namespaces/{ns}/resourceclaims/first/status", body=first)
        wait_for("the second pod bound", lambda: bool(pods(admin, ns)["second"]["spec"].get("nodeName")))
        check_invariants(admin, live, ns, me)
    assert reserved_for(claims(admin, ns)["second"]) == ["second"]
    remove(admin, ns, prefix)


def test_a_failed_binding_gives_the_claims_back(admin: KubeClient, as_scheduler: KubeClient,
                                                hook: list[Any]) -> None:
    ns, me, prefix = namespace(admin, "claims-unreserve"), "claims-unreserve", "cu"
    devices(admin, prefix, 3)
    claim(admin, ns, "mine", prefix)
    seen: dict[str, Any] = {}
    failed_once = threading.Event()

    def fail_once(p: Pod, node_name: str) -> None:
        if p.name == "both" and not failed_once.is_set():
            failed_once.set()
            seen.update(claims(admin, ns))
            raise RuntimeError("the node went away")

    hook[0] = fail_once
    document = hooked(me)
    with running(as_scheduler, document, plugins=PLUGINS) as live:
        create(admin, workload("both", ns, me, prefix, claim="mine", extended=(f"example.com/{prefix}", 1)))
        wait_for("the pod bound after one failure", lambda: bool(pods(admin, ns)["both"]["spec"].get("nodeName")))
        check_invariants(admin, live, ns, me, document, PLUGINS)
    first_extended = next(name for name in seen if name.startswith("both-extended-resources-"))
    assert reserved_for(seen["mine"]) == ["both"]  # PreBind had written both before the failure
    assert reserved_for(seen[first_extended]) == ["both"]
    now = claims(admin, ns)
    assert first_extended not in now  # Unreserve deleted the one it made; the next attempt made another
    assert sorted(now) == sorted(["mine", pods(admin, ns)["both"]["status"]["extendedResourceClaimStatus"]
                                  ["resourceClaimName"]])
    assert reserved_for(now["mine"]) == ["both"]  # the reservation given back, then made again
    assert now["mine"]["status"]["allocation"] == seen["mine"]["status"]["allocation"]  # the allocation kept
    remove(admin, ns, prefix)
