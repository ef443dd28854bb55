"""Snapshots that read the cache's live node list decide exactly as snapshots holding a copy."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

import kschedlib
from kschedlib._internal.cache import Cache
from kschedlib.framework import Snapshot
from kschedlib.model import Affinity, LabelSelector, Namespace, PodAffinity, PodAffinityTerm
from tests.helpers import make_node, make_pod


def _decisions() -> list[tuple[str, str | None]]:
    sched = kschedlib.Scheduler(seed=5)
    for i in range(24):
        sched.add_node(make_node(f"n{i}", labels={"zone": f"z{i % 3}"},
                                 allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}))
    near = Affinity(pod_affinity=PodAffinity(preferred=()))
    for i in range(200):
        affinity = None
        if i % 5 == 0:  # some pods read every node's pods through InterPodAffinity
            term = PodAffinityTerm(topology_key="zone", label_selector=LabelSelector(match_labels={"app": "a"}))
            affinity = Affinity(pod_affinity=PodAffinity(required=(term,)))
        sched.add_pod(make_pod(f"p{i}", labels={"app": "a"}, affinity=affinity if affinity else near,
                               requests={"cpu": f"{100 + 37 * (i % 7)}m", "memory": "64Mi"}))
    return [(r.pod.key, r.node_name) for r in sched.run_until_idle()]


def test_decisions_equal_those_with_a_copied_node_list(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = _decisions()
    taken = Cache.snapshot

    def copied(self: Cache, namespaces: Mapping[str, Namespace] | None = None) -> Snapshot:
        snapshot = taken(self, namespaces)
        snapshot._freeze()  # the plain path: every snapshot holds its own tuple from the start
        return snapshot

    monkeypatch.setattr(Cache, "snapshot", copied)
    assert _decisions() == shared
    assert sum(node is not None for _, node in shared) == 200


def test_a_public_snapshot_never_reads_the_live_list() -> None:
    """Regression: ``Scheduler.snapshot()`` handed out a snapshot over the cache's live list, which
    internal loops on another thread (the extender's workers filter against a stored base snapshot)
    read while a binding on a request thread made the cache write that list."""
    scheduler = kschedlib.Scheduler()
    scheduler.add_node(make_node("a"))
    held = scheduler.snapshot()
    seen = held._nodes  # what a PreFilter loop over the held snapshot iterates
    before = seen[0]
    scheduler.add_pod(make_pod("p", node_name="a"))
    scheduler.snapshot()  # the cache writes node a's new NodeInfo into its list
    assert seen[0] is before
    assert held.find("a") is before
