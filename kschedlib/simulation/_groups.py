"""The state of each PodGroup at the end of a simulation, for the ``simulate`` report."""

from __future__ import annotations

from typing import Any

from kschedlib.plugins.coscheduling import pod_group_statuses
from kschedlib.scheduler import Scheduler

__all__ = ["pod_group_report"]


def pod_group_report(scheduler: Scheduler) -> dict[str, dict[str, Any]]:
    """``namespace/name`` -> phase (as the PodGroup controller would write it), minMember and member counts."""
    placed = scheduler.bound_pods()
    waiting = set(scheduler.waiting_pods())
    report: dict[str, dict[str, Any]] = {}
    objects = scheduler.scheduling_objects
    for group in pod_group_statuses(objects):
        members = [pod.key for pod in objects.group_pods(group.namespace, group.name)]
        report[group.key] = {
            "phase": group.phase,
            "minMember": group.min_member,
            "members": len(members),
            "bound": sum(1 for key in members if key in placed and key not in waiting),
            "waiting": sum(1 for key in members if key in waiting),
        }
    return report
