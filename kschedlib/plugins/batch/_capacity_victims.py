"""Quota-aware and gang-aware victim selection on one node, for CapacityScheduling's preemption.

scheduler-plugins' ``preemptor.SelectVictimsOnNode`` at d250c4b9:

* a preemptor whose namespace has a quota and would be over its min (with the
  nominated pods of its namespace) may only evict lower-priority pods of its own
  namespace; under its min it reclaims: it may evict pods of *other* quota
  namespaces that use more than their min, whatever their priority;
* a preemptor without a quota may evict lower-priority pods of namespaces without one;
* after the dry-run removal the pod must fit, and its namespace must stay within max
  and the cluster within the sum of mins ("global quota max exceeded");
* reprieve as kube's default preemption does, also evicting a reprieved pod whose
  return would push the quotas over (scheduler-plugins may list such a pod twice; here once).

Gang awareness (beyond scheduler-plugins, which evicts pod by pod): the pods of
one PodGroup are taken together or not at all.  A gang is a candidate only if
every member the cluster has on a node may be evicted by the rules above; its
members on this node are removed and reprieved as one unit; when the unit is
evicted, its members on other nodes are evicted with it.  The preemptor never
evicts members of its own gang.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.model.resources import Resources
from kschedlib.plugins._helpers.go_sort import go_sort_slice
from kschedlib.plugins._helpers.preemption_victims import (
    Budget,
    Victims,
    _NodeCopy,
    more_important,
    split_by_pdb_violation,
)
from kschedlib.plugins.batch._elastic_quota import QuotaInfos
from kschedlib.plugins.batch._pod_group_manager import group_full_name

__all__ = ["PRE_FILTER_KEY", "QUOTA_KEY", "QuotaPreFilterState", "select_victims"]

ERR_GLOBAL_MAX: Final = "global quota max exceeded"
_SUCCESS: Final = Code.SUCCESS


@final
@attrs.frozen(slots=True, repr=False)
class QuotaPreFilterState(FieldsRepr):
    """The pod's requests, plus the nominated pods that count against its namespace / against all mins."""

    pod_request: Resources
    nominated_in_quota_with_pod: Resources
    nominated_with_pod: Resources

    def clone(self) -> QuotaPreFilterState:
        return self


QUOTA_KEY: Final[StateKey[QuotaInfos]] = StateKey("ElasticQuotaSnapshot")
PRE_FILTER_KEY: Final[StateKey[QuotaPreFilterState]] = StateKey("PreFilterCapacityScheduling")


def _rule(pod: Pod, infos: QuotaInfos, over_min: bool) -> Callable[[Pod], bool]:
    """Which pods the preemptor may evict under the quota rules (module docstring)."""
    priority = pod.effective_priority
    if pod.namespace not in infos:
        return lambda p: p.namespace not in infos and p.effective_priority < priority
    if over_min:
        return lambda p: p.namespace == pod.namespace and p.effective_priority < priority
    return lambda p: p.namespace != pod.namespace and p.namespace in infos and infos[p.namespace].used_over_min()


def _whole_gang_evictable(handle: Handle, member: Pod, may_evict: Callable[[Pod], bool]) -> bool:
    namespace, _, name = group_full_name(member).partition("/")
    return all(may_evict(p) for p in handle.scheduling_objects.group_pods(namespace, name) if p.node_name)


def _units(infos: Sequence[PodInfo]) -> list[list[PodInfo]]:
    """The pods in order, gang members gathered into the unit of their first (most important) one."""
    units: list[list[PodInfo]] = []
    by_gang: dict[str, list[PodInfo]] = {}
    for info in infos:
        gang = group_full_name(info.pod)
        if not gang:
            units.append([info])
        elif gang in by_gang:
            by_gang[gang].append(info)
        else:
            by_gang[gang] = unit = [info]
            units.append(unit)
    return units


def _potential(handle: Handle, pod: Pod, node_info: NodeInfo, infos: QuotaInfos, over_min: bool,
               gang_aware: bool) -> list[PodInfo]:
    may_evict = _rule(pod, infos, over_min)
    own_gang = group_full_name(pod)
    ordered = list(node_info.pods)
    go_sort_slice(ordered, lambda a, b: not more_important(a.pod, b.pod))
    potential = [info for info in ordered if may_evict(info.pod)]
    if not gang_aware:
        return potential
    checked: dict[str, bool] = {}
    kept: list[PodInfo] = []
    for info in potential:
        gang = group_full_name(info.pod)
        if gang and gang == own_gang:
            continue
        if gang and gang not in checked:
            checked[gang] = _whole_gang_evictable(handle, info.pod, may_evict)
        if not gang or checked[gang]:
            kept.append(info)
    return kept


def _quota_over(infos: QuotaInfos, namespace: str, in_quota: Resources, everywhere: Resources) -> bool:
    info = infos.get(namespace)
    return info is not None and (info.used_over_max_with(in_quota) or infos.aggregated_used_over_min_with(everywhere))


def select_victims(handle: Handle, state: CycleState, pod: Pod, node_info: NodeInfo, budgets: Sequence[Budget],
                   *, gang_aware: bool) -> Victims | Status:
    """The victims on ``node_info`` (gang members elsewhere included), or why the node cannot help."""
    infos = state.get(QUOTA_KEY)
    pre = state.get(PRE_FILTER_KEY)
    if infos is None or pre is None:
        return Status.unschedulable("Failed to read elasticQuotaSnapshot from cycleState")
    own = infos.get(pod.namespace)
    over_min = own is not None and own.used_over_min_with(pre.nominated_in_quota_with_pod)
    potential = _potential(handle, pod, node_info, infos, over_min, gang_aware)
    node = _NodeCopy(handle, state, pod, node_info)
    for info in potential:
        if (status := node.remove(info)).code is not _SUCCESS:
            return status
    if not potential:
        return Status.unresolvable(f"No victims found on node {node_info.name} for preemptor pod {pod.name}")
    if (status := node.fits()).code is not _SUCCESS:
        return status
    if _quota_over(infos, pod.namespace, pre.pod_request, pre.pod_request):
        return Status.unschedulable(ERR_GLOBAL_MAX)
    go_sort_slice(potential, lambda a, b: more_important(a.pod, b.pod))
    violating, non_violating = split_by_pdb_violation(potential, budgets)
    victims: list[Pod] = []
    violations = 0
    for group, violates in ((violating, 1), (non_violating, 0)):
        for unit in (_units(group) if gang_aware else [[info] for info in group]):
            outcome = _reprieve(node, unit, infos, pod.namespace, pre)
            if isinstance(outcome, Status):
                return outcome
            if outcome:
                victims.extend(info.pod for info in unit)
                violations += violates * len(unit)
    if gang_aware:
        victims.extend(_gang_members_elsewhere(handle, victims, node_info.name))
    return Victims(tuple(victims), violations)


def _reprieve(node: _NodeCopy, unit: Sequence[PodInfo], infos: QuotaInfos, namespace: str,
              pre: QuotaPreFilterState) -> bool | Status:
    """Put the unit back; ``True`` (evict it) when the pod no longer fits or the quotas would be exceeded."""
    for info in unit:
        if (status := node.add(info)).code is not _SUCCESS:
            return status
    if node.fits().code is _SUCCESS and not _quota_over(infos, namespace, pre.nominated_in_quota_with_pod,
                                                      pre.nominated_with_pod):
        return False
    for info in unit:
        if (status := node.remove(info)).code is not _SUCCESS:
            return status
    return True


def _gang_members_elsewhere(handle: Handle, victims: Sequence[Pod], node_name: str) -> list[Pod]:
    seen = {pod.key for pod in victims}
    extra: list[Pod] = []
    for gang in dict.fromkeys(group_full_name(pod) for pod in victims if group_full_name(pod)):
        namespace, _, name = gang.partition("/")
        for member in handle.scheduling_objects.group_pods(namespace, name):
            if member.node_name and member.node_name != node_name and member.key not in seen:
                seen.add(member.key)
                extra.append(member)
    return extra
