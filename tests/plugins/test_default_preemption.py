"""DefaultPreemption: eligibility, messages, victim selection, PDBs, candidate choice, args (reference §10)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, cast

import attrs
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from kschedlib import Scheduler, explain, load_cluster
from kschedlib.clock import Clock, FakeClock
from kschedlib.errors import ConfigError
from kschedlib.framework import CycleState, Handle, NodeInfo, PodInfo, Snapshot, Status
from kschedlib.framework.status import Code
from kschedlib.model import LabelSelector, Pod
from kschedlib.model.labels import Requirement
from kschedlib.model.objects import PodCondition, PodDisruptionBudget
from kschedlib.plugins import default_preemption
from kschedlib.plugins._helpers.go_sort import go_sort_slice
from kschedlib.plugins._helpers.preemption_victims import (
    ERR_NO_VICTIMS,
    Victims,
    budgets_of,
    more_important,
    select_victims_on_node,
    sort_by_importance,
    split_by_pdb_violation,
)
from kschedlib.plugins.default_preemption import (
    ERR_NO_CANDIDATE,
    ERR_NOT_ELIGIBLE_NEVER,
    ERR_NOT_ELIGIBLE_TERMINATING,
    ERR_NOT_HELPFUL,
    Candidate,
    DefaultPreemption,
    DefaultPreemptionArgs,
    calculate_num_candidates,
    decode_args,
    nodes_where_preemption_might_help,
    pick_one_candidate,
    pod_eligible_to_preempt_others,
    terminating_by_preemption,
)
from kschedlib.versions import resolve
from tests.helpers import make_node, make_pod, node_info

# --- a handle whose only filter is "enough CPU" -----------------------------------------------


def cpu_fits(pod: Pod, info: NodeInfo) -> Status:
    wanted = PodInfo.of(pod).requests.milli_cpu
    if info.requested.milli_cpu + wanted <= info.allocatable.milli_cpu:
        return Status.success()
    return Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit")


class _Waiting:
    def __init__(self, pod: Pod) -> None:
        self.pod = pod
        self.node_name = pod.node_name
        self.pending_plugins = ["Gate"]
        self.rejected: tuple[str, str] | None = None

    def allow(self, plugin: str) -> None:
        raise AssertionError("preemption never allows")

    def reject(self, plugin: str, message: str) -> None:
        self.rejected = (plugin, message)


class StubHandle:
    """Records the extension calls and filter runs the dry run makes; filters with ``fits``."""

    def __init__(
        self,
        infos: Sequence[NodeInfo],
        *,
        pending: Sequence[Pod] = (),
        pdbs: Sequence[PodDisruptionBudget] = (),
        fits: Callable[[Pod, NodeInfo], Status] = cpu_fits,
        seed: int = 0,
        remove_error: str = "",
        waiting: Sequence[Pod] = (),
        kube_version: str = "1.30",
    ) -> None:
        self.switches = resolve(kube_version).switches
        self._snapshot = Snapshot(infos)
        self._pods = {p.key: p for p in pending}
        self._pdbs = list(pdbs)
        self._fits = fits
        self._rng = random.Random(seed)
        self._remove_error = remove_error
        self.waiting = {p.uid: _Waiting(p) for p in waiting}
        self.calls: list[tuple[str, str, str]] = []

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def clock(self) -> Clock:
        return FakeClock()

    @property
    def rng(self) -> random.Random:
        return self._rng

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return ()

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self._pods.get(f"{namespace}/{name}")

    def pod_disruption_budgets(self) -> Sequence[PodDisruptionBudget]:
        return self._pdbs

    def owner_selectors(self, namespace: str) -> Sequence[Any]:
        return ()

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.calls.append(("filter", node_info.name, ",".join(sorted(i.pod.name for i in node_info.pods))))
        return self._fits(pod, node_info)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        self.calls.append(("add", node_info.name, pod_info_to_add.pod.name))
        return Status.success()

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        self.calls.append(("remove", node_info.name, pod_info_to_remove.pod.name))
        assert not node_info.has_pod(pod_info_to_remove.pod.uid), "RemovePod sees the node without the pod"
        if self._remove_error:
            return Status.from_error(f'running RemovePod on PreFilter plugin "X": {self._remove_error}')
        return Status.success()

    def iterate_waiting_pods(self) -> Sequence[Any]:
        return list(self.waiting.values())

    def get_waiting_pod(self, uid: str) -> Any:
        return self.waiting.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        return False


def as_handle(stub: StubHandle) -> Handle:
    return cast(Handle, stub)


def small_node(name: str, cpu: str = "2") -> Any:
    return make_node(name, allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"})


def bound(name: str, node: str, cpu: str, priority: int, start: float | None = 1.0, **fields: Any) -> Pod:
    return make_pod(name, node_name=node, requests={"cpu": cpu}, priority=priority, start_time=start, **fields)


def preemptor(cpu: str = "1", priority: int = 100, **fields: Any) -> Pod:
    return make_pod("p", requests={"cpu": cpu}, priority=priority, **fields)


def run_post_filter(
    stub: StubHandle, pod: Pod, statuses: dict[str, Status], args: DefaultPreemptionArgs | None = None
) -> tuple[Status, str | None, tuple[str, ...]]:
    plugin = DefaultPreemption(args, as_handle(stub))
    result = plugin.post_filter(CycleState(), pod, statuses)
    return result.status, result.nominated_node_name, result.victims


INSUFFICIENT = Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit")
UNRESOLVABLE = Status.unresolvable("node(s) had untolerated taint {a: b}", plugin="TaintToleration")

# --- args -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, DefaultPreemptionArgs(10, 100)),
        ({}, DefaultPreemptionArgs(10, 100)),
        ({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs"}, DefaultPreemptionArgs()),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}, DefaultPreemptionArgs(0, 1)),
        ({"minCandidateNodesPercentage": 100}, DefaultPreemptionArgs(100, 100)),
        ({"minCandidateNodesAbsolute": 0}, DefaultPreemptionArgs(10, 0)),
        ({"minCandidateNodesPercentage": None, "minCandidateNodesAbsolute": None}, DefaultPreemptionArgs()),
    ],
    ids=["none", "empty", "type-meta-ignored", "abs-only", "pct-100", "abs-0", "nulls-default"],
)
def test_args_decode(raw: dict[str, Any] | None, expected: DefaultPreemptionArgs) -> None:
    assert decode_args(raw) == expected


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        ({"minCandidateNodesPercentage": -1}, "minCandidateNodesPercentage", "not in valid range [0, 100]"),
        ({"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage", "not in valid range [0, 100]"),
        ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute", "not in valid range [0, inf)"),
        ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}, "minCandidateNodesPercentage",
         "cannot be zero at the same time as minCandidateNodesAbsolute"),
        ({"minCandidateNodesPercentage": "10"}, "minCandidateNodesPercentage", "must be an integer"),
        ({"minCandidateNodesAbsolute": True}, "minCandidateNodesAbsolute", "must be an integer"),
    ],
    ids=["pct-negative", "pct-101", "abs-negative", "both-zero", "pct-string", "abs-bool"],
)
def test_args_invalid(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args(raw)
    assert info.value.field == field
    assert info.value.message == message


def test_constructor_validates_args() -> None:
    stub = StubHandle([])
    with pytest.raises(ConfigError, match="cannot be zero"):
        DefaultPreemption(DefaultPreemptionArgs(0, 0), as_handle(stub))
    assert DefaultPreemption(None, as_handle(stub)).args == DefaultPreemptionArgs()


def test_invalid_args_in_a_profile_fail_scheduler_construction() -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                  {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 101}}]}]}
    with pytest.raises(ConfigError, match=r"minCandidateNodesPercentage.*not in valid range \[0, 100\]"):
        Scheduler(config)


@pytest.mark.parametrize(
    ("pct", "absolute", "nodes", "expected"),
    [(10, 100, 50, 50), (10, 100, 500, 100), (10, 100, 5000, 500), (0, 1, 50, 1), (1, 0, 50, 0), (50, 0, 7, 3)],
    ids=["defaults-50", "defaults-500", "defaults-5000", "abs-1", "pct-rounds-to-0", "pct-truncates"],
)
def test_calculate_num_candidates(pct: int, absolute: int, nodes: int, expected: int) -> None:
    assert calculate_num_candidates(DefaultPreemptionArgs(pct, absolute), nodes) == expected


# --- eligibility ------------------------------------------------------------------------------

_PREEMPTED = PodCondition("DisruptionTarget", "True", "PreemptionByScheduler")


@pytest.mark.parametrize(
    ("policy", "victim_fields", "victim_priority", "nominated_status", "expected"),
    [
        ("Never", {}, 1, None, ERR_NOT_ELIGIBLE_NEVER),
        ("PreemptLowerPriority", {}, 1, None, ""),
        (None, {"deletion_timestamp": 5.0, "conditions": (_PREEMPTED,)}, 1, None, ERR_NOT_ELIGIBLE_TERMINATING),
        (None, {"deletion_timestamp": 5.0, "conditions": (_PREEMPTED,)}, 1, INSUFFICIENT,
         ERR_NOT_ELIGIBLE_TERMINATING),
        (None, {"deletion_timestamp": 5.0, "conditions": (_PREEMPTED,)}, 1, UNRESOLVABLE, ""),
        (None, {"deletion_timestamp": 5.0, "conditions": (_PREEMPTED,)}, 100, None, ""),
        (None, {"deletion_timestamp": 5.0}, 1, None, ""),
        (None, {"conditions": (_PREEMPTED,)}, 1, None, ""),
        (None, {"deletion_timestamp": 5.0, "conditions": (PodCondition("DisruptionTarget", "True", "Evicted"),)},
         1, None, ""),
        (None, {"deletion_timestamp": 5.0, "conditions": (PodCondition("DisruptionTarget", "False",
                                                                        "PreemptionByScheduler"),)}, 1, None, ""),
        (None, {"deletion_timestamp": 5.0, "conditions": (PodCondition("DisruptionTarget", "False", "x"),
                                                           _PREEMPTED)}, 1, None, ""),
    ],
    ids=["never", "lower-priority-policy", "terminating-victim", "terminating-victim-node-unschedulable",
         "nominated-node-unresolvable", "terminating-equal-or-higher-priority", "deleting-without-condition",
         "condition-without-deletion", "other-reason", "condition-false", "first-disruption-condition-decides"],
)
def test_eligibility(policy: str | None, victim_fields: dict[str, Any], victim_priority: int,
                     nominated_status: Status | None, expected: str) -> None:
    victim = bound("dying", "n1", "1", victim_priority, **victim_fields)
    snapshot = Snapshot([node_info(small_node("n1"), victim)])
    pod = preemptor(priority=100, preemption_policy=policy, nominated_node_name="n1")
    statuses = {"n1": nominated_status} if nominated_status is not None else {}
    assert pod_eligible_to_preempt_others(pod, snapshot, statuses) == expected


def test_eligibility_ignores_unknown_nominated_node_and_no_nomination() -> None:
    snapshot = Snapshot([node_info(small_node("n1"))])
    assert pod_eligible_to_preempt_others(preemptor(nominated_node_name="gone"), snapshot, {}) == ""
    assert pod_eligible_to_preempt_others(preemptor(), snapshot, {}) == ""


def test_terminating_by_preemption_reads_deletion_and_condition() -> None:
    assert terminating_by_preemption(bound("a", "n", "1", 1, deletion_timestamp=1.0, conditions=(_PREEMPTED,)))
    assert not terminating_by_preemption(bound("a", "n", "1", 1, conditions=(_PREEMPTED,)))


def test_not_eligible_keeps_the_nomination_and_reports_the_reason() -> None:
    pod = preemptor(preemption_policy="Never")
    stub = StubHandle([node_info(small_node("n1"), bound("low", "n1", "2", 0))], pending=[pod])
    status, nominated, victims = run_post_filter(stub, pod, {"n1": INSUFFICIENT})
    assert (status.code, status.message(), nominated, victims) == (
        Code.UNSCHEDULABLE, "preemption: not eligible due to preemptionPolicy=Never.", None, ())
    assert stub.calls == []


def test_the_re_read_pod_decides_eligibility() -> None:
    queued = preemptor()
    latest = attrs.evolve(queued, preemption_policy="Never")
    stub = StubHandle([node_info(small_node("n1"), bound("low", "n1", "2", 0))], pending=[latest])
    status, _, _ = run_post_filter(stub, queued, {"n1": INSUFFICIENT})
    assert status.message() == "preemption: " + ERR_NOT_ELIGIBLE_NEVER


def test_missing_pod_is_an_error() -> None:
    stub = StubHandle([node_info(small_node("n1"))])
    status, nominated, _ = run_post_filter(stub, preemptor(), {"n1": INSUFFICIENT})
    assert (status.code, status.message(), nominated) == (Code.ERROR, 'preemption: pod "p" not found', None)


# --- potential nodes and the no-candidate FitError ---------------------------------------------


def test_potential_nodes_are_exactly_the_unschedulable_ones() -> None:
    infos = [node_info(small_node(n)) for n in ("a", "b", "c", "d", "e")]
    statuses = {"a": INSUFFICIENT, "b": UNRESOLVABLE, "d": Status.from_error("boom"),
                "e": Status(Code.PENDING, ("wait",), "X")}
    potential, not_helpful = nodes_where_preemption_might_help(infos, statuses)
    assert [info.name for info in potential] == ["a"]
    assert sorted(not_helpful) == ["b", "c"]
    assert all(s.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE and s.message() == ERR_NOT_HELPFUL
               for s in not_helpful.values())


@pytest.mark.parametrize(
    ("pods", "statuses", "message"),
    [
        ([], {"n1": UNRESOLVABLE, "n2": UNRESOLVABLE},
         "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
        ([], {"n1": INSUFFICIENT},
         "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
         "1 Preemption is not helpful for scheduling."),
        ([bound("high", "n1", "2", 500), bound("mid", "n2", "2", 100)], {"n1": INSUFFICIENT, "n2": INSUFFICIENT},
         "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."),
        ([bound("low", "n1", "1", 0), bound("big", "n2", "4", 0)], {"n1": UNRESOLVABLE, "n2": INSUFFICIENT},
         "preemption: 0/2 nodes are available: 1 Insufficient cpu, 1 Preemption is not helpful for scheduling."),
    ],
    ids=["all-unresolvable", "absent-node-not-helpful", "only-higher-or-equal-priority", "still-too-big"],
)
def test_no_candidate_fit_error(pods: list[Pod], statuses: dict[str, Status], message: str) -> None:
    infos = [node_info(small_node("n1"), *[p for p in pods if p.node_name == "n1"]),
             node_info(small_node("n2", "3"), *[p for p in pods if p.node_name == "n2"])]
    pod = preemptor(cpu="5", priority=100)
    stub = StubHandle(infos, pending=[pod])
    status, nominated, victims = run_post_filter(stub, pod, statuses)
    assert (status.code, status.message(), nominated, victims) == (Code.UNSCHEDULABLE, message, "", ())


def test_zero_victims_after_reprieve_is_an_error_aggregated_over_nodes() -> None:
    infos = [node_info(small_node(n), bound(f"low-{n}", n, "1", 0)) for n in ("n1", "n2")]
    pod = preemptor(cpu="1")
    stub = StubHandle(infos, pending=[pod])
    status, nominated, _ = run_post_filter(stub, pod, {"n1": INSUFFICIENT})
    assert (status.code, status.message(), nominated) == (
        Code.ERROR, 'preemption: expected at least one victim pod on node "n1"', None)
    status, _, _ = run_post_filter(stub, pod, {"n1": INSUFFICIENT, "n2": INSUFFICIENT})
    assert status.message() in (
        'preemption: [expected at least one victim pod on node "n1", expected at least one victim pod on node "n2"]',
        'preemption: [expected at least one victim pod on node "n2", expected at least one victim pod on node "n1"]')


def test_errors_are_ignored_when_another_node_is_a_candidate() -> None:
    infos = [node_info(small_node("n1"), bound("small", "n1", "1", 0)),
             node_info(small_node("n2"), bound("big", "n2", "2", 0))]
    pod = preemptor(cpu="1")
    stub = StubHandle(infos, pending=[pod])
    status, nominated, victims = run_post_filter(stub, pod, {"n1": INSUFFICIENT, "n2": INSUFFICIENT})
    assert (status.code, status.message(), nominated, victims) == (Code.SUCCESS, "", "n2", ("default/big",))


def test_no_candidate_node_message_constant() -> None:
    assert pick_one_candidate([]) is None
    assert ERR_NO_CANDIDATE == "no candidate node for preemption"


def test_extension_error_fails_the_node_and_the_whole_preemption() -> None:
    pod = preemptor(cpu="2")
    stub = StubHandle([node_info(small_node("n1"), bound("low", "n1", "1", 0))], pending=[pod], remove_error="bad")
    status, nominated, _ = run_post_filter(stub, pod, {"n1": INSUFFICIENT})
    assert (status.code, status.message(), nominated) == (
        Code.ERROR, 'preemption: running RemovePod on PreFilter plugin "X": bad', None)


def test_waiting_victims_are_rejected_not_listed_for_eviction() -> None:
    waiting = bound("waiting", "n1", "1", 0)
    other = bound("other", "n1", "1", 0)
    pod = preemptor(cpu="2")
    stub = StubHandle([node_info(small_node("n1"), waiting, other)], pending=[pod], waiting=[waiting])
    status, nominated, victims = run_post_filter(stub, pod, {"n1": INSUFFICIENT})
    assert (status.code, nominated, victims) == (Code.SUCCESS, "n1", ("default/other",))
    assert stub.waiting[waiting.uid].rejected == ("DefaultPreemption", "preempted")


# --- SelectVictimsOnNode ----------------------------------------------------------------------


def victims_on(pods: Sequence[Pod], pod: Pod, *, cpu: str = "4",
               pdbs: Sequence[PodDisruptionBudget] = ()) -> tuple[Victims | Status, StubHandle]:
    info = node_info(small_node("n1", cpu), *pods)
    stub = StubHandle([info], pdbs=pdbs)
    return select_victims_on_node(as_handle(stub), CycleState(), pod, info, budgets_of(pdbs)), stub


def names(outcome: Victims | Status) -> list[str]:
    assert isinstance(outcome, Victims), outcome
    return [p.name for p in outcome.pods]


@pytest.mark.parametrize(
    ("pods", "capacity", "expected"),
    [
        ([bound("v10", "n1", "1", 10), bound("v20", "n1", "1", 20), bound("v30", "n1", "1", 30),
          bound("v40", "n1", "1", 40)], "4", ["v20", "v10"]),
        ([bound("late", "n1", "1", 5, start=20.0), bound("early", "n1", "1", 5, start=10.0)], "3", ["late"]),
        ([bound("a", "n1", "1", 5, start=None), bound("b", "n1", "1", 5, start=None),
          bound("c", "n1", "1", 5, start=None)], "4", ["a"]),
        ([bound("none", "n1", "1", 5, start=None), bound("set", "n1", "1", 5, start=99.0)], "3", ["none"]),
        ([bound("neg", "n1", "1", -5), bound("zero", "n1", "1", 0)], "3", ["neg"]),
        ([bound("v1", "n1", "3", 1), bound("v2", "n1", "1", 2)], "4", ["v1"]),
        ([bound("v1", "n1", "1", 1), bound("same", "n1", "1", 100), bound("v2", "n1", "1", 2)], "4", ["v1"]),
    ],
    ids=["reprieve-highest-priority-first", "earlier-start-more-important",
         "missing-start-reverse-nodeinfo-order", "missing-start-after-recorded", "negative-priority",
         "big-low-priority-pod-evicted-small-kept", "equal-priority-never-victim"],
)
def test_victim_selection_and_reprieve_order(pods: list[Pod], capacity: str, expected: list[str]) -> None:
    outcome, _ = victims_on(pods, preemptor(cpu="2", priority=100), cpu=capacity)
    assert names(outcome) == expected


def test_no_lower_priority_pod_is_unresolvable() -> None:
    outcome, stub = victims_on([bound("same", "n1", "1", 100), bound("higher", "n1", "1", 200)], preemptor("4"))
    assert outcome == Status.unresolvable(ERR_NO_VICTIMS)
    assert stub.calls == []


def test_still_not_fitting_returns_the_filter_status() -> None:
    outcome, _ = victims_on([bound("low", "n1", "1", 0)], preemptor("8"), cpu="4")
    assert outcome == Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit")


def test_extensions_see_every_removal_and_reprieve_in_order() -> None:
    pods = [bound("a", "n1", "1", 1), bound("keep", "n1", "1", 200), bound("b", "n1", "1", 2)]
    outcome, stub = victims_on(pods, preemptor("2"), cpu="4")
    assert names(outcome) == ["a"]
    assert stub.calls == [
        ("remove", "n1", "a"), ("remove", "n1", "b"), ("filter", "n1", "keep"),
        ("add", "n1", "b"), ("filter", "n1", "b,keep"),
        ("add", "n1", "a"), ("filter", "n1", "a,b,keep"), ("remove", "n1", "a"),
    ]


def test_violating_victims_are_reprieved_first_and_counted() -> None:
    guarded = {"app": "guarded"}
    pods = [bound("g-low", "n1", "1", 1, labels=guarded), bound("free", "n1", "1", 5),
            bound("g-high", "n1", "1", 9, labels=guarded)]
    pdb = PodDisruptionBudget("guard", selector=LabelSelector({"app": "guarded"}), disruptions_allowed=1)
    outcome, _ = victims_on(pods, preemptor("2"), cpu="3", pdbs=[pdb])
    # importance order g-high, free, g-low: g-high takes the budget, g-low violates and is reprieved first
    assert isinstance(outcome, Victims)
    assert (names(outcome), outcome.num_pdb_violations) == (["g-high", "free"], 0)
    outcome, _ = victims_on(pods, preemptor("3"), cpu="3", pdbs=[pdb])
    assert isinstance(outcome, Victims)
    assert (names(outcome), outcome.num_pdb_violations) == (["g-low", "g-high", "free"], 1)


def _pdb(selector: LabelSelector | None, allowed: int = 0, *, namespace: str = "default",
         disrupted: frozenset[str] = frozenset()) -> PodDisruptionBudget:
    return PodDisruptionBudget("b", namespace, selector, allowed, disrupted)


_APP = LabelSelector({"app": "x"})


@pytest.mark.parametrize(
    ("labels", "namespace", "pdb", "violating"),
    [
        ({"app": "x"}, "default", _pdb(_APP), True),
        ({"app": "x"}, "default", _pdb(_APP, 1), False),
        ({"app": "y"}, "default", _pdb(_APP), False),
        ({"app": "x"}, "other", _pdb(_APP), False),
        ({"app": "x"}, "default", _pdb(_APP, disrupted=frozenset({"v"})), False),
        ({"app": "x"}, "default", _pdb(LabelSelector()), False),
        ({"app": "x"}, "default", _pdb(None), False),
        ({}, "default", _pdb(LabelSelector(match_expressions=(Requirement("app", "DoesNotExist"),))), False),
        ({"b": "1"}, "default", _pdb(LabelSelector(match_expressions=(Requirement("app", "DoesNotExist"),))), True),
    ],
    ids=["matched-no-budget", "matched-with-budget", "selector-mismatch", "other-namespace", "already-disrupted",
         "empty-selector-matches-nothing", "nil-selector-matches-nothing", "no-labels-never-match",
         "labelled-pod-matches-does-not-exist"],
)
def test_pdb_violation(labels: dict[str, str], namespace: str, pdb: PodDisruptionBudget, violating: bool) -> None:
    info = PodInfo.of(bound("v", "n1", "1", 0, labels=labels, namespace=namespace))
    got_violating, got_ok = split_by_pdb_violation([info], budgets_of([pdb]))
    assert (got_violating, got_ok) == (([info], []) if violating else ([], [info]))


def test_pdb_budget_is_spent_in_order_and_every_matching_pdb_is_charged() -> None:
    infos = [PodInfo.of(bound(f"v{i}", "n1", "1", 0, labels={"app": "x", "tier": "t"})) for i in range(3)]
    one = _pdb(_APP, 1)
    two = attrs.evolve(_pdb(LabelSelector({"tier": "t"}), 2), name="tier")
    violating, ok = split_by_pdb_violation(infos, budgets_of([one, two]))
    assert [i.pod.name for i in ok] == ["v0"]
    assert [i.pod.name for i in violating] == ["v1", "v2"]


def test_pdb_budget_is_fresh_for_every_node() -> None:
    pdb = _pdb(_APP, 1)
    infos = [node_info(small_node(n), bound(f"g-{n}", n, "2", 0, labels={"app": "x"})) for n in ("n1", "n2")]
    stub = StubHandle(infos, pdbs=[pdb])
    for info in infos:
        outcome = select_victims_on_node(as_handle(stub), CycleState(), preemptor("1"), info, budgets_of([pdb]))
        assert isinstance(outcome, Victims)
        assert outcome.num_pdb_violations == 0


# --- importance sort --------------------------------------------------------------------------


def test_more_important_comparison() -> None:
    early, late, unknown = (bound(n, "n", "1", 5, start=s) for n, s in (("e", 1.0), ("l", 2.0), ("u", None)))
    assert more_important(bound("h", "n", "1", 6, start=None), early)
    assert more_important(early, late)
    assert not more_important(late, early)
    assert more_important(late, unknown)
    assert not more_important(unknown, late)
    assert more_important(unknown, unknown)  # "now" read per pod: always earlier than the next read
    assert not more_important(early, early)


@pytest.mark.parametrize("count", [2, 5, 12], ids=["two", "five", "twelve"])
def test_missing_start_times_sort_in_reverse_nodeinfo_order(count: int) -> None:
    infos = [PodInfo.of(bound(f"v{i}", "n", "1", 5, start=None)) for i in range(count)]
    sort_by_importance(infos)
    assert [i.pod.name for i in infos] == [f"v{i}" for i in reversed(range(count))]


def test_pods_with_start_time_come_first_and_keep_their_order() -> None:
    pods = [bound("u1", "n", "1", 5, start=None), bound("s2", "n", "1", 5, start=2.0),
            bound("u2", "n", "1", 5, start=None), bound("s1", "n", "1", 5, start=1.0), bound("hi", "n", "1", 9)]
    infos = [PodInfo.of(p) for p in pods]
    sort_by_importance(infos)
    assert [i.pod.name for i in infos] == ["hi", "s1", "s2", "u2", "u1"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-5, max_value=5), max_size=300))
def test_go_sort_sorts_a_consistent_order(values: list[int]) -> None:
    items = list(enumerate(values))
    go_sort_slice(items, lambda a, b: a[1] < b[1])
    assert [v for _, v in items] == sorted(values)
    assert sorted(i for i, _ in items) == list(range(len(values)))


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=2**32))
def test_go_sort_survives_an_inconsistent_comparison(length: int, seed: int) -> None:
    rnd = random.Random(seed)
    items = list(range(length))
    go_sort_slice(items, lambda a, b: rnd.random() < 0.5)
    assert sorted(items) == list(range(length))


# --- candidate selection ----------------------------------------------------------------------


def cand(name: str, *victims: tuple[int, float | None], violations: int = 0) -> Candidate:
    pods = tuple(bound(f"{name}-{i}", name, "1", prio, start=start) for i, (prio, start) in enumerate(victims))
    return Candidate(name, pods, violations)


@pytest.mark.parametrize(
    ("candidates", "expected"),
    [
        ([cand("a", (1, 1.0), violations=1), cand("b", (50, 1.0))], "b"),
        ([cand("a", (10, 1.0)), cand("b", (5, 1.0), (1, 1.0))], "b"),
        ([cand("a", (5, 1.0), (9, 1.0), violations=1), cand("b", (6, 1.0), violations=1)], "a"),
        ([cand("a", (5, 1.0), (4, 1.0)), cand("b", (5, 1.0), (3, 1.0))], "b"),
        ([cand("a", (-10, 1.0), (-10, 1.0)), cand("b", (-10, 1.0))], "b"),
        ([cand("a", (5, 1.0), (-2**31, 1.0)), cand("b", (5, 1.0))], "b"),
        ([cand("a", (5, 1.0), (1, 1.0), (1, 1.0)), cand("b", (5, 1.0), (2, 1.0))], "b"),
        ([cand("a", (5, 1.0), (2, 9.0)), cand("b", (5, 3.0), (2, 1.0))], "b"),
        ([cand("a", (5, 3.0)), cand("b", (5, None))], "b"),
        ([cand("a", (5, 1.0)), cand("b", (5, 1.0)), cand("c", (5, 1.0))], "a"),
        ([cand("only", (99, 1.0), violations=3)], "only"),
    ],
    ids=["fewest-pdb-violations", "lowest-top-priority", "first-victim-not-highest", "lowest-priority-sum",
         "sum-with-negative-priorities", "sum-offsets-min-int32", "fewest-victims", "latest-start-of-top-victims",
         "missing-start-is-now", "full-tie-first-found", "single"],
)
def test_pick_one_candidate(candidates: list[Candidate], expected: str) -> None:
    picked = pick_one_candidate(candidates)
    assert picked is not None
    assert picked.name == expected


_VICTIM = st.tuples(st.integers(-2, 2), st.none() | st.sampled_from([0.0, 1.0, 2.0, float("nan")]))


@given(st.lists(st.tuples(st.integers(0, 2), st.lists(_VICTIM, max_size=3)), max_size=7), st.booleans())
def test_pick_by_rank_is_the_criteria_applied_in_turn(spec: list[tuple[int, list[tuple[int, float | None]]]],
                                                      picked_before: bool) -> None:
    """Ranks compared as tuples (kept on each candidate) pick what kube's rounds of criteria pick;
    candidates without victims or with NaN start times go the rounds' way, errors included."""
    candidates = [cand(f"n{i}", *victims, violations=v) for i, (v, victims) in enumerate(spec)]

    def outcome(pick: Callable[[Sequence[Candidate]], Candidate | None]) -> object:
        try:
            return pick(candidates)
        except IndexError as exc:
            return type(exc)

    if picked_before:
        outcome(pick_one_candidate)  # ranks already kept on the candidates
    assert outcome(pick_one_candidate) is outcome(default_preemption._pick_in_turn)


@given(st.lists(st.tuples(st.integers(0, 2), st.lists(st.integers(-3, 3), min_size=1, max_size=3)),
                min_size=1, max_size=6))
def test_pick_prefers_fewest_violations(spec: list[tuple[int, list[int]]]) -> None:
    candidates = [cand(f"n{i}", *[(p, 1.0) for p in prios], violations=v) for i, (v, prios) in enumerate(spec)]
    picked = pick_one_candidate(candidates)
    assert picked is not None
    assert picked.num_pdb_violations == min(c.num_pdb_violations for c in candidates)


# --- the dry run ------------------------------------------------------------------------------


def _viable_nodes(count: int) -> list[NodeInfo]:
    return [node_info(small_node(f"n{i}"), bound(f"low-{i}", f"n{i}", "2", 0)) for i in range(count)]


@pytest.mark.parametrize(
    ("args", "visited"),
    [(DefaultPreemptionArgs(0, 1), 1), (DefaultPreemptionArgs(0, 3), 3), (DefaultPreemptionArgs(), 5),
     (DefaultPreemptionArgs(40, 0), 2)],
    ids=["abs-1-stops-at-first", "abs-3", "defaults-visit-all", "pct-40-of-5"],
)
def test_dry_run_stops_after_enough_candidates(args: DefaultPreemptionArgs, visited: int) -> None:
    pod = preemptor(cpu="1")
    stub = StubHandle(_viable_nodes(5), pending=[pod], seed=3)
    status, nominated, _ = run_post_filter(stub, pod, {f"n{i}": INSUFFICIENT for i in range(5)}, args)
    assert status.is_success
    seen = list(dict.fromkeys(node for kind, node, _ in stub.calls if kind == "remove"))
    assert len(seen) == visited
    start = random.Random(3).randrange(5)
    assert seen == [f"n{(start + i) % 5}" for i in range(visited)]
    assert nominated == seen[0]


def test_dry_run_does_not_stop_before_a_non_violating_candidate() -> None:
    guarded = {"app": "g"}
    infos = [node_info(small_node(f"n{i}"), bound(f"g{i}", f"n{i}", "2", 0, labels=guarded)) for i in range(3)]
    infos.append(node_info(small_node("n3"), bound("free", "n3", "2", 0)))
    pdb = PodDisruptionBudget("g", selector=LabelSelector(guarded), disruptions_allowed=0)
    pod = preemptor(cpu="1")
    stub = StubHandle(infos, pending=[pod], pdbs=[pdb], seed=0)
    status, nominated, victims = run_post_filter(stub, pod, {f"n{i}": INSUFFICIENT for i in range(4)},
                                                 DefaultPreemptionArgs(0, 1))
    assert (status.is_success, nominated, victims) == (True, "n3", ("default/free",))


# --- end to end through explain and the Scheduler -----------------------------------------------


def test_explain_reports_the_preemption() -> None:
    cluster = load_cluster([small_node("n1"), small_node("n2"), bound("a", "n1", "2", 10), bound("b", "n2", "2", 5)])
    out = explain(cluster, preemptor(cpu="2")).to_dict()
    assert out["postfilter"]["nominatedNode"] == "n2"
    assert out["postfilter"]["victims"] == ["default/b"]
    assert out["postfilter"]["code"] == "Success"
    assert out["message"] == "0/2 nodes are available: 2 Insufficient cpu."


def test_scheduler_nominates_then_binds_after_the_embedder_evicts() -> None:
    clock = FakeClock()
    scheduler = Scheduler(seed=1, clock=clock)
    low = bound("low", "n1", "2", 0)
    scheduler.add_objects([small_node("n1"), low, preemptor(cpu="2")])
    result = scheduler.schedule_one()
    assert result is not None
    assert (result.node_name, result.nominated_node_name, result.victims) == (None, "n1", ("default/low",))
    assert result.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert scheduler.nominations() == {"default/p": "n1"}
    scheduler.remove_pod(low)
    clock.advance(60)
    placed = [r for r in scheduler.run_until_idle() if r.node_name]
    assert [(r.pod.name, r.node_name) for r in placed] == [("p", "n1")]


def test_preemption_drops_lower_priority_nominations_on_the_chosen_node() -> None:
    scheduler = Scheduler(seed=1, clock=FakeClock())
    waiting = make_pod("nominated-low", requests={"cpu": "1"}, priority=50, nominated_node_name="n1")
    elsewhere = make_pod("nominated-elsewhere", requests={"cpu": "1"}, priority=50, nominated_node_name="n2")
    scheduler.add_objects([small_node("n1"), small_node("n2", "1"), bound("victim", "n1", "2", 0),
                           bound("busy", "n2", "1", 1000), waiting, elsewhere])
    assert scheduler.nominations() == {"default/nominated-low": "n1", "default/nominated-elsewhere": "n2"}
    scheduler.add_pod(preemptor(cpu="2", priority=100))
    result = scheduler.schedule_one()
    assert result is not None
    assert (result.pod.name, result.nominated_node_name) == ("p", "n1")
    assert scheduler.nominations() == {"default/p": "n1", "default/nominated-elsewhere": "n2"}
    assert scheduler.pending()["default/nominated-low"][1].pod.nominated_node_name == ""


# --- properties -------------------------------------------------------------------------------

_GUARDED = {"app": "guarded"}


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[Any], Pod, list[PodDisruptionBudget]]:
    node_count = draw(st.integers(1, 4))
    objects: list[Any] = []
    for n in range(node_count):
        capacity = draw(st.integers(2, 4))
        objects.append(small_node(f"n{n}", str(capacity)))
        for i in range(draw(st.integers(0, 4))):
            objects.append(bound(
                f"v{n}-{i}", f"n{n}", str(draw(st.sampled_from([0.5, 1, 2]))), draw(st.integers(0, 4)),
                start=draw(st.sampled_from([None, 1.0, 2.0])),
                labels=_GUARDED if draw(st.booleans()) else {"app": "free"}))
    pdbs = [PodDisruptionBudget("guard", selector=LabelSelector(_GUARDED), disruptions_allowed=draw(st.integers(0, 2)))]
    pod = preemptor(cpu=str(draw(st.integers(1, 3))), priority=draw(st.integers(2, 5)))
    return objects, pod, pdbs


def _fits_after(objects: list[Any], pod: Pod, victims: Sequence[str], node: str) -> bool:
    rest = [o for o in objects if not (isinstance(o, Pod) and o.key in victims)]
    return node in explain(load_cluster(rest), pod).to_dict()["feasible"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_preemption_properties(cluster: tuple[list[Any], Pod, list[PodDisruptionBudget]]) -> None:
    objects, pod, pdbs = cluster
    out = explain(load_cluster([*objects, *pdbs]), pod).to_dict()
    post = out["postfilter"]
    assume(post is not None)
    event(f"postfilter {post['code']}")
    if post["code"] != "Success":
        return
    by_key = {o.key: o for o in objects if isinstance(o, Pod)}
    victims = [by_key[key] for key in post["victims"]]
    assert victims
    # never a victim of equal or higher priority, and all victims on the nominated node
    assert all(v.effective_priority < pod.effective_priority for v in victims)
    assert {v.node_name for v in victims} == {post["nominatedNode"]}
    # after evicting the victims the pod passes the filters on the nominated node
    assert _fits_after(objects, pod, post["victims"], post["nominatedNode"])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])  # most clusters lack such a node
@given(clusters())
def test_no_pdb_violation_when_an_unprotected_node_can_host_the_pod(
        cluster: tuple[list[Any], Pod, list[PodDisruptionBudget]]) -> None:
    objects, pod, pdbs = cluster
    pods = [o for o in objects if isinstance(o, Pod)]
    nodes = [o for o in objects if not isinstance(o, Pod)]
    want = PodInfo.of(pod).requests.milli_cpu

    def unprotected_node_helps(node: Any) -> bool:
        here = [p for p in pods if p.node_name == node.name]
        lower = [p for p in here if p.effective_priority < pod.effective_priority]
        kept = sum(PodInfo.of(p).requests.milli_cpu for p in here if p not in lower)
        capacity = NodeInfo.of(node).allocatable.milli_cpu
        return bool(lower) and all(p.labels != _GUARDED for p in lower) and kept + want <= capacity

    assume(any(unprotected_node_helps(node) for node in nodes))
    out = explain(load_cluster([*objects, *pdbs]), pod).to_dict()
    post = out["postfilter"]
    if post is None:  # the pod fits somewhere already
        return
    assert post["code"] == "Success"
    event("preempted")
    guarded_victims = [key for key in post["victims"] if next(p for p in pods if p.key == key).labels == _GUARDED]
    assert len(guarded_victims) <= pdbs[0].disruptions_allowed
