"""``kschedlib run``'s writes for pods with ResourceClaims, DRA-backed extended resources and volumes, side by side
with kube-scheduler v1.36.3's: the same scenario under each, then the claims, volumes and pods each left, and the
requests each sent (the API server's audit log, object by object, in order).  Then, end to end, a claim
``run`` allocated is still taken for the next pod after ``run`` restarts.

No PV controller or resourceclaim controller runs here: the test plays their part where kube's flow needs it
(binding a claimed volume's claim, provisioning a volume for a claim annotated with its node, releasing a
deleted pod's claim), the same way for both schedulers."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kschedlib.kube import KubeClient
from tests.kube.cluster import (
    check_invariants,
    condition,
    create,
    kube_scheduler,
    namespace,
    node,
    pods,
    running,
    wait_for,
    workload,
)
from tests.kube.conftest import AUDITED
from tests.kube.envtest import SCHEDULER_USER, ControlPlane

RESOURCE = "/apis/resource.k8s.io/v1"
DRIVER = "gpu.example.com"
KUBE_NS, LIB_NS = AUDITED
BIND_TIMEOUT = 3


def document(scheduler: str) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"qps": 1000, "burst": 1000}, "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": scheduler, "pluginConfig": [
                {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": BIND_TIMEOUT}}]}]}


def devices_and_volumes(client: KubeClient, ns: str, prefix: str) -> None:
    """Two nodes; four devices on the first (a class with a config, providing an extended resource); a claim
    with configs and a toleration, and one asking for three devices; a volume on the second node for a claim of a
    WaitForFirstConsumer class, and claims of a provisioning WaitForFirstConsumer class (on the first node)."""
    namespace(client, ns)
    for index in (1, 2):
        create(client, node(f"{prefix}-{index}", labels={"pool": prefix}))
    create(client, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"gpu-{prefix}"},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                             "config": [{"opaque": {"driver": DRIVER, "parameters": {"kind": "Class", "a": 1}}}],
                             "extendedResourceName": f"example.com/gpu-{prefix}"}})
    create(client, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{prefix}-1"},
                    "spec": {"driver": DRIVER, "nodeName": f"{prefix}-1",
                             "pool": {"name": f"{prefix}-1", "generation": 1, "resourceSliceCount": 1},
                             "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}} for i in range(4)]}})

    def claim(name: str, count: int, **extra: Any) -> None:
        exactly = {"deviceClassName": f"gpu-{prefix}", "count": count, **extra}
        create(client, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}], "config": [
                            {"requests": ["gpu"], "opaque": {"driver": DRIVER, "parameters": {"claim": name}}},
                            {"opaque": {"driver": DRIVER, "parameters": {"every": True}}}]}}})

    claim("one", 1, tolerations=[{"key": "maintenance", "operator": "Exists"}])
    claim("three", 3)
    create(client, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": f"local-{prefix}"},
                    "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
    create(client, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": f"dyn-{prefix}"},
                    "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer",
                    "allowedTopologies": [{"matchLabelExpressions": [  # one node: no tie to break at random
                        {"key": "kubernetes.io/hostname", "values": [f"{prefix}-1"]}]}]})
    pv = create(client, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"{prefix}-local"},
                         "spec": {"storageClassName": f"local-{prefix}", "capacity": {"storage": "1Gi"},
                                  "accessModes": ["ReadWriteOnce"], "local": {"path": "/data"},
                                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                      {"key": "kubernetes.io/hostname", "operator": "In",
                                       "values": [f"{prefix}-2"]}]}]}}}})
    pv["status"] = {"phase": "Available"}  # the PV controller's first word on a new volume
    client.request("PUT", f"/api/v1/persistentvolumes/{prefix}-local/status", body=pv)
    for name, storage_class in (("static", "local"), ("dynamic", "dyn"), ("never", "dyn"), ("stolen", "dyn")):
        create(client, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {"storageClassName": f"{storage_class}-{prefix}", "accessModes": ["ReadWriteOnce"],
                                 "resources": {"requests": {"storage": "1Gi"}}}})


# --- the controllers' part -------------------------------------------------------------------------------------

def bind_claim(client: KubeClient, ns: str, pvc_name: str, pv_name: str) -> None:
    """The PV controller completing a binding: the claim names its volume, both are Bound."""
    path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{pvc_name}"
    pvc = client.request("GET", path)
    pvc["spec"]["volumeName"] = pv_name
    pvc["metadata"].setdefault("annotations", {}).update({"pv.kubernetes.io/bind-completed": "yes",
                                                          "pv.kubernetes.io/bound-by-controller": "yes"})
    pvc = client.request("PUT", path, body=pvc)
    pvc["status"] = {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    client.request("PUT", path + "/status", body=pvc)
    pv = client.request("GET", f"/api/v1/persistentvolumes/{pv_name}")
    pv["status"] = {"phase": "Bound"}
    client.request("PUT", f"/api/v1/persistentvolumes/{pv_name}/status", body=pv)


def provision(client: KubeClient, ns: str, pvc_name: str) -> None:
    """A provisioner answering the selected-node annotation: a volume on that node, bound to the claim."""
    pvc = client.request("GET", f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{pvc_name}")
    node_name = pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    name = f"pvc-{pvc['metadata']['uid']}"
    create(client, {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": {
        "storageClassName": pvc["spec"]["storageClassName"], "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"], "csi": {"driver": "csi.example.com", "volumeHandle": name},
        "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": ns, "name": pvc_name,
                     "uid": pvc["metadata"]["uid"]},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}]}]}}}})
    bind_claim(client, ns, pvc_name, name)


@contextmanager
def pv_controller(client: KubeClient, ns: str, prefix: str, provisions: tuple[str, ...]) -> Iterator[None]:
    """The controllers on a thread: the pre-provisioned volume's claim bound once the volume names it, ``provisions``
    provisioned once annotated with a node."""
    stop = threading.Event()
    done: set[str] = set()

    def loop() -> None:
        while not stop.wait(0.2):
            volume = client.request("GET", f"/api/v1/persistentvolumes/{prefix}-local")
            ref = volume["spec"].get("claimRef")
            if ref and "static" not in done:
                done.add("static")
                bind_claim(client, ns, ref["name"], volume["metadata"]["name"])
            for name in provisions:
                pvc = client.request("GET", f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}")
                if name not in done and "volume.kubernetes.io/selected-node" in (pvc["metadata"].get("annotations")
                                                                                 or {}):
                    done.add(name)
                    provision(client, ns, name)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)


# --- the scenario ----------------------------------------------------------------------------------------------

def bound(client: KubeClient, ns: str, name: str) -> Callable[[], bool]:
    return lambda: bool(pods(client, ns).get(name, {}).get("spec", {}).get("nodeName"))


def failed(client: KubeClient, ns: str, name: str, reason: str) -> Callable[[], bool]:
    return lambda: (condition(pods(client, ns).get(name, {})) or {}).get("reason") == reason


def play(client: KubeClient, ns: str, scheduler: str, prefix: str) -> None:
    """The pods one at a time, each decided before the next (the same order for both schedulers)."""
    def add(name: str, wait: Callable[[], bool], **kwargs: Any) -> None:
        create(client, workload(name, ns, scheduler, prefix, **kwargs))
        wait_for(f"{scheduler}: {name}", wait, timeout=30)

    with pv_controller(client, ns, prefix, ("dynamic",)):
        create(client, workload("never", ns, scheduler, prefix, volume="never"))  # its claim is never provisioned
        add("claims", bound(client, ns, "claims"), claim="one")
        add("extended", bound(client, ns, "extended"), extended=(f"example.com/gpu-{prefix}", 2))
        add("toomany", failed(client, ns, "toomany", "Unschedulable"), claim="three")
        add("static", bound(client, ns, "static"), volume="static")
        add("dynamic", bound(client, ns, "dynamic"), volume="dynamic")
        wait_for(f"{scheduler}: never", failed(client, ns, "never", "SchedulerError"), timeout=30)
        add("stolen", lambda: bool(pods(client, ns)["stolen"]["status"].get("nominatedNodeName")), volume="stolen")
    # someone else binds the pod while the scheduler waits for its volume, then the volume comes
    stolen = pods(client, ns)["stolen"]
    client.request("POST", f"/api/v1/namespaces/{ns}/pods/stolen/binding", body={
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "stolen"},
        "target": {"kind": "Node", "name": stolen["status"]["nominatedNodeName"]}})
    provision(client, ns, "stolen")
    wait_for(f"{scheduler}: stolen", failed(client, ns, "stolen", "SchedulerError"), timeout=30)


def normal(text: str, ns: str, prefix: str) -> str:
    text = text.replace(ns, "NS").replace(f"{prefix}-", "P-").replace(f"-{prefix}", "-P")
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UID", text)
    text = re.sub(r"extended-resources-[a-z0-9]{5}", "extended-resources-X", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "TIME", text)
    return re.sub(r'"resourceVersion": "\d+"', '"resourceVersion": "RV"', text)


def plain(value: Any, ns: str, prefix: str) -> Any:
    return json.loads(normal(json.dumps(value, sort_keys=True), ns, prefix))


def left(client: KubeClient, ns: str, prefix: str) -> dict[str, Any]:
    """What the scheduler left: claims, pods (never: only its condition: it retries), volumes and their claims."""
    out: dict[str, Any] = {}
    for claim in client.request("GET", f"{RESOURCE}/namespaces/{ns}/resourceclaims")["items"]:
        meta = claim["metadata"]
        kept = {k: meta.get(k) for k in ("name", "generateName", "annotations", "ownerReferences", "finalizers")}
        out[f"claim {normal(meta['name'], ns, prefix)}"] = plain({"metadata": kept, "spec": claim["spec"],
                                                                  "status": claim.get("status")}, ns, prefix)
    for name, p in pods(client, ns).items():
        status = {k: v for k, v in p["status"].items() if k in ("nominatedNodeName", "extendedResourceClaimStatus")}
        conditions = [{k: v for k, v in c.items() if k not in ("lastTransitionTime", "lastProbeTime")}
                      for c in p["status"].get("conditions") or ()]
        out[f"pod {name}"] = plain({"node": p["spec"].get("nodeName"), "conditions": conditions,
                                    **({} if name == "never" else status)}, ns, prefix)
    for pvc in client.request("GET", f"/api/v1/namespaces/{ns}/persistentvolumeclaims")["items"]:
        out[f"pvc {pvc['metadata']['name']}"] = plain(pvc["metadata"].get("annotations"), ns, prefix)
    local = client.request("GET", f"/api/v1/persistentvolumes/{prefix}-local")
    out["pv local"] = plain({"claimRef": local["spec"].get("claimRef"),
                             "annotations": local["metadata"].get("annotations")}, ns, prefix)
    return out


def _request_body(event: Mapping[str, Any]) -> Any:
    """The part of a request that says what the scheduler meant: whole-object updates by what they change."""
    ref, body = event["objectRef"], event.get("requestObject") or {}
    kind, sub = ref["resource"], ref.get("subresource", "")
    if kind == "resourceclaims" and event["verb"] == "update":
        return body.get("status") if sub == "status" else {"finalizers": body["metadata"].get("finalizers")}
    if kind == "resourceclaims" and event["verb"] == "create":
        meta = body["metadata"]
        return {"metadata": {k: meta.get(k) for k in ("generateName", "annotations", "ownerReferences")},
                "spec": body["spec"]}
    if kind == "persistentvolumes":
        return {"claimRef": body["spec"].get("claimRef"), "annotations": body["metadata"].get("annotations")}
    if kind == "persistentvolumeclaims":
        return body["metadata"].get("annotations")
    if sub == "binding":
        return body.get("target")
    return body


def requests(plane: ControlPlane, ns: str, prefix: str) -> dict[str, list[Any]]:
    """The scheduler's writes (both run as ``system:kube-scheduler``), object by object, in order (the pod that
    keeps failing: its first attempt)."""
    out: dict[str, list[Any]] = {}
    for event in plane.audit():
        ref = event["objectRef"]
        if event["user"]["username"] != SCHEDULER_USER or ref.get("namespace", ns) != ns:
            continue
        if ref["resource"] == "persistentvolumes" and not ref.get("name", "").startswith(prefix):
            continue
        name = normal(ref.get("name") or "(new)", ns, prefix)
        entry = [event["verb"], ref.get("subresource", ""), event["responseStatus"]["code"],
                 plain(_request_body(event), ns, prefix)]
        out.setdefault(f"{ref['resource']} {name}", []).append(entry)
    out["pods never"] = out.get("pods never", [])[:2]
    out["persistentvolumeclaims never"] = out.get("persistentvolumeclaims never", [])[:1]
    return out


def remove(client: KubeClient, ns: str, prefix: str) -> None:
    """The cluster-scoped objects of one half (the namespaced ones stay: the namespaces differ)."""
    client.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    for path in (f"{RESOURCE}/deviceclasses/gpu-{prefix}", f"{RESOURCE}/resourceslices/{prefix}-1",
                 f"/apis/storage.k8s.io/v1/storageclasses/local-{prefix}",
                 f"/apis/storage.k8s.io/v1/storageclasses/dyn-{prefix}",
                 f"/api/v1/nodes/{prefix}-1", f"/api/v1/nodes/{prefix}-2"):
        client.request("DELETE", path)


def test_claim_and_volume_writes_match_kube_schedulers(plane: ControlPlane, admin: KubeClient,
                                                        as_scheduler: KubeClient, tmp_path: Path) -> None:
    if not (plane.bin_dir / "kube-scheduler").is_file():
        pytest.skip("no kube-scheduler beside the control plane")
    devices_and_volumes(admin, KUBE_NS, "wk")
    user = plane.write_kubeconfig(tmp_path / "scheduler.kubeconfig", client_cert=True)
    theirs = kube_scheduler(plane, tmp_path, document("kube-writes"), user_kubeconfig=user)
    try:
        play(admin, KUBE_NS, "kube-writes", "wk")
    finally:
        theirs.terminate()
        theirs.wait(30)
    kube_left, kube_sent = left(admin, KUBE_NS, "wk"), requests(plane, KUBE_NS, "wk")
    remove(admin, KUBE_NS, "wk")

    devices_and_volumes(admin, LIB_NS, "wl")
    with running(as_scheduler, document("lib-writes")) as live:
        play(admin, LIB_NS, "lib-writes", "wl")
        check_invariants(admin, live, LIB_NS, "lib-writes", document("lib-writes"), waiting=["never"])
    lib_left, lib_sent = left(admin, LIB_NS, "wl"), requests(plane, LIB_NS, "wl")
    remove(admin, LIB_NS, "wl")
    for key in sorted(set(kube_left) | set(lib_left)):
        assert lib_left.get(key) == kube_left.get(key), key
    for key in sorted(set(kube_sent) | set(lib_sent)):
        assert lib_sent.get(key) == kube_sent.get(key), key
    assert kube_left["claim one"]["status"]["allocation"]["devices"]["config"]  # the class's and the claim's
    assert kube_sent["pods stolen"][-1][3]["status"]["conditions"][0]["reason"] == "SchedulerError"
