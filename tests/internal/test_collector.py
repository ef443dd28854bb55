"""The scheduling loop raises the young generation's threshold only while it runs, and decides the same."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

import kschedlib
from kschedlib._internal import collector
from kschedlib._internal.collector import YOUNG_THRESHOLD, fewer_collections
from tests.helpers import make_node, make_pod


@pytest.fixture(autouse=True)
def _restore_gc() -> Iterator[None]:
    before, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*before)
    if enabled:
        gc.enable()


def test_raised_inside_restored_after() -> None:
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        with fewer_collections():  # nested: left alone, and not restored by the inner block
            assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_after_an_exception() -> None:
    gc.set_threshold(500, 7, 9)
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (500, 7, 9)


@pytest.mark.parametrize("setting", [(YOUNG_THRESHOLD * 2, 10, 10), (0, 10, 10)])
def test_larger_or_zero_threshold_left_alone(setting: tuple[int, int, int]) -> None:
    gc.set_threshold(*setting)
    with fewer_collections():
        assert gc.get_threshold() == setting
    assert gc.get_threshold() == setting


def test_disabled_collector_left_alone() -> None:
    gc.set_threshold(700, 10, 10)
    gc.disable()
    with fewer_collections():
        assert gc.get_threshold() == (700, 10, 10)
    assert not gc.isenabled()


def test_a_change_made_inside_is_kept() -> None:
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        gc.set_threshold(1234, 5, 5)
    assert gc.get_threshold() == (1234, 5, 5)


def _decisions() -> list[tuple[str, str | None]]:
    sched = kschedlib.Scheduler(seed=3)
    for i in range(30):
        sched.add_node(make_node(f"n{i}", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}))
    for i in range(300):
        sched.add_pod(make_pod(f"p{i}", requests={"cpu": f"{100 + 37 * (i % 7)}m", "memory": "64Mi"}))
    assert gc.get_threshold()[0] != YOUNG_THRESHOLD
    return [(r.pod.key, r.node_name) for r in sched.run_until_idle()]


def test_decisions_do_not_depend_on_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    gc.set_threshold(700, 10, 10)
    raised = _decisions()
    assert gc.get_threshold() == (700, 10, 10)
    monkeypatch.setattr(collector, "YOUNG_THRESHOLD", 1)  # plain path: the threshold is already larger
    plain = _decisions()
    assert raised == plain
    assert sum(node is not None for _, node in raised) == 300
