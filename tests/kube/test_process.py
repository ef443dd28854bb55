"""The scheduler process's parts in this process: its health and metrics server, leader election between two
schedulers (a graceful hand-over, and a leader that loses its Lease stops), and ``run`` stopped by SIGTERM."""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kschedlib.errors import ConfigError
from kschedlib.kube import KubeClient, LiveScheduler, LoopNotRunning, connect, read_settings, run
from kschedlib.kube import scheduler as scheduler_module
from kschedlib.kube._serving import parse_address
from tests.kube.cluster import config, create, http_get, namespace, node, pod, pods, running, wait_for
from tests.kube.envtest import ADMIN_TOKEN, ControlPlane, free_port

LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
QUICK = {"leaderElect": True, "leaseDuration": "6s", "renewDeadline": "4s", "retryPeriod": "500ms"}


def test_health_readiness_and_metrics(admin: KubeClient, as_scheduler: KubeClient) -> None:
    ns, me = namespace(admin, "health"), "health-scheduler"
    create(admin, node("health-1", cpu="2"))
    with running(as_scheduler, config(me), metrics_address=("127.0.0.1", 0)) as live:
        assert live.server is not None
        base = f"http://127.0.0.1:{live.server.port}"
        create(admin, pod("one", ns, scheduler=me))
        wait_for("the pod bound", lambda: bool(pods(admin, ns)["one"]["spec"].get("nodeName")))
        assert http_get(f"{base}/healthz") == (200, "ok")
        assert http_get(f"{base}/livez") == (200, "ok")
        assert http_get(f"{base}/readyz") == (200, "ok")
        status, text = http_get(f"{base}/metrics")
        assert status == 200
        assert f'scheduler_schedule_attempts_total{{profile="{me}",result="scheduled"}} 1.0' in text
        assert http_get(f"{base}/nope")[0] == 404
    admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    admin.request("DELETE", "/api/v1/nodes/health-1")


@pytest.mark.parametrize(("value", "expected"), [("127.0.0.1:10251", ("127.0.0.1", 10251)),
                                                 (":8080", ("0.0.0.0", 8080)), ("[::1]:9", ("::1", 9))])
def test_metrics_addresses(value: str, expected: tuple[str, int]) -> None:
    assert parse_address(value) == expected


@pytest.mark.parametrize("value", ["10251", "host:port", "host:70000"])
def test_bad_metrics_addresses(value: str) -> None:
    with pytest.raises(ConfigError, match="--metrics-bind-address"):
        parse_address(value)


def test_leadership_handed_over_and_lost(admin: KubeClient, as_scheduler: KubeClient) -> None:
    ns, me = namespace(admin, "election"), "election-scheduler"
    create(admin, node("elect-1", cpu="8"))
    document = config(me, leaderElection={**QUICK, "resourceName": "kube-scheduler-election",
                                          "resourceNamespace": "default"})
    with running(admin, document, identity="first") as first:
        assert first.elector is not None
        wait_for("the first leading", first.elector.leading.is_set)
        with running(admin, document, identity="second") as second:
            assert second.elector is not None
            create(admin, pod("by-first", ns, scheduler=me))
            wait_for("the first pod bound", lambda: bool(pods(admin, ns)["by-first"]["spec"].get("nodeName")))
            assert not second.elector.leading.is_set()
            first.stop()  # graceful: the Lease is given back, the standby takes it at once
            first.join(30)
            wait_for("the second leading", second.elector.leading.is_set, timeout=10)
            create(admin, pod("by-second", ns, scheduler=me))
            wait_for("the second pod bound", lambda: bool(pods(admin, ns)["by-second"]["spec"].get("nodeName")))
            lease: dict[str, Any] = admin.request("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/"
                                                         "kube-scheduler-election")
            assert lease["spec"]["holderIdentity"] == "second"
            lease["spec"]["holderIdentity"] = "usurper"  # someone else holds it now: second can no longer renew
            admin.request("PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/kube-scheduler-election",
                          body=lease)
            wait_for("the second to stop", second.stopped.is_set, timeout=15)
            assert second.exit_status == 1
    assert first.exit_status == 0
    admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    admin.request("DELETE", "/api/v1/nodes/elect-1")


def test_the_loop_starts_scheduling_as_soon_as_it_leads(admin: KubeClient, as_scheduler: KubeClient,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ns, me = namespace(admin, "takeover"), "takeover-scheduler"
    create(admin, node("takeover-1", cpu="8"))
    create(admin, pod("waiting", ns, scheduler=me))
    admin.request("POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", body={  # its leader just died
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "takeover-lease"},
        "spec": {"holderIdentity": "gone", "leaseDurationSeconds": 1}})
    monkeypatch.setattr(scheduler_module, "_MAX_IDLE", 120.0)  # nothing but leadership itself wakes the loop
    document = config(me, leaderElection={**QUICK, "resourceName": "takeover-lease", "resourceNamespace": "default"})
    with running(admin, document, identity="standby") as live:
        assert live.elector is not None
        wait_for("the lease taken over", live.elector.leading.is_set, timeout=15)
        wait_for("the waiting pod bound", lambda: bool(pods(admin, ns)["waiting"]["spec"].get("nodeName")), timeout=10)
    admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    admin.request("DELETE", "/api/v1/nodes/takeover-1")


def test_kinds_it_needs_but_cannot_watch_are_a_warning(as_scheduler: KubeClient,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    gang = config("gang-scheduler", profiles=[{"schedulerName": "gang-scheduler", "plugins": {"multiPoint": {
        "enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]}}}])
    with caplog.at_level(logging.WARNING, logger="kschedlib.kube"), running(as_scheduler, gang):
        pass  # no PodGroup CRD here, and kube-scheduler's role may not read them anyway
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(m.startswith("podgroups: not served") for m in warned), warned
    assert any(m.startswith("elasticquotas: not served") for m in warned), warned


def test_an_api_server_not_there_yet_is_waited_for(plane: ControlPlane, tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    kubeconfig = json.loads(plane.write_kubeconfig(tmp_path / "k", token=ADMIN_TOKEN).read_text())
    kubeconfig["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{free_port()}"  # nobody listens
    (tmp_path / "nowhere").write_text(json.dumps(kubeconfig))
    document = config("patient", leaderElection={**QUICK, "resourceName": "patient", "resourceNamespace": "default"})
    live = LiveScheduler(connect(str(tmp_path / "nowhere")), read_settings(document, default_lease="patient"),
                         metrics_address=("127.0.0.1", 0))
    with caplog.at_level(logging.WARNING, logger="kschedlib.kube"):
        live.start()
        wait_for("a failed read", lambda: any("reading the cluster failed" in r.getMessage() for r in caplog.records))
        assert not live.stopped.is_set()  # kube-scheduler waits for its caches too
        assert live.server is not None
        base = f"http://127.0.0.1:{live.server.port}"
        assert http_get(f"{base}/healthz") == (200, "ok")
        assert http_get(f"{base}/readyz") == (500, "[-]sched-handler-sync failed\n")
        started = time.monotonic()  # the loop takes no calls yet: a scrape fails at once, not after a timeout
        status, text = http_get(f"{base}/metrics")
        assert (status, text) == (503, "metrics unavailable: the scheduling loop is not running (reading the "
                                       "cluster, or stopped)\n")
        assert time.monotonic() - started < 2
        with pytest.raises(LoopNotRunning):
            live.call(lambda scheduler: scheduler.pending())
        live.stop()
        live.join(15)
    assert live.stopped.is_set()
    assert live.exit_status == 0
    with pytest.raises(LoopNotRunning):
        live.call(lambda scheduler: scheduler.pending(), timeout=30)


def test_run_stops_on_sigterm(plane: ControlPlane, admin: KubeClient) -> None:
    ns, me = namespace(admin, "sigterm"), "sigterm-scheduler"
    create(admin, node("term-1", cpu="2"))
    create(admin, pod("one", ns, scheduler=me))
    before = signal.getsignal(signal.SIGTERM)

    def stop_when_bound() -> None:
        wait_for("the pod bound", lambda: bool(pods(admin, ns)["one"]["spec"].get("nodeName")))
        os.kill(os.getpid(), signal.SIGTERM)

    stopper = threading.Thread(target=stop_when_bound)
    stopper.start()
    status = run(config(me), kubeconfig=str(plane.kubeconfig), verbosity=3)
    stopper.join()
    assert status == 0
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is put back
    admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    admin.request("DELETE", "/api/v1/nodes/term-1")
