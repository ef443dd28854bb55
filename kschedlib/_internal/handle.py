"""The Handle given to a profile's plugins."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, final

from kschedlib._internal.cycle import filter_with_nominated
from kschedlib._internal.nominator import Nominator
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib._internal.scheduling_store import SchedulingStore
from kschedlib._internal.store import ObjectStore, StorageStore
from kschedlib._internal.waiting import WaitingPod, WaitingPods
from kschedlib.clock import Clock
from kschedlib.dra._store import DraStore
from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extender import Extender
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Status
from kschedlib.model.objects import OwnerSelector, Pod, PodDisruptionBudget
from kschedlib.versions import Switches

if TYPE_CHECKING:
    from kschedlib.model.storage import PersistentVolume, PersistentVolumeClaim

__all__ = ["FrameworkHandle"]


@final
class FrameworkHandle:
    """Implements :class:`kschedlib.framework.Handle` over the scheduler's state."""

    __slots__ = ("_clock", "_nominator", "_rng", "_runtime", "_snapshot", "_store", "_switches", "_waiting")

    def __init__(self, store: ObjectStore, nominator: Nominator, clock: Clock, rng: random.Random,
                 waiting: WaitingPods | None = None, *, switches: Switches | None = None) -> None:
        self._switches = switches if switches is not None else Switches()
        self._store = store
        self._waiting = waiting if waiting is not None else WaitingPods()
        self._nominator = nominator
        self._clock = clock
        self._rng = rng
        self._snapshot = Snapshot(())
        self._runtime: ProfileRuntime | None = None

    def bind_runtime(self, runtime: ProfileRuntime) -> None:
        """Attach the runtime built from the plugins this handle was given to."""
        self._runtime = runtime

    @property
    def runtime(self) -> ProfileRuntime:
        if self._runtime is None:
            raise RuntimeError("the handle is used before its profile was built")
        return self._runtime

    def set_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def rng(self) -> random.Random:
        return self._rng

    @property
    def switches(self) -> Switches:
        return self._switches

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return self._nominator.pods_for_node(node_name)

    @property
    def extenders(self) -> Sequence[Extender]:
        return self.runtime.extenders

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self._store.pods.get(f"{namespace}/{name}")

    def pod_disruption_budgets(self) -> Sequence[PodDisruptionBudget]:
        return self._store.pod_disruption_budgets()

    def owner_selectors(self, namespace: str) -> Sequence[OwnerSelector]:
        return self._store.owner_selectors(namespace)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        runtime = self.runtime
        return filter_with_nominated(runtime, runtime.filter_runner(state), state, pod, node_info, self._nominator)

    def pre_filter_extensions_listen(self, state: CycleState) -> bool:
        """Whether a PreFilter extension hears AddPod/RemovePod in this cycle (preemption's dry run asks)."""
        return self.runtime.pre_filter_extensions_listen(state)

    def node_local_filter_key(self, state: CycleState, pod: Pod) -> object | None:
        """A key under which this cycle's Filter verdicts depend on the NodeInfo alone (preemption's dry
        run reuses its answers under it), or ``None``."""
        return self.runtime.node_local_filter_key(state, pod)

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self.runtime.run_pre_filter_extension(state, pod, pod_info_to_add, node_info, add=True)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self.runtime.run_pre_filter_extension(state, pod, pod_info_to_remove, node_info, add=False)

    def iterate_waiting_pods(self) -> Sequence[WaitingPod]:
        return list(self._waiting)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._waiting.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        waiting = self._waiting.get(uid)
        if waiting is None:
            return False
        waiting.reject("", "removed")
        return True

    @property
    def scheduling_objects(self) -> SchedulingStore:
        return self._store.scheduling

    @property
    def storage(self) -> StorageStore:
        return self._store.storage

    @property
    def dra(self) -> DraStore:
        return self._store.dra

    def write_volume_bindings(
        self, volumes: Sequence[PersistentVolume], claims: Sequence[PersistentVolumeClaim]
    ) -> None:
        self._store.storage.write_volume_bindings(volumes, claims)

    @property
    def api(self) -> ClusterApi | None:
        return self._store.api
