"""``/healthz``, ``/readyz`` and ``/metrics`` over plain HTTP, for probes and Prometheus.

Checks and the metrics text come from callables (the runner answers them from its own thread), so the server's
threads never touch the scheduler.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable
from typing import Any, Final, final

from kschedlib.errors import ConfigError

__all__ = ["HealthServer", "parse_address"]

PROMETHEUS_TEXT: Final = "text/plain; version=0.0.4; charset=utf-8"


def parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` for every interface); refused with a ConfigError naming the flag."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError("expected HOST:PORT", field="--metrics-bind-address", value=value)
    return host.strip("[]") or "0.0.0.0", int(port)


@final
class HealthServer:
    """Serves the three paths on a thread; ``port`` is the one bound (useful with port 0)."""

    def __init__(self, address: tuple[str, int], *, checks: dict[str, Callable[[], bool]],
                 metrics: Callable[[], str]) -> None:
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer._answer(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.checks = checks
        self.metrics = metrics
        self.server = http.server.ThreadingHTTPServer(address, Handler)
        self.server.daemon_threads = True
        self.port: int = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="healthz", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _answer(self, request: http.server.BaseHTTPRequestHandler) -> None:
        path = request.path.split("?", 1)[0]
        if path == "/metrics":
            try:
                body, status, kind = self.metrics().encode(), 200, PROMETHEUS_TEXT
            except Exception as exc:  # a scrape that fails says why, the scheduler goes on
                body, status, kind = f"metrics unavailable: {exc}\n".encode(), 503, "text/plain"
        elif path in ("/healthz", "/livez", "/readyz"):
            names = ("healthz",) if path != "/readyz" else tuple(self.checks)
            failed = [name for name in names if not self.checks.get(name, lambda: True)()]
            status = 500 if failed else 200
            body = (f"[-]{failed[0]} failed\n" if failed else "ok").encode()
            kind = "text/plain; charset=utf-8"
        else:
            body, status, kind = b"404 page not found\n", 404, "text/plain"
        request.send_response(status)
        request.send_header("Content-Type", kind)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def close(self) -> None:
        if self.thread.ident is not None:  # shutdown() waits for serve_forever, forever if it never ran
            self.server.shutdown()
            self.thread.join(timeout=5)
        self.server.server_close()
