"""Progress of long runs: a one-line count, rate and ETA on a terminal's stderr, nothing otherwise.

A run piped to a file or a CI log stays silent (its stderr is not a terminal), so progress never
mixes with output a program reads.  The stream and the clock are parameters, so tests drive it
with a fake terminal and a fake clock.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO, final

__all__ = ["Progress", "format_duration", "is_terminal"]


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an open terminal (a closed or odd stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def format_duration(seconds: float) -> str:
    """``0:07``, ``12:03``, ``1:02:03``: how ETAs read on a terminal."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@final
class Progress:
    """Counts done out of ``total`` (None: unknown) and shows ``done/total unit (p%), rate/s, ETA m:ss``.

    ``update(done)`` sets the count, ``advance()`` adds to it; lines are redrawn in place (``\\r``) at
    most every ``interval`` seconds of ``clock``; ``close(summary)`` draws the last line and ends it
    with a newline.  On a stream that is not a terminal every call is a no-op.  A count that passes
    ``total`` (a simulation's retries) shows no ETA.
    """

    __slots__ = ("_interval", "_last_draw", "_started", "_stream", "_width", "clock", "done", "enabled", "label",
                 "total", "unit")

    def __init__(self, total: int | None = None, *, unit: str = "", label: str = "", stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, interval: float = 0.2) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self.enabled = is_terminal(self._stream)
        self.clock = clock
        self.total = total
        self.unit = unit
        self.label = label
        self.done = 0
        self._started = clock()
        self._last_draw: float | None = None
        self._interval = interval
        self._width = 0

    def line(self) -> str:
        """The current progress line (without ``\\r``)."""
        unit = f" {self.unit}" if self.unit else ""
        count = f"{self.done}/{self.total}{unit}" if self.total is not None else f"{self.done}{unit}"
        parts = [f"{self.label}: {count}" if self.label else count]
        if self.total:
            parts[0] += f" ({100 * min(self.done, self.total) // self.total}%)"
        elapsed = self.clock() - self._started
        if elapsed > 0 and self.done > 0:
            rate = self.done / elapsed
            parts.append(f"{rate:.1f}/s" if rate < 100 else f"{rate:.0f}/s")
            if self.total is not None and self.done < self.total:
                parts.append(f"ETA {format_duration((self.total - self.done) / rate)}")
        return ", ".join(parts)

    def update(self, done: int, total: int | None = None) -> None:
        """Set the count (and the total, when it became known or changed); redraw if due."""
        self.done = done
        if total is not None:
            self.total = total
        if not self.enabled:
            return
        now = self.clock()
        if self._last_draw is None or now - self._last_draw >= self._interval:
            self._last_draw = now
            self._draw(self.line())

    def advance(self, count: int = 1) -> None:
        """Add ``count`` to the count; redraw if due."""
        self.update(self.done + count)

    def close(self, summary: str | None = None) -> None:
        """Draw ``summary`` (default: the current line) and end the line; nothing off a terminal."""
        if not self.enabled:
            return
        self._draw(summary if summary is not None else self.line())
        self._stream.write("\n")
        self._stream.flush()
        self.enabled = False  # closed: later calls draw nothing

    def _draw(self, text: str) -> None:
        wipe = f"\r{' ' * self._width}" if len(text) < self._width else ""  # what a longer line left
        self._width = len(text)
        self._stream.write(f"{wipe}\r{text}")
        self._stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
