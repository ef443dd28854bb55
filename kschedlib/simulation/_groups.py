"""PodGroup and ElasticQuota state, as ``simulate`` and ``explain`` report it.

Both sections appear only when the cluster holds such objects, so results for clusters without the
batch CRDs keep their keys.  A group's ``phase`` is the one the PodGroup controller would write for
its pods now; counts are members (pods naming the group), ``bound`` (placed, not waiting at Permit),
``waiting`` (parked at Coscheduling's Permit), ``assumed`` (placed in the scheduler's cache, waiting
ones included: what Permit counts against ``minMember``) and ``pending`` (not placed).  A quota's
``used`` is what CapacityScheduling charges: the requests of the namespace's placed pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kschedlib.model.objects import Pod
from kschedlib.model.quantity import Quantity
from kschedlib.model.resources import Resources
from kschedlib.model.scheduling_crds import POD_GROUP_LABEL, PodGroup
from kschedlib.scheduler import Scheduler

if TYPE_CHECKING:
    from kschedlib.plugins.batch.coscheduling import Coscheduling

# The batch plugins' modules are imported by the functions below, once there is a PodGroup or an
# ElasticQuota to report on: a cluster without them never needs them.

__all__ = ["elastic_quota_report", "explain_group_sections", "group_lines", "pod_group_report", "quota_lines"]

def _coscheduling(scheduler: Scheduler) -> Coscheduling | None:
    from kschedlib.plugins.batch.coscheduling import Coscheduling

    plugin = scheduler.plugin(Coscheduling.name)
    return plugin if isinstance(plugin, Coscheduling) else None


def _group_state(scheduler: Scheduler, group: PodGroup, placed: Mapping[str, str],
                 asked: Pod | None = None) -> dict[str, Any]:
    """One group's phase, counts and timeouts (``group`` carries the controller's status); ``asked``
    (the pod ``explain`` is about) counts as a member though the scheduler does not hold it."""
    members = [pod.key for pod in scheduler.scheduling_objects.group_pods(group.namespace, group.name)]
    if asked is not None and asked.key not in members:
        members.append(asked.key)
    permit_deadlines = scheduler.permit_deadlines()
    waiting = {key: permit_deadlines[key] for key in members if key in permit_deadlines}
    deadlines = [deadline for deadline in waiting.values() if deadline is not None]
    plugin = _coscheduling(scheduler)
    timeout = plugin.wait_seconds(group) if plugin is not None else group.schedule_timeout_seconds
    assumed = sum(1 for key in members if key in placed)
    return {
        "phase": group.phase,
        "minMember": group.min_member,
        "members": len(members),
        "bound": assumed - len(waiting),
        "waiting": len(waiting),
        "assumed": assumed,
        "pending": len(members) - assumed,
        "running": group.running,
        "succeeded": group.succeeded,
        "failed": group.failed,
        "scheduleTimeoutSeconds": timeout,
        "scheduleStartTime": group.schedule_start_time,
        "waitingTimesOutAt": min(deadlines) if deadlines else None,
    }


def pod_group_report(scheduler: Scheduler) -> dict[str, dict[str, Any]]:
    """``namespace/name`` -> the state of every PodGroup (see the module docstring)."""
    if not scheduler.scheduling_objects.pod_groups():
        return {}  # no PodGroup: the batch plugins stay unimported
    from kschedlib.plugins.batch.coscheduling import pod_group_statuses

    placed = scheduler.bound_pods()
    return {group.key: _group_state(scheduler, group, placed)
            for group in pod_group_statuses(scheduler.scheduling_objects)}


def _amounts(resources: Resources, names: Iterable[str]) -> dict[str, str]:
    """``resources`` as quantity strings for ``names`` (cpu in milli-units becomes ``1500m`` or ``2``)."""
    out = {}
    for name in sorted(set(names)):
        amount = resources.get(name)
        out[name] = (f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m") if name == "cpu" else str(amount)
    return out


def _listed(resources: Mapping[str, Quantity] | None) -> dict[str, str] | None:
    return None if resources is None else {name: str(value) for name, value in sorted(resources.items())}


def elastic_quota_report(scheduler: Scheduler) -> dict[str, dict[str, Any]]:
    """namespace -> its ElasticQuota's min, max (as written; ``None``: absent) and used now."""
    quotas = scheduler.scheduling_objects.elastic_quotas()
    if not quotas:
        return {}
    from kschedlib.plugins.batch._elastic_quota import UPPER_BOUND_OF_MAX, exceeds, quota_infos

    pods: dict[str, list[Pod]] = {}
    for node_info in scheduler.snapshot().node_infos:  # finished pods never reach the cache
        for pod_info in node_info.pods:
            pods.setdefault(pod_info.pod.namespace, []).append(pod_info.pod)
    infos = quota_infos(quotas, pods)
    names_by_namespace: dict[str, str] = {}
    for quota in quotas:  # the first quota of a namespace is the one that counts, as in quota_infos
        names_by_namespace.setdefault(quota.namespace, quota.name)
    report = {}
    for quota in quotas:
        if names_by_namespace[quota.namespace] != quota.name or quota.namespace in report:
            continue
        info = infos[quota.namespace]
        names = {*(quota.min or {}), *(quota.max or {}), *(k for k, v in info.used.to_dict().items() if v)}
        report[quota.namespace] = {
            "name": quota.name, "min": _listed(quota.min), "max": _listed(quota.max),
            "used": _amounts(info.used, names), "pods": len(info.pods),
            "overMin": info.used_over_min(), "overMax": exceeds(info.used, Resources(), info.max, UPPER_BOUND_OF_MAX),
        }
    return dict(sorted(report.items()))


def explain_group_sections(scheduler: Scheduler, pod: Pod) -> dict[str, Any]:
    """For ``explain``: the pod's PodGroup state (``pod_group``) and every quota (``elastic_quotas``)."""
    sections: dict[str, Any] = {}
    name = pod.labels.get(POD_GROUP_LABEL)
    if name:
        from kschedlib.plugins.batch._pod_group_manager import reconcile_status

        objects = scheduler.scheduling_objects
        for stored in objects.pod_groups():
            if stored.namespace == pod.namespace and stored.name == name:
                members = [p for p in (*objects.group_pods(stored.namespace, stored.name),
                                        *objects.ended_group_pods(stored.namespace, stored.name)) if p.key != pod.key]
                group = reconcile_status(stored, [*members, pod])  # the pod asked about counts as a member
                state = _group_state(scheduler, group, scheduler.bound_pods(), pod)
                sections["pod_group"] = {"name": group.key, **state}
    quotas = elastic_quota_report(scheduler)
    if quotas:
        sections["elastic_quotas"] = quotas
    return sections


def group_lines(name: str, state: Mapping[str, Any]) -> str:
    """One line of text for a group's state."""
    timeout = state["scheduleTimeoutSeconds"]
    text = (f"{name}: {state['phase'] or '(no phase)'}, minMember {state['minMember']}, {state['members']} members: "
            f"{state['bound']} bound, {state['waiting']} waiting, {state['pending']} pending")
    return text + (f"; Permit timeout {timeout}s" if timeout is not None else "")


def quota_lines(quotas: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line of text per namespace quota."""
    def fmt(amounts: Mapping[str, str] | None) -> str:
        return "-" if amounts is None else ",".join(f"{k}={v}" for k, v in amounts.items()) or "{}"

    lines = []
    for namespace, quota in quotas.items():
        flag = " OVER MAX" if quota["overMax"] else (" (borrowing)" if quota["overMin"] else "")
        lines.append(f"  {namespace} ({quota['name']}): used {fmt(quota['used'])}; min {fmt(quota['min'])}; "
                     f"max {fmt(quota['max'])}{flag}")
    return lines
