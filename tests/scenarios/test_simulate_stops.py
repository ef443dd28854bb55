"""simulate ends when only retries that fail alike are left, and reports those pods with their error."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib.simulation.report import simulation_text
from kschedlib.simulation.timeline import parse_events, waiting_for

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds: a regression fails instead of hanging


def node(name: str) -> dict[str, Any]:
    amounts = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": amounts, "capacity": amounts}}


def pod(name: str, cpu: str = "1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def dead_extender_config(tmp_path: Path) -> Path:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "extenders": [{"urlPrefix": f"http://127.0.0.1:{closed_port()}", "filterVerb": "filter",
                             "httpTimeout": "1s", "ignorable": False}]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def write(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), encoding="utf-8")
    return path


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail, rather than hang, when the body takes longer than ``seconds`` (main thread, POSIX)."""
    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


CASES = {
    "no-nodes": ([pod("a"), pod("b")], False, "no nodes available to schedule pods"),
    "extender-down": ([node("n1"), pod("a"), pod("b")], True, "127.0.0.1"),
}


@pytest.mark.parametrize("case", CASES)
def test_simulate_reports_pods_that_keep_failing_with_an_error(case: str, tmp_path: Path) -> None:
    items, extender, expected = CASES[case]
    config = dead_extender_config(tmp_path) if extender else None
    cluster = write(tmp_path / "cluster.json", items)
    done = subprocess.run(
        [sys.executable, "-c",
         "import json, sys, kschedlib; r = kschedlib.simulate(sys.argv[1], sys.argv[2] or None); "
         "print(json.dumps(r.to_dict()))", str(cluster), str(config or "")],
        capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(report["errors"]) == ["default/a", "default/b"]
    for entry in report["errors"].values():
        assert expected in entry["error"]
        assert entry["attempts"] == 2  # the retry failed as the first attempt: nothing else could change it
    assert report["placements"] == {"default/a": None, "default/b": None}
    assert report["pending"]["default/a"]["queue"] == "backoff"


@pytest.mark.parametrize("case", CASES)
def test_the_cli_ends_and_shows_the_errors(case: str, tmp_path: Path) -> None:
    items, extender, expected = CASES[case]
    cluster = write(tmp_path / "cluster.json", items)
    argv = [sys.executable, "-m", "kschedlib", "simulate", str(cluster)]
    if extender:
        argv += ["--config", str(dead_extender_config(tmp_path))]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = lines.index("failing with an error (retries stopped: each failed as the one before):")
    assert lines[header + 1].startswith("  default/a: ")
    assert lines[header + 1].endswith(" (2 attempts)")
    assert expected in lines[header + 1]
    assert "unschedulable:" not in lines  # listed once, with the errors


@pytest.mark.parametrize("case", CASES)
def test_simulate_in_process_stops(case: str, tmp_path: Path) -> None:
    items, extender, expected = CASES[case]
    config = dead_extender_config(tmp_path) if extender else None
    with deadline(TIMEOUT):
        report = kschedlib.simulate({"apiVersion": "v1", "kind": "List", "items": items}, config)
    assert {key: entry["attempts"] for key, entry in report.errors.items()} == {"default/a": 2, "default/b": 2}
    assert all(expected in entry["error"] for entry in report.errors.values())
    assert report.unschedulable.keys() == report.errors.keys()
    text = simulation_text(report)
    assert f"  default/b: {report.errors['default/b']['error']} (2 attempts)" in text.splitlines()


def test_an_error_that_a_timeline_event_resolves_is_retried_after_it() -> None:
    events = [{"op": "add_node", "node": node("n1")}]
    report = kschedlib.simulate({"apiVersion": "v1", "kind": "List", "items": [pod("a")]}, events=events)
    assert report.placements == {"default/a": "n1"}
    assert report.errors == {}
    assert report.checkpoints is not None
    assert report.checkpoints[0]["pending"]["default/a"]["queue"] == "backoff"


def test_an_attempts_trigger_on_a_failing_pod_still_fires() -> None:
    events = [{"op": "add_node", "node": node("n1"), "at": {"attempts": {"pod": "default/a", "n": 4}}}]
    report = kschedlib.simulate({"apiVersion": "v1", "kind": "List", "items": [pod("a")]}, events=events)
    assert report.placements == {"default/a": "n1"}
    assert report.attempts == {"default/a": 5}


def test_once_reports_no_stopped_retries() -> None:
    report = kschedlib.simulate({"apiVersion": "v1", "kind": "List", "items": [pod("a")]}, once=True)
    assert report.errors == {}
    assert report.unschedulable == {"default/a": "no nodes available to schedule pods"}
    assert "failing with an error" not in simulation_text(report)


def test_a_pod_added_while_others_repeat_their_error_gets_its_own_retry() -> None:
    events = [{"op": "add_pod", "pod": pod("c"), "at": {"attempts": {"pod": "default/a", "n": 2}}}]
    with deadline(TIMEOUT):
        report = kschedlib.simulate({"apiVersion": "v1", "kind": "List", "items": [pod("a"), pod("b")]},
                                    events=events)
    # the event may have changed what a and b find: each retries once more after it
    assert {key: entry["attempts"] for key, entry in report.errors.items()} == {
        "default/a": 3, "default/b": 3, "default/c": 2}


@pytest.mark.parametrize(("kube_version", "not_applied"), [
    ("1.30", [{"index": 1, "op": "add_pod", "waiting_for": "attempts default/p 2"}]),
    ("1.36", []),
], ids=["v1.30-precheck-keeps-it-pooled", "v1.36-hint-retries"])
def test_an_event_whose_trigger_never_comes_is_reported(kube_version: str, not_applied: list[object]) -> None:
    """p is kept off n1 by a taint; the untaint comes while a bound pod fills n1.  v1.30's pre-check
    finds p does not fit and leaves it pooled, so p's second attempt (the trigger) never comes;
    v1.36's TaintToleration hint requeues it."""
    tainted = node("n1")
    tainted["spec"] = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}
    filler = pod("f", cpu="4")
    filler["spec"]["nodeName"] = "n1"
    events = [{"op": "untaint_node", "name": "n1", "key": "dedicated"},
              {"op": "add_pod", "pod": pod("q"), "at": {"attempts": {"pod": "default/p", "n": 2}}}]
    report = kschedlib.simulate({"apiVersion": "v1", "kind": "List", "items": [tainted, filler, pod("p")]},
                                events=events, kube_version=kube_version)
    assert report.to_dict()["events_not_applied"] == not_applied


@pytest.mark.parametrize(("at", "waiting"), [
    (None, "idle"), ({"nominated": "default/p"}, "nominated default/p"),
    ({"attempts": {"pod": "default/p", "n": 3}}, "attempts default/p 3"),
], ids=["idle", "nominated", "attempts"])
def test_waiting_for_names_the_trigger(at: object, waiting: str) -> None:
    raw = {"op": "delete_node", "name": "n1", **({"at": at} if at is not None else {})}
    assert waiting_for(parse_events([raw])[0]) == waiting


def _gang(group: str, members: int, cpu: str) -> list[dict[str, Any]]:
    label = {"scheduling.x-k8s.io/pod-group": group}
    pods = [{**pod(f"{group}-{i}", cpu), "metadata": {"name": f"{group}-{i}", "namespace": "default", "labels": label}}
            for i in range(members)]
    return [{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
             "metadata": {"name": group, "namespace": "default"}, "spec": {"minMember": members}}, *pods]


@pytest.mark.parametrize("kube_version", ["1.30", "1.36"])
def test_gangs_that_fail_by_turns_end_once_their_retries_come_round_alike(kube_version: str) -> None:
    """Two gangs that never fit: a member waits at Permit, the next fails and PostFilter rejects the waiting one,
    so each member's failures alternate between two messages; once backoff stops growing the rounds repeat
    and the run ends (it used to go on forever)."""
    from kschedlib.plugins.batch import batch_scheduling_config

    cluster = [node("n0"), *_gang("a", 2, "3"), *_gang("b", 3, "2")]
    with deadline(TIMEOUT):
        report = kschedlib.simulate(cluster, batch_scheduling_config(), kube_version=kube_version)
    assert report.scheduled == 0
    assert set(report.pending) == {"default/a-0", "default/a-1", "default/b-0", "default/b-1", "default/b-2"}
    if kube_version == "1.30":  # with queueing hints (1.36) they wait for an event in the unschedulable pool
        assert max(report.attempts.values()) >= 5  # retried until backoff reached its 10 s maximum


def test_a_pod_backing_off_after_the_cluster_changed_is_retried() -> None:
    """Without SchedulerPopFromBackoffQ: l's second preemption (w) fails with its first attempt's message, but the
    eviction changed the cluster, so the run goes on until l binds (loop-preempt-higher-arrives-steals)."""
    def prio(item: dict[str, Any], priority: int, node_name: str | None = None) -> dict[str, Any]:
        spec = {**item["spec"], "priority": priority, **({"nodeName": node_name} if node_name else {})}
        return {**item, "spec": spec}

    small = [{**node(name), "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "110"}}}
             for name in ("n1", "n2")]
    cluster = [*small, prio(pod("v", "2"), 10, "n1"), prio(pod("w", "2"), 20, "n2"), prio(pod("l", "2"), 100)]
    events = [{"op": "add_pod", "pod": prio(pod("h", "2"), 500), "at": {"nominated": "default/l"}}]
    for version in ("1.30", "1.32"):
        report = kschedlib.simulate(cluster, events=events, kube_version=version)
        assert report.placements == {"default/l": "n2", "default/h": "n1"}, version
        assert report.evicted == ["default/v", "default/w"]
