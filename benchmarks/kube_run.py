"""End-to-end throughput on a real API server: ``kschedlib run`` against kube-scheduler v1.36.3.

Run by hand, never by the test suite (needs ``KUBEBUILDER_ASSETS``, as the tests in ``tests/kube``)::

    KUBEBUILDER_ASSETS=... .venv/bin/python benchmarks/kube_run.py                 # 500 nodes, 2,000 pods, qps 50
    KUBEBUILDER_ASSETS=... .venv/bin/python benchmarks/kube_run.py --qps 500 --burst 1000 --rounds 3

One API server (and etcd) for the whole run.  500 nodes are created once.  Two ways to start, both measured:

- ``warm``: the scheduler runs and is ready (``/readyz``); 2,000 pods are created in a fresh namespace through the
  API (8 threads) and the clock runs from the first creation until every pod is bound;
- ``cold``: the 2,000 pods are created first; the clock runs from the scheduler's process start (its start-up,
  reading the cluster, included) until every pod is bound.

Bound pods are counted from the API server.  Runs alternate between the two schedulers, with the same
KubeSchedulerConfiguration (one profile, the same ``clientConnection`` qps and burst).
After each run: every pod bound exactly once (one binding per pod: the API server refuses a second), no node holds
more than it can, and, as a rate, pods per second from start and between the first and the last Scheduled event.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))

from kschedlib.kube import KubeClient, connect  # noqa: E402
from kschedlib.model import parse_quantity  # noqa: E402
from tests.kube.cluster import create, node, pod  # noqa: E402
from tests.kube.envtest import ControlPlane, control_plane, free_port  # noqa: E402

SCHEDULER = "bench-scheduler"
TEMPLATES = [("100m", "128Mi"), ("250m", "256Mi"), ("200m", "1Gi"), ("500m", "512Mi"), ("1", "2Gi")]


def _pod(name: str, namespace: str, index: int) -> dict[str, Any]:
    cpu, memory = TEMPLATES[index % len(TEMPLATES)]
    obj = pod(name, namespace, scheduler=SCHEDULER, cpu=cpu, labels={"app": f"app-{index % 5}"})
    obj["spec"]["containers"][0]["resources"]["requests"]["memory"] = memory
    return obj


def _create_all(client: KubeClient, objects: list[dict[str, Any]]) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda obj: create(client, obj), objects))


def _bound(client: KubeClient, namespace: str) -> list[dict[str, Any]]:
    items = client.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
    return [p for p in items if p["spec"].get("nodeName")]


def _config(plane: ControlPlane, where: Path, qps: float, burst: int) -> Path:
    path = where / "config.json"
    path.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "clientConnection": {"kubeconfig": str(plane.kubeconfig), "qps": qps, "burst": burst},
        "profiles": [{"schedulerName": SCHEDULER}]}))
    return path


def _start(which: str, plane: ControlPlane, config: Path, log: Path, port: int) -> subprocess.Popen[bytes]:
    if which == "kschedlib":
        argv = [sys.executable, "-m", "kschedlib", "run", "--config", str(config), "--seed", "0",
                "--metrics-bind-address", f"127.0.0.1:{port}"]
    else:
        argv = [str(plane.bin_dir / "kube-scheduler"), "--config", str(config), "--secure-port", str(port),
                "--bind-address", "127.0.0.1", "--authentication-kubeconfig", str(plane.kubeconfig),
                "--authorization-kubeconfig", str(plane.kubeconfig)]
    with log.open("wb") as stderr:
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr,
                                env={**os.environ, "PYTHONPATH": str(_ROOT)})


def _check(client: KubeClient, namespace: str, pods: int, nodes: dict[str, float]) -> dict[str, Any]:
    bound = _bound(client, namespace)
    used: Counter[str] = Counter()
    for item in bound:
        request = item["spec"]["containers"][0]["resources"]["requests"]["cpu"]
        used[item["spec"]["nodeName"]] += parse_quantity(request).milli_value() / 1000
    over = [name for name, cpu in used.items() if cpu > nodes[name] + 1e-9]
    events = client.request("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")["items"]
    scheduled = [e for e in events if e["reason"] == "Scheduled"]
    per_pod = Counter(e["regarding"]["uid"] for e in scheduled)
    times = sorted(e["eventTime"] for e in scheduled)
    span = None
    if len(times) > 1:
        def stamp(text: str) -> float:
            return time.mktime(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + text[19:-1])
        span = stamp(times[-1]) - stamp(times[0])
    return {"bound": len(bound), "lost": pods - len(bound), "over_committed_nodes": len(over),
            "scheduled_events": len(scheduled), "pods_with_two_events": sum(1 for c in per_pod.values() if c > 1),
            "first_to_last_event_s": None if span is None else round(span, 2)}


def _ready(which: str, port: int, timeout: float) -> None:
    url = f"{'http' if which == 'kschedlib' else 'https'}://127.0.0.1:{port}/readyz"
    context = ssl._create_unverified_context()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2, context=context) as answer:
                if answer.read() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{which} not ready after {timeout} s")


def _one(which: str, start: str, plane: ControlPlane, client: KubeClient, work: Path, round_: int,
         args: argparse.Namespace, nodes: dict[str, float]) -> dict[str, Any]:
    namespace = f"bench-{which}-{start}-{round_}"
    create(client, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    pods = [_pod(f"p-{i:05d}", namespace, i) for i in range(args.pods)]
    config = _config(plane, work, args.qps, args.burst)
    port = free_port()
    if start == "cold":
        _create_all(client, pods)
    started = time.monotonic()
    process = _start(which, plane, config, work / f"{namespace}.log", port)
    try:
        if start == "warm":
            _ready(which, port, 60)
            started = time.monotonic()
            _create_all(client, pods)
        deadline = started + args.timeout
        while len(_bound(client, namespace)) < args.pods and time.monotonic() < deadline:
            time.sleep(0.2)
        seconds = time.monotonic() - started
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
    result = {"scheduler": which, "start": start, "round": round_, "seconds": round(seconds, 2),
              "pods_per_second": round(args.pods / seconds, 1), **_check(client, namespace, args.pods, nodes)}
    client.request("DELETE", f"/api/v1/namespaces/{namespace}/pods", body={"gracePeriodSeconds": 0})
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--qps", type=float, default=50.0, help="clientConnection.qps of both (kube's default: 50)")
    parser.add_argument("--burst", type=int, default=100, help="clientConnection.burst of both (default: 100)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each, alternating")
    parser.add_argument("--start", action="append", choices=("warm", "cold"),
                        help="how the clock starts (repeatable; default both)")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    args.start = args.start or ["warm", "cold"]
    with control_plane() as plane, tempfile.TemporaryDirectory() as tmp:
        client = connect(str(plane.kubeconfig), qps=0, burst=0)
        nodes = {f"node-{i:05d}": 32.0 for i in range(args.nodes)}
        _create_all(client, [node(name, cpu="32", labels={"topology.kubernetes.io/zone": f"zone-{i % 5}"})
                             for i, name in enumerate(nodes)])
        for round_ in range(args.rounds):
            order = ("kschedlib", "kube-scheduler") if round_ % 2 == 0 else ("kube-scheduler", "kschedlib")
            for start in args.start:
                for which in order:
                    print(json.dumps(_one(which, start, plane, client, Path(tmp), round_, args, nodes)), flush=True)
        load = os.getloadavg()
        print(json.dumps({"nodes": args.nodes, "pods": args.pods, "qps": args.qps, "burst": args.burst,
                          "load_average": [round(x, 2) for x in load]}))


if __name__ == "__main__":
    main()
