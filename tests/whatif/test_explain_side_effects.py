"""Scheduler.explain and feasible_nodes change nothing, whatever the plugins write on the way.

Each case is a what-if cycle whose plugins write where the live scheduler keeps its state: a DRA-backed
extended resource's claim (PostFilter deletes a claim left by an earlier attempt), Coscheduling's
PodGroup status (PreFilter), its waiting members and backed-off groups (PostFilter), preemption's
victims waiting in Permit (DefaultPreemption's PostFilter rejects them).
"""

from __future__ import annotations

from kschedlib import FakeClock, Scheduler, load_cluster
from kschedlib.model.convert import pod_from_dict
from kschedlib.model.objects import Pod
from kschedlib.model.scheduling_crds import POD_GROUP_LABEL, PodGroup
from tests.dra.test_extended_claim import CLASS, gpu_pod, gpus, node
from tests.helpers import make_node, make_pod
from tests.plugins.batch.test_coscheduling import member


def _gpu_scheduler() -> Scheduler:
    sched = Scheduler(kube_version="1.36", clock=FakeClock())
    sched.add_objects(load_cluster([node("a"), gpus("a", 1), CLASS]).objects)
    return sched


def test_explaining_a_bound_pod_keeps_its_extended_resource_claim_and_its_device() -> None:
    sched = _gpu_scheduler()
    sched.add_pod(pod_from_dict(gpu_pod("1")))
    [result] = sched.run_until_idle()
    assert result.node_name == "a"
    claims = dict(sched.devices.claims)
    assert len(claims) == 1
    bound = sched.get_pod("default/p")
    assert bound is not None
    sched.explain(bound)  # where else could it run?
    assert sched.feasible_nodes(bound) == []
    assert dict(sched.devices.claims) == claims
    second = gpu_pod("1")
    second["metadata"].update(name="q", uid="uid-q")
    sched.add_pod(pod_from_dict(second))
    [other] = sched.run_until_idle()
    assert not other.scheduled  # the one GPU is still the first pod's


def test_explaining_a_pod_whose_left_claim_would_be_deleted_deletes_nothing() -> None:
    sched = _gpu_scheduler()
    sched.add_pod(pod_from_dict(gpu_pod("1")))
    sched.run_until_idle()
    bound = sched.get_pod("default/p")
    assert bound is not None
    pending = Pod(bound.name, bound.namespace, uid=bound.uid, containers=bound.containers,
                  extended_resource_claim_status=bound.extended_resource_claim_status)
    answer = sched.explain(pending).to_dict()
    assert answer["postfilter"]["message"].startswith("deletion of ResourceClaim completed")
    assert len(sched.devices.claims) == 1
    assert sched.devices.take_written() == []  # no claim event queued either


GANG_CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               "profiles": [{"schedulerName": "default-scheduler",
                             "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}],
                                                        "disabled": [{"name": "PrioritySort"}]}},
                             "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10,
                                                                                "podGroupBackoffSeconds": 30}}]}]}


def _gang(min_member: int = 3) -> Scheduler:
    sched = Scheduler(GANG_CONFIG, clock=FakeClock())
    sched.add_objects([make_node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}),
                       PodGroup("job", "ns", min_member=min_member)])
    return sched


def _group(sched: Scheduler) -> PodGroup:
    group = sched._engine.store.scheduling.get_pod_group("ns", "job")
    assert group is not None
    return group


def _waiting_gang(cpu: str) -> Scheduler:
    """w0 and w1 wait in Permit for w2, which is held by a scheduling gate."""
    sched = _gang()
    for i in range(2):
        sched.add_pod(member(f"w{i}", "job", cpu=cpu))
    sched.add_pod(Pod("w2", "ns", uid="w2", labels={POD_GROUP_LABEL: "job"}, scheduling_gates=("later",)))
    sched.run_until_idle()
    assert len(sched.waiting_pods()) == 2
    return sched


def _release_w2(sched: Scheduler) -> list[tuple[str, str | None]]:
    sched.update_pod(member("w2", "job", cpu="1"))
    return [(r.pod.key, r.node_name) for r in sched.run_until_idle()]


def test_explaining_a_gang_member_that_fits_nowhere_leaves_the_waiting_members_alone() -> None:
    sched, twin = _waiting_gang("1"), _waiting_gang("1")
    huge = member("w2", "job", cpu="64")
    assert sched.explain(huge).selected is None
    assert sched.feasible_nodes(huge) == []
    assert sorted(sched.waiting_pods()) == sorted(twin.waiting_pods())
    assert _release_w2(sched) == _release_w2(twin)
    assert sorted(sched.bound_pods()) == ["ns/w0", "ns/w1", "ns/w2"]


def test_explaining_a_gang_member_changes_neither_the_group_status_nor_its_backoff() -> None:
    sched = _gang(min_member=2)
    sched.add_pod(member("w0", "job", cpu="1"))
    sched.run_until_idle()
    before = _group(sched)
    assert before.phase == "Pending"
    sched.explain(member("w1", "job", cpu="1"))  # with it the group would have its minimum: Scheduling
    sched.explain(member("w1", "job", cpu="64"))  # fits nowhere: PostFilter would back the group off
    assert _group(sched) == before
    sched.add_pod(member("w1", "job", cpu="1"))
    results = sched.run_until_idle()
    assert sorted(sched.bound_pods()) == ["ns/w0", "ns/w1"], [r.message for r in results]


def test_explaining_a_preemptor_leaves_its_victims_waiting_in_permit() -> None:
    sched, twin = _waiting_gang("2"), _waiting_gang("2")
    urgent = make_pod("urgent", uid="urgent", requests={"cpu": "4"}, priority=1000)
    answer = sched.explain(urgent).to_dict()
    assert answer["postfilter"]["nominatedNode"] == "n1"  # it would preempt them: rejected, not evicted
    assert sched.feasible_nodes(urgent) == []
    assert len(sched.waiting_pods()) == 2
    assert sched.next_wakeup() == twin.next_wakeup()
    assert [(r.pod.key, r.status.code) for r in sched.tick()] == [(r.pod.key, r.status.code) for r in twin.tick()]
    assert _release_w2(sched) == _release_w2(twin)
