"""A host that does not evict preemption victims: what becomes of the preemptor (v1.33+ asynchronous preemption)."""

from __future__ import annotations

import kschedlib
from kschedlib import FakeClock, Scheduler


def _cluster() -> kschedlib.Cluster:
    return kschedlib.load_cluster([
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"allocatable": {"cpu": "2", "memory": "2Gi", "pods": "10"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "low", "namespace": "default"},
         "spec": {"nodeName": "n1", "priority": 0,
                  "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "high", "namespace": "default"},
         "spec": {"priority": 100,
                  "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}},
    ])


def _run_without_evicting(gates: dict[str, bool] | None) -> tuple[Scheduler, int]:
    """Schedule, ignore the victims, and follow next_wakeup() for 20 minutes; return the attempts made."""
    clock = FakeClock()
    sched = Scheduler(clock=clock, kube_version="1.36", feature_gates=gates)
    sched.add_objects(_cluster())
    results = sched.run_until_idle()
    assert [r.victims for r in results] == [("default/low",)]
    for _ in range(50):
        wakeup = sched.next_wakeup()
        if wakeup is None or wakeup > 1200:
            break
        clock.set(wakeup)
        results += sched.tick()
        results += sched.run_until_idle()
    return sched, len(results)


def test_the_preemptor_waits_gated_until_its_victims_are_removed() -> None:
    sched, attempts = _run_without_evicting(None)
    queue, info = sched.pending()["default/high"]
    assert (queue, attempts) == ("gated", 1)
    assert info.pod.nominated_node_name == "n1"
    assert sched.remove_pod("default/low")
    assert [(r.pod.key, r.node_name) for r in sched.run_until_idle()] == [("default/high", "n1")]


def test_without_asynchronous_preemption_the_preemptor_is_retried_at_each_flush() -> None:
    sched, attempts = _run_without_evicting({"SchedulerAsyncPreemption": False})
    assert sched.pending()["default/high"][0] == "unschedulable"
    assert attempts >= 4  # t=0, then the 5-minute flushes at 300, 600, 900, 1200
