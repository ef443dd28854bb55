"""The served extender under adversarial input: bounded state, per-request deadlines, no head-of-line blocking.

Everything runs on 127.0.0.1 with short timeouts; waits are bounded by events
(a Filter plugin that blocks until released) rather than by the machine's speed.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import select
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kschedlib import explain
from kschedlib.cli import _parser
from kschedlib.errors import ConfigError
from kschedlib.extender import ExtenderLimits, ExtenderServer, ExtenderService, command
from kschedlib.extender.server import DEFAULT_PROBE_CONNECTIONS
from kschedlib.framework import CycleState, FilterPlugin, Handle, NodeInfo, Registry, ScorePlugin, Status
from kschedlib.model import Pod
from kschedlib.model.convert import node_from_dict, node_to_dict, pod_from_dict, pod_to_dict
from kschedlib.plugins import in_tree_registry
from tests.extender.support import HEADER, nodes, pod, post

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

GATE_CONFIG = {**HEADER, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Gate"}]}}}]}


class Gate(FilterPlugin):
    """Holds pods labelled ``gate=yes`` until ``release`` is set (at most 10 s); counts who entered."""

    name: ClassVar[str] = "Gate"
    entered = threading.Event()
    release = threading.Event()

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if pod.labels.get("gate") == "yes":
            Gate.entered.set()
            Gate.release.wait(10)
        return Status.success()


@pytest.fixture
def gate() -> Iterator[type[Gate]]:
    Gate.entered.clear()
    Gate.release.clear()
    yield Gate
    Gate.release.set()


def _gate_registry() -> Registry:
    registry = Registry()
    registry.register(Gate.name, Gate)
    return in_tree_registry().merge(registry)


def _body(pod_: Pod, node_count: int, prefix: str = "n") -> bytes:
    items = [node_to_dict(n) for n in nodes(node_count)]
    for i, item in enumerate(items):
        item["metadata"]["name"] = f"{prefix}-{i}"
    return json.dumps({"Pod": pod_to_dict(pod_), "Nodes": {"items": items}}).encode()


def _healthz(port: int) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _anti_affinity_pod(terms: int) -> Pod:
    raw = pod_to_dict(pod())
    raw["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": f"a-{i}"}}, "topologyKey": "kubernetes.io/hostname"}
        for i in range(terms)]}}
    return pod_from_dict(raw)


# --- bounded state ---------------------------------------------------------------------------------


def test_many_distinct_node_names_keep_only_a_bounded_cache() -> None:
    service = ExtenderService(limits=ExtenderLimits(node_cache_size=50))
    for batch in range(20):
        status, reply = service.handle("filter", _body(pod(), 30, prefix=f"b{batch}"))
        assert status == 200
        assert len(reply["Nodes"]["items"]) == 30
        assert service.cached_nodes <= 50
    assert service.cached_nodes == 50
    assert len(service.scheduler.snapshot()) == 0  # the base cluster learned nothing from requests
    status, reply = service.handle("prioritize", _body(pod(), 3, prefix="b19"))
    assert status == 200
    assert [entry["Host"] for entry in reply] == ["b19-0", "b19-1", "b19-2"]


def test_a_changed_node_is_parsed_again_and_decides_with_its_new_capacity() -> None:
    service = ExtenderService(limits=ExtenderLimits(node_cache_size=10))
    body = _body(pod(cpu="3"), 2)
    assert service.handle("filter", body)[1]["FailedNodes"] == {}
    smaller = json.loads(body)
    smaller["Nodes"]["items"][1]["status"]["allocatable"]["cpu"] = "2"
    status, reply = service.handle("filter", json.dumps(smaller).encode())
    assert status == 200
    assert reply["FailedNodes"] == {"n-1": "Insufficient cpu"}


def test_a_request_node_replacing_a_cluster_node_keeps_its_pods() -> None:
    service = ExtenderService(cluster=[*nodes(2), pod("old", cpu="3", node_name="n-1")])
    body = json.loads(_body(pod(cpu="2"), 2))
    body["Nodes"]["items"][1]["metadata"]["labels"] = {"new": "label"}
    status, reply = service.handle("filter", json.dumps(body).encode())
    assert status == 200
    assert reply["FailedNodes"] == {"n-1": "Insufficient cpu"}


def test_image_locality_counts_the_request_nodes_holding_an_image() -> None:
    body = json.loads(_body(pod(), 3))
    body["Pod"]["spec"]["containers"][0]["image"] = "big:1"
    for item in body["Nodes"]["items"][:2]:
        item["status"]["images"] = [{"names": ["big:1"], "sizeBytes": 900 * 1024 * 1024}]
    status, reply = ExtenderService().handle("prioritize", json.dumps(body).encode())
    assert status == 200
    local = explain([node_from_dict(item) for item in body["Nodes"]["items"]], pod_from_dict(body["Pod"]))
    assert local.to_dict()["scores"]["n-0"]["plugins"]["ImageLocality"] > 0
    assert {entry["Host"]: entry["Score"] for entry in reply} == {
        name: entry["total"] for name, entry in local.to_dict()["scores"].items()}


# --- limits and deadlines ----------------------------------------------------------------------------


def test_limits_refuse_too_many_nodes_and_terms_before_any_plugin_runs() -> None:
    service = ExtenderService(limits=ExtenderLimits(max_nodes=3, max_terms=4))
    status, reply = service.handle("filter", _body(pod(), 4))
    assert (status, reply["error"]) == (413, "the request names 4 nodes, over this extender's limit of 3")
    status, reply = service.handle("prioritize", _body(_anti_affinity_pod(5), 2))
    assert status == 422
    assert "pod default/p has 5 affinity terms and topology spread constraints" in reply["error"]
    assert service.handle("filter", _body(_anti_affinity_pod(4), 3))[0] == 200
    assert service.cached_nodes == 3


def test_a_request_past_its_work_timeout_fails_fast_with_503() -> None:
    service = ExtenderService(limits=ExtenderLimits(work_timeout=0.5, max_terms=10_000))
    started = time.monotonic()
    status, reply = service.handle("filter", _body(pod(), 3), received=started - 1)
    assert status == 503
    assert reply["error"].startswith("no answer within the work timeout of 0.5 s (while ")
    assert reply["error"].endswith("); kube-scheduler would have given up on this call")
    status, reply = service.handle("prioritize", _body(pod(), 3), received=started - 1)
    assert status == 503


def test_a_huge_request_stops_at_its_deadline(gate: type[Gate]) -> None:
    service = ExtenderService(GATE_CONFIG, registry=_gate_registry(), limits=ExtenderLimits(work_timeout=0.3))
    started = time.monotonic()
    status, reply = service.handle("filter", _body(pod(labels={"gate": "yes"}), 200))
    assert time.monotonic() - started < 5  # the plugin holds the work for up to 10 s
    assert (status, "(while running the plugins)" in reply["error"]) == (503, True)
    assert not gate.release.is_set()
    gate.release.set()
    assert service.handle("filter", _body(pod(), 2))[0] == 200


def test_a_tiny_request_is_served_while_a_big_one_is_in_flight(gate: type[Gate]) -> None:
    limits = ExtenderLimits(work_timeout=20, workers=2)
    with ExtenderServer(GATE_CONFIG, registry=_gate_registry(), limits=limits) as server:
        big: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: big.update(reply=post(server.port, _body(
            pod(labels={"gate": "yes"}), 5), timeout=20)), daemon=True)
        thread.start()
        assert gate.entered.wait(10)
        status, reply = post(server.port, _body(pod(), 2), timeout=5)
        assert (status, len(reply["Nodes"]["items"])) == (200, 2)
        assert thread.is_alive()  # the big one is still held in its filter
        assert _healthz(server.port) == 200
        gate.release.set()
        thread.join(10)
    assert big["reply"][0] == 200


def test_requests_beyond_the_workers_wait_only_until_their_deadline(gate: type[Gate]) -> None:
    limits = ExtenderLimits(work_timeout=0.5, workers=1)
    service = ExtenderService(GATE_CONFIG, registry=_gate_registry(), limits=limits)
    thread = threading.Thread(target=service.handle, args=("filter", _body(pod(labels={"gate": "yes"}), 1)),
                              daemon=True)
    thread.start()
    assert gate.entered.wait(10)
    status, reply = service.handle("filter", _body(pod(), 1))
    assert status == 503
    assert "(while waiting for a free worker)" in reply["error"]
    gate.release.set()
    thread.join(10)
    assert service.handle("filter", _body(pod(), 1))[0] == 200


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_nodes": 0}, "ExtenderLimits.max_nodes: must be a positive integer (got 0)"),
    ({"max_terms": 2.5}, "ExtenderLimits.max_terms: must be a positive integer (got 2.5)"),
    ({"workers": True}, "ExtenderLimits.workers: must be a positive integer (got True)"),
    ({"work_timeout": -1}, "ExtenderLimits.work_timeout: must be a positive number (got -1)"),
    ({"node_cache_size": "9"}, "ExtenderLimits.node_cache_size: must be a positive integer (got '9')"),
], ids=["nodes-zero", "terms-float", "workers-bool", "timeout-negative", "cache-string"])
def test_bad_limits_are_refused_naming_the_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        ExtenderLimits(**kwargs)
    assert str(error.value) == message


# --- malformed bodies --------------------------------------------------------------------------------


NESTED = b'{"Pod": ' + b"[" * 100_000 + b"]" * 100_000 + b', "NodeNames": []}'


@pytest.mark.parametrize("body", [
    NESTED,
    b'{"Pod": {"metadata": {"name": "p", "labels": ' + b"[" * 5000 + b"]" * 5000 + b"}}, \"NodeNames\": []}",
    b'{"Pod": [], "NodeNames": []}',
    b'{"Pod": {"metadata": {"name": "p", "labels": ["a"]}}, "NodeNames": []}',
    b'{"Pod": {"metadata": {"name": "p"}, "spec": {"containers": "c"}}, "NodeNames": []}',
    b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": {"items": [7]}}',
    b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": {"items": [{"metadata": {"name": ["x"]}}]}}',
    b'{"Pod": {"metadata": {"name": "p"}}, "NodeNames": [1, 2]}',
], ids=["nested-100000", "nested-labels", "pod-list", "labels-list", "containers-string", "node-number",
        "node-name-list", "names-numbers"])
def test_malformed_bodies_get_a_400_json_error(body: bytes) -> None:
    status, reply = ExtenderService().handle("filter", body)
    assert status == 400
    assert isinstance(reply["error"], str)
    assert reply["error"]


def test_deeply_nested_json_over_http_is_a_400_and_the_server_keeps_serving() -> None:
    with ExtenderServer() as server:
        status, reply = post(server.port, NESTED)
        assert (status, reply["error"]) == (400, "malformed request: JSON nested too deeply")
        assert post(server.port, _body(pod(), 2))[0] == 200


# --- slow clients --------------------------------------------------------------------------------------


def _dribble(port: int, interval: float, limit: float) -> tuple[float, bytes]:
    """Send a request's headers, then its body a byte every ``interval`` s: (seconds until answered, reply)."""
    body = _body(pod(), 1)
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=limit) as sock:
        sock.sendall(f"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode())
        for byte in body:
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                sock.sendall(bytes([byte]))
            readable, _, _ = select.select([sock], [], [], interval)
            if readable or time.monotonic() - started > limit:
                break
        answered = time.monotonic() - started
        reply = b""
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            while chunk := sock.recv(65536):  # the server closes the connection after a 408
                reply += chunk
    return answered, reply


def test_a_body_dribbling_in_is_cut_off_at_the_request_timeout() -> None:
    with ExtenderServer(request_timeout=0.5) as server:
        seconds, reply = _dribble(server.port, 0.1, limit=8)
        assert reply.startswith(b"HTTP/1.1 408 ")
        assert b"request body not received within 0.5 s" in reply
        assert seconds < 6  # the body would take over 100 s at this pace
        assert _healthz(server.port) == 200


def test_headers_dribbling_in_are_cut_off_with_408() -> None:
    with ExtenderServer(request_timeout=0.3) as server, \
            socket.create_connection(("127.0.0.1", server.port), timeout=8) as sock:
        sock.sendall(b"POST /filter HTTP/1.1\r\n")
        reply = b""
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and not reply:
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                sock.sendall(b"X")
            if select.select([sock], [], [], 0.1)[0]:
                reply = sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 408 ")


def test_healthz_answers_while_slow_clients_hold_every_connection() -> None:
    with ExtenderServer(max_connections=4, request_timeout=30) as server:
        slow = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(6)]
        try:
            for sock in slow:
                sock.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\n")
            for _ in range(3):
                assert _healthz(server.port) == 200
            assert post(server.port, _body(pod(), 1))[0] == 200
        finally:
            for sock in slow:
                sock.close()


def test_a_spare_connection_answers_probes_while_every_connection_is_computing(gate: type[Gate]) -> None:
    with ExtenderServer(GATE_CONFIG, registry=_gate_registry(), max_connections=1) as server:
        thread = threading.Thread(target=post, args=(server.port, _body(pod(labels={"gate": "yes"}), 1)),
                                  daemon=True)
        thread.start()
        assert gate.entered.wait(10)
        for _ in range(DEFAULT_PROBE_CONNECTIONS + 2):  # each probe's spare connection closes after it
            assert _healthz(server.port) == 200
        status, reply = post(server.port, _body(pod(), 1))
        assert (status, reply) == (503, {"error": "too many connections"})  # work waits for a regular one
        gate.release.set()
        thread.join(10)


def test_a_new_connection_is_refused_with_503_when_every_connection_is_computing(gate: type[Gate]) -> None:
    with ExtenderServer(GATE_CONFIG, registry=_gate_registry(), max_connections=1, probe_connections=0) as server:
        thread = threading.Thread(target=post, args=(server.port, _body(pod(labels={"gate": "yes"}), 1)),
                                  daemon=True)
        thread.start()
        assert gate.entered.wait(10)
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 503 ")
        assert b'{"error":"too many connections"}' in reply
        gate.release.set()
        thread.join(10)


def test_a_request_line_over_64_kib_is_a_414() -> None:
    with ExtenderServer() as server, socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 414 ")


def test_an_idle_keep_alive_connection_is_closed_after_the_request_timeout() -> None:
    with ExtenderServer(request_timeout=0.3) as server, \
            socket.create_connection(("127.0.0.1", server.port), timeout=8) as sock:
        started = time.monotonic()
        assert sock.recv(65536) == b""  # closed without an answer: no request had begun
        assert time.monotonic() - started < 6


def test_a_pod_bound_on_a_node_known_from_a_request_counts_in_later_requests() -> None:
    bound: list[str] = []
    service = ExtenderService(binder=lambda p, node: bound.append(node))
    body = _body(pod(cpu="3"), 2)
    assert service.handle("filter", body)[1]["FailedNodes"] == {}
    binding = {"PodName": "p", "PodNamespace": "default", "Node": "n-1"}
    assert service.handle("bind", json.dumps(binding).encode()) == (200, {"Error": ""})
    unknown = {"PodName": "q", "PodNamespace": "default", "Node": "elsewhere"}
    assert service.handle("bind", json.dumps(unknown).encode()) == (200, {"Error": ""})
    assert bound == ["n-1", "elsewhere"]
    status, reply = service.handle("filter", _body(pod("q", cpu="3"), 2))
    assert (status, reply["FailedNodes"]) == (200, {"n-1": "Insufficient cpu"})


def test_serve_extender_takes_the_limits_from_the_command_line(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(HEADER))
    args = _parser().parse_args(["serve-extender", "--config", str(config), "--port", "0", "--max-nodes", "1",
                                 "--max-terms", "2", "--work-timeout", "3", "--workers", "1",
                                 "--node-cache-size", "7", "--max-connections", "5"])
    out, stop = io.StringIO(), threading.Event()
    thread = threading.Thread(target=command.run, args=(args, out), kwargs={"stop": stop}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        port = int(out.getvalue().split()[3].rsplit(":", 1)[1])
        status, reply = post(port, _body(pod(), 2))
        assert (status, reply["error"]) == (413, "the request names 2 nodes, over this extender's limit of 1")
    finally:
        stop.set()
        thread.join(timeout=5)
    assert not thread.is_alive()


class Broken(FilterPlugin, ScorePlugin):
    """Raises from Filter and Score for pods labelled ``broken=yes``."""

    name: ClassVar[str] = "Broken"

    def __init__(self, args: object, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if pod.labels.get("broken") == "yes":
            raise KeyError("zone")
        return Status.success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        if pod.labels.get("broken") == "yes":
            raise KeyError("zone")
        return 0


def test_a_plugin_failure_is_an_extender_error_not_a_crash() -> None:
    registry = Registry()
    registry.register(Broken.name, Broken)
    config = {**HEADER, "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Broken"}]},
                                                  "score": {"enabled": [{"name": "Broken"}]}}}]}
    service = ExtenderService(config, registry=in_tree_registry().merge(registry))
    status, reply = service.handle("filter", _body(pod(labels={"broken": "yes"}), 2))
    assert status == 200
    assert "Broken" in reply["Error"]
    assert reply["Nodes"] is None
    status, reply = service.handle("prioritize", _body(pod(labels={"broken": "yes"}), 2))
    assert status == 500
    assert reply["error"].startswith("RuntimeError: ")
    assert service.handle("prioritize", _body(pod(), 2))[0] == 200


# --- the front end's protocol edges --------------------------------------------------------------------


def _exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply


@pytest.mark.parametrize(("request_bytes", "status", "message"), [
    (b"GET /healthz HTTP/2.0\r\n\r\n", 505, "Invalid HTTP version (HTTP/2.0)"),
    (b"GET /healthz HTTP/1.x\r\n\r\n", 400, "Bad request version ('HTTP/1.x')"),
    (b"POST /filter\r\n\r\n", 400, "Bad HTTP/0.9 request type ('POST')"),
    (b"GET /filter HTTP/1.1\r\n\r\n", 405, "use POST <urlPrefix>/<verb>"),
    (b"GET /healthz HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(101)) + b"\r\n", 431,
     "Too many headers"),
    (b"GET /healthz HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431, "Line too long"),
    (b"POST /filter HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411,
     "send the body with a Content-Length"),
], ids=["http2", "bad-version", "http09-post", "get-a-verb", "too-many-headers", "long-header", "chunked"])
def test_protocol_errors_are_answered_as_pythons_http_server_words_them(request_bytes: bytes, status: int,
                                                                         message: str) -> None:
    with ExtenderServer() as server:
        reply = _exchange(server.port, request_bytes)
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.split()[1] == str(status).encode()
        assert json.loads(body) == {"error": message}
        assert _healthz(server.port) == 200


def test_http_1_0_keep_alive_and_expect_continue() -> None:
    with ExtenderServer() as server:
        body = _body(pod(), 1)
        head = (f"POST /filter HTTP/1.1\r\nContent-Length: {len(body)}\r\nExpect: 100-continue\r\n"
                "Connection: keep-alive\r\n\r\n").encode()
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(head)
            assert sock.recv(65536).startswith(b"HTTP/1.1 100 Continue")
            sock.sendall(body)
            reply = sock.recv(65536)
            assert reply.startswith(b"HTTP/1.1 200 ")
            assert b"Connection: close" not in reply
        old = _exchange(server.port, b"GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        assert old.startswith(b"HTTP/1.1 200 ")


def test_a_body_that_finds_no_room_within_the_work_timeout_is_a_503() -> None:
    body = _body(pod(), 1)
    with ExtenderServer(limits=ExtenderLimits(work_timeout=0.3), max_body_bytes=len(body),
                        max_bytes_in_flight=len(body)) as server, \
            socket.create_connection(("127.0.0.1", server.port), timeout=5) as slow:
        slow.sendall(f"POST /filter HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body[:10])
        time.sleep(0.2)  # its body's room is taken while the rest is awaited
        status, reply = post(server.port, body, timeout=10)
        assert status == 503
        assert reply["error"] == f"too many request bytes in flight: no room for {len(body)} more within 0.3 s"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_body_bytes": 10, "max_bytes_in_flight": 5}, "max_bytes_in_flight: must be at least max_body_bytes (10)"),
    ({"switch_interval": 0}, "switch_interval: must be a number of seconds above 0, or None"),
    ({"probe_connections": -1}, "probe_connections: must be a whole number, 0 or more"),
], ids=["budget-under-a-body", "switch-zero", "probes-negative"])
def test_bad_server_options_are_refused_naming_them(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ExtenderServer(**kwargs)


def test_the_switch_interval_is_set_while_serving_and_given_back() -> None:
    before = sys.getswitchinterval()
    with ExtenderServer(switch_interval=0.002), ExtenderServer(switch_interval=0.001):
        assert sys.getswitchinterval() == pytest.approx(0.001)
    assert sys.getswitchinterval() == pytest.approx(before)
    server = ExtenderServer(switch_interval=None)
    with server:
        assert sys.getswitchinterval() == pytest.approx(before)
