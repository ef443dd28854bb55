"""The served extender's worker pool and node cache, directly: bounded, and never leaking a slot."""

from __future__ import annotations

import pytest

from kschedlib.extender._state import NodeCache, Worker, Workers
from kschedlib.extender.limits import Deadline
from kschedlib.framework.node_info import NodeInfo
from kschedlib.scheduler import Scheduler
from tests.extender.support import nodes


def _worker() -> Worker:
    return Worker(Scheduler(seed=0))


def test_a_worker_that_fails_to_build_gives_its_slot_back() -> None:
    attempts: list[int] = []

    def build() -> Worker:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("plugin constructor failed")
        return _worker()

    pool = Workers(build, size=1, max_seen=10)
    with pytest.raises(RuntimeError, match="plugin constructor failed"):
        pool.acquire(Deadline(1.0))
    worker = pool.acquire(Deadline(1.0))
    assert worker is not None
    assert pool.acquire(Deadline(0.05)) is None  # the one slot is taken: no wait past the deadline
    pool.release(worker)
    assert pool.acquire(Deadline(1.0)) is worker


def test_a_worker_that_saw_too_many_nodes_is_retired() -> None:
    pool = Workers(_worker, size=1, max_seen=10)
    worker = pool.acquire(Deadline(1.0))
    assert worker is not None
    worker.seen = 11
    pool.release(worker)
    again = pool.acquire(Deadline(1.0))
    assert again is not None
    assert again is not worker
    assert again.seen == 0


def test_the_node_cache_keeps_the_most_recently_used_and_checks_the_object() -> None:
    cache = NodeCache(2)
    infos = [NodeInfo.of(node) for node in nodes(3)]
    for info in infos:
        cache.put(info.name, {"name": info.name}, info)
    assert len(cache) == 2
    assert cache.get("n-0", {"name": "n-0"}) is None
    assert cache.get("n-1", {"name": "n-1"}) is infos[1]
    assert cache.get("n-1", {"name": "changed"}) is None
    assert cache.find("n-2") is infos[2].node
    assert cache.find("n-0") is None
