"""A connection reader under which a whole request must arrive within a timeout of its first byte.

A socket timeout bounds each ``recv`` only: a client sending a byte now and then
would keep a connection (and its thread) forever.  Here every wait is cut to
what is left of the request's deadline, so a request line, its headers and its
body together take at most ``timeout`` seconds; an idle keep-alive connection
waits at most ``timeout`` for the next request to begin.
"""

from __future__ import annotations

import socket
import time
from typing import Final, final

__all__ = ["RequestReader"]

_CHUNK: Final = 65536


@final
class RequestReader:
    """The ``rfile`` of a connection: ``readline`` and ``read`` as a buffered file, with one deadline per request."""

    __slots__ = ("_buffer", "_sock", "closed", "deadline", "expired", "timeout")

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        self._sock = sock
        self._buffer = bytearray()
        self.timeout = timeout
        self.deadline: float | None = None
        """When the current request must be complete; ``None`` until its first byte arrives."""
        self.expired = False
        """Whether the current request's deadline passed after some of it had arrived."""
        self.closed = False

    def begin(self) -> None:
        """Start a new request: its clock starts with its first byte (bytes already buffered count as one)."""
        self.deadline = time.monotonic() + self.timeout if self._buffer else None
        self.expired = False

    def _fill(self) -> bool:
        """Receive more bytes; ``False`` at end of stream; ``TimeoutError`` past the deadline."""
        if self.deadline is None:
            wait = self.timeout
        else:
            wait = self.deadline - time.monotonic()
            if wait <= 0:
                self.expired = True
                raise TimeoutError(f"request not received within {self.timeout:g} s")
        self._sock.settimeout(wait)
        try:
            chunk = self._sock.recv(_CHUNK)
        except TimeoutError:
            self.expired = self.deadline is not None
            raise
        if not chunk:
            return False
        if self.deadline is None:
            self.deadline = time.monotonic() + self.timeout
        self._buffer += chunk
        return True

    def _take(self, size: int) -> bytes:
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def readline(self, limit: int = -1) -> bytes:
        """One line with its ``\\n`` (at most ``limit`` bytes), or what is left at end of stream."""
        scanned = 0
        while True:
            end = self._buffer.find(b"\n", scanned)
            if end >= 0:
                size = end + 1
                break
            if 0 <= limit <= len(self._buffer):
                size = limit
                break
            scanned = len(self._buffer)
            if not self._fill():
                size = len(self._buffer)
                break
        return self._take(size if limit < 0 else min(size, limit))

    def read(self, size: int) -> bytes:
        """``size`` bytes, fewer only at end of stream."""
        while len(self._buffer) < size and self._fill():
            pass
        return self._take(size)

    def close(self) -> None:
        self.closed = True
