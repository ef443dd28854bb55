"""Faults, each against a real API server, with the invariants checked after each: every pod bound at most once,
no pod left pending that fits, and the scheduler's cache equal to the API server's state."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kschedlib.errors import KubeApiError
from kschedlib.kube import KubeClient, LiveScheduler, connect, read_settings
from kschedlib.kube._informer import ADDED, DELETED, Informer
from kschedlib.kube._resources import resource
from kschedlib.kube._snapshot import list_all
from kschedlib.model import Pod
from tests.kube.cluster import (
    PLUGINS,
    check_invariants,
    condition,
    config,
    create,
    events,
    hooked,
    namespace,
    node,
    pod,
    pods,
    running,
    settled,
    wait_for,
)
from tests.kube.conftest import scheduler_client
from tests.kube.envtest import ControlPlane, control_plane

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def all_bound(client: KubeClient, ns: str) -> bool:
    return all(p["spec"].get("nodeName") for p in pods(client, ns).values())


# --- a pod or node changes between the scheduling cycle and the binding (the shared API server) ----------------

@pytest.mark.parametrize("change", ["someone-else-binds", "pod-deleted", "node-deleted"])
def test_the_cluster_changes_before_the_binding(admin: KubeClient, as_scheduler: KubeClient, hook: list[Any],
                                                 change: str) -> None:
    ns, me = namespace(admin, f"race-{change}"), f"race-{change}"
    nodes = [f"{change}-a", f"{change}-b"]
    create(admin, node(nodes[0], cpu="4", labels={"pool": change}))
    create(admin, node(nodes[1], cpu="2", labels={"pool": change}))
    done = threading.Event()

    def interfere(p: Pod, node_name: str) -> None:
        if p.name != "target" or done.is_set():
            return
        done.set()
        if change == "someone-else-binds":
            other = next(n for n in nodes if n != node_name)
            admin.request("POST", f"/api/v1/namespaces/{ns}/pods/target/binding",
                          body={"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "target"},
                                "target": {"kind": "Node", "name": other}})
        elif change == "pod-deleted":
            admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods/target", body={"gracePeriodSeconds": 0})
        else:
            admin.request("DELETE", f"/api/v1/nodes/{node_name}")

    hook[0] = interfere
    document = hooked(me)
    with running(as_scheduler, document, plugins=PLUGINS) as live:
        create(admin, pod("target", ns, scheduler=me, node_selector={"pool": change}))
        wait_for("the interference", done.is_set)
        create(admin, pod("after", ns, scheduler=me, node_selector={"pool": change}))
        wait_for("the next pod bound", lambda: bool(pods(admin, ns).get("after", {}).get("spec", {}).get("nodeName")))
        check_invariants(admin, live, ns, me, document, PLUGINS)
    now = pods(admin, ns)
    notes = [(e["regarding"]["name"], e["reason"], e["note"]) for e in events(admin, ns)]
    if change == "someone-else-binds":  # the 409 forgot our assumption: the pod stays where the other put it
        assert now["target"]["spec"]["nodeName"] == nodes[1]
        assert any(reason == "FailedScheduling" and "is already assigned to node" in note
                   for name, reason, note in notes if name == "target")
        written = condition(now["target"])  # and, as kube-scheduler does, says so in the bound pod's status
        assert written is not None
        assert (written["status"], written["reason"]) == ("False", "SchedulerError")
        assert "is already assigned to node" in written["message"]
    elif change == "pod-deleted":  # the 404 is an event
        assert "target" not in now
        assert ("target", "FailedScheduling", 'running Bind plugin "DefaultBinder": pods "target" not found') in notes
    else:  # the API server binds to a node that is gone, as it does for kube-scheduler
        assert now["target"]["spec"]["nodeName"] == nodes[0]
    admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    for name in nodes:
        admin.request("DELETE", f"/api/v1/nodes/{name}") if name in {n.get("metadata", {}).get("name") for n in
                                                                   admin.request("GET", "/api/v1/nodes")["items"]} \
            else None


ADMISSION = "/apis/admissionregistration.k8s.io/v1"


def test_a_victim_that_cannot_be_deleted_lets_the_preemptor_try_again(admin: KubeClient,
                                                                      as_scheduler: KubeClient) -> None:
    """An admission policy refuses to delete the victim: as kube-scheduler does, the preemption is given up and the
    preemptor retried at once (not held back for a victim that stays)."""
    ns, me = namespace(admin, "undeletable"), "undeletable"
    admin.request("POST", f"{ADMISSION}/validatingadmissionpolicies", body={
                   "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                   "metadata": {"name": "undeletable"},
                   "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                                    "operations": ["DELETE"], "resources": ["pods"]}]},
                            "validations": [{"expression": "!has(oldObject.metadata.labels) || "
                                                           "!('undeletable' in oldObject.metadata.labels)",
                                             "message": "this pod stays"}]}})
    admin.request("POST", f"{ADMISSION}/validatingadmissionpolicybindings", body={
                   "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                   "metadata": {"name": "undeletable"},
                   "spec": {"policyName": "undeletable", "validationActions": ["Deny"]}})
    create(admin, node("undel-1", cpu="1", labels={"pool": "undel"}))
    create(admin, pod("victim", ns, scheduler=me, cpu="1", node_name="undel-1", labels={"undeletable": "yes"}))

    def refused() -> bool:
        try:
            admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods/victim", body={"dryRun": ["All"]})
        except KubeApiError as exc:
            return "this pod stays" in exc.message
        return False

    wait_for("the policy in force", refused)
    with contextlib.suppress(KubeApiError):  # made by another test
        create(admin, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                       "metadata": {"name": "run-high"}, "value": 1000})
    try:
        with running(as_scheduler, config(me)) as live:
            create(admin, pod("urgent", ns, scheduler=me, cpu="1", priority_class="run-high",
                              node_selector={"pool": "undel"}))

            def attempts() -> int:
                queued = live.call(lambda s: s.pending().get(f"{ns}/urgent"))
                return queued[1].attempts if queued is not None else 0

            wait_for("the preemptor tried again", lambda: attempts() >= 3, timeout=30)
        victim = pods(admin, ns)["victim"]
        assert condition(victim, "DisruptionTarget") is not None  # it was marked, only its deletion failed
        assert not victim["metadata"].get("deletionTimestamp")
    finally:
        admin.request("DELETE", f"{ADMISSION}/validatingadmissionpolicybindings/undeletable")
        admin.request("DELETE", f"{ADMISSION}/validatingadmissionpolicies/undeletable")
        wait_for("the policy gone", lambda: not refused())
        admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
        admin.request("DELETE", "/api/v1/nodes/undel-1")


def test_a_quiet_watch_past_the_read_timeout_is_made_again(admin: KubeClient) -> None:
    items, version = list_all(admin, resource("CSIDriver"))
    stop = threading.Event()
    informer = Informer(admin, resource("CSIDriver"), lambda res, kind, obj: None, stop=stop, initial=items,
                        version=version, read_timeout=0.5)
    informer.start()
    try:
        wait_for("three watches", lambda: informer.watches >= 3, timeout=10)  # no backoff between them
        assert informer.relists == 0  # resumed where it was
    finally:
        stop.set()
        informer.close()


# --- an API server whose watches end every second or two and whose etcd gets compacted --------------------------

@pytest.fixture(scope="module")
def flaky() -> Iterator[ControlPlane]:
    """Watches cut after 1-2 s (``--min-request-timeout=1``) and served from etcd (no watch cache), so a watch
    resumed after a compaction gets 410 Gone."""
    with control_plane(apiserver_flags=["--min-request-timeout=1", "--watch-cache=false"]) as started:
        yield started


def test_watches_cut_every_second_lose_nothing(flaky: ControlPlane) -> None:
    client = connect(str(flaky.kubeconfig), qps=0, burst=0)
    ns, me = namespace(client, "cuts"), "cuts-scheduler"
    create(client, node("cut-1", cpu="8"))
    with running(client, config(me)) as live:
        for index in range(12):
            create(client, pod(f"p{index}", ns, scheduler=me))
            time.sleep(0.4)  # pods arrive across several watches
        wait_for("every pod bound", lambda: all_bound(client, ns), timeout=60)
        pod_informer = next(i for i in live.informers if i.resource.kind == "Pod")
        assert pod_informer.watches >= 3  # the watch was cut and resumed
        check_invariants(client, live, ns, me)


def test_a_watch_resumed_after_compaction_lists_again(flaky: ControlPlane) -> None:
    client = connect(str(flaky.kubeconfig), qps=0, burst=0)
    ns, me = namespace(client, "gone"), "gone-scheduler"
    create(client, node("gone-1", cpu="8"))
    with running(client, config(me)) as live:
        create(client, pod("before", ns, scheduler=me))
        wait_for("the first pod bound", lambda: all_bound(client, ns), timeout=60)
        pod_informer = next(i for i in live.informers if i.resource.kind == "Pod")
        for index in range(3):  # move etcd on without touching pods, then compact it
            create(client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"gone-filler-{index}"}})
        flaky.compact_etcd()
        wait_for("a relist after 410 Gone", lambda: pod_informer.relists >= 1, timeout=30)
        create(client, pod("after", ns, scheduler=me))
        wait_for("the second pod bound", lambda: all_bound(client, ns), timeout=60)
        check_invariants(client, live, ns, me)


def test_a_relist_delivers_what_was_missed(flaky: ControlPlane) -> None:
    """Known objects that are gone come back as deletions, new ones as additions (the informer alone)."""
    client = connect(str(flaky.kubeconfig), qps=0, burst=0)
    ns = namespace(client, "relist")
    create(client, pod("real", ns, scheduler="nobody"))
    ghost = pod("ghost", ns, scheduler="nobody")
    ghost["metadata"]["resourceVersion"] = "1"
    flaky.compact_etcd()
    seen: list[tuple[str, str]] = []
    stop = threading.Event()
    informer = Informer(client, resource("Pod"), lambda res, kind, obj: seen.append((kind, obj["metadata"]["name"])),
                        stop=stop, initial=[ghost], version="1")
    informer.start()
    try:
        wait_for("the relist", lambda: informer.relists >= 1, timeout=30)
        wait_for("its deliveries", lambda: (DELETED, "ghost") in seen and (ADDED, "real") in seen, timeout=10)
    finally:
        stop.set()
        informer.close()


def test_the_api_server_restarted_mid_run(flaky: ControlPlane) -> None:
    """Last on this API server: it restarts on the same etcd while the scheduler runs."""
    client = connect(str(flaky.kubeconfig), qps=0, burst=0)
    ns, me = namespace(client, "restart"), "restart-scheduler"
    create(client, node("restart-1", cpu="8"))
    with running(client, config(me)) as live:
        create(client, pod("before", ns, scheduler=me))
        wait_for("the first pod bound", lambda: all_bound(client, ns), timeout=60)
        flaky.restart_apiserver()
        for index in range(3):
            create(client, pod(f"after-{index}", ns, scheduler=me))
        wait_for("the pods created after the restart bound", lambda: all_bound(client, ns), timeout=90)
        check_invariants(client, live, ns, me)


def test_the_api_server_down_when_the_scheduler_starts(flaky: ControlPlane) -> None:
    """Last on this API server: the scheduler starts while it is down, waits, and schedules once it is back."""
    client = connect(str(flaky.kubeconfig), qps=0, burst=0)
    ns, me = namespace(client, "late-server"), "late-server-scheduler"
    create(client, node("late-1", cpu="8"))
    create(client, pod("waiting", ns, scheduler=me))
    flaky.stop_apiserver()
    live = LiveScheduler(client, read_settings(config(me), default_lease=me), seed=0)
    live.start()
    try:
        time.sleep(2)  # a read or two refused meanwhile
        assert not live.stopped.is_set()
        flaky.start_apiserver()
        assert live.ready.wait(90), "the scheduler did not read the cluster once the API server was back"
        wait_for("the waiting pod bound", lambda: all_bound(client, ns), timeout=60)
        check_invariants(client, live, ns, me)
    finally:
        live.stop()
        live.join(60)


# --- 429 Too Many Requests --------------------------------------------------------------------------------------

def test_throttled_by_the_api_server(tmp_path: Path) -> None:
    flags = ["--enable-priority-and-fairness=false", "--max-requests-inflight=1", "--max-mutating-requests-inflight=1"]
    with control_plane(apiserver_flags=flags) as throttling:
        client = connect(str(throttling.kubeconfig), qps=0, burst=0)
        ns, me = namespace(client, "throttled"), "throttled-scheduler"
        create(client, node("busy-1", cpu="64"))
        for index in range(30):
            create(client, pod(f"p{index}", ns, scheduler=me, cpu="10m"))
        stop = threading.Event()

        def busy(worker: int) -> None:  # another client keeps the one mutating seat taken, until we are refused
            for index in range(2000):
                if stop.is_set():
                    return
                path = f"/api/v1/namespaces/{ns}/configmaps"
                client.request("POST", path, body={"metadata": {"name": f"load-{worker}-{index}"}})
                client.request("DELETE", f"{path}/load-{worker}-{index}")

        load = [threading.Thread(target=busy, args=(w,)) for w in range(2)]
        for thread in load:
            thread.start()
        try:
            with running(scheduler_client(throttling, tmp_path), config(me, qps=-1)) as live:
                wait_for("a 429", lambda: live.client.throttled + live.events.client.throttled > 0, timeout=60)
                stop.set()
                wait_for("every pod bound", lambda: all_bound(client, ns), timeout=90)
                check_invariants(client, live, ns, me)
        finally:
            stop.set()
            for thread in load:
                thread.join()


# --- two replicas, the leader killed ----------------------------------------------------------------------------

def replica(plane: ControlPlane, cfg: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as stderr:
        return subprocess.Popen([sys.executable, "-m", "kschedlib", "run", "--kubeconfig", str(plane.kubeconfig),
                                 "--config", str(cfg), "-v", "2"], stdout=subprocess.DEVNULL, stderr=stderr,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_standby_takes_over_when_the_leader_is_killed(plane: ControlPlane, admin: KubeClient,
                                                          tmp_path: Path) -> None:
    ns, me = namespace(admin, "leaders"), "leader-scheduler"
    create(admin, node("lead-1", cpu="8", labels={"pool": "lead"}))
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config(me, leaderElection={"leaderElect": True, "leaseDuration": "5s",
                                                         "renewDeadline": "4s", "retryPeriod": "500ms"})))
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    replicas = [replica(plane, cfg, logs[0]), replica(plane, cfg, logs[1])]
    try:
        for index in range(4):
            create(admin, pod(f"first-{index}", ns, scheduler=me, node_selector={"pool": "lead"}))
        wait_for("the leader binding the first pods", lambda: all_bound(admin, ns), timeout=60)
        leader = next(i for i, log in enumerate(logs) if "successfully acquired lease" in log.read_text())
        first_holder = admin.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{me}")
        replicas[leader].send_signal(signal.SIGKILL)
        replicas[leader].wait(10)
        for index in range(4):
            create(admin, pod(f"second-{index}", ns, scheduler=me, node_selector={"pool": "lead"}))
        wait_for("the standby binding the later pods", lambda: all_bound(admin, ns), timeout=60)
        standby = 1 - leader
        assert "successfully acquired lease" in logs[standby].read_text()
        lease = admin.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{me}")
        assert lease["spec"]["holderIdentity"] != first_holder["spec"]["holderIdentity"]
        assert lease["spec"]["leaseTransitions"] == first_holder["spec"]["leaseTransitions"] + 1
        def scheduled() -> Counter[str]:
            return Counter(e["regarding"]["name"] for e in events(admin, ns) if e["reason"] == "Scheduled")

        wait_for("the standby's events", lambda: {f"second-{i}" for i in range(4)} <= set(scheduled()))
        # bound once, by one of the two (events the killed leader had queued are lost with it)
        assert all(count == 1 for count in scheduled().values())
        assert settled(admin, ns, me)()
        replicas[standby].send_signal(signal.SIGTERM)
        assert replicas[standby].wait(30) == 0
    finally:
        for process in replicas:
            if process.poll() is None:
                process.kill()
                process.wait()
    admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    admin.request("DELETE", "/api/v1/nodes/lead-1")
