"""Coscheduling: scheduler-plugins' test tables (tests/data/batch/coscheduling.json), args, status, end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kschedlib import ConfigError, FakeClock, Scheduler
from kschedlib.framework import CycleState, PodInfo, QueuedPodInfo, Status, Wait
from kschedlib.framework.pods_to_activate import PODS_TO_ACTIVATE
from kschedlib.framework.status import Code
from kschedlib.model import POD_GROUP_LABEL, Pod, PodGroup, parse_quantity
from kschedlib.plugins.batch._go_quantity import parse
from kschedlib.plugins.batch._pod_group_manager import (
    GoQuantity,
    cluster_resource_gap,
    format_gap,
    min_resources_needed,
    near_quorum,
    reconcile_status,
)
from kschedlib.plugins.batch.coscheduling import Coscheduling, CoschedulingArgs, decode_args
from kschedlib.simulation.cluster import Cluster
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

TABLES: dict[str, list[dict[str, Any]]] = json.loads(
    (Path(__file__).parents[2] / "data" / "batch" / "coscheduling.json").read_text(encoding="utf-8"))
CODES = {"Success": Code.SUCCESS, "Unschedulable": Code.UNSCHEDULABLE,
         "UnschedulableAndUnresolvable": Code.UNSCHEDULABLE_AND_UNRESOLVABLE}


def _ids(table: str) -> list[str]:
    return [case["id"] for case in TABLES[table]]


def member(name: str, group: str = "", *, node: str = "", namespace: str = "ns", cpu: str = "",
           priority: int | None = None) -> Pod:
    labels = {POD_GROUP_LABEL: group} if group else {}
    return make_pod(name, namespace=namespace, labels=labels, node_name=node, priority=priority,
                    requests={"cpu": cpu} if cpu else None)


def groups(entries: list[dict[str, Any]]) -> list[PodGroup]:
    return [PodGroup(e["name"], e.get("ns", "ns"), min_member=e.get("minMember", 0),
                     min_resources={k: parse_quantity(v) for k, v in e["minResources"].items()}
                     if "minResources" in e else None,
                     creation_timestamp=e.get("created")) for e in entries]


def plugin(objects: list[object], pods: list[Pod] = (), *,  # type: ignore[assignment]
           args: CoschedulingArgs | None = None, clock: FakeClock | None = None) -> tuple[Coscheduling, FakeHandle]:
    handle = FakeHandle(Cluster(tuple(objects)), pods=pods, clock=clock)
    return Coscheduling(args if args is not None else CoschedulingArgs(10, 0), handle.as_handle()), handle


NODES = [make_node("node-a", allocatable={"cpu": "4", "pods": "32", "nvidia.com/gpu": "1"}),
         make_node("node-b", allocatable={"cpu": "4", "pods": "32", "nvidia.com/gpu": "1"})]


@pytest.mark.parametrize("case", TABLES["pre_filter"], ids=_ids("pre_filter"))
def test_pre_filter(case: dict[str, Any]) -> None:
    pod = member(case["pod"]["name"], case["pod"]["group"])
    others = [member(o["name"], o["group"]) for o in case["others"]]
    pl, _ = plugin([*NODES, *groups(case["groups"])], [pod, *others])
    status = pl.pre_filter(CycleState(), pod)
    assert status.code is CODES[case["code"]]
    if "reason" in case:
        assert status.reasons == (case["reason"],)


@pytest.mark.parametrize("case", TABLES["check_cluster_resource"], ids=_ids("check_cluster_resource"))
def test_check_cluster_resource(case: dict[str, Any]) -> None:
    nodes = [make_node(n, allocatable={"cpu": "3", "pods": "32"}) for n in ("node-a", "node-b")]
    bound = [member(b["name"], b.get("group", ""), node=b["node"], cpu=b["cpu"]) for b in case["bound"]]
    handle = FakeHandle(Cluster((*nodes, *bound)))
    minimum = {k: parse_quantity(v) for k, v in case["minResources"].items()}
    needed = min_resources_needed(PodGroup("pg1", "ns", min_member=0, min_resources=minimum))
    gap = cluster_resource_gap(handle.snapshot.node_infos, needed, "ns/pg1")
    assert {name: q.value * 10 ** (q.scale + 3) for name, q in gap.items()} == case["gap"]  # cpu in millis


@pytest.mark.parametrize("case", TABLES["permit"], ids=_ids("permit"))
def test_permit(case: dict[str, Any]) -> None:
    pod = member(case["pod"]["name"], case["pod"]["group"])
    assigned = [member(a["name"], a["group"], node="node-a") for a in case["assigned"]]
    pl, _ = plugin([NODES[0], *assigned, *groups(case["groups"])], [pod])
    outcome = pl.permit(CycleState(), pod, "node-a")
    if case["code"] == "Wait":
        assert outcome == Wait(10.0)
        return
    assert isinstance(outcome, Status)
    assert outcome.code is CODES[case["code"]]
    if "reason" in case:
        assert outcome.reasons == (case["reason"],)


@pytest.mark.parametrize("case", TABLES["post_filter"], ids=_ids("post_filter"))
def test_post_filter(case: dict[str, Any]) -> None:
    pod = member(case["pod"]["name"], case["pod"]["group"])
    assigned = [member(a["name"], a["group"], node="node-a") for a in case["assigned"]]
    big = make_node("node-a", allocatable={"cpu": "4", "pods": "32"})
    pl, _ = plugin([big, *assigned, *groups(case["groups"])], [pod])
    result = pl.post_filter(CycleState(), pod, {"node-a": Status.success()})
    assert result.status.code is Code.UNSCHEDULABLE
    assert list(result.status.reasons) == case["reasons"]
    assert result.nominated_node_name is None


def _queued(case: dict[str, Any], which: str) -> QueuedPodInfo:
    spec = case[which]
    pod = member(which, spec.get("group", ""), namespace=spec["ns"], priority=spec["priority"])
    return QueuedPodInfo(PodInfo.of(pod), timestamp=0.0, initial_attempt_timestamp=spec.get("t", 0.0))


@pytest.mark.parametrize("case", TABLES["less"], ids=_ids("less"))
def test_less(case: dict[str, Any]) -> None:
    pl, _ = plugin(list(groups(case.get("groups", []))))
    assert pl.less(_queued(case, "p1"), _queued(case, "p2")) is case["want"]


@pytest.mark.parametrize(("p1", "p2", "want"), [
    ({"group": "pg1", "t": 2}, {"group": "pg2", "t": 1}, True),  # both groups lack a creation time: names decide
    ({"group": "pg1", "t": 2}, {"t": 1}, True),  # a group without creation time: Go's zero time, before any pod
    ({"t": 1}, {"group": "pg1", "t": 2}, False),
], ids=["names-not-arrival", "zero-time-first", "zero-time-first-reversed"])
def test_less_reads_a_group_without_creation_time_as_gos_zero_time(p1: dict[str, Any], p2: dict[str, Any],
                                                                   want: bool) -> None:
    case: dict[str, Any] = {"p1": {"ns": "ns", "priority": 100, **p1}, "p2": {"ns": "ns", "priority": 100, **p2}}
    pl, _ = plugin(list(groups([{"name": "pg1", "ns": "ns"}, {"name": "pg2", "ns": "ns"}])))
    assert pl.less(_queued(case, "p1"), _queued(case, "p2")) is want


def test_backoff_prevents_an_infinite_scheduling_loop() -> None:
    """scheduler-plugins' TestPodGroupBackoffTime: after PostFilter rejects the group it backs off."""
    clock = FakeClock()
    pods = [member(f"pod{i}", "pg1") for i in (1, 2, 3)]
    pl, _ = plugin([make_node("node", allocatable={"cpu": "4", "pods": "32"}), PodGroup("pg1", "ns", min_member=3)],
                   pods, args=CoschedulingArgs(10, 1), clock=clock)
    state = CycleState()
    assert pl.permit(state, pods[0], "node") == Wait(10.0)
    assert state.read(PODS_TO_ACTIVATE).take() == ["ns/pod2", "ns/pod3"]  # the siblings go back to activeQ
    pl.post_filter(CycleState(), pods[1], {})
    status = pl.pre_filter(CycleState(), pods[2])
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reasons == ("podGroup ns/pg1 failed recently",)
    clock.advance(1)
    assert pl.pre_filter(CycleState(), pods[2]).code is Code.SUCCESS


def test_schedule_timeout_of_the_group_overrides_the_plugin_wait() -> None:
    pod = member("p", "pg1")
    pl, _ = plugin([PodGroup("pg1", "ns", min_member=2, schedule_timeout_seconds=3)], [pod])
    assert pl.permit(CycleState(), pod, "n") == Wait(3.0)
    pl0, _ = plugin([PodGroup("pg1", "ns", min_member=2)], [pod], args=CoschedulingArgs(0, 0))
    assert pl0.permit(CycleState(), pod, "n") == Wait(60.0)


def test_permitted_groups_skip_the_resource_check_until_the_wait_passes() -> None:
    clock = FakeClock()
    group = PodGroup("pg1", "ns", min_member=1, min_resources={"cpu": parse_quantity("4")})
    pod = member("p", "pg1")
    pl, handle = plugin([NODES[0], group], [pod], clock=clock)
    assert pl.pre_filter(CycleState(), pod).code is Code.SUCCESS
    handle.set_snapshot(FakeHandle(Cluster((make_node("node-a", allocatable={"cpu": "1", "pods": "32"}),))).snapshot)
    assert pl.pre_filter(CycleState(), pod).code is Code.SUCCESS  # permitted: not checked again
    clock.advance(10)
    assert pl.pre_filter(CycleState(), pod).reasons == ("resource gap: map[cpu:{{3000 -3} {<nil>}  DecimalSI}]",)


@pytest.mark.parametrize(("raw", "field"), [
    ({"permitWaitingTimeSeconds": -1}, "permitWaitingTimeSeconds"),
    ({"podGroupBackoffSeconds": -5}, "podGroupBackoffSeconds"),
    ({"podGroupBackoffSeconds": 1.5}, "podGroupBackoffSeconds"),
    ({"permitWaitingTimeSeconds": True}, "permitWaitingTimeSeconds"),
    ([], "args"),
], ids=["negative-wait", "negative-backoff", "float", "bool", "not-an-object"])
def test_invalid_args_are_config_errors(raw: Any, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        decode_args(raw)


def test_args_default_as_scheduler_plugins() -> None:
    assert decode_args(None) == decode_args({}) == CoschedulingArgs(60, 0)
    assert decode_args({"permitWaitingTimeSeconds": 5, "podGroupBackoffSeconds": 2}) == CoschedulingArgs(5, 2)
    with pytest.raises(ConfigError):
        Coscheduling(CoschedulingArgs(-1, 0), FakeHandle().as_handle())


@pytest.mark.parametrize(("minimum", "assigned", "near"), [(10, 9, True), (10, 8, False), (3, 2, False), (1, 1, True)])
def test_near_quorum_is_float32_ten_percent(minimum: int, assigned: int, near: bool) -> None:
    assert near_quorum(minimum, assigned) is near


def test_format_gap_prints_the_quantity_structs_as_go_does() -> None:
    """Go's %v of the ResourceList CheckClusterResource left: keys sorted, each Quantity's fields (its String
    method has a pointer receiver): int64 amount and scale, no decimal, the cached string, the format."""
    gap = {"pods": GoQuantity(2, 0, "DecimalSI"), "cpu": GoQuantity(1500, -3, "DecimalSI"),
           "memory": GoQuantity(10, 0, "BinarySI", "10")}
    assert format_gap(gap) == ("map[cpu:{{1500 -3} {<nil>}  DecimalSI} memory:{{10 0} {<nil>} 10 BinarySI} "
                               "pods:{{2 0} {<nil>}  DecimalSI}]")


@pytest.mark.parametrize(("text", "go"), [
    ("4", (4, 0, "DecimalSI", "4")), ("500m", (500, -3, "DecimalSI", "500m")),
    ("0.5", (500, -3, "DecimalSI", "500m")), ("8Gi", (8 << 30, 0, "BinarySI", "")),
    ("3Ki", (3 << 10, 0, "BinarySI", "3Ki")), ("100M", (100, 6, "DecimalSI", "100M")),
    ("1e3", (1, 3, "DecimalExponent", "1e3")), ("0", (0, 0, "DecimalSI", "0")),
    ("1500m", (1500, -3, "DecimalSI", "1500m")),
])
def test_minresources_are_parsed_as_go_parses_them(text: str, go: tuple[int, int, str, str]) -> None:
    assert parse(parse_quantity(text)) == GoQuantity(*go)


def test_subtraction_aligns_scales_and_drops_the_cached_string() -> None:
    four = GoQuantity(4, 0, "DecimalSI", "4")
    assert four.minus(GoQuantity(1500, -3, "DecimalSI")) == GoQuantity(2500, -3, "DecimalSI")
    assert GoQuantity(1, 3, "DecimalSI", "1k").minus(GoQuantity(200, 0, "BinarySI")) == GoQuantity(800, 0, "DecimalSI")
    assert four.minus(GoQuantity(0, 0, "")) == GoQuantity(4, 0, "DecimalSI")
    assert GoQuantity(0, 0, "DecimalSI", "0").minus(GoQuantity(2, 0, "BinarySI")) == GoQuantity(-2, 0, "BinarySI")


@pytest.mark.parametrize(("phase", "pods", "want"), [
    ("", [], ("Pending", 0)),
    ("Pending", ["Pending", "Pending"], ("Scheduling", 0)),
    ("Scheduling", ["Running", "bound"], ("Scheduling", 1)),  # bound, but no kubelet said Running yet
    ("Scheduling", ["Running", "Running"], ("Running", 2)),
    ("Running", ["Running"], ("Pending", 1)),
    ("Running", ["Succeeded", "Succeeded"], ("Finished", 0)),
    ("Running", ["Failed", "Running"], ("Failed", 1)),
    ("Finished", [], ("Finished", 0)),
], ids=["new", "enough-pods", "bound-not-running", "running", "lost-members", "finished", "failed", "final"])
def test_status_as_the_controller_writes_it(phase: str, pods: list[str], want: tuple[str, int]) -> None:
    members = [member(f"m{i}", "g", node="n" if p == "bound" else "", namespace="ns") for i, p in enumerate(pods)]
    members = [m if p == "bound" else Pod(m.name, m.namespace, labels=m.labels, phase=p)
               for m, p in zip(members, pods, strict=True)]
    group = reconcile_status(PodGroup("g", "ns", min_member=2, phase=phase), members)
    assert (group.phase, group.running) == want


# --- end to end ------------------------------------------------------------------------------------


CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler",
                        "plugins": {"multiPoint": {"enabled": [{"name": "Coscheduling"}],
                                                   "disabled": [{"name": "PrioritySort"}]}},
                        "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10}}]}]}


def test_a_gang_waits_in_permit_then_binds_together_and_its_status_follows() -> None:
    clock = FakeClock()
    sched = Scheduler(CONFIG, clock=clock)
    sched.add_objects([make_node("n1"), PodGroup("job", "ns", min_member=3)])
    pods = [member(f"w{i}", "job", cpu="1") for i in range(3)]
    for pod in pods:
        sched.add_pod(pod)
    results = sched.run_until_idle()
    assert [r.status.code.label for r in results[:2]] == ["Wait", "Wait"]
    assert sorted(sched.bound_pods()) == sorted(p.key for p in pods)
    assert sched.waiting_pods() == []
    group = sched.scheduling_objects.get_pod_group("ns", "job")
    assert group is not None
    assert (group.phase, group.running) == ("Scheduling", 0)  # bound, not running: the controller waits


def test_the_group_status_follows_its_pods_as_the_podgroup_controller_writes_it() -> None:
    """scheduler-plugins' PodGroup controller counts pods by phase, also those that ended (the scheduler lets
    them go): Running once minMember run, Finished once minMember succeeded, Failed once one failed."""
    sched = Scheduler(CONFIG, clock=FakeClock())
    sched.add_objects([make_node("n1"), *(PodGroup(name, "ns", min_member=2) for name in ("job", "other", "bad"))])
    for name, group in (("w0", "job"), ("w1", "job"), ("o0", "other"), ("o1", "other"), ("b0", "bad"), ("b1", "bad")):
        sched.add_pod(member(name, group, cpu="1"))
    sched.run_until_idle()

    def status(group: str) -> tuple[str, int, int, int]:
        found = sched.scheduling_objects.get_pod_group("ns", group)
        assert found is not None
        return found.phase, found.running, found.succeeded, found.failed

    def set_phase(name: str, phase: str) -> None:
        pod = sched.pods()[f"ns/{name}"]
        sched.update_pod(Pod(pod.name, pod.namespace, uid=pod.uid, labels=pod.labels, node_name=pod.node_name,
                             containers=pod.containers, phase=phase))

    assert status("job") == ("Scheduling", 0, 0, 0)
    set_phase("w0", "Running")
    set_phase("w1", "Running")
    assert status("job") == ("Running", 2, 0, 0)
    set_phase("w0", "Succeeded")  # it leaves the scheduler, the controller still counts it
    assert "ns/w0" not in sched.pods()
    assert status("job") == ("Running", 1, 1, 0)
    set_phase("w1", "Succeeded")
    assert status("job") == ("Finished", 0, 2, 0)
    set_phase("o0", "Running")
    set_phase("o1", "Succeeded")
    assert status("other") == ("Running", 1, 1, 0)
    assert not sched.remove_pod("ns/o1")  # gone from the scheduler already; the controller stops counting it
    assert status("other") == ("Pending", 1, 0, 0)  # fewer pods than minMember
    set_phase("b0", "Running")
    set_phase("b1", "Failed")
    assert status("bad") == ("Failed", 1, 0, 1)
    sched.remove_pod("ns/b1")
    assert status("bad") == ("Failed", 1, 0, 1)  # final: the controller no longer reconciles it


def test_post_filter_of_a_member_that_fits_nowhere_releases_the_waiting_ones() -> None:
    sched = Scheduler(CONFIG, clock=FakeClock())
    sched.add_objects([make_node("n1", allocatable={"cpu": "2", "memory": "8Gi", "pods": "110"}),
                       PodGroup("job", "ns", min_member=3)])
    for i in range(3):
        sched.add_pod(member(f"w{i}", "job", cpu="1"))
    results = sched.run_until_idle()
    assert any("optimistic rejection in PostFilter" in (r.message or "") for r in results)
    assert sched.waiting_pods() == []
    assert sched.bound_pods() == {}
    assert all(info.requested.milli_cpu == 0 for info in sched.snapshot())


def test_a_timed_out_gang_releases_everything() -> None:
    clock = FakeClock()
    sched = Scheduler(CONFIG, clock=clock)
    sched.add_objects([make_node("n1"), PodGroup("job", "ns", min_member=3)])
    for i in range(2):
        sched.add_pod(member(f"w{i}", "job", cpu="1"))
    sched.add_pod(Pod("w2", "ns", labels={POD_GROUP_LABEL: "job"}, scheduling_gates=("later",)))
    sched.run_until_idle()
    assert len(sched.waiting_pods()) == 2
    assert sched.next_wakeup() == 10.0
    clock.set(10)
    results = sched.tick()
    assert {r.status.code for r in results} == {Code.UNSCHEDULABLE}
    assert any("rejection in Unreserve" in (r.message or "") for r in results)
    assert sched.waiting_pods() == []
    assert sched.bound_pods() == {}
    assert all(info.requested.milli_cpu == 0 for info in sched.snapshot())


def test_simulate_reports_the_state_of_each_group() -> None:
    from kschedlib import simulate
    from kschedlib.model.convert import node_to_dict, pod_group_to_dict, pod_to_dict
    from kschedlib.plugins.batch import batch_scheduling_config

    cluster = {"kind": "List", "items": [
        node_to_dict(make_node("n1")), pod_group_to_dict(PodGroup("job", "ns", min_member=2)),
        pod_group_to_dict(PodGroup("big", "ns", min_member=3)),
        *(pod_to_dict(member(f"w{i}", "job", cpu="1")) for i in range(2)),
        *(pod_to_dict(member(f"b{i}", "big", cpu="3")) for i in range(3)),
    ]}
    report = simulate(cluster, batch_scheduling_config(capacity_scheduling=False)).to_dict()
    # both bound; with no kubelet no pod reports Running, so the controller keeps the group Scheduling
    assert report["pod_groups"]["ns/job"] == {"phase": "Scheduling", "minMember": 2, "members": 2, "bound": 2,
                                              "waiting": 0, "assumed": 2, "pending": 0, "running": 0,
                                              "succeeded": 0, "failed": 0,
                                              "scheduleTimeoutSeconds": 60.0, "scheduleStartTime": None,
                                              "waitingTimesOutAt": None}
    assert report["pod_groups"]["ns/big"]["bound"] == 0
    assert "pod_groups" not in simulate({"kind": "List", "items": [node_to_dict(make_node("n1"))]}).to_dict()
