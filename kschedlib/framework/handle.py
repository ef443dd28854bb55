"""Handle: what the framework offers plugins besides their arguments.

Plugins receive a Handle at construction.  It gives the current cycle's
snapshot, the nominated pods, the plugin runners preemption needs, the
cluster objects some plugins read (PodDisruptionBudgets, owners' selectors)
and the injected clock and random generator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from kschedlib.clock import Clock
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Status
from kschedlib.framework.storage import StorageLister
from kschedlib.model.objects import OwnerSelector, Pod, PodDisruptionBudget
from kschedlib.versions import Switches

if TYPE_CHECKING:
    from kschedlib.framework.cluster_api import ClusterApi
    from kschedlib.framework.extender import Extender
    from kschedlib.framework.scheduling_objects import SchedulingObjectLister
    from kschedlib.framework.waiting import WaitingPodView
    from kschedlib.model.storage import PersistentVolume, PersistentVolumeClaim

__all__ = ["Handle"]


class Handle(Protocol):
    """The framework as a plugin sees it."""

    @property
    def snapshot(self) -> Snapshot:
        """The snapshot of the current scheduling cycle (valid only during the cycle)."""
        ...

    @property
    def clock(self) -> Clock:
        """The injected clock; all timeouts read it."""
        ...

    @property
    def rng(self) -> random.Random:
        """The injected, seeded random generator; all random choices use it."""
        ...

    @property
    def switches(self) -> Switches:
        """The kube-scheduler behaviour changes in force (see :mod:`kschedlib.versions`)."""
        ...

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """Pods nominated to ``node_name`` by earlier preemptions, in nomination order."""
        ...

    @property
    def extenders(self) -> Sequence[Extender]:
        """The scheduler's extenders in the order they run (preemption consults those that support it)."""
        ...

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The latest known version of a pod, or ``None`` if it is gone."""
        ...

    def pod_disruption_budgets(self) -> Sequence[PodDisruptionBudget]:
        """Every PodDisruptionBudget of the cluster."""
        ...

    def owner_selectors(self, namespace: str) -> Sequence[OwnerSelector]:
        """Services, ReplicaSets, StatefulSets and ReplicationControllers of ``namespace``."""
        ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Run the profile's Filter plugins on ``node_info`` with higher-priority nominated pods counted."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        """Tell every non-skipped PreFilterExtensions plugin that ``pod_info_to_add`` joined the node."""
        ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        """Tell every non-skipped PreFilterExtensions plugin that ``pod_info_to_remove`` left the node."""
        ...

    def iterate_waiting_pods(self) -> Sequence[WaitingPodView]:
        """Pods a Permit plugin parked, not yet allowed, rejected or timed out."""
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPodView | None:
        """The waiting pod with ``uid``, if any."""
        ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod (message ``removed``); returns whether it was waiting."""
        ...

    @property
    def scheduling_objects(self) -> SchedulingObjectLister:
        """PodGroups, ElasticQuotas and the pods of each PodGroup (the batch-scheduling plugins read them)."""
        ...

    @property
    def storage(self) -> StorageLister:
        """The cluster's PersistentVolumes, claims, StorageClasses and CSI objects (read-only)."""
        ...

    def write_volume_bindings(
        self, volumes: Sequence[PersistentVolume], claims: Sequence[PersistentVolumeClaim]
    ) -> None:
        """Store new versions of volumes and claims: VolumeBinding's simulated binding (and its undo)."""
        ...

    @property
    def api(self) -> ClusterApi | None:
        """The API server the scheduler writes to (:class:`~kschedlib.framework.ClusterApi`), or ``None`` in a
        simulation.  Read it in PreFilter and keep it for the attempt."""
        ...
