"""A GPU batch cluster: 200 nodes of 8 GPUs, two teams with elastic quotas, jobs of 1-16 workers.

Coscheduling places each job (a PodGroup) all at once or not at all; CapacityScheduling
keeps each team within its ElasticQuota ``max`` and lets a team under its ``min``
reclaim GPUs the other team borrowed, evicting whole jobs only.  Jobs arrive in
random order (seeded); high-priority jobs preempt.  The run prints the figures an
operator checks: jobs placed, partial gangs (must be 0), quota overruns (must be 0),
evictions, attempts per pod; ``gpu_batch.out`` holds its output (wall time aside).
``--queueing-hints`` turns kube 1.30's ``SchedulerQueueingHints`` gate on: a rejected pod then
waits for an event its rejecting plugins' hint functions say may help.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter

from kschedlib import FakeClock, Scheduler
from kschedlib.model import POD_GROUP_LABEL, Container, ElasticQuota, Node, Pod, PodGroup, parse_quantity
from kschedlib.plugins.batch import batch_scheduling_config

GPU = "nvidia.com/gpu"
TEAMS = {"team-a": (640, 1200), "team-b": (960, 1200)}  # GPUs: min, max (the cluster has 1,600)


def node(index: int) -> Node:
    amounts = {"cpu": parse_quantity("64"), "memory": parse_quantity("512Gi"), "pods": parse_quantity("110"),
               GPU: parse_quantity("8")}
    return Node(f"gpu-{index:03d}", allocatable=amounts, capacity=amounts)


def quota(team: str) -> ElasticQuota:
    low, high = TEAMS[team]

    def amounts(gpus: int) -> dict[str, object]:
        return {"cpu": parse_quantity(str(gpus * 8)), "memory": parse_quantity(f"{gpus * 64}Gi"),
                GPU: parse_quantity(str(gpus))}
    return ElasticQuota("gpus", team, min=amounts(low), max=amounts(high))  # type: ignore[arg-type]


def jobs(rng: random.Random, count: int) -> list[tuple[PodGroup, list[Pod]]]:
    out = []
    for index in range(count):
        team = rng.choice(list(TEAMS))
        workers = rng.choice([1, 2, 4, 8, 16])
        gpus = rng.choice([1, 2, 4, 8])
        priority = 1000 if rng.random() < 0.15 else 0
        name = f"job-{index:03d}"
        requests = {"cpu": parse_quantity(str(gpus * 4)), "memory": parse_quantity(f"{gpus * 32}Gi"),
                    GPU: parse_quantity(str(gpus))}
        pods = [Pod(f"{name}-{i}", team, labels={POD_GROUP_LABEL: name}, priority=priority,
                    containers=(Container("worker", requests=requests),)) for i in range(workers)]
        out.append((PodGroup(name, team, min_member=workers, creation_timestamp=float(index)), pods))
    return out


def main(argv: list[str]) -> None:
    rng = random.Random(7)
    clock = FakeClock()
    gates = {"SchedulerQueueingHints": True} if "--queueing-hints" in argv else None
    sched = Scheduler(batch_scheduling_config(coscheduling_args={"permitWaitingTimeSeconds": 30,
                                                                 "podGroupBackoffSeconds": 10}), clock=clock,
                      kube_version="1.30", feature_gates=gates)  # scheduler-plugins v0.30.6 runs kube 1.30
    sched.add_objects([node(i) for i in range(200)])
    sched.add_objects([quota(team) for team in TEAMS])
    workload = jobs(rng, 260)
    for group, pods in workload:
        sched.add_objects([group])
        for pod in pods:
            sched.add_pod(pod)
    started = time.perf_counter()
    evicted: set[str] = set()
    attempts: Counter[str] = Counter()
    partial_seen = overrun_seen = 0
    groups = {group.key: group for group, _ in workload}
    while clock.now() < 900:
        result = sched.schedule_one()
        results = [result] if result is not None else []
        results += sched.tick()
        for r in results:
            attempts[r.pod.key] += 1
            for victim in r.victims:
                evicted.add(victim)
                sched.remove_pod(victim)
        partial_seen += partial_gangs(sched, groups)
        overrun_seen += quota_overruns(sched)
        if result is None:
            wakeup = sched.next_wakeup()
            if wakeup is None:
                break
            clock.set(wakeup)
    seconds = time.perf_counter() - started
    bound = set(sched.bound_pods()) - set(sched.waiting_pods())
    placed = sum(1 for _, pods in workload if all(p.key in bound for p in pods))
    pods_total = sum(len(pods) for _, pods in workload)
    print(f"nodes: 200 x 8 GPUs; jobs: {len(workload)} ({pods_total} pods)")
    print(f"jobs placed: {placed}")
    print(f"partial gangs seen: {partial_seen}")
    print(f"quota overruns seen: {overrun_seen}")
    print(f"evictions: {len(evicted)} pods")
    print(f"attempts per pod: {sum(attempts.values()) / pods_total:.2f}")
    for team in TEAMS:
        used = sum(int(p.containers[0].requests[GPU].amount) for _, pods in workload for p in pods
                   if p.namespace == team and p.key in bound)
        print(f"{team}: {used} GPUs in use (min {TEAMS[team][0]}, max {TEAMS[team][1]})")
    print(f"wall time: {seconds:.1f} s", file=sys.stderr)


def partial_gangs(sched: Scheduler, groups: dict[str, PodGroup]) -> int:
    """Groups with some but fewer than minMember pods bound (pods waiting in Permit are not bound)."""
    bound: Counter[str] = Counter()
    waiting = set(sched.waiting_pods())
    for key in sched.bound_pods():
        if key not in waiting:
            pod = sched.get_pod(key)
            assert pod is not None
            bound[f"{pod.namespace}/{pod.labels.get(POD_GROUP_LABEL, '')}"] += 1
    return sum(1 for name, count in bound.items() if name in groups and count < groups[name].min_member)


def quota_overruns(sched: Scheduler) -> int:
    """Teams using more GPUs than their quota's max."""
    used: Counter[str] = Counter()
    for key in sched.bound_pods():
        pod = sched.get_pod(key)
        assert pod is not None
        used[pod.namespace] += int(pod.containers[0].requests[GPU].amount)
    return sum(1 for team, amount in used.items() if team in TEAMS and amount > TEAMS[team][1])


if __name__ == "__main__":
    main(sys.argv[1:])
