"""ExtenderServer: kschedlib plugins behind kube-scheduler's HTTP extender protocol.

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

One asyncio loop does all the I/O (see :mod:`kschedlib.extender._http`), so a
probe never waits behind the threads of other connections.  At most
``max_connections`` connections are served at once.  When all are taken, a
new connection takes one of ``probe_connections`` spare ones, which answer
only ``GET /healthz`` (a POST there is a 503) and then close; past those, the
connection that has been waiting longest for its request's bytes (a slow or
idle client) is closed to make room; only when none is waiting is a new one
refused with a 503.  Bodies read and not yet answered stay within
``max_bytes_in_flight``, and at most ``workers`` are decoded at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final, final

from kschedlib.errors import ConfigError
from kschedlib.extender._http import MAX_LINE, FrontEnd, FrontLimits
from kschedlib.extender.limits import DEFAULT_LIMITS, ExtenderLimits
from kschedlib.extender.service import ExtenderBinder, ExtenderService, ScoreScale
from kschedlib.framework.registry import Registry
from kschedlib.simulation.cluster import Cluster

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_BYTES_IN_FLIGHT", "DEFAULT_MAX_CONNECTIONS",
           "DEFAULT_PROBE_CONNECTIONS", "DEFAULT_REQUEST_TIMEOUT", "DEFAULT_SWITCH_INTERVAL", "ExtenderServer"]

DEFAULT_MAX_BODY_BYTES: Final = 16 * 1024 * 1024
DEFAULT_REQUEST_TIMEOUT: Final = 10.0
DEFAULT_MAX_CONNECTIONS: Final = 64
DEFAULT_MAX_BYTES_IN_FLIGHT: Final = 4 * DEFAULT_MAX_BODY_BYTES
DEFAULT_PROBE_CONNECTIONS: Final = 4
"""Connections kept beyond ``max_connections`` for ``GET /healthz`` alone (kubelet probes open one each time)."""
DEFAULT_SWITCH_INTERVAL: Final = 0.001
"""Seconds a thread computing may hold the interpreter while another waits (Python's default is 0.005):
the loop serving every connection gets its turn among the computing threads five times as often."""
_BACKLOG: Final = 128


@final
class _SwitchIntervals:
    """The interpreter's switch interval while servers run: the smallest any running server asks for, and
    the one from before once the last of them stops (unless someone else changed it meanwhile)."""

    __slots__ = ("_before", "_lock", "_wanted")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wanted: list[float] = []
        self._before = 0.0

    def enter(self, interval: float | None) -> None:
        if interval is None:
            return
        with self._lock:
            if not self._wanted:
                self._before = sys.getswitchinterval()
            self._wanted.append(interval)
            sys.setswitchinterval(min(self._wanted))

    def leave(self, interval: float | None) -> None:
        if interval is None:
            return
        with self._lock:
            current = min(self._wanted)
            self._wanted.remove(interval)
            if abs(sys.getswitchinterval() - current) > 1e-6:  # kept in microseconds
                return  # set by someone else since: theirs stands
            sys.setswitchinterval(min(self._wanted) if self._wanted else self._before)


_SWITCH: Final = _SwitchIntervals()


@final
class ExtenderServer:
    """An HTTP extender serving one profile's Filter and Score plugins.

    Start it with :meth:`start` (a background thread) or :meth:`serve_forever`;
    ``port=0`` picks a free port (see :attr:`port`).  Use as a context manager
    to stop it on exit.  ``cluster`` gives nodes and bound pods (needed for
    ``nodeCacheCapable`` clients); ``binder`` enables the ``bind`` verb.
    ``limits`` bounds each request's work (see :class:`ExtenderLimits`);
    ``request_timeout`` is the time a whole request (line, headers and body)
    may take to arrive from its first byte, and an idle connection's wait;
    ``max_bytes_in_flight`` bounds the bodies read and not yet answered (at
    least ``max_body_bytes``); ``probe_connections`` are kept for probes.
    While it serves, the interpreter's switch interval is ``switch_interval``
    (``sys.setswitchinterval``; ``None`` leaves it alone), restored afterwards.
    """

    __slots__ = ("_front", "_loop", "_socket", "_stopping", "_switch", "_thread", "service")

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
        max_bytes_in_flight: int = DEFAULT_MAX_BYTES_IN_FLIGHT,
        probe_connections: int = DEFAULT_PROBE_CONNECTIONS,
        switch_interval: float | None = DEFAULT_SWITCH_INTERVAL,
        kube_version: str | None = None,
        feature_gates: Mapping[str, bool] | str | None = None,
    ) -> None:
        if max_bytes_in_flight < max_body_bytes:
            raise ConfigError(f"must be at least max_body_bytes ({max_body_bytes})", field="max_bytes_in_flight",
                              value=max_bytes_in_flight)
        if switch_interval is not None and (isinstance(switch_interval, bool)
                                            or not isinstance(switch_interval, int | float) or switch_interval <= 0):
            raise ConfigError("must be a number of seconds above 0, or None", field="switch_interval",
                              value=switch_interval)
        if isinstance(probe_connections, bool) or not isinstance(probe_connections, int) or probe_connections < 0:
            raise ConfigError("must be a whole number, 0 or more", field="probe_connections", value=probe_connections)
        self.service = ExtenderService(config, cluster=cluster, profile=profile, scores=scores, binder=binder,
                                       registry=registry, limits=limits, kube_version=kube_version,
                                       feature_gates=feature_gates)
        self._front = FrontEnd(self.service, FrontLimits(max_body_bytes, request_timeout, max_connections,
                                                         probe_connections, max_bytes_in_flight))
        self._socket = socket.create_server((host, port), backlog=_BACKLOG)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._switch = switch_interval

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        """``http://host:port``: the ``urlPrefix`` to configure."""
        host = str(self._socket.getsockname()[0])
        return f"http://{host}:{self.port}"

    def start(self) -> ExtenderServer:
        """Serve on a daemon thread; returns itself once the server accepts connections."""
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="kschedlib-extender", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def serve_forever(self) -> None:
        """Serve on the calling thread until :meth:`stop` (from another thread) or KeyboardInterrupt."""
        self._run(None)

    def _run(self, ready: threading.Event | None) -> None:
        _SWITCH.enter(self._switch)
        try:
            asyncio.run(self._serve(ready))
        finally:
            _SWITCH.leave(self._switch)
            if ready is not None:
                ready.set()  # also when serving could not start

    async def _serve(self, ready: threading.Event | None) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._front.accept, sock=self._socket, limit=MAX_LINE,
                                            backlog=_BACKLOG)
        if ready is not None:
            ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            await self._front.close()
            await server.wait_closed()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended between the check and the call
                loop.call_soon_threadsafe(stopping.set)
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._socket.close()

    def __enter__(self) -> ExtenderServer:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
