"""CapacityScheduling: scheduler-plugins' test tables (tests/data/batch/capacity_scheduling.json), args, end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from kschedlib import ConfigError, FakeClock, Scheduler
from kschedlib.framework import CycleState, PodInfo, Status
from kschedlib.framework.status import Code
from kschedlib.model import ElasticQuota, Pod, PodGroup, Resources, parse_quantity
from kschedlib.plugins.batch._capacity_preemption import eligible_to_preempt
from kschedlib.plugins.batch._capacity_victims import (
    PRE_FILTER_KEY,
    QUOTA_KEY,
    QuotaPreFilterState,
    select_victims,
)
from kschedlib.plugins.batch._elastic_quota import UPPER_BOUND_OF_MAX, QuotaInfo, QuotaInfos, quota_infos
from kschedlib.plugins.batch.capacity_scheduling import CapacityScheduling, CapacitySchedulingArgs, decode_args
from kschedlib.plugins.node_resources_fit import NodeResourcesFit
from kschedlib.simulation.cluster import Cluster
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod

TABLES: dict[str, list[dict[str, Any]]] = json.loads(
    (Path(__file__).parents[2] / "data" / "batch" / "capacity_scheduling.json").read_text(encoding="utf-8"))
CODES = {"Success": Code.SUCCESS, "Unschedulable": Code.UNSCHEDULABLE,
         "UnschedulableAndUnresolvable": Code.UNSCHEDULABLE_AND_UNRESOLVABLE}
GPU = "nvidia.com/gpu"
BIG = Resources(UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX)


def _ids(table: str) -> list[str]:
    return [case["id"] for case in TABLES[table]]


def amounts(d: dict[str, int] | None) -> Resources:
    d = d or {}
    scalar = {GPU: d["gpu"]} if "gpu" in d else {}
    return Resources(d.get("cpu", 0), d.get("memory", 0), d.get("ephemeral-storage", 0), 0, scalar)


def info(namespace: str, entry: dict[str, Any]) -> QuotaInfo:
    return QuotaInfo(namespace, amounts(entry.get("min")), amounts(entry["max"]) if "max" in entry else BIG,
                     amounts(entry.get("used")))


def infos(entries: dict[str, dict[str, Any]]) -> QuotaInfos:
    return QuotaInfos({ns: info(ns, e) for ns, e in entries.items()})


def quota_pod(name: str, namespace: str, memory: int, priority: int, node: str = "", cpu_milli: int = 0,
              gpu: int = 0) -> Pod:
    return make_pod(name, namespace=namespace, priority=priority, node_name=node,
                    requests={"memory": str(memory), "cpu": f"{cpu_milli}m", GPU: str(gpu)})


@pytest.mark.parametrize("case", TABLES["used_over_min_with"], ids=_ids("used_over_min_with"))
def test_used_over_min_with(case: dict[str, Any]) -> None:
    assert info("ns1", case).used_over_min_with(amounts(case["request"])) is case["want"]


@pytest.mark.parametrize("case", TABLES["used_over_max_with"], ids=_ids("used_over_max_with"))
def test_used_over_max_with(case: dict[str, Any]) -> None:
    assert info("ns1", case).used_over_max_with(amounts(case["request"])) is case["want"]


@pytest.mark.parametrize("case", TABLES["used_over_min"], ids=_ids("used_over_min"))
def test_used_over_min(case: dict[str, Any]) -> None:
    assert info("ns1", case).used_over_min() is case["want"]


def test_reserve_and_unreserve_resources_count_gpus() -> None:
    """TestReserveResource / TestUnReserveResource: every pod's cpu, memory and GPUs are charged and released."""
    quota = QuotaInfo("ns1", Resources(), BIG, Resources(1000, 200, scalar={GPU: 2}))
    pods = [quota_pod("t1-p1", "ns1", 50, 100, cpu_milli=1000, gpu=1),
            quota_pod("t1-p2", "ns2", 100, 100, cpu_milli=2000), quota_pod("t1-p3", "ns2", 0, 100, gpu=2)]
    for pod in pods:
        quota.add_pod_if_not_present(pod)
    assert (quota.used.milli_cpu, quota.used.memory, quota.used.scalar[GPU]) == (4000, 350, 5)
    quota.add_pod_if_not_present(pods[0])  # already counted
    assert quota.used.milli_cpu == 4000
    for pod in pods:
        quota.delete_pod_if_present(pod)
    assert (quota.used.milli_cpu, quota.used.memory, quota.used.scalar[GPU]) == (1000, 200, 2)


@pytest.mark.parametrize(("spec", "minimum", "maximum"), [
    ({"min": {"cpu": "10m", "memory": "100"}, "max": {"cpu": "100m", "memory": "1000"}}, (10, 100), (100, 1000)),
    ({"min": {"cpu": "10m", "memory": "100"}}, (10, 100), (UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX)),
    ({"max": {"cpu": "100m", "memory": "1000"}}, (0, 0), (100, 1000)),
    ({}, (0, 0), (UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX)),
], ids=["ElasticQuota", "Without Max", "Without Min", "Without Max and Min"])
def test_new_elastic_quota_info(spec: dict[str, dict[str, str]], minimum: tuple[int, int],
                                maximum: tuple[int, int]) -> None:
    quota = ElasticQuota("eq", "ns1", **{k: {r: parse_quantity(v) for r, v in spec[k].items()} for k in spec})
    built = QuotaInfo.of(quota)
    assert (built.min.milli_cpu, built.min.memory) == minimum
    assert (built.max.milli_cpu, built.max.memory) == maximum
    assert built.used == Resources()


def test_only_the_first_quota_of_a_namespace_counts_and_assigned_pods_are_charged() -> None:
    first = ElasticQuota("a", "ns1", max={"cpu": parse_quantity("1")})
    second = ElasticQuota("b", "ns1", max={"cpu": parse_quantity("9")})
    pods = {"ns1": [quota_pod("p", "ns1", 10, 0, node="n", cpu_milli=300)]}
    built = quota_infos([first, second], pods)
    assert built["ns1"].max.milli_cpu == 1000
    assert built["ns1"].used.milli_cpu == 300


def _with_quota_objects(entries: dict[str, dict[str, Any]]) -> list[ElasticQuota]:
    out = []
    for ns, e in entries.items():
        convert = {k: {("memory" if r == "memory" else r): parse_quantity(str(v)) for r, v in e[k].items()}
                   for k in ("min", "max") if k in e}
        out.append(ElasticQuota(f"eq-{ns}", ns, **convert))
    return out


@pytest.mark.parametrize("case", TABLES["pre_filter"], ids=_ids("pre_filter"))
def test_pre_filter(case: dict[str, Any]) -> None:
    used_pods = [quota_pod(f"used-{ns}", ns, e["used"]["memory"], 0, node="n") for ns, e in case["quotas"].items()]
    handle = FakeHandle(Cluster((make_node("n", allocatable={"memory": "100Gi", "pods": "110"}), *used_pods,
                                 *_with_quota_objects(case["quotas"]))))
    plugin = CapacityScheduling(None, handle.as_handle())
    for (name, namespace, memory), code, reason in zip(case["pods"], case["codes"], case["reasons"], strict=True):
        status = plugin.pre_filter(CycleState(), quota_pod(name, namespace, memory, 0))
        assert status.code is CODES[code]
        assert status.reasons == ((reason,) if reason else ())


def _dry_run_handle(case: dict[str, Any]) -> tuple[FakeHandle, CycleState, Pod]:
    name, namespace, memory, priority = case["pod"]
    pod = quota_pod(name, namespace, memory, priority)
    pods = [quota_pod(n, ns, m, p, node="node-a") for n, ns, m, p in case["pods"]]
    handle = FakeHandle(Cluster((make_node("node-a", allocatable={"memory": "150", "pods": "110"}), *pods)),
                        pods=[pod], plugins=[NodeResourcesFit])
    state = CycleState()
    fit = next(iter(handle._plugins))
    assert isinstance(fit, NodeResourcesFit)
    fit.pre_filter(state, pod)
    request = Resources(0, memory, scalar={GPU: 0})
    state.write(QUOTA_KEY, infos(case["quotas"]))
    state.write(PRE_FILTER_KEY, QuotaPreFilterState(request, request, request))
    return handle, state, pod


@pytest.mark.parametrize("case", TABLES["dry_run"], ids=_ids("dry_run"))
def test_select_victims_on_node(case: dict[str, Any]) -> None:
    handle, state, pod = _dry_run_handle(case)
    outcome = select_victims(handle.as_handle(), state, pod, handle.snapshot.get("node-a"), (), gang_aware=False)
    if "status" in case:
        assert isinstance(outcome, Status)
        assert (outcome.code, outcome.message()) == (CODES[case["status"][0]], case["status"][1])
        return
    assert not isinstance(outcome, Status)
    names = sorted(victim.name for victim in outcome.pods)
    if "victims" in case:
        assert names == case["victims"]
    else:
        assert len(names) == case["victim_count"]


def _eligibility_state(case: dict[str, Any]) -> tuple[CycleState, Pod, Any]:
    spec = case["pod"]
    pod = make_pod("t1-p1", namespace=spec["ns"], priority=1000,
                   preemption_policy="Never" if spec.get("never") else None,
                   nominated_node_name="node-a" if spec.get("nominated") else "")
    node_pods = [make_pod(n, namespace=ns, priority=p, node_name="node-a",
                          deletion_timestamp=1.0 if how == "terminating" else None)
                 for n, ns, how, p in case["node_pods"]]
    handle = FakeHandle(Cluster((make_node("node-a"), *node_pods)))
    quotas = {"ns1": {"max": {"memory": 150}, "min": {"memory": 50}, "used": {"memory": 0}},
              "ns2-over-min": {"max": {"memory": 150}, "min": {"memory": 50}, "used": {"memory": 100}}}
    state = CycleState()
    state.write(QUOTA_KEY, QuotaInfos({q.split("-")[0]: info(q.split("-")[0], quotas[q]) for q in case["quotas"]}))
    state.write(PRE_FILTER_KEY, QuotaPreFilterState(Resources(), Resources(), Resources()))
    return state, pod, handle.snapshot.get("node-a")


@pytest.mark.parametrize("case", TABLES["eligible"], ids=_ids("eligible"))
def test_pod_eligible_to_preempt_others(case: dict[str, Any]) -> None:
    state, pod, node_info = _eligibility_state(case)
    status = Status(CODES[case["status"]]) if "status" in case else Status.unschedulable()
    assert (eligible_to_preempt(state, pod, node_info, status) == "") is case["want"]


def test_eligibility_needs_the_pre_filter_state() -> None:
    assert eligible_to_preempt(CycleState(), make_pod("p"), None, None) == (
        "not eligible due to failed to read from cycleState")


def test_reserve_and_unreserve_charge_the_live_quota() -> None:
    handle = FakeHandle(Cluster((make_node("n"), ElasticQuota("eq", "ns1", max={"memory": parse_quantity("2000")}))))
    plugin = CapacityScheduling(None, handle.as_handle())
    plugin.refresh()
    p1, p2 = quota_pod("t1-p1", "ns1", 50, 0), quota_pod("t1-p2", "ns2", 50, 0)
    for pod in (p1, p2):
        assert plugin.reserve(CycleState(), pod, "n").is_success
    assert plugin.infos["ns1"].used.memory == 50
    assert plugin.infos["ns1"].pods == {"ns1/t1-p1"}
    plugin.unreserve(CycleState(), p2, "n")
    plugin.unreserve(CycleState(), p1, "n")
    assert plugin.infos["ns1"].used.memory == 0
    assert plugin.infos["ns1"].pods == set()


def test_add_and_remove_pod_keep_the_cycle_copy_in_step() -> None:
    handle = FakeHandle(Cluster((make_node("n"), ElasticQuota("eq", "ns1"))))
    plugin = CapacityScheduling(None, handle.as_handle())
    state = CycleState()
    pod = quota_pod("p", "ns1", 10, 0)
    plugin.pre_filter(state, pod)
    other = PodInfo.of(quota_pod("o", "ns1", 30, 0, node="n"))
    node_info = handle.snapshot.get("n")
    assert plugin.add_pod(state, pod, other, node_info).is_success
    assert state.read(QUOTA_KEY)["ns1"].used.memory == 30
    assert plugin.remove_pod(state, pod, other, node_info).is_success
    assert state.read(QUOTA_KEY)["ns1"].used.memory == 0
    assert plugin.infos["ns1"].used.memory == 0  # the live quotas are untouched
    assert plugin.add_pod(CycleState(), pod, other, node_info).code is Code.ERROR


@pytest.mark.parametrize(("raw", "field"), [({"gangAware": "yes"}, "gangAware"), ([], "args")],
                         ids=["not-a-boolean", "not-an-object"])
def test_invalid_args_are_config_errors(raw: Any, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        decode_args(raw)
    assert decode_args(None) == decode_args({}) == CapacitySchedulingArgs(True)


# --- end to end ------------------------------------------------------------------------------------


def config(*, gang: bool = False) -> dict[str, Any]:
    enabled = [{"name": "CapacityScheduling"}, *([{"name": "Coscheduling"}] if gang else [])]
    disabled = [{"name": "DefaultPreemption"}, *([{"name": "PrioritySort"}] if gang else [])]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler",
                          "plugins": {"multiPoint": {"enabled": enabled, "disabled": disabled}}}]}


def gpu_pod(name: str, namespace: str, priority: int, *, gpus: int = 1, group: str = "", node: str = "") -> Pod:
    labels = {"scheduling.x-k8s.io/pod-group": group} if group else None
    return make_pod(name, namespace=namespace, priority=priority, labels=labels, node_name=node,
                    requests={"cpu": "1", "memory": "1Gi", GPU: str(gpus)})


def quota(namespace: str, min_gpus: int, max_gpus: int) -> ElasticQuota:
    def rl(gpus: int) -> dict[str, Any]:
        return {"cpu": parse_quantity("100"), "memory": parse_quantity("100Gi"), GPU: parse_quantity(str(gpus))}
    return ElasticQuota(f"eq-{namespace}", namespace, min=rl(min_gpus), max=rl(max_gpus))


GPU_NODE = {"cpu": "32", "memory": "64Gi", "pods": "110", GPU: "4"}


def test_a_team_under_its_min_reclaims_gpus_borrowed_by_another() -> None:
    sched = Scheduler(config(), clock=FakeClock())
    sched.add_objects([make_node("n1", allocatable=GPU_NODE), quota("a", 2, 4), quota("b", 2, 4)])
    for i in range(4):  # team b borrows team a's unused min
        sched.add_pod(gpu_pod(f"b{i}", "b", 100))
    sched.run_until_idle()
    assert len(sched.bound_pods()) == 4
    sched.add_pod(gpu_pod("a0", "a", 0))  # lower priority, but under its min: reclaims
    result = sched.schedule_one()
    assert result is not None
    assert result.nominated_node_name == "n1"
    assert len(result.victims) == 1
    assert result.victims[0].startswith("b/")


def test_pre_filter_refuses_a_pod_over_its_max() -> None:
    sched = Scheduler(config(), clock=FakeClock())
    sched.add_objects([make_node("n1", allocatable=GPU_NODE), make_node("n2", allocatable=GPU_NODE),
                       quota("a", 2, 3), quota("b", 4, 4)])
    for i in range(4):
        sched.add_pod(gpu_pod(f"a{i}", "a", 0))
    results = sched.run_until_idle()
    assert len(sched.bound_pods()) == 3
    assert any("ElasticQuota a is more than Max" in (r.message or "") for r in results)


@pytest.mark.parametrize("gang_aware", [True, False], ids=["gang-aware", "pod-by-pod"])
def test_gang_aware_preemption_evicts_a_whole_gang_or_nothing(gang_aware: bool) -> None:
    cfg = config(gang=True)
    cfg["profiles"][0]["pluginConfig"] = [{"name": "CapacityScheduling", "args": {"gangAware": gang_aware}}]
    sched = Scheduler(cfg, clock=FakeClock())
    sched.add_objects([make_node("n1", allocatable=GPU_NODE), make_node("n2", allocatable=GPU_NODE),
                       quota("a", 4, 8), quota("b", 4, 8), PodGroup("job", "b", min_member=4)])
    for i in range(4):  # a gang of b spread over both nodes, plus two loose pods of b
        sched.add_pod(gpu_pod(f"j{i}", "b", 100, group="job"))
    sched.run_until_idle()
    for i in range(2):
        sched.add_pod(gpu_pod(f"loose{i}", "b", 100))
    sched.run_until_idle()
    assert len(sched.bound_pods()) == 6
    sched.add_pod(gpu_pod("a0", "a", 0, gpus=3))
    result = sched.schedule_one()
    assert result is not None
    assert result.nominated_node_name in ("n1", "n2")
    victims = set(result.victims)
    gang = {f"b/j{i}" for i in range(4)}
    if gang_aware:
        assert victims & gang in (set(), gang), "a gang is evicted whole or not at all"
    else:  # scheduler-plugins' choice: two members go, the gang is left broken
        assert victims & gang
        assert victims & gang != gang


def test_post_filter_outcomes_without_a_candidate() -> None:
    from kschedlib.plugins.batch._capacity_preemption import preempt

    pod = quota_pod("p", "ns1", 10, 100)
    handle = FakeHandle(Cluster((make_node("n"),)), pods=[pod], plugins=[NodeResourcesFit])
    state = CycleState()
    state.write(QUOTA_KEY, QuotaInfos())
    state.write(PRE_FILTER_KEY, QuotaPreFilterState(Resources(), Resources(), Resources()))
    gone = preempt(handle.as_handle(), "CapacityScheduling", state, quota_pod("ghost", "ns1", 1, 1), {},
                   gang_aware=True)
    assert (gone.status.code, gone.status.message()) == (Code.ERROR, 'pod "ghost" not found')
    unhelpful = preempt(handle.as_handle(), "CapacityScheduling", state, pod,
                        {"n": Status.unresolvable("nope")}, gang_aware=True)
    assert unhelpful.status.message() == "0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    assert unhelpful.nominated_node_name == ""
    never = attrs.evolve(pod, preemption_policy="Never")
    refused = preempt(FakeHandle(pods=[never]).as_handle(), "CapacityScheduling", state, never, {}, gang_aware=True)
    assert refused.status.message() == "not eligible due to preemptionPolicy=Never."
    plugin = CapacityScheduling(None, handle.as_handle())
    prefixed = plugin.post_filter(state, pod, {"n": Status.unresolvable("nope")})
    assert prefixed.status.message().startswith("preemption: 0/1 nodes are available")
