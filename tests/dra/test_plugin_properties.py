"""Invariants of DynamicResources through the scheduler (Hypothesis, plain predicates for selectors).

* however pods with random claims arrive, no device ends up in two claims' allocations;
* Reserve then Unreserve leaves the devices in use exactly as they were.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.framework.cycle_state import CycleState
from kschedlib.model.convert import pod_from_dict
from kschedlib.plugins.dynamic_resources import DynamicResources
from tests.dra.test_plugin import DEVICE_CLASS, claim, gpus, node, plain_selectors, pod, scheduler

__all__ = ["plain_selectors"]  # the fixture, used by every test here


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=8), st.integers(1, 4))
@pytest.mark.usefixtures("plain_selectors")
def test_no_device_is_allocated_twice(counts: list[int], per_node: int) -> None:
    objects: list[dict[str, Any]] = [node("a"), node("b"), DEVICE_CLASS,
                                     gpus("a", *(f"g{i}" for i in range(per_node))),
                                     gpus("b", *(f"g{i}" for i in range(per_node)))]
    for index, count in enumerate(counts):
        objects += [claim(f"c{index}", count), pod(f"p{index}", f"c{index}")]
    sched = scheduler(*objects)
    results = sched.run_until_idle()
    claims = sched.devices.claims
    held = [d.device_id for c in claims.values() if c.allocation for d in c.allocation.devices]
    assert len(held) == len(set(held))
    placed = {r.pod.name for r in results if r.scheduled}
    assert sum(counts[int(name[1:])] for name in placed) == len(held)
    assert len(held) <= 2 * per_node


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.sets(st.integers(0, 3), max_size=3))
@pytest.mark.usefixtures("plain_selectors")
def test_unreserve_returns_every_device(count: int, used: set[int]) -> None:
    devices = [f"g{i}" for i in range(4)]
    taken: dict[str, Any] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "a", "device": f"g{i}"} for i in sorted(used)]}}}
    sched = scheduler(node("a"), gpus("a", *devices), DEVICE_CLASS, claim("held", status=taken), claim("c1", count))
    store = sched.devices
    before = store.allocated_state()
    plugin = DynamicResources(None, sched._engine.handles["default-scheduler"])
    target = pod_from_dict(pod("p", "c1"))
    state = CycleState()
    plugin.pre_filter(state, target)
    fits = plugin.filter(state, target, sched.snapshot().get("a")).is_success
    assert fits == (count <= 4 - len(used))
    if fits:
        assert plugin.reserve(state, target, "a").is_success
        assert len(store.allocated_state().devices) == len(used) + count
    plugin.unreserve(state, target, "a")
    assert store.allocated_state() == before
