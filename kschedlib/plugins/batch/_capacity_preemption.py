"""kube's preemption evaluator as CapacityScheduling configures it.

The steps of :mod:`kschedlib.plugins.default_preemption` with scheduler-plugins'
choices: eligibility also waits for terminating pods the quota rules would let the
pod evict; every potential node is tried, from the first; victims come from
:func:`kschedlib.plugins.batch._capacity_victims.select_victims`; the best candidate is
picked with kube's default criteria.  Extenders are not consulted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, fit_error_message
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PostFilterResult
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.plugins._helpers.preemption_victims import Budget, Victims, budgets_of
from kschedlib.plugins.batch._capacity_victims import PRE_FILTER_KEY, QUOTA_KEY, select_victims
from kschedlib.plugins.default_preemption import (
    ERR_NO_CANDIDATE,
    ERR_NOT_ELIGIBLE_NEVER,
    ERR_NOT_ELIGIBLE_TERMINATING,
    PREEMPT_NEVER,
    PREEMPTED,
    Candidate,
    nodes_where_preemption_might_help,
    pick_one_candidate,
)

__all__ = ["eligible_to_preempt", "preempt"]


def eligible_to_preempt(state: CycleState, pod: Pod, node_info: NodeInfo | None,
                        nominated_status: Status | None) -> str:
    """Why ``pod`` may not preempt now, or ``""`` (scheduler-plugins' ``PodEligibleToPreemptOthers``)."""
    if pod.preemption_policy == PREEMPT_NEVER:
        return ERR_NOT_ELIGIBLE_NEVER
    infos, pre = state.get(QUOTA_KEY), state.get(PRE_FILTER_KEY)
    if pre is None:
        return "not eligible due to failed to read from cycleState"
    if not pod.nominated_node_name or infos is None or node_info is None:
        return ""
    if nominated_status is not None and nominated_status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return ""
    priority = pod.effective_priority
    own = infos.get(pod.namespace)
    over_min = own is not None and own.used_over_min_with(pre.nominated_in_quota_with_pod)
    for info in node_info.pods:
        other = info.pod
        quota = infos.get(other.namespace)
        if own is None:
            blocking = quota is None and other.deletion_timestamp is not None and other.effective_priority < priority
        elif other.deletion_timestamp is None or quota is None:
            blocking = False
        elif other.namespace == pod.namespace:
            blocking = other.effective_priority < priority
        else:
            blocking = not over_min and quota.used_over_min()
        if blocking:
            return ERR_NOT_ELIGIBLE_TERMINATING
    return ""


def _dry_run(handle: Handle, state: CycleState, pod: Pod, potential: Sequence[NodeInfo], budgets: Sequence[Budget],
             gang_aware: bool) -> tuple[list[Candidate], dict[str, Status]]:
    non_violating: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[str, Status] = {}
    for node_info in potential:
        outcome = select_victims(handle, state.clone(), pod, node_info, budgets, gang_aware=gang_aware)
        if isinstance(outcome, Victims) and outcome.pods:
            group = violating if outcome.num_pdb_violations else non_violating
            group.append(Candidate(node_info.name, outcome.pods, outcome.num_pdb_violations))
            continue
        if isinstance(outcome, Victims):
            outcome = Status.from_error(f'expected at least one victim pod on node "{node_info.name}"')
        statuses[node_info.name] = outcome
    return non_violating + violating, statuses


def preempt(handle: Handle, plugin: str, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status], *,
            gang_aware: bool) -> PostFilterResult:
    """Nominate ``pod`` where evicting the chosen victims makes room; waiting victims are rejected here."""
    latest = handle.get_pod(pod.namespace, pod.name)
    if latest is None:
        return PostFilterResult(Status.from_error(f'pod "{pod.name}" not found'))
    snapshot = handle.snapshot
    nominated = latest.nominated_node_name
    reason = eligible_to_preempt(state, latest, snapshot.find(nominated) if nominated else None,
                                 node_statuses.get(nominated) if nominated else None)
    if reason:
        return PostFilterResult(Status.unschedulable(reason))
    potential, not_helpful = nodes_where_preemption_might_help(snapshot.node_infos, node_statuses)
    candidates: list[Candidate] = []
    statuses: dict[str, Status] = {}
    if potential:
        budgets = budgets_of(handle.pod_disruption_budgets())
        candidates, statuses = _dry_run(handle, state, latest, potential, budgets, gang_aware)
    statuses.update(not_helpful)
    if not candidates:
        errors = [s.message() for s in statuses.values() if s.code is Code.ERROR]
        if errors:
            return PostFilterResult(Status.from_error(errors[0]))
        return PostFilterResult(Status.unschedulable(fit_error_message(len(snapshot.node_infos),
                                                                       Diagnosis(statuses))), "")
    best = pick_one_candidate(candidates)
    if best is None:
        return PostFilterResult(Status.unschedulable(ERR_NO_CANDIDATE))
    evict: list[str] = []
    for victim in best.victims:
        waiting = handle.get_waiting_pod(victim.uid)
        if waiting is not None:
            waiting.reject(plugin, PREEMPTED)
        else:
            evict.append(victim.key)
    return PostFilterResult(Status.success(), best.name, tuple(evict))
