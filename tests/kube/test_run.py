"""``kschedlib run`` on a real API server: the placements, conditions and events of ``simulate`` on the same cluster,
kube-scheduler's own writes for the same scenario, a custom plugin, preemption with a PodDisruptionBudget, a second
scheduler's pods left alone, and the process's command line (health, metrics, SIGTERM, the Lease given back)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib.kube import KubeClient
from kschedlib.kube.sources import snapshot
from tests.kube.cluster import (
    check_invariants,
    condition,
    config,
    create,
    events,
    http_get,
    kube_scheduler,
    namespace,
    node,
    pod,
    pods,
    reap,
    running,
    settled,
    wait_for,
)
from tests.kube.envtest import ControlPlane, free_port

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def cleanup(client: KubeClient, ns: str, nodes: list[str]) -> None:
    client.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    for name in nodes:
        client.request("DELETE", f"/api/v1/nodes/{name}")


def test_run_places_pods_as_simulate_does(admin: KubeClient, as_scheduler: KubeClient) -> None:
    ns, me, other = namespace(admin, "parity"), "parity-scheduler", "someone-else"
    nodes = {"par-1": "2", "par-2": "2", "par-3": "4", "par-4": "1"}
    for name, cpu in nodes.items():
        create(admin, node(name, cpu=cpu, labels={"pool": "parity", "topology.kubernetes.io/zone": name[-1]}))
    create(admin, pod("running", ns, scheduler=me, cpu="1", node_name="par-3", labels={"app": "web"}))
    for index, cpu in enumerate(["500m", "1", "1500m", "3", "250m", "1", "2", "700m", "5"]):
        create(admin, pod(f"p{index}", ns, scheduler=me, cpu=cpu, node_selector={"pool": "parity"},
                          labels={"app": "web"}))
    create(admin, pod("not-mine", ns, scheduler=other, cpu="100m"))
    document = config(me)
    expected = kschedlib.simulate(snapshot(client=admin), document, seed=0)
    with running(as_scheduler, document) as live:
        wait_for("every pod placed or refused", settled(admin, ns, me))
        check_invariants(admin, live, ns, me)
    now = pods(admin, ns)
    placed = {f"{ns}/{n}": p["spec"].get("nodeName") or None for n, p in now.items() if n.startswith("p")}
    assert placed == {k: v for k, v in expected.placements.items() if k.startswith(f"{ns}/")}
    refused = {f"{ns}/{n}": condition(p)["message"] for n, p in now.items()  # type: ignore[index]
               if n.startswith("p") and not p["spec"].get("nodeName")}
    assert refused == {k: v for k, v in expected.unschedulable.items() if k.startswith(f"{ns}/")}
    assert refused  # the cluster is too small for some of them
    notes = {(e["regarding"]["name"], e["reason"], e["note"]) for e in events(admin, ns)}
    for key, message in refused.items():
        assert (key.split("/")[1], "FailedScheduling", message) in notes
    for key, target in placed.items():
        if target:
            assert (key.split("/")[1], "Scheduled", f"Successfully assigned {key} to {target}") in notes
    untouched = now["not-mine"]
    assert untouched["spec"].get("nodeName") is None
    assert condition(untouched) is None
    assert not [e for e in events(admin, ns) if e["regarding"]["name"] == "not-mine"]
    cleanup(admin, ns, list(nodes))


def preemption_scenario(client: KubeClient, ns: str, scheduler: str, prefix: str) -> None:
    """Two nodes (2 and 3 CPUs), each with a low-priority pod; the one on the first guarded by a PDB that allows no
    disruption; a pod that fits (on the second: no tie), one that never fits, and a high-priority pod that needs one
    of the low ones gone."""
    namespace(client, ns)
    for index, cpu in ((1, "2"), (2, "3")):
        create(client, node(f"{prefix}-{index}", cpu=cpu, labels={"pool": prefix}))
    create(client, pod("guarded", ns, scheduler=scheduler, cpu="1500m", node_name=f"{prefix}-1",
                       labels={"app": "guarded"}))
    create(client, pod("free", ns, scheduler=scheduler, cpu="1500m", node_name=f"{prefix}-2", labels={"app": "free"}))
    pdb = create(client, {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                          "metadata": {"name": "guarded", "namespace": ns},
                          "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}})
    client.request("PATCH", f"/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets/guarded/status",
                   body={"status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
                                    "expectedPods": 1, "observedGeneration": pdb["metadata"]["generation"]}},
                   content_type="application/merge-patch+json")
    selector = {"pool": prefix}
    create(client, pod("fits", ns, scheduler=scheduler, cpu="300m", node_selector=selector))
    create(client, pod("never", ns, scheduler=scheduler, cpu="10", node_selector=selector))
    with contextlib.suppress(kschedlib.KschedError):  # made by the other half of the comparison
        create(client, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": "run-high"}, "value": 1000})
    time.sleep(1)  # the low pods first: the preemptor must find them placed
    create(client, pod("urgent", ns, scheduler=scheduler, cpu="1500m", priority_class="run-high",
                       node_selector=selector))


def writes(client: KubeClient, ns: str, prefix: str, scheduler: str) -> dict[str, Any]:
    """What the scheduler wrote, comparable across schedulers: node names, uids and times left out."""
    def plain(text: str) -> str:
        text = text.replace(f"{ns}/", "NS/").replace(scheduler, "SCHED").replace(f"{prefix}-", "NODE-")
        return re.sub(r"[0-9a-f]{8}-[0-9a-f-]{27}", "UID", text)

    out: dict[str, Any] = {}
    for name, p in pods(client, ns).items():
        conditions = []
        for cond in p["status"].get("conditions") or ():
            kept = {k: v for k, v in cond.items() if k not in ("lastTransitionTime", "lastProbeTime")}
            conditions.append({k: plain(v) if isinstance(v, str) else v for k, v in kept.items()})
        out[name] = {"node": plain(p["spec"].get("nodeName") or ""), "conditions": conditions,
                     "nominated": plain(p["status"].get("nominatedNodeName") or ""),
                     "deleting": bool(p["metadata"].get("deletionTimestamp"))}
    instance = f"{scheduler}-{socket.gethostname()}"
    out["events"] = sorted((e["regarding"]["name"], e["reason"], e["action"], e["type"], plain(e["note"]),
                            plain(e["reportingController"]), e["reportingInstance"] == instance,
                            e.get("series", {}).get("count")) for e in events(client, ns))  # as many as kube's
    return out


def preempted(client: KubeClient, ns: str) -> bool:
    urgent = pods(client, ns).get("urgent")
    return urgent is not None and bool(urgent["status"].get("nominatedNodeName") or urgent["spec"].get("nodeName"))


def play_preemption(client: KubeClient, ns: str, scheduler: str, prefix: str) -> tuple[Any, Any]:
    """The scenario with ``scheduler`` running: its writes once it preempted, and once the victim was gone and
    the preemptor bound."""
    def reasons() -> set[tuple[str, str]]:
        return {(e["regarding"]["name"], e["reason"]) for e in events(client, ns)}

    preemption_scenario(client, ns, scheduler, prefix)
    wait_for(f"{scheduler}'s preemption", lambda: preempted(client, ns), timeout=60)
    wait_for("its events", lambda: {("free", "Preempted"), ("urgent", "FailedScheduling"), ("fits", "Scheduled"),
                                    ("never", "FailedScheduling")} <= reasons(), timeout=30)
    time.sleep(0.5)  # anything else it writes now
    before_reap = writes(client, ns, prefix, scheduler)
    reap(client, ns)
    wait_for(f"{scheduler} binding the preemptor", lambda: ("urgent", "Scheduled") in reasons(), timeout=60)
    time.sleep(0.5)
    return before_reap, writes(client, ns, prefix, scheduler)


def test_writes_match_kube_schedulers(plane: ControlPlane, admin: KubeClient, as_scheduler: KubeClient,
                                      tmp_path: Path) -> None:
    if not (plane.bin_dir / "kube-scheduler").is_file():
        pytest.skip("no kube-scheduler beside the control plane")
    theirs = kube_scheduler(plane, tmp_path, {"profiles": [{"schedulerName": "kube-twin"}]})
    try:
        before_reap_kube, after_kube = play_preemption(admin, "twin-kube", "kube-twin", "tk")
    finally:
        theirs.terminate()
        theirs.wait(30)
    cleanup(admin, "twin-kube", ["tk-1", "tk-2"])  # the same cluster for the second half
    with running(as_scheduler, config("lib-twin")) as live:
        before_reap_lib, after_lib = play_preemption(admin, "twin-lib", "lib-twin", "tl")
        check_invariants(admin, live, "twin-lib", "lib-twin")
    for name in sorted(set(before_reap_kube) | set(before_reap_lib)):
        assert before_reap_lib.get(name) == before_reap_kube.get(name), name
    for name in sorted(set(after_kube) | set(after_lib)):
        assert after_lib.get(name) == after_kube.get(name), name
    assert "free" not in after_lib  # the victim: the PDB kept the guarded pod
    assert before_reap_lib["free"]["deleting"]
    assert before_reap_lib["free"]["conditions"] == [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
         "message": "SCHED: preempting to accommodate a higher priority pod", "observedGeneration": 1}]
    cleanup(admin, "twin-lib", ["tl-1", "tl-2"])


def test_custom_plugin_from_a_module_file(admin: KubeClient, as_scheduler: KubeClient) -> None:
    ns, me = namespace(admin, "plugin"), "plugin-scheduler"
    create(admin, node("plug-1", cpu="2", labels={"pool": "plug"}))
    create(admin, node("plug-2", cpu="8", labels={"pool": "plug", "maintenance": "true"}))
    create(admin, pod("small", ns, scheduler=me, cpu="1", node_selector={"pool": "plug"}))
    create(admin, pod("big", ns, scheduler=me, cpu="4", node_selector={"pool": "plug"}))
    document = config(me)
    document["profiles"][0]["plugins"] = {"multiPoint": {"enabled": [{"name": "AvoidMaintenance"}]}}
    plugins = [str(HERE / "plugins_for_run.py")]
    with running(as_scheduler, document, plugins=plugins) as live:
        wait_for("both pods decided", settled(admin, ns, me))
        check_invariants(admin, live, ns, me, document, plugins)
    now = pods(admin, ns)
    assert now["small"]["spec"]["nodeName"] == "plug-1"
    assert condition(now["big"]) == {**condition(now["big"]), "reason": "Unschedulable",  # type: ignore[dict-item]
                                     "message": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were under "
                                                "maintenance. no new claims to deallocate, preemption: 0/2 nodes are "
                                                "available: 2 Preemption is not helpful for scheduling."}
    cleanup(admin, ns, ["plug-1", "plug-2"])


def test_the_command_serves_health_and_metrics_and_stops_on_sigterm(plane: ControlPlane, admin: KubeClient,
                                                                     tmp_path: Path) -> None:
    ns, me = namespace(admin, "command"), "command-scheduler"
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config(me)))
    port = free_port()
    log = tmp_path / "run.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "kschedlib", "run", "--kubeconfig", str(plane.kubeconfig), "--config", str(cfg),
             "--leader-elect", "--metrics-bind-address", f"127.0.0.1:{port}", "-v", "2"],
            stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    try:
        wait_for("/readyz", lambda: http_get(f"http://127.0.0.1:{port}/readyz") == (200, "ok"), timeout=60)
        assert http_get(f"http://127.0.0.1:{port}/healthz") == (200, "ok")
        create(admin, node("cmd-1", cpu="2"))
        create(admin, pod("one", ns, scheduler=me))
        wait_for("the pod bound", lambda: bool(pods(admin, ns)["one"]["spec"].get("nodeName")))
        status, metrics = http_get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        assert f'scheduler_schedule_attempts_total{{profile="{me}",result="scheduled"}} 1.0' in metrics
        lease = admin.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{me}")
        assert lease["spec"]["holderIdentity"].startswith(socket.gethostname() + "_")
        assert lease["spec"]["leaseDurationSeconds"] == 15
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    lease = admin.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/{me}")
    assert lease["spec"].get("holderIdentity", "") == ""  # given back: a standby takes over at once
    text = log.read_text()
    assert f'"Successfully bound pod to node" pod="{ns}/one" node="cmd-1"' in text
    leader_events = admin.request("GET", "/api/v1/namespaces/kube-system/events")["items"]
    assert any(e["reason"] == "LeaderElection" and e["involvedObject"]["name"] == me for e in leader_events)
    cleanup(admin, ns, ["cmd-1"])


def test_run_needs_a_reachable_cluster(tmp_path: Path) -> None:
    from kschedlib.cli import main

    bad = tmp_path / "kubeconfig"
    bad.write_text("not: [a kubeconfig")
    err = __import__("io").StringIO()
    assert main(["run", "--kubeconfig", str(bad)], out=err, err=err) == 2
    assert "kubeconfig" in err.getvalue()


def test_settings_are_read_from_the_config(tmp_path: Path) -> None:
    from kschedlib.errors import ConfigError
    from kschedlib.kube import read_settings

    settings = read_settings({"clientConnection": {"qps": 7, "burst": 9, "kubeconfig": "/k"},
                              "leaderElection": {"leaderElect": True, "leaseDuration": "4s", "renewDeadline": "3s",
                                                 "retryPeriod": "500ms", "resourceName": "mine"}}, default_lease="x")
    assert (settings.client.qps, settings.client.burst, settings.client.kubeconfig) == (7.0, 9, "/k")
    election = settings.leader_election
    assert (election.leader_elect, election.lease_duration, election.renew_deadline, election.retry_period,
            election.resource_name, election.resource_namespace) == (True, 4.0, 3.0, 0.5, "mine", "kube-system")
    assert read_settings(None, default_lease="x").leader_election.resource_name == "x"
    with pytest.raises(ConfigError, match="retryPeriod < renewDeadline < leaseDuration"):
        read_settings({"leaderElection": {"leaseDuration": "1s"}}, default_lease="x")
    with pytest.raises(ConfigError, match=r"clientConnection\.qps"):
        read_settings({"clientConnection": {"qps": "fast"}}, default_lease="x")

