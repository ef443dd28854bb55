"""Helpers for tests on a real API server: objects to create, waiting with a bound, a stand-in kubelet that finishes
terminating pods, and the invariants every fault test checks."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kschedlib
from kschedlib.errors import KubeApiError
from kschedlib.kube import KubeClient, LiveScheduler, read_settings
from kschedlib.kube._plugins import registry
from kschedlib.kube._resources import resource
from kschedlib.kube.sources import snapshot
from tests.kube.envtest import ControlPlane

PODS = "/api/v1/namespaces/{ns}/pods"
PLUGINS = ["tests.kube.plugins_for_run"]
"""The test plugins by module name: the same module (and hook, see :func:`hooked`) as the tests import."""


def node(name: str, *, cpu: str = "4", labels: Mapping[str, str] | None = None, pods: str = "110") -> dict[str, Any]:
    resources = {"cpu": cpu, "memory": "16Gi", "pods": pods}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"capacity": resources, "allocatable": resources,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, namespace: str, *, scheduler: str, cpu: str = "100m", node_name: str | None = None,
        priority_class: str | None = None, labels: Mapping[str, str] | None = None,
        node_selector: Mapping[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": scheduler, "terminationGracePeriodSeconds": 30,
                            "containers": [{"name": "c", "image": "pause",
                                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                            "labels": dict(labels or {})}, "spec": spec}


def workload(name: str, ns: str, scheduler: str, pool: str, *, claim: str | None = None,
             extended: tuple[str, int] | None = None, volume: str | None = None) -> dict[str, Any]:
    """A pod of ``pool``'s nodes using the ResourceClaim ``claim``, ``extended`` = (an extended resource, a count)
    and the volume of the PersistentVolumeClaim ``volume``, as asked."""
    container: dict[str, Any] = {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}
    spec: dict[str, Any] = {"schedulerName": scheduler, "containers": [container], "nodeSelector": {"pool": pool}}
    if claim is not None:
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimName": claim}]
        container["resources"]["claims"] = [{"name": "dev"}]
    if extended is not None:
        container["resources"]["requests"][extended[0]] = str(extended[1])
        container["resources"]["limits"] = {extended[0]: str(extended[1])}
    if volume is not None:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": volume}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": spec}


def create(client: KubeClient, obj: Mapping[str, Any]) -> dict[str, Any]:
    kind = resource(obj["kind"])
    path = kind.object_path("", obj["metadata"].get("namespace")).rstrip("/") if kind.namespaced else kind.path
    return client.request("POST", path, body=obj)


def namespace(client: KubeClient, name: str) -> str:
    try:
        create(client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    except KubeApiError as exc:
        if exc.status != 409:
            raise
    return name


def pods(client: KubeClient, ns: str) -> dict[str, dict[str, Any]]:
    """name -> pod, of the namespace."""
    return {p["metadata"]["name"]: p for p in client.request("GET", PODS.format(ns=ns))["items"]}


def events(client: KubeClient, ns: str) -> list[dict[str, Any]]:
    return list(client.request("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"])


def condition(p: Mapping[str, Any], kind: str = "PodScheduled") -> dict[str, Any] | None:
    for cond in p.get("status", {}).get("conditions") or ():
        if cond["type"] == kind:
            return dict(cond)
    return None


def reap(client: KubeClient, ns: str) -> None:
    """The kubelet's part: terminating pods of ``ns`` go away at once."""
    for name, p in pods(client, ns).items():
        if p["metadata"].get("deletionTimestamp"):
            try:
                client.request("DELETE", PODS.format(ns=ns) + f"/{name}", body={"gracePeriodSeconds": 0})
            except KubeApiError as exc:
                if exc.status != 404:
                    raise


def http_get(url: str) -> tuple[int, str]:
    """Status and body of a GET (0 and nothing when nobody answers)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError:
        return 0, ""


def wait_for(what: str, check: Callable[[], bool], *, timeout: float = 30.0, reap_in: str | None = None,
             client: KubeClient | None = None) -> None:
    """Poll ``check`` (every 0.1 s, at most ``timeout`` s), finishing terminating pods of ``reap_in`` meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if reap_in is not None and client is not None:
            reap(client, reap_in)
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def settled(client: KubeClient, ns: str, scheduler: str) -> Callable[[], bool]:
    """Every pod of ``scheduler`` in ``ns`` is bound or has a PodScheduled condition."""
    def check() -> bool:
        mine = [p for p in pods(client, ns).values() if p["spec"].get("schedulerName") == scheduler]
        return all(p["spec"].get("nodeName") or condition(p) is not None for p in mine)
    return check


def config(*names: str, qps: float = 1000, burst: int = 1000, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"qps": qps, "burst": burst},
            "profiles": [{"schedulerName": name} for name in names], **extra}


@contextmanager
def running(client: KubeClient, document: Mapping[str, Any], **options: Any) -> Iterator[LiveScheduler]:
    """A LiveScheduler on a thread, ready, stopped (and joined) on exit."""
    live = LiveScheduler(client, read_settings(document, default_lease="test"), seed=0, **options)
    live.start()
    try:
        assert live.ready.wait(30), "the scheduler did not read the cluster"
        yield live
    finally:
        live.stop()
        live.join(60)
        assert live.stopped.is_set(), "the scheduler did not stop"


def check_invariants(client: KubeClient, live: LiveScheduler, ns: str, scheduler: str,
                     document: Mapping[str, Any] | None = None, plugins: Sequence[str] = (),
                     waiting: Sequence[str] = ()) -> None:
    """Every pod bound at most once (one Scheduled event, naming its node), no pending pod of ours that fits (but
    ``waiting``, which fit and wait for the cluster), and the scheduler's cache equal to the API server's pods and
    nodes."""
    now = pods(client, ns)
    scheduled = Counter(e["regarding"]["uid"] for e in events(client, ns) if e["reason"] == "Scheduled")
    for p in now.values():
        assert scheduled[p["metadata"]["uid"]] <= 1, f"{p['metadata']['name']} was bound more than once"
    for e in events(client, ns):
        if e["reason"] == "Scheduled" and e["regarding"]["name"] in now:
            target = now[e["regarding"]["name"]]
            if target["metadata"]["uid"] == e["regarding"]["uid"]:
                assert e["note"].endswith(f" to {target['spec'].get('nodeName')}"), e["note"]
    cluster = snapshot(client=client)
    document = document if document is not None else config(scheduler)
    plugin_registry = registry(lambda pod, node: None, plugins)
    for name, p in now.items():
        if p["spec"].get("schedulerName") == scheduler and not p["spec"].get("nodeName") \
                and not p["metadata"].get("deletionTimestamp") and name not in waiting:
            answer = kschedlib.explain(cluster, f"{ns}/{name}", document, registry=plugin_registry)
            assert answer.outcome is None or not answer.outcome.feasible, f"{name} fits but stayed pending"
    api_bound = {f"{ns}/{n}": p["spec"]["nodeName"] for n, p in now.items() if p["spec"].get("nodeName")}
    api_nodes = sorted(n.name for n in cluster.nodes)

    def view(s: kschedlib.Scheduler) -> tuple[dict[str, str], list[str], list[str]]:
        bound = {k: v for k, v in s.bound_pods().items() if k.startswith(f"{ns}/")}
        pending = sorted(k for k in s.pending() if k.startswith(f"{ns}/"))
        return bound, sorted(s.node_names()), pending

    deadline = time.monotonic() + 15
    while True:  # the scheduler may still be reading the last changes
        bound, nodes, pending = live.call(view)
        api_pending = sorted(f"{ns}/{n}" for n, p in now.items() if not p["spec"].get("nodeName")
                             and p["spec"].get("schedulerName") == scheduler)
        if (bound, nodes, pending) == (api_bound, api_nodes, api_pending) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
        now = pods(client, ns)
        api_bound = {f"{ns}/{n}": p["spec"]["nodeName"] for n, p in now.items() if p["spec"].get("nodeName")}
    assert bound == api_bound
    assert nodes == api_nodes
    assert pending == api_pending


def hooked(scheduler: str) -> dict[str, Any]:
    """A config whose profile runs ``BeforeBinding`` (the ``hook`` fixture's callable) after the other PreBinds."""
    document = config(scheduler)
    document["profiles"][0]["plugins"] = {"preBind": {"enabled": [{"name": "BeforeBinding"}]}}
    return document


def kube_scheduler(plane: ControlPlane, where: Path, document: Mapping[str, Any], *,
                   user_kubeconfig: Path | None = None) -> subprocess.Popen[bytes]:
    """The real kube-scheduler on ``plane`` with the KubeSchedulerConfiguration ``document`` (no leader election),
    as the admin or as the user of ``user_kubeconfig``; its log in ``where``."""
    kubeconfig = str(user_kubeconfig or plane.kubeconfig)
    cfg = where / "kube-scheduler.json"
    cfg.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                               **document, "leaderElection": {"leaderElect": False},
                               "clientConnection": {**document.get("clientConnection", {}),
                                                    "kubeconfig": kubeconfig}}))
    with (where / "kube-scheduler.log").open("wb") as log:
        return subprocess.Popen([str(plane.bin_dir / "kube-scheduler"), "--config", str(cfg), "--secure-port", "0",
                                 "--authentication-kubeconfig", str(plane.kubeconfig),
                                 "--authorization-kubeconfig", str(plane.kubeconfig)],
                                stdout=subprocess.DEVNULL, stderr=log)
