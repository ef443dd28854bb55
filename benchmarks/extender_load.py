"""Load test of ``python -m kschedlib serve-extender`` on the loopback interface (bounded, run by hand).

Starts the server as a subprocess on 127.0.0.1 (a free port), then several
client threads, each on its own keep-alive connection, POST ``/filter``
requests whose body carries a pod and 100 nodes (without nodeCacheCapable,
as kube-scheduler sends them).  Every reply is checked against the answer the
same plugins give in-process.  Afterwards malformed, truncated and oversized
requests must get a 4xx while the server keeps serving.  Prints requests per
second and latency percentiles::

    .venv/bin/python benchmarks/extender_load.py                      # 1,200 requests, 8 clients
    .venv/bin/python benchmarks/extender_load.py --requests 2000 --clients 16 --json

Only 127.0.0.1 is ever contacted; the run stops after ``--max-seconds``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kschedlib.extender import ExtenderService  # noqa: E402
from kschedlib.model import Node, Pod, parse_quantity  # noqa: E402
from kschedlib.model.convert import node_to_dict, pod_to_dict  # noqa: E402
from kschedlib.model.objects import Container, Taint  # noqa: E402

HOST = "127.0.0.1"


def _nodes(count: int) -> list[Node]:
    out = []
    for i in range(count):
        cpu = str(2 + i % 7)
        alloc = {"cpu": parse_quantity(cpu), "memory": parse_quantity(f"{4 + i % 5}Gi"),
                 "pods": parse_quantity("110")}
        taints = (Taint("dedicated", "NoSchedule", "gpu"),) if i % 10 == 3 else ()
        labels = {"kubernetes.io/hostname": f"node-{i:03d}", "topology.kubernetes.io/zone": f"zone-{i % 3}"}
        out.append(Node(f"node-{i:03d}", labels=labels, allocatable=alloc, capacity=alloc, taints=taints,
                        unschedulable=i % 25 == 7))
    return out


def _pod() -> Pod:
    requests = {"cpu": parse_quantity("3"), "memory": parse_quantity("5Gi")}
    return Pod("web-1", labels={"app": "web"}, containers=(Container("c", image="nginx", requests=requests),))


def _body(nodes: list[Node], pod: Pod) -> bytes:
    args = {"Pod": pod_to_dict(pod), "Nodes": {"metadata": {}, "items": [node_to_dict(n) for n in nodes]},
            "NodeNames": None}
    return json.dumps(args).encode()


def _verdict(reply: dict[str, Any]) -> tuple[list[str], dict[str, str], dict[str, str]]:
    items = (reply.get("Nodes") or {}).get("items") or []
    return ([item["metadata"]["name"] for item in items], reply.get("FailedNodes") or {},
            reply.get("FailedAndUnresolvableNodes") or {})


def _start_server(config: Path) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "kschedlib", "serve-extender", "--config", str(config), "--host", HOST,
         "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("serving extender on http://"):
        process.kill()
        raise SystemExit(f"server did not start: {line!r}")
    port = int(line.split()[3].rsplit(":", 1)[1])
    return process, port


def _client(port: int, body: bytes, count: int, expected: Any, deadline: float, out: dict[str, Any]) -> None:
    latencies: list[float] = []
    wrong = 0
    connection = http.client.HTTPConnection(HOST, port, timeout=30)
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        started = time.perf_counter()
        connection.request("POST", "/filter", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        latencies.append(time.perf_counter() - started)
        if response.status != 200 or _verdict(json.loads(data)) != expected:
            wrong += 1
    connection.close()
    out["latencies"] = latencies
    out["wrong"] = wrong


def _bad_requests(port: int, body: bytes) -> list[int]:
    """Malformed JSON, a truncated body, an oversized Content-Length: the statuses received."""
    probes = [
        b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n{not json",
        b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:100],
        b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n",
    ]
    statuses = []
    for probe in probes:
        with socket.create_connection((HOST, port), timeout=10) as sock:
            sock.sendall(probe)
            sock.shutdown(socket.SHUT_WR)
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
        statuses.append(int(reply.split()[1]))
    return statuses


def _percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1200, help="total filter requests (default 1200)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent client connections (default 8)")
    parser.add_argument("--nodes", type=int, default=100, help="nodes per request body (default 100)")
    parser.add_argument("--max-seconds", type=float, default=120.0, help="stop sending after this long")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    nodes, pod = _nodes(args.nodes), _pod()
    body = _body(nodes, pod)
    status, reply = ExtenderService().handle("filter", body)
    assert status == 200, reply
    expected = _verdict(reply)
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.json"
        config.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                      "kind": "KubeSchedulerConfiguration"}))
        server, port = _start_server(config)
        try:
            per_client = [args.requests // args.clients + (i < args.requests % args.clients)
                          for i in range(args.clients)]
            results: list[dict[str, Any]] = [{} for _ in per_client]
            deadline = time.monotonic() + args.max_seconds
            threads = [threading.Thread(target=_client, args=(port, body, n, expected, deadline, out))
                       for n, out in zip(per_client, results, strict=True)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
            bad = _bad_requests(port, body)
            after: list[dict[str, Any]] = [{}]
            _client(port, body, 5, expected, time.monotonic() + 30, after[0])
        finally:
            server.terminate()
            server.wait(timeout=10)
    latencies = sorted(x for r in results for x in r.get("latencies", []))
    done = len(latencies)
    summary = {
        "requests": done, "clients": args.clients, "nodes_per_request": args.nodes,
        "body_bytes": len(body), "feasible_per_reply": len(expected[0]),
        "wrong_replies": sum(r.get("wrong", 0) for r in results), "seconds": round(elapsed, 3),
        "requests_per_second": round(done / elapsed, 1),
        "latency_ms": {name: round(_percentile(latencies, q) * 1000, 2)
                       for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))},
        "bad_request_statuses": bad,
        "served_after_bad_requests": len(after[0]["latencies"]) == 5 and after[0]["wrong"] == 0,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{done} filter requests ({args.nodes} nodes, {len(body)} bytes each) from {args.clients} clients "
              f"in {elapsed:.2f} s: {summary['requests_per_second']} requests/s")
        lat = summary["latency_ms"]
        print(f"latency ms: p50 {lat['p50']}  p90 {lat['p90']}  p99 {lat['p99']}  max {lat['max']}")
        print(f"wrong replies: {summary['wrong_replies']}; bad requests answered {bad}; "
              f"served afterwards: {summary['served_after_bad_requests']}")
    ok = summary["wrong_replies"] == 0 and done >= min(args.requests, 1) and summary["served_after_bad_requests"]
    return 0 if ok and all(400 <= s < 500 for s in bad) else 1


if __name__ == "__main__":
    sys.exit(main())
