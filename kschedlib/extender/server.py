"""ExtenderServer: kschedlib plugins behind kube-scheduler's HTTP extender protocol (stdlib ``http.server``).

``POST <prefix>/filter`` and ``POST <prefix>/prioritize`` (and ``/bind`` when a
binder is given) answer with the protocol's JSON; the verb is the last path
segment, so any ``urlPrefix`` path works.  ``GET /healthz`` answers ``ok``.
Every bad request gets a 4xx with ``{"error": "..."}``: a missing or bad
``Content-Length`` (411/400), a body over the size limit (413), a request that
does not arrive whole within ``request_timeout`` of its first byte or is cut
short (408/400), JSON that does not decode, is nested too deeply or has the
wrong shape (400), too many nodes (413) or pod terms (422), an unknown verb
(404), another method (405).  An answer not ready within the work timeout is a
503, a plugin failure a 500.

At most ``max_connections`` connections are served at once.  When all are
taken, the one that has been waiting longest for its request's bytes (a slow
or idle client) is closed to make room, so probes and prompt clients are
served; only when every connection is busy computing is a new one refused
with a 503.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final, final

from kschedlib.extender._reader import RequestReader
from kschedlib.extender.limits import DEFAULT_LIMITS, ExtenderLimits
from kschedlib.extender.service import ExtenderBinder, ExtenderService, ScoreScale
from kschedlib.framework.registry import Registry
from kschedlib.simulation.cluster import Cluster

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ExtenderServer"]

DEFAULT_MAX_BODY_BYTES: Final = 16 * 1024 * 1024
DEFAULT_REQUEST_TIMEOUT: Final = 10.0
DEFAULT_MAX_CONNECTIONS: Final = 64
_EVICTION_WAIT: Final = 1.0
_JSON: Final = "application/json"


def _json_bytes(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    """One connection; ``server`` is the :class:`_HTTPServer` carrying the service and limits."""

    protocol_version = "HTTP/1.1"
    server_version = "kschedlib-extender"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall per reply
    server: _HTTPServer
    rfile: RequestReader  # type: ignore[assignment]
    _answered = False

    def setup(self) -> None:
        super().setup()
        buffered: Any = self.rfile
        buffered.close()
        self.rfile = RequestReader(self.connection, self.server.request_timeout)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a scheduler's extender answers thousands of requests per minute."""

    def handle_one_request(self) -> None:
        """One request, its bytes under the request deadline; one that ran out of time mid-way gets a 408."""
        self._answered = False
        self.rfile.begin()
        self.server.reading(self.connection, True)
        try:
            super().handle_one_request()
        finally:
            self.server.reading(self.connection, False)
        if self.rfile.expired and not self._answered:
            self._error(408, f"request not received within {self.server.request_timeout:g} s", close=True)

    def _send(self, status: int, payload: Any, *, close: bool = False) -> None:
        body = _json_bytes(payload)
        self._answered = True
        try:
            self.connection.settimeout(self.server.request_timeout)
            self.send_response(status)
            self.send_header("Content-Type", _JSON)
            self.send_header("Content-Length", str(len(body)))
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True

    def _error(self, status: int, message: str, *, close: bool = False) -> None:
        self._send(status, {"error": message}, close=close)

    def do_GET(self) -> None:
        if self.path.rstrip("/").rsplit("/", 1)[-1] == "healthz":
            self._send(200, {"status": "ok", "verbs": list(self.server.service.verbs)})
        else:
            self._error(405, "use POST <urlPrefix>/<verb>")

    def do_PUT(self) -> None:
        self._error(405, "use POST <urlPrefix>/<verb>", close=True)

    do_DELETE = do_PATCH = do_PUT

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level errors (bad request line, unknown method: 405) as JSON, with a status line."""
        if self.request_version == "HTTP/0.9":  # a malformed request line: answer in HTTP/1.1 anyway
            self.request_version = "HTTP/1.1"
        if code == HTTPStatus.NOT_IMPLEMENTED:
            code, message = HTTPStatus.METHOD_NOT_ALLOWED, f"unsupported method {self.command!r}"
        self._error(code, message or HTTPStatus(code).phrase, close=True)

    def do_POST(self) -> None:
        body = self._body()
        if body is None:
            return
        received = time.monotonic()
        self.server.reading(self.connection, False)
        verb = self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        status, payload = self.server.service.handle(verb, body, received=received)
        self._send(status, payload)

    def _body(self) -> bytes | None:
        """The request body, or ``None`` after answering why it cannot be read."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            self._error(411, "send the body with a Content-Length", close=True)
            return None
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            self._error(411, "a Content-Length header is required", close=True)
            return None
        if not length_text.strip().isdigit():
            self._error(400, f"bad Content-Length {length_text!r}", close=True)
            return None
        length = int(length_text)
        if length > self.server.max_body_bytes:
            self._error(413, f"request body of {length} bytes is over the limit of "
                             f"{self.server.max_body_bytes}", close=True)
            return None
        try:
            body = self.rfile.read(length)
        except TimeoutError:
            self._error(408, f"request body not received within {self.server.request_timeout:g} s", close=True)
            return None
        except OSError:
            self.close_connection = True
            return None
        if len(body) < length:
            self._error(400, f"request body truncated: {len(body)} of {length} bytes", close=True)
            return None
        return body


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], service: ExtenderService, *, max_body_bytes: int,
                 request_timeout: float, max_connections: int) -> None:
        self.service = service
        self.max_body_bytes = max_body_bytes
        self.request_timeout = request_timeout
        self._slots = threading.BoundedSemaphore(max_connections)
        self._readers: dict[socket.socket, float] = {}
        """Connections waiting for (the rest of) a request, with when they began waiting."""
        self._readers_lock = threading.Lock()
        super().__init__(address, _Handler)

    def reading(self, connection: socket.socket, waiting: bool) -> None:
        """Mark a connection as waiting for its client's bytes (evictable) or not."""
        with self._readers_lock:
            if waiting:
                self._readers.setdefault(connection, time.monotonic())
            else:
                self._readers.pop(connection, None)

    def _evict_slowest_reader(self) -> bool:
        """Close the connection waiting longest for its client; ``False`` when none is waiting."""
        with self._readers_lock:
            if not self._readers:
                return False
            oldest = min(self._readers, key=self._readers.__getitem__)
            del self._readers[oldest]
        with contextlib.suppress(OSError):
            oldest.shutdown(socket.SHUT_RDWR)
        return True

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False) and not (
                self._evict_slowest_reader() and self._slots.acquire(timeout=_EVICTION_WAIT)):
            _refuse(request)
            self.shutdown_request(request)
            return
        self.reading(request, True)  # evictable from now on, even before its thread runs
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.reading(request, False)
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A broken connection is the client's business: never print or stop."""


def _refuse(request: socket.socket) -> None:
    body = _json_bytes({"error": "too many connections"})
    head = f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: {_JSON}\r\nContent-Length: {len(body)}\r\n"
    with contextlib.suppress(OSError):
        request.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)


@final
class ExtenderServer:
    """An HTTP extender serving one profile's Filter and Score plugins.

    Start it with :meth:`start` (a background thread) or :meth:`serve_forever`;
    ``port=0`` picks a free port (see :attr:`port`).  Use as a context manager
    to stop it on exit.  ``cluster`` gives nodes and bound pods (needed for
    ``nodeCacheCapable`` clients); ``binder`` enables the ``bind`` verb.
    ``limits`` bounds each request's work (see :class:`ExtenderLimits`);
    ``request_timeout`` is the time a whole request (line, headers and body)
    may take to arrive from its first byte, and an idle connection's wait.
    """

    __slots__ = ("_httpd", "_thread", "service")

    def __init__(
        self,
        config: Any = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        cluster: Cluster | str | Mapping[str, Any] | Sequence[Any] | None = None,
        profile: str | None = None,
        scores: ScoreScale = "raw",
        binder: ExtenderBinder | None = None,
        registry: Registry | None = None,
        limits: ExtenderLimits = DEFAULT_LIMITS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        kube_version: str | None = None,
        feature_gates: Mapping[str, bool] | str | None = None,
    ) -> None:
        self.service = ExtenderService(config, cluster=cluster, profile=profile, scores=scores, binder=binder,
                                       registry=registry, limits=limits, kube_version=kube_version,
                                       feature_gates=feature_gates)
        self._httpd = _HTTPServer((host, port), self.service, max_body_bytes=max_body_bytes,
                                  request_timeout=request_timeout, max_connections=max_connections)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://host:port``: the ``urlPrefix`` to configure."""
        host = str(self._httpd.server_address[0])
        return f"http://{host}:{self.port}"

    def start(self) -> ExtenderServer:
        """Serve on a daemon thread; returns itself."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="kschedlib-extender", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve on the calling thread until :meth:`stop` (from another thread) or KeyboardInterrupt."""
        self._httpd.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ExtenderServer:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
