"""What batch-scheduling plugins read besides the snapshot: PodGroups, ElasticQuotas and gang members.

Reached through :attr:`kschedlib.framework.Handle.scheduling_objects`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kschedlib.model.objects import Pod
from kschedlib.model.scheduling_crds import ElasticQuota, PodGroup

__all__ = ["SchedulingObjectLister"]


class SchedulingObjectLister(Protocol):
    """The cluster's ``scheduling.x-k8s.io`` objects and the pods that name a PodGroup."""

    def get_pod_group(self, namespace: str, name: str) -> PodGroup | None:
        """The PodGroup ``namespace/name``, or ``None`` if the cluster has none."""
        ...

    def pod_groups(self) -> Sequence[PodGroup]:
        """Every PodGroup, in the order they were added."""
        ...

    def elastic_quotas(self) -> Sequence[ElasticQuota]:
        """Every ElasticQuota, in the order they were added."""
        ...

    def group_pods(self, namespace: str, name: str) -> Sequence[Pod]:
        """Every known pod (pending or bound) labelled for the PodGroup ``namespace/name``."""
        ...

    def ended_group_pods(self, namespace: str, name: str) -> Sequence[Pod]:
        """The pods of the PodGroup that ended (Succeeded or Failed) and were not deleted: the scheduler no
        longer holds them, the PodGroup controller counts them."""
        ...

    def update_pod_group(self, group: PodGroup) -> None:
        """Store a new version of a PodGroup (its status, as the PodGroup controller writes it)."""
        ...
