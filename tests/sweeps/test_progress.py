"""The progress helper: count, rate and ETA redrawn in place on a terminal, nothing elsewhere."""

from __future__ import annotations

import io

import pytest

from kschedlib.progress import Progress, format_duration, is_terminal


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Closed(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


def segments(stream: io.StringIO) -> list[str]:
    """What each redraw left visible (a wipe of spaces is not a line)."""
    return [part for part in stream.getvalue().split("\r") if part.strip()]


@pytest.mark.parametrize(("seconds", "text"), [(0, "0:00"), (7.4, "0:07"), (59.6, "1:00"), (723, "12:03"),
                                               (3723, "1:02:03"), (-3, "0:00")],
                         ids=["zero", "seconds", "rounds-up", "minutes", "hours", "negative"])
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_off_a_terminal_nothing_is_written() -> None:
    stream = io.StringIO()
    progress = Progress(10, stream=stream)
    progress.advance(5)
    progress.close("done")
    assert not progress.enabled
    assert stream.getvalue() == ""


def test_a_stream_that_cannot_tell_is_not_a_terminal() -> None:
    assert not is_terminal(Closed())
    assert not Progress(3, stream=Closed()).enabled


def test_rate_and_eta_on_a_terminal() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress(100, unit="scenarios", label="sweep", stream=stream, clock=clock)
    clock.now += 10
    progress.update(25)
    assert segments(stream) == ["sweep: 25/100 scenarios (25%), 2.5/s, ETA 0:30"]


def test_redraws_at_most_once_per_interval() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress(1000, stream=stream, clock=clock, interval=1.0)
    clock.now += 0.5
    progress.advance()
    clock.now += 0.5
    progress.advance()  # 0.5 s after the first draw: not yet
    clock.now += 0.5
    progress.advance()
    assert segments(stream) == ["1/1000 (0%), 2.0/s, ETA 8:20", "3/1000 (0%), 2.0/s, ETA 8:18"]


def test_unknown_total_shows_count_and_rate_only() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress(stream=stream, clock=clock)
    clock.now += 2
    progress.update(500)
    assert segments(stream) == ["500, 250/s"]


def test_past_the_total_no_eta_and_percent_stops_at_100() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress(4, unit="attempts", stream=stream, clock=clock)
    clock.now += 1
    progress.update(6)
    assert segments(stream) == ["6/4 attempts (100%), 6.0/s"]


def test_nothing_done_yet_shows_no_rate() -> None:
    progress = Progress(4, stream=Terminal(), clock=Clock())
    assert progress.line() == "0/4 (0%)"


def test_close_draws_the_summary_wipes_a_longer_line_and_ends_it() -> None:
    stream, clock = Terminal(), Clock()
    with Progress(10, label="sweep", stream=stream, clock=clock) as progress:
        clock.now += 1
        progress.update(5)
        progress.close("10 done")
        progress.update(7)  # after close: nothing more
    text = stream.getvalue()
    assert text.endswith("\r10 done\n")
    assert "\r" + " " * len("sweep: 5/10 (50%), 5.0/s, ETA 0:01") + "\r10 done" in text
    assert text.count("\n") == 1


def test_the_total_can_arrive_later() -> None:
    stream, clock = Terminal(), Clock()
    progress = Progress(stream=stream, clock=clock)
    clock.now += 1
    progress.update(1, total=2)
    assert progress.total == 2
    assert segments(stream) == ["1/2 (50%), 1.0/s, ETA 0:01"]
