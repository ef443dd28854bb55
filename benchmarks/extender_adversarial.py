"""Adversarial load on ``python -m kschedlib serve-extender`` over the loopback interface (run by hand).

Each case starts a fresh server subprocess on 127.0.0.1 (a free port) and
measures what someone who can create pods could do to it:

- ``names``: requests naming many distinct nodes; the server's resident memory
  and the latency of a small request, before and after;
- ``terms``: one request naming many nodes, then a pod with many anti-affinity
  terms on a few nodes;
- ``huge``: a pod with thousands of terms on many nodes, and how long a tiny
  request sent meanwhile waits;
- ``loris``: a body sent a byte at a time, slower than ``--request-timeout``;
- ``healthz``: many slow clients at once, then ``GET /healthz``;
- ``nested``: deeply nested JSON.

Every count, socket timeout and the whole run are bounded::

    .venv/bin/python benchmarks/extender_adversarial.py               # this checkout's server
    .venv/bin/python benchmarks/extender_adversarial.py --root ../main --json
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent
SERVER_ARGS: list[str] = []
"""Options added to every server's command line (``--server-arg``)."""
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _node(name: str) -> dict[str, Any]:
    alloc = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": alloc, "capacity": alloc}}


def _pod(terms: int = 0) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    if terms:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": f"a-{i}"}}, "topologyKey": "kubernetes.io/hostname"}
            for i in range(terms)]}}
    return {"metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}}, "spec": spec}


def _body(names: list[str], terms: int = 0) -> bytes:
    return json.dumps({"Pod": _pod(terms), "Nodes": {"items": [_node(n) for n in names]}}).encode()


@contextmanager
def _server(root: Path, *extra: str) -> Iterator[tuple[int, int]]:
    """A server subprocess of the checkout at ``root``: yields (port, pid)."""
    extra = (*SERVER_ARGS, *extra)
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.json"
        config.write_text(json.dumps(CONFIG))
        process = subprocess.Popen(
            [sys.executable, "-m", "kschedlib", "serve-extender", "--config", str(config), "--host", HOST,
             "--port", "0", *extra], cwd=root, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(root)})
        assert process.stdout is not None
        line = process.stdout.readline()
        try:
            if not line.startswith("serving extender on http://"):
                raise SystemExit(f"server did not start: {line!r}")
            yield int(line.split()[3].rsplit(":", 1)[1]), process.pid
        finally:
            process.terminate()
            process.wait(timeout=10)


def _post(port: int, body: bytes, path: str = "/filter", timeout: float = 60) -> tuple[int, float]:
    """(status, seconds) of one POST on a fresh connection; status 0 when the connection failed."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        return response.status, time.perf_counter() - started
    except OSError:
        return 0, time.perf_counter() - started
    finally:
        connection.close()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _median_latency(port: int, body: bytes, count: int = 15) -> float:
    """Milliseconds of a prioritize call (PreScore of the default profile reads every node it knows)."""
    times = sorted(_post(port, body, "/prioritize")[1] for _ in range(count))
    return round(times[len(times) // 2] * 1000, 1)


def case_names(root: Path, total: int, batch: int = 500) -> dict[str, Any]:
    small = _body([f"small-{i}" for i in range(20)])
    with _server(root) as (port, pid):
        _median_latency(port, small, 5)
        before_mb, before_ms = _rss_mb(pid), _median_latency(port, small)
        statuses = {_post(port, _body([f"n-{start + i}" for i in range(batch)]))[0]
                    for start in range(0, total, batch)}
        after_mb, after_ms = _rss_mb(pid), _median_latency(port, small)
    return {"distinct_names": total, "statuses": sorted(statuses), "rss_mb": [before_mb, after_mb],
            "small_request_ms": [before_ms, after_ms]}


def case_terms(root: Path, nodes: int, terms: int) -> dict[str, Any]:
    with _server(root) as (port, _pid):
        first = _post(port, _body([f"n-{i}" for i in range(nodes)]))
        status, seconds = _post(port, _body([f"n-{i}" for i in range(3)], terms))
    return {"first_request": [first[0], round(first[1], 2)], "nodes_before": nodes, "terms": terms,
            "status": status, "seconds": round(seconds, 3)}


def case_huge(root: Path, nodes: int, terms: int, limit: float) -> dict[str, Any]:
    names = [f"n-{i}" for i in range(nodes)]
    big, tiny = _body(names, terms), _body(names[:2])
    with _server(root) as (port, _pid):
        _post(port, _body(names))
        out: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: out.update(big=_post(port, big, timeout=limit)), daemon=True)
        thread.start()
        time.sleep(0.3)
        tiny_status, tiny_seconds = _post(port, tiny, timeout=limit)
        thread.join(limit + 5)
    big_status, big_seconds = out.get("big", (0, limit))
    return {"nodes": nodes, "terms": terms, "big": [big_status, round(big_seconds, 2)],
            "tiny_during_big": [tiny_status, round(tiny_seconds, 3)]}


def _slow_client(port: int, interval: float, limit: float, stop: threading.Event) -> tuple[float, int]:
    """(seconds until the server answers or closes, its status or 0) while a body dribbles in a byte at a time."""
    started = time.perf_counter()
    body = _body(["n-0"])
    head = f"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    status = 0
    try:
        with socket.create_connection((HOST, port), timeout=limit) as sock:
            sock.sendall(head)
            for byte in body:
                sock.sendall(bytes([byte]))
                readable, _, _ = select.select([sock], [], [], interval)
                if readable:  # an answer, or the connection closed
                    reply = sock.recv(65536)
                    status = int(reply.split()[1]) if reply.startswith(b"HTTP/") else 0
                    break
                if stop.is_set() or time.perf_counter() - started > limit:
                    break
    except OSError:
        pass
    return time.perf_counter() - started, status


def case_loris(root: Path, timeout: float, interval: float, limit: float) -> dict[str, Any]:
    with _server(root, "--request-timeout", str(timeout)) as (port, _pid):
        seconds, status = _slow_client(port, interval, limit, threading.Event())
    return {"request_timeout": timeout, "byte_every": interval, "connection_open_s": round(seconds, 2),
            "status": status}


def case_healthz(root: Path, clients: int, limit: float) -> dict[str, Any]:
    stop = threading.Event()
    with _server(root, "--request-timeout", "2") as (port, _pid):
        threads = [threading.Thread(target=_slow_client, args=(port, 1.5, limit, stop), daemon=True)
                   for _ in range(clients)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        statuses = []
        for _ in range(5):
            connection = http.client.HTTPConnection(HOST, port, timeout=5)
            try:
                connection.request("GET", "/healthz")
                statuses.append(connection.getresponse().status)
            except OSError:
                statuses.append(0)
            finally:
                connection.close()
            time.sleep(0.3)
        stop.set()
        for thread in threads:
            thread.join(5)
    return {"slow_clients": clients, "healthz_statuses": statuses}


def case_nested(root: Path, depth: int) -> dict[str, Any]:
    body = b'{"Pod": ' + b"[" * depth + b"]" * depth + b', "NodeNames": []}'
    with _server(root) as (port, _pid):
        status, _seconds = _post(port, body)
    return {"depth": depth, "status": status}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout whose server to run (default: this one)")
    parser.add_argument("--cases", default="names,terms,huge,loris,healthz,nested")
    parser.add_argument("--names", type=int, default=15_000, help="distinct node names for 'names'")
    parser.add_argument("--limit", type=float, default=40.0, help="client-side cap on any one wait (s)")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an option for every server, e.g. --server-arg=--max-nodes=10000 (repeatable)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    SERVER_ARGS[:] = args.server_arg
    root = args.root.resolve()
    cases: dict[str, Callable[[], dict[str, Any]]] = {
        "names": lambda: case_names(root, args.names),
        "names2x": lambda: case_names(root, 2 * args.names),
        "terms": lambda: case_terms(root, 6000, 200),
        "huge": lambda: case_huge(root, 6000, 2000, args.limit),
        "loris": lambda: case_loris(root, 2.0, 1.5, min(args.limit, 15.0)),
        "healthz": lambda: case_healthz(root, 64, min(args.limit, 15.0)),
        "nested": lambda: case_nested(root, 100_000),
    }
    results = {}
    for name in args.cases.split(","):
        started = time.perf_counter()
        results[name] = cases[name]()
        results[name]["case_seconds"] = round(time.perf_counter() - started, 1)
        if not args.json:
            print(f"{name}: {json.dumps(results[name])}", flush=True)
    if args.json:
        print(json.dumps({"root": str(root), **results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
