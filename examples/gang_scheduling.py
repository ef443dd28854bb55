"""Gang scheduling with the in-tree Coscheduling plugin: a PodGroup's pods are bound all together, or not at all.

A *gang* is a set of pods that only make progress together (the workers of a
distributed training job).  Each pod names its :class:`~kschedlib.model.PodGroup`
with the label ``scheduling.x-k8s.io/pod-group``; the group says how many members
must be placed at once (``minMember``).  Coscheduling (from the scheduler-plugins
project, not in the default profile) keeps a gang's pods together in the queue,
holds the placed members in Permit until ``minMember`` are placed, and releases
everything a gang holds when it cannot complete.

Running this file schedules three gangs on a small cluster with a fake clock and
prints what happens; ``gang_scheduling.out`` holds its output.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

import attrs

from kschedlib import FakeClock, Scheduler, ScheduleResult
from kschedlib.model import POD_GROUP_LABEL, Container, Node, Pod, PodGroup, parse_quantity
from kschedlib.plugins.batch import batch_scheduling_config
from kschedlib.plugins.batch.coscheduling import pod_group_statuses

__all__ = ["drive", "gang", "main", "make_node", "new_scheduler"]


def new_scheduler(clock: FakeClock, *, wait_seconds: int = 10, backoff_seconds: int = 0,
                  listeners: Sequence[object] = ()) -> Scheduler:
    """A scheduler with Coscheduling (Permit waits ``wait_seconds``; a failed group backs off)."""
    config = batch_scheduling_config(capacity_scheduling=False, coscheduling_args={
        "permitWaitingTimeSeconds": wait_seconds, "podGroupBackoffSeconds": backoff_seconds})
    # Coscheduling follows scheduler-plugins v0.30.6, built against kube-scheduler 1.30.
    return Scheduler(config, clock=clock, listeners=listeners, kube_version="1.30")  # type: ignore[arg-type]


def make_node(name: str, cpu: str, labels: Mapping[str, str] | None = None) -> Node:
    amounts = {"cpu": parse_quantity(cpu), "memory": parse_quantity("16Gi"), "pods": parse_quantity("110")}
    return Node(name, labels=dict(labels or {}), allocatable=amounts, capacity=amounts)


def gang(name: str, size: int, cpu: str, *, min_member: int | None = None, created: float = 0.0,
         node_selector: Mapping[str, str] | None = None) -> tuple[PodGroup, list[Pod]]:
    """A PodGroup and its ``size`` worker pods of ``cpu`` each (``minMember`` defaults to ``size``)."""
    group = PodGroup(name, min_member=size if min_member is None else min_member, creation_timestamp=created)
    requests = {"cpu": parse_quantity(cpu)}
    pods = [Pod(f"{name}-{i}", labels={POD_GROUP_LABEL: name}, containers=(Container("worker", requests=requests),),
                node_selector=dict(node_selector) if node_selector is not None else None) for i in range(size)]
    return group, pods


def drive(scheduler: Scheduler, clock: FakeClock, *, until: float) -> list[ScheduleResult]:
    """Schedule until idle, then jump the clock to each wake-up (backoff, Permit timeout) up to ``until``."""
    results = scheduler.run_until_idle()
    while (wakeup := scheduler.next_wakeup()) is not None and wakeup <= until:
        clock.set(wakeup)
        results.extend(scheduler.tick())
        results.extend(scheduler.run_until_idle())
    return results


class _Narrator:
    """A listener printing each decision with the clock time."""

    def __init__(self, clock: FakeClock) -> None:
        self._clock = clock

    def _say(self, verb: str, text: str) -> None:
        print(f"  t={self._clock.now():5.1f}s  {verb:<8} {text}")

    def on_bound(self, result: ScheduleResult) -> None:
        self._say("bound", f"{result.pod.key} on {result.node_name}")

    def on_failed(self, result: ScheduleResult) -> None:
        self._say("failed", f"{result.pod.key}: {result.message or result.status.message()}")

    def on_waiting(self, result: ScheduleResult) -> None:
        self._say("waiting", f"{result.pod.key} on {result.node_name} (Permit)")

    def on_preempting(self, result: ScheduleResult) -> None:
        self._say("preempts", f"{result.pod.key} on {result.nominated_node_name}")


def _summary(scheduler: Scheduler, title: str) -> None:
    print(f"-- {title}")
    placed = [f"{key}@{node}" for key, node in sorted(scheduler.bound_pods().items())]
    print(f"   placed:  {', '.join(placed) or '-'}")
    print(f"   pending: {', '.join(sorted(scheduler.pending())) or '-'}")
    groups = pod_group_statuses(scheduler.scheduling_objects)
    print(f"   groups:  {', '.join(f'{g.name}={g.phase} ({g.running} running, {g.succeeded} done)' for g in groups)}")
    print(f"   cpu:     {', '.join(f'{i.name} {i.requested.milli_cpu}m' for i in scheduler.snapshot())}")


def _set_phase(scheduler: Scheduler, pods: Iterable[Pod], phase: str) -> None:
    """What the pods' kubelets report: ``Running`` once started, ``Succeeded`` once done (the PodGroup
    controller counts by it; a scheduler alone never runs a pod)."""
    for pod in pods:
        current = scheduler.pods().get(pod.key)
        if current is not None and current.node_name:
            scheduler.update_pod(attrs.evolve(current, phase=phase))


def _add(scheduler: Scheduler, group: PodGroup, pods: Iterable[Pod]) -> None:
    scheduler.add_objects([group])
    for pod in pods:
        scheduler.add_pod(pod)


def main() -> None:
    clock = FakeClock()
    scheduler = new_scheduler(clock, backoff_seconds=30, listeners=[_Narrator(clock)])
    scheduler.add_objects([make_node("n1", "4"), make_node("n2", "4")])

    print("== 1. two gangs of 3 x 2 CPU compete for 8 CPU; alpha's group is older, their pods arrive interleaved")
    (alpha, alpha_pods), (beta, beta_pods) = gang("alpha", 3, "2", created=1), gang("beta", 3, "2", created=2)
    scheduler.add_objects([alpha, beta])
    for pod in itertools.chain.from_iterable(zip(alpha_pods, beta_pods, strict=True)):
        scheduler.add_pod(pod)
    drive(scheduler, clock, until=30)
    _set_phase(scheduler, alpha_pods, "Running")
    _summary(scheduler, "alpha holds 6 CPU and runs; beta was released whole instead of half-binding")

    print("== 2. alpha finishes: its pods succeed and free their CPU; the 5-minute flush retries beta, which gets "
          "the room")
    clock.advance(300)
    _set_phase(scheduler, alpha_pods, "Succeeded")
    drive(scheduler, clock, until=clock.now() + 400)
    _set_phase(scheduler, beta_pods, "Running")
    _summary(scheduler, "alpha finished, beta placed and running")

    print("== 3. gamma (2 x 3 CPU, ssd only) fits the free CPU in total but not on the one ssd node")
    scheduler.add_objects([make_node("n3", "4", {"disk": "ssd"})])
    _add(scheduler, *gang("gamma", 2, "3", created=3, node_selector={"disk": "ssd"}))
    drive(scheduler, clock, until=clock.now() + 10)
    _summary(scheduler, "gamma gave n3 back at once and backs off")


if __name__ == "__main__":
    main()
