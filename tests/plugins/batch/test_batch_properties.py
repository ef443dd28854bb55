"""Invariants of batch scheduling (Coscheduling + CapacityScheduling), under Hypothesis.

* no gang is ever partially bound: after every cycle (and the allowances it made) a PodGroup has 0 or
  at least minMember pods bound;
* no namespace ever uses more than its ElasticQuota's max;
* when a group is rejected, every resource its members held is returned (nodes and quotas).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Scheduler, ScheduleResult
from kschedlib.model import POD_GROUP_LABEL, ElasticQuota, Pod, PodGroup, Resources, parse_quantity, pod_requests
from kschedlib.plugins.batch import batch_scheduling_config
from kschedlib.plugins.batch._elastic_quota import quota_infos
from tests.helpers import make_node, make_pod

GPU = "nvidia.com/gpu"
NAMESPACES = ("a", "b")
MAX_GPUS = {"a": 6, "b": 5}


def quota(namespace: str) -> ElasticQuota:
    def rl(gpus: int) -> dict[str, object]:
        return {"cpu": parse_quantity("1000"), "memory": parse_quantity("1Ti"), GPU: parse_quantity(str(gpus))}
    return ElasticQuota(f"q-{namespace}", namespace, min=rl(4), max=rl(MAX_GPUS[namespace]))  # type: ignore[arg-type]


jobs = st.lists(st.tuples(st.sampled_from(NAMESPACES), st.integers(1, 4), st.integers(1, 2), st.sampled_from([0, 10]),
                          st.integers(0, 1)), min_size=1, max_size=6)


def workload(spec: Sequence[tuple[str, int, int, int, int]]) -> tuple[list[PodGroup], list[Pod]]:
    groups: list[PodGroup] = []
    pods: list[Pod] = []
    for index, (namespace, size, gpus, priority, slack) in enumerate(spec):
        name = f"job{index}"
        groups.append(PodGroup(name, namespace, min_member=max(1, size - slack)))
        pods += [make_pod(f"{name}-{i}", namespace=namespace, priority=priority, labels={POD_GROUP_LABEL: name},
                          requests={"cpu": "1", "memory": "1Gi", GPU: str(gpus)}) for i in range(size)]
    return groups, pods


def new_scheduler(clock: FakeClock, node_gpus: Sequence[int]) -> Scheduler:
    sched = Scheduler(batch_scheduling_config(coscheduling_args={"permitWaitingTimeSeconds": 5}), clock=clock)
    sched.add_objects([make_node(f"n{i}", allocatable={"cpu": "16", "memory": "64Gi", "pods": "110", GPU: str(g)})
                       for i, g in enumerate(node_gpus)])
    sched.add_objects([quota(ns) for ns in NAMESPACES])
    return sched


def check_invariants(sched: Scheduler, groups: Sequence[PodGroup]) -> None:
    bound = set(sched.bound_pods()) - set(sched.waiting_pods())  # waiting ones are not bound yet
    for group in groups:
        count = sum(1 for key in bound if key.startswith(f"{group.namespace}/{group.name}-"))
        assert count == 0 or count >= group.min_member, f"{group.key}: {count}/{group.min_member} bound"
    used = dict.fromkeys(NAMESPACES, 0)
    for key in sched.bound_pods():  # bound and assumed: both count against the quota
        pod = sched._engine.store.pods[key]
        if pod.namespace in used:
            used[pod.namespace] += pod_requests(pod).scalar.get(GPU, 0)
    for namespace, amount in used.items():
        assert amount <= MAX_GPUS[namespace], f"{namespace} uses {amount} GPUs over its max"


def quota_use(sched: Scheduler) -> dict[str, dict[str, int]]:
    """Each namespace's quota use as CapacityScheduling computes it for the next cycle."""
    pods = [pod_info.pod for info in sched.snapshot() for pod_info in info.pods]
    return _use(pods)


def quota_use_of(keys: Iterable[str], sched: Scheduler) -> dict[str, dict[str, int]]:
    """The quota use of the pods ``keys`` name."""
    return _use([sched._engine.store.pods[key] for key in keys])


def _use(pods: Iterable[Pod]) -> dict[str, dict[str, int]]:
    by_namespace: dict[str, list[Pod]] = {}
    for pod in pods:
        by_namespace.setdefault(pod.namespace, []).append(pod)
    return {ns: info.used.to_dict() for ns, info in quota_infos([quota(ns) for ns in NAMESPACES], by_namespace).items()}


def drive(sched: Scheduler, clock: FakeClock, groups: Sequence[PodGroup], *, until: float) -> None:
    """Schedule; evict the victims of each preemption at once (as an embedder would); jump to each wake-up."""
    def step(results: list[ScheduleResult]) -> None:
        for result in results:
            for victim in result.victims:
                sched.remove_pod(victim)
            check_invariants(sched, groups)

    while True:
        result = sched.schedule_one()
        if result is None:
            step(sched.tick())
            wakeup = sched.next_wakeup()
            if wakeup is None or wakeup > until:
                return
            clock.set(wakeup)
            step(sched.tick())
            continue
        step([result, *sched._engine.take_deferred(), *sched.tick()])


def started(clock: FakeClock, spec: Sequence[tuple[str, int, int, int, int]], node_gpus: Sequence[int], *,
            until: float) -> tuple[Scheduler, list[PodGroup]]:
    """A scheduler that has worked on ``spec``'s jobs until the clock reached ``until``."""
    sched = new_scheduler(clock, node_gpus)
    groups, pods = workload(spec)
    sched.add_objects(groups)
    for pod in pods:
        sched.add_pod(pod)
    drive(sched, clock, groups, until=until)
    return sched, groups


@settings(max_examples=30, deadline=None)
@given(spec=jobs, node_gpus=st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_no_partial_gang_and_no_quota_overrun(spec: list[tuple[str, int, int, int, int]], node_gpus: list[int]) -> None:
    clock = FakeClock()
    sched, groups = started(clock, spec, node_gpus, until=120)
    check_invariants(sched, groups)


@settings(max_examples=30, deadline=None)
@given(spec=jobs, node_gpus=st.lists(st.integers(1, 4), min_size=1, max_size=3), extra=st.integers(1, 3))
def test_a_rejected_group_returns_every_resource(spec: list[tuple[str, int, int, int, int]], node_gpus: list[int],
                                                extra: int) -> None:
    clock = FakeClock()
    sched, groups = started(clock, spec, node_gpus, until=60)
    # A gang that can never be complete (one member asks more GPUs than any node has), in a namespace
    # without a quota, so that it may not evict anything.
    doomed = PodGroup("doomed", "c", min_member=extra + 1)
    sched.add_objects([doomed])
    members = [make_pod(f"doomed-{i}", namespace="c", priority=0, labels={POD_GROUP_LABEL: "doomed"},
                        requests={"cpu": "1", GPU: "1"}) for i in range(extra)]
    members.append(make_pod(f"doomed-{extra}", namespace="c", priority=0, labels={POD_GROUP_LABEL: "doomed"},
                            requests={"cpu": "1", GPU: "99"}))
    for pod in members:
        sched.add_pod(pod)
    drive(sched, clock, [*groups, doomed], until=clock.now() + 60)
    for _waiting in list(sched.waiting_pods()):  # end every Permit wait: the gangs still short are rejected
        clock.set(clock.now() + 3600)
        sched.tick()
    assert not any(key.startswith("c/doomed-") for key in sched.bound_pods())
    held: dict[str, Resources] = {}
    for key, node in sched.bound_pods().items():
        held[node] = held.get(node, Resources()).add(pod_requests(sched._engine.store.pods[key]))
    assert {i.name: i.requested.to_dict() for i in sched.snapshot()} == {
        i.name: held.get(i.name, Resources()).to_dict() for i in sched.snapshot()}
    assert quota_use(sched) == quota_use_of(sched.bound_pods(), sched)
