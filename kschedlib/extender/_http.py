"""The served extender's HTTP/1.1 front end: one asyncio loop does every byte of I/O, threads do only the work.

A thread per connection lets a flood of big requests crowd the interpreter: every connection's thread
parsing headers and copying its body competes for the one interpreter lock with the few computing,
and a liveness probe waits its turn behind all of them.  Here one event loop accepts connections,
reads request lines, headers and bodies, answers ``GET /healthz`` itself and writes every reply;
a POST's body goes to a thread of a pool only to be handed to :meth:`ExtenderService.handle_bytes`,
which decodes it once a worker is free.  So at most ``workers`` threads compute, a probe needs a few
turns of the loop, and memory is bounded: bodies read and not yet answered fit in
``max_bytes_in_flight`` (a body waits for room, within the work timeout, before it is read), and at
most ``workers`` of them are decoded at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.extender.service import ExtenderService, json_bytes

__all__ = ["MAX_LINE", "FrontEnd", "FrontLimits"]

MAX_LINE: Final = 65536
"""Longest request line or header line (as Python's ``http.server``): longer is a 414 or 431."""
_MAX_HEADERS: Final = 100
_SERVER: Final = "kschedlib-extender"
_JSON: Final = "application/json"
_UNSUPPORTED_BODY_METHODS: Final = frozenset({"PUT", "DELETE", "PATCH"})


@final
@attrs.frozen(slots=True, repr=False)
class FrontLimits(FieldsRepr):
    """What the front end allows a connection (see :class:`~kschedlib.extender.ExtenderServer`)."""

    max_body_bytes: int
    request_timeout: float
    max_connections: int
    probe_connections: int
    max_bytes_in_flight: int


@final
class _Reply(Exception):
    """Answer ``status`` with ``{"error": message}`` (closing the connection when ``close``)."""

    def __init__(self, status: int, message: str, *, close: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close


@final
class _Connection:
    """One client connection: its slot, and since when it waits for its client's bytes (evictable then)."""

    __slots__ = ("released", "spare", "waiting_since", "writer")

    def __init__(self, writer: asyncio.StreamWriter, spare: bool) -> None:
        self.writer = writer
        self.spare = spare
        self.waiting_since: float | None = None
        self.released = False


@final
@attrs.define(slots=True, repr=False)
class _Head(FieldsRepr):
    method: str
    path: str
    keep_alive: bool
    headers: dict[str, str]
    expect_continue: bool = False


@final
class _Budget:
    """Bytes of request bodies read and not yet answered (the loop's own: no lock)."""

    __slots__ = ("_changed", "free")

    def __init__(self, limit: int) -> None:
        self.free = limit
        self._changed = asyncio.Condition()  # bound to the loop that first waits on it

    async def take(self, size: int, timeout: float) -> bool:
        """Take ``size`` bytes, waiting at most ``timeout`` seconds for room; whether they were taken."""
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(lambda: self.free >= size), timeout)
            except TimeoutError:
                return False
            self.free -= size
            return True

    async def give(self, size: int) -> None:
        async with self._changed:
            self.free += size
            self._changed.notify_all()


@final
class FrontEnd:
    """Serves ``service`` on connections handed to :meth:`accept` (an ``asyncio.start_server`` callback)."""

    def __init__(self, service: ExtenderService, limits: FrontLimits) -> None:
        self.service = service
        self.limits = limits
        self._connections: set[_Connection] = set()
        self._regular = 0
        self._spare = 0
        self._budget = _Budget(limits.max_bytes_in_flight)
        self._executor = ThreadPoolExecutor(max_workers=limits.max_connections,
                                            thread_name_prefix="kschedlib-extender-request")

    # -- connections -------------------------------------------------------------------------------

    async def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection until it closes; a full server refuses it with a 503."""
        connection = self._admit(writer)
        if connection is None:
            await self._refuse(writer)
            return
        try:
            while await self._serve_one(connection, reader):
                pass
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass  # the client went away or stalled: nothing to answer
        except asyncio.CancelledError:
            pass  # the server stops: the connection simply ends (its task is the outermost)
        finally:
            self._release(connection)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _admit(self, writer: asyncio.StreamWriter) -> _Connection | None:
        """A slot: a regular one, made free if need be by closing the regular connection that has waited
        longest for its client's bytes (a slow or idle client); else a spare one (probes only), made free
        likewise; ``None`` when every connection is busy."""
        if self._regular < self.limits.max_connections or self._evict_slowest(spare=False):
            self._regular += 1
            connection = _Connection(writer, spare=False)
        elif self.limits.probe_connections and (
                self._spare < self.limits.probe_connections or self._evict_slowest(spare=True)):
            self._spare += 1
            connection = _Connection(writer, spare=True)
        else:
            return None
        self._connections.add(connection)
        return connection

    def _release(self, connection: _Connection) -> None:
        if connection.released:
            return
        connection.released = True
        self._connections.discard(connection)
        if connection.spare:
            self._spare -= 1
        else:
            self._regular -= 1

    def _evict_slowest(self, *, spare: bool) -> bool:
        waiting = [c for c in self._connections if c.waiting_since is not None and c.spare is spare]
        if not waiting:
            return False
        slowest = min(waiting, key=lambda c: c.waiting_since or 0.0)
        self._release(slowest)
        slowest.writer.transport.abort()
        return True

    async def _refuse(self, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            writer.write(_response(503, json_bytes({"error": "too many connections"}), close=True))
            await asyncio.wait_for(writer.drain(), self.limits.request_timeout)
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()

    async def close(self) -> None:
        """Drop every connection and stop the work threads (a computation under way ends on its own)."""
        for connection in list(self._connections):
            self._release(connection)
            connection.writer.transport.abort()
        self._executor.shutdown(wait=False, cancel_futures=True)

    # -- one request -------------------------------------------------------------------------------

    async def _serve_one(self, connection: _Connection, reader: asyncio.StreamReader) -> bool:
        """Read and answer one request; whether the connection stays open for another."""
        loop = asyncio.get_running_loop()
        timeout = self.limits.request_timeout
        connection.waiting_since = loop.time()
        try:
            first = await asyncio.wait_for(reader.read(1), timeout)  # an idle connection waits this long
        except TimeoutError:
            return False
        if not first:
            return False
        deadline = loop.time() + timeout
        try:
            try:
                head = await _read_head(reader, first, deadline, loop.time)
            except TimeoutError:
                raise _Reply(408, f"request not received within {timeout:g} s") from None
            if head is None:
                return False
            keep = await self._dispatch(connection, reader, head)
        except _Reply as reply:
            connection.waiting_since = None
            await self._write(connection, reply.status, json_bytes({"error": reply.message}), close=reply.close)
            return not reply.close and not connection.spare
        return keep and not connection.spare

    async def _dispatch(self, connection: _Connection, reader: asyncio.StreamReader, head: _Head) -> bool:
        connection.waiting_since = None
        if head.method == "GET":
            if head.path.rstrip("/").rsplit("/", 1)[-1] == "healthz":
                body = json_bytes({"status": "ok", "verbs": list(self.service.verbs)})
                return await self._write(connection, 200, body, close=not head.keep_alive)
            raise _Reply(405, "use POST <urlPrefix>/<verb>", close=not head.keep_alive)
        if connection.spare:
            raise _Reply(503, "too many connections")
        if head.method in _UNSUPPORTED_BODY_METHODS:
            raise _Reply(405, "use POST <urlPrefix>/<verb>")
        if head.method != "POST":
            raise _Reply(405, f"unsupported method {head.method!r}")
        return await self._post(connection, reader, head)

    async def _post(self, connection: _Connection, reader: asyncio.StreamReader, head: _Head) -> bool:
        length = self._length(head)
        budget = self._budget
        work_timeout = self.service.limits.work_timeout
        if not await budget.take(length, work_timeout):
            raise _Reply(503, f"too many request bytes in flight: no room for {length} more within "
                              f"{work_timeout:g} s")
        loop = asyncio.get_running_loop()
        timeout = self.limits.request_timeout
        try:
            if head.expect_continue:
                connection.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            connection.waiting_since = loop.time()
            try:  # the wait for room was the server's doing: the body gets a full timeout from now
                body = await asyncio.wait_for(reader.readexactly(length), timeout)
            except TimeoutError:
                raise _Reply(408, f"request body not received within {timeout:g} s") from None
            except asyncio.IncompleteReadError as short:
                raise _Reply(400, f"request body truncated: {len(short.partial)} of {length} bytes") from None
            connection.waiting_since = None
            verb = head.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            call = functools.partial(self.service.handle_bytes, verb, body, received=time.monotonic())
            del body
            status, reply = await loop.run_in_executor(self._executor, call)
        finally:
            await budget.give(length)
        return await self._write(connection, status, reply, close=not head.keep_alive)

    def _length(self, head: _Head) -> int:
        if head.headers.get("transfer-encoding", "").lower() == "chunked":
            raise _Reply(411, "send the body with a Content-Length")
        text = head.headers.get("content-length")
        if text is None:
            raise _Reply(411, "a Content-Length header is required")
        if not text.strip().isdigit() or not text.strip().isascii():
            raise _Reply(400, f"bad Content-Length {text!r}")
        length = int(text)
        if length > self.limits.max_body_bytes:
            raise _Reply(413, f"request body of {length} bytes is over the limit of {self.limits.max_body_bytes}")
        return length

    async def _write(self, connection: _Connection, status: int, body: bytes, *, close: bool) -> bool:
        """Send a reply within the request timeout; whether the connection may serve another request."""
        close = close or connection.spare
        writer = connection.writer
        try:
            writer.write(_response(status, body, close=close))
            await asyncio.wait_for(writer.drain(), self.limits.request_timeout)
        except (OSError, TimeoutError):
            writer.transport.abort()
            return False
        return not close


def _response(status: int, body: bytes, *, close: bool) -> bytes:
    phrase = HTTPStatus(status).phrase
    head = (f"HTTP/1.1 {status} {phrase}\r\nServer: {_SERVER}\r\nDate: {email.utils.formatdate(usegmt=True)}\r\n"
            f"Content-Type: {_JSON}\r\nContent-Length: {len(body)}\r\n")
    if close:
        head += "Connection: close\r\n"
    return head.encode("latin-1") + b"\r\n" + body


async def _read_head(reader: asyncio.StreamReader, first: bytes, deadline: float,
                     now: Callable[[], float]) -> _Head | None:
    """The request line and headers (``first`` is the line's first byte), by ``deadline``; ``None`` for a
    blank line.  Malformed ones raise :class:`_Reply` with ``http.server``'s status and wording."""
    line = first if first == b"\n" else first + await _line(reader, deadline, now, 414, "Request-URI Too Long")
    words = line.decode("iso-8859-1").rstrip("\r\n").split()
    if not words:
        return None
    keep_alive = False
    if len(words) >= 3:
        version = words[-1]
        numbers = version.removeprefix("HTTP/").split(".") if version.startswith("HTTP/") else []
        if len(numbers) != 2 or not all(n.isdigit() and n.isascii() and len(n) <= 10 for n in numbers):
            raise _Reply(400, f"Bad request version ({version!r})")
        major, minor = (int(n) for n in numbers)
        if (major, minor) >= (2, 0):
            raise _Reply(505, f"Invalid HTTP version ({version})")
        keep_alive = (major, minor) >= (1, 1)
    if not 2 <= len(words) <= 3:
        raise _Reply(400, f"Bad request syntax ({' '.join(words)!r})")
    method, path = words[0], words[1]
    if len(words) == 2 and method != "GET":
        raise _Reply(400, f"Bad HTTP/0.9 request type ({method!r})")
    headers: dict[str, str] = {}
    for count in range(_MAX_HEADERS + 1):
        raw = await _line(reader, deadline, now, 431, "Line too long")
        if raw in (b"\r\n", b"\n", b""):
            break
        if count == _MAX_HEADERS:
            raise _Reply(431, "Too many headers")
        name, colon, value = raw.decode("iso-8859-1").partition(":")
        if colon:
            headers.setdefault(name.strip().lower(), value.strip())
    connection = headers.get("connection", "").lower()
    if connection == "close":
        keep_alive = False
    elif connection == "keep-alive" and len(words) == 3:
        keep_alive = True
    expect = headers.get("expect", "").lower() == "100-continue" and len(words) == 3 and words[2] >= "HTTP/1.1"
    return _Head(method, path, keep_alive and len(words) == 3, headers, expect)


async def _line(reader: asyncio.StreamReader, deadline: float, now: Callable[[], float], status: int,
                too_long: str) -> bytes:
    """One line with its ``\\n`` by ``deadline``; ``status`` with ``too_long`` past :data:`MAX_LINE`."""
    try:
        return await asyncio.wait_for(reader.readuntil(b"\n"), max(0.0, deadline - now()))
    except asyncio.LimitOverrunError:
        raise _Reply(status, too_long) from None
    except asyncio.IncompleteReadError as short:
        return short.partial
