"""ExtenderServer: kschedlib's server + kschedlib's client decide as the same plugins in-process; bad input is a 4xx.

The round trip replays the recorded single-cycle cases (default profile, every
pod bound): once in-process, once with a client whose profile has no Filter or
Score plugins and one extender (the server, serving the default profile).  The
feasible nodes, the rejected nodes with their reasons, the best nodes and the
totals (x 10, the extender scaling) must be the same.
"""

from __future__ import annotations

import argparse
import http.client
import io
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kschedlib import explain
from kschedlib.cli import _parser
from kschedlib.extender import ExtenderServer, ExtenderService, command
from kschedlib.model.convert import node_to_dict, pod_to_dict
from tests.extender.support import HEADER, nodes, pod, post
from tests.scenarios.conformance import admitted, case_files, load_case, scenario_cluster

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

EXTENDER_ONLY_PLUGINS = {
    "multiPoint": {"disabled": [{"name": "*"}]},
    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
    "bind": {"enabled": [{"name": "DefaultBinder"}]},
}


def _round_trip_cases() -> list[Path]:
    out = []
    for path in case_files("explain"):
        scenario, expected = (case := load_case(path))["scenario"], case["expected"]
        if scenario.get("config") or expected.get("error") or expected.get("pod_has_nodename"):
            continue
        spec = scenario["pod"].get("spec", {})
        if spec.get("schedulingGates") or spec.get("schedulerName", "default-scheduler") != "default-scheduler":
            continue
        if all(p.get("spec", {}).get("nodeName") for p in scenario.get("pods", [])):
            out.append(path)
    return out


CASES = _round_trip_cases()


def _reasons(reasons: list[str]) -> str:
    """The reasons as one text, each once: an extender sends a node's reasons joined in one message, and a
    nominated node the extender rejects is rejected again by the full scan (kube appends the reason twice)."""
    return ", ".join(dict.fromkeys(part for reason in reasons for part in reason.split(", ")))


def _view(out: dict[str, Any], scale: int) -> dict[str, Any]:
    several = len(out["feasible"]) > 1
    return {
        "feasible": out["feasible"],
        "filtered": {node: (s["code"], _reasons(s["reasons"])) for node, s in out["filtered"].items()},
        "best": out["best"] if several else None,
        "totals": {node: s["total"] * scale for node, s in out["scores"].items()} if several else None,
    }


def test_round_trip_has_cases() -> None:
    assert len(CASES) >= 50


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_server_and_client_decide_as_the_plugins_in_process(path: Path) -> None:
    scenario = load_case(path)["scenario"]
    cluster = scenario_cluster(scenario)
    pod = admitted(scenario["pod"])
    local = explain(cluster, pod).to_dict()
    with ExtenderServer(cluster=cluster) as server:
        client = {**HEADER, "profiles": [{"plugins": EXTENDER_ONLY_PLUGINS}], "extenders": [
            {"urlPrefix": server.url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 1}]}
        remote = explain(cluster, pod, client).to_dict()
    assert remote["error"] is None
    assert _view(remote, 1) == _view(local, 10)


def test_node_cache_mode_uses_the_cluster_file() -> None:
    cluster = [*nodes(3), pod("big", cpu="3", node_name="n-1")]
    service = ExtenderService(cluster=cluster)
    body = json.dumps({"Pod": pod_to_dict(pod(cpu="2")), "NodeNames": ["n-0", "n-1", "n-2"]}).encode()
    status, reply = service.handle("filter", body)
    assert status == 200
    assert reply["NodeNames"] == ["n-0", "n-2"]
    assert reply["FailedNodes"] == {"n-1": "Insufficient cpu"}
    assert reply["Nodes"] is None
    status, reply = service.handle("filter", json.dumps({"Pod": pod_to_dict(pod()), "NodeNames": ["x"]}).encode())
    assert status == 400
    assert "not in the extender's cluster state" in reply["error"]


def test_bind_verb_records_the_pod_when_a_binder_is_given() -> None:
    bound: list[tuple[str, str]] = []
    service = ExtenderService(cluster=nodes(1, cpu="2"), binder=lambda p, node: bound.append((p.key, node)))
    args = {"Pod": pod_to_dict(pod(cpu="2")), "NodeNames": ["n-0"]}
    assert service.handle("filter", json.dumps(args).encode())[1]["NodeNames"] == ["n-0"]
    binding = {"PodName": "p", "PodNamespace": "default", "PodUID": "default/p", "Node": "n-0"}
    assert service.handle("bind", json.dumps(binding).encode()) == (200, {"Error": ""})
    assert bound == [("default/p", "n-0")]
    other = {"Pod": pod_to_dict(pod("q", cpu="1")), "NodeNames": ["n-0"]}
    assert service.handle("filter", json.dumps(other).encode())[1]["FailedNodes"] == {"n-0": "Insufficient cpu"}
    assert ExtenderService().handle("bind", json.dumps(binding).encode())[0] == 404


# --- bad input over HTTP ------------------------------------------------------------------------------


def _raw(port: int, data: bytes, *, shutdown: bool = True) -> tuple[int, dict[str, Any]]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        if shutdown:
            sock.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _request(body: bytes, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    return (f"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n").encode() + body


GOOD = json.dumps({"Pod": pod_to_dict(pod()), "Nodes": {"items": [node_to_dict(n) for n in nodes(2)]}}).encode()


@pytest.mark.parametrize(("data", "status"), [
    (_request(b"{not json"), 400),
    (_request(b"[1, 2]"), 400),
    (_request(b'{"Pod": {"metadata": {"name": 7}}, "NodeNames": []}'), 400),
    (_request(b'{"Pod": null, "NodeNames": []}'), 400),
    (_request(json.dumps({"Pod": pod_to_dict(pod()), "Nodes": {"items": "no"}}).encode()), 400),
    (_request(GOOD[:40], length=len(GOOD)), 400),
    (_request(b"x" * 10, length=10**9), 413),
    (b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
    (b"POST /filter HTTP/1.1\r\nHost: x\r\n\r\n", 411),
    (b"POST /preempt HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 404),
    (b"PUT /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 405),
    (b"garbage\r\n\r\n", 400),
    (b"BREW /filter HTTP/1.1\r\nHost: x\r\n\r\n", 405),
], ids=["bad-json", "not-object", "bad-pod", "no-pod", "bad-nodes", "truncated", "oversized",
        "bad-length", "no-length", "unknown-verb", "wrong-method", "bad-request-line", "unknown-method"])
def test_bad_requests_get_a_4xx_json_error_and_the_server_keeps_serving(data: bytes, status: int) -> None:
    with ExtenderServer(max_body_bytes=1 << 20) as server:
        got, body = _raw(server.port, data)
        assert got == status
        assert isinstance(body["error"], str)
        assert body["error"]
        assert post(server.port, GOOD)[0] == 200


def test_a_stalled_body_times_out_with_408() -> None:
    with ExtenderServer(request_timeout=0.3) as server:
        got, _body = _raw(server.port, _request(GOOD[:10], length=len(GOOD)), shutdown=False)
        assert got == 408
        assert post(server.port, GOOD, "/prioritize")[0] == 200


def test_keep_alive_connections_and_healthz() -> None:
    with ExtenderServer() as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        for path in ("/filter", "/scheduler/prioritize", "/filter"):
            connection.request("POST", path, GOOD, {"Content-Type": "application/json"})
            response = connection.getresponse()
            assert response.status == 200
            response.read()
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        assert response.status == 200
        assert json.loads(response.read())["verbs"] == ["filter", "prioritize"]
        connection.close()


def test_serve_extender_command(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(HEADER))
    args = _parser().parse_args(["serve-extender", "--config", str(config), "--port", "0"])
    assert isinstance(args, argparse.Namespace)
    out, stop = io.StringIO(), threading.Event()
    thread = threading.Thread(target=command.run, args=(args, out), kwargs={"stop": stop}, daemon=True)
    thread.start()
    try:
        for _ in range(100):
            if out.getvalue():
                break
            time.sleep(0.05)
        line = out.getvalue()
        assert line.startswith("serving extender on http://127.0.0.1:")
        port = int(line.split()[3].rsplit(":", 1)[1])
        assert post(port, GOOD)[0] == 200
    finally:
        stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()
