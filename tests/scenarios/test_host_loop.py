"""The host loop of docs/how-to/long-running-host.md keeps moving on a FakeClock (never repeats a time)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import kschedlib
from kschedlib.framework import PermitPlugin, Wait
from tests.helpers import make_node, make_pod

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "long-running-host.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def documented_loop() -> dict[str, Any]:
    """The page's ``Journal`` and ``Host`` classes, run from the page itself."""
    namespace: dict[str, Any] = {}
    for code in _BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        if "class Journal" in code or "class Host" in code:
            exec(compile(code, str(PAGE), "exec"), namespace)
    assert {"Journal", "Host", "MAX_SLEEP"} <= namespace.keys()
    return namespace


def run_loop(host: Any, clock: kschedlib.FakeClock, until: float, turns: int) -> list[float]:
    """Turn the loop, sleeping as it says, until ``until``; the times of the turns (bounded)."""
    times = []
    for _ in range(turns):
        times.append(clock.now())
        sleep = host.run_once()
        if clock.now() >= until:
            return times
        clock.advance(sleep)
    pytest.fail(f"the loop did not reach t={until} in {turns} turns: stuck at {times[-5:]}")


def test_a_pod_too_big_is_retried_at_each_five_minute_flush(capsys: pytest.CaptureFixture[str]) -> None:
    loop = documented_loop()
    clock = kschedlib.FakeClock()
    journal = loop["Journal"](clock)
    scheduler = kschedlib.Scheduler(clock=clock, listeners=[journal])
    host = loop["Host"](scheduler, journal)
    host.submit(lambda s: s.add_node(make_node("n1")))
    host.submit(lambda s: s.add_pod(make_pod("big", requests={"cpu": "8"})))

    times = run_loop(host, clock, until=1000.0, turns=200)

    failures = [float(t) for t in re.findall(r"\[t=\s*([\d.]+)\] failed", capsys.readouterr().out)]
    assert failures == [0.0, 300.0, 600.0, 900.0]
    assert times == sorted(times)
    assert len(times) == len(set(times))  # never a turn at the same time twice
    assert scheduler.pending()["default/big"][0] == "unschedulable"
    assert scheduler.pending()["default/big"][1].attempts == 4


def test_the_loop_stops_asking_to_wake_when_failures_are_not_retried() -> None:
    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(clock=clock, retry_unschedulable=False)
    scheduler.add_node(make_node("n1"))
    scheduler.add_pod(make_pod("big", requests={"cpu": "8"}))
    assert len(scheduler.run_until_idle()) == 1
    assert scheduler.next_wakeup() is None  # the flush never moves it: nothing is due


def test_next_wakeup_is_now_while_pods_are_ready() -> None:
    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(clock=clock)
    scheduler.add_node(make_node("n1"))
    clock.advance(7)
    scheduler.add_pod(make_pod("a"))
    assert scheduler.next_wakeup() == 7.0
    scheduler.run_until_idle()
    assert scheduler.next_wakeup() is None


class _Hold(PermitPlugin):
    name = "Hold"

    def permit(self, state: Any, pod: Any, node_name: str) -> Wait:
        return Wait(10.0)


@pytest.mark.parametrize("point", ["backoff", "permit"])
def test_a_tick_at_exactly_next_wakeup_makes_progress(point: str) -> None:
    clock = kschedlib.FakeClock()
    registry = kschedlib.in_tree_registry()
    registry.register("Hold", lambda args, handle: _Hold())
    config = {"profiles": [{"plugins": {"permit": {"enabled": [{"name": "Hold"}]}}}]} if point == "permit" else None
    scheduler = kschedlib.Scheduler(config, clock=clock, registry=registry)
    if point == "backoff":
        scheduler.add_pod(make_pod("a"))  # no node: an error, retried after a 1 s backoff
    else:
        scheduler.add_node(make_node("n1"))
        scheduler.add_pod(make_pod("a"))
    first = scheduler.run_until_idle()
    assert len(first) == 1
    wakeup = scheduler.next_wakeup()
    assert wakeup == (1.0 if point == "backoff" else 10.0)
    clock.set(wakeup)
    done = scheduler.tick()
    if point == "backoff":
        assert scheduler.pending()["default/a"][0] == "active"
    else:
        assert [r.pod.key for r in done] == ["default/a"]
        assert "rejected due to timeout after waiting 10s at plugin Hold" in (done[0].message or "")
    assert scheduler.next_wakeup() != wakeup or scheduler.pending()["default/a"][0] == "active"
