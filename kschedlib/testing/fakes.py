"""Fakes for testing plugins without a Scheduler: :class:`FakeHandle` and :class:`FakeClock`.

A plugin is built from its arguments and a Handle; give it a FakeHandle over a cluster and call its
extension points directly::

    handle = FakeHandle(cluster, plugins=[NodeResourcesFit])  # NodeResourcesFit runs in preemption's dry run
    plugin = MyPlugin(None, handle)
    status = plugin.filter(CycleState(), pod, handle.snapshot.get("node-0"))
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, final

from kschedlib._internal.cache import Cache
from kschedlib._internal.scheduling_store import PodTable, SchedulingStore
from kschedlib._internal.store import StorageStore
from kschedlib.clock import Clock, FakeClock
from kschedlib.dra._store import DraStore
from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extender import Extender
from kschedlib.framework.extension_points import FilterPlugin, Plugin, PreFilterExtensions
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.registry import PluginFactory
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.framework.waiting import WaitingPodView
from kschedlib.model.objects import Namespace, OwnerSelector, Pod, PodDisruptionBudget
from kschedlib.model.resources import Accounting, accounting_for
from kschedlib.model.storage import PersistentVolume, PersistentVolumeClaim
from kschedlib.simulation.cluster import Cluster
from kschedlib.versions import Switches
from kschedlib.versions import resolve as resolve_kube

__all__ = ["FakeClock", "FakeHandle", "snapshot_of"]


_last: list[tuple[Cluster, Accounting | None, Snapshot]] = []


def snapshot_of(cluster: Cluster) -> Snapshot:
    """The snapshot a Scheduler would take of ``cluster``: its nodes in kube-scheduler's zone order, the bound
    pods on them (bound to unknown nodes: left out, as ghosts are), image spread counts and namespaces.

    Snapshots are immutable, so the last one is reused when asked again for the same cluster object (the
    contract checks build one FakeHandle per check and scenario).
    """
    return _cached_snapshot(cluster, None)


def _cached_snapshot(cluster: Cluster, accounting: Accounting | None) -> Snapshot:
    """:func:`snapshot_of` with the bound pods' requests counted by ``accounting`` (a kube version's way)."""
    if _last and _last[0][0] is cluster and _last[0][1] is accounting:
        return _last[0][2]
    snapshot = _snapshot_of(cluster, accounting)
    _last[:] = [(cluster, accounting, snapshot)]
    return snapshot


def _snapshot_of(cluster: Cluster, accounting: Accounting | None) -> Snapshot:
    cache = Cache()
    for node in cluster.nodes:
        cache.add_node(node)
    for pod in cluster.bound_pods:
        cache.add_pod(PodInfo.of(pod, accounting))
    return cache.snapshot({ns.name: ns for ns in cluster.namespaces})


def _name_of(plugin: Plugin) -> str:
    return getattr(type(plugin), "name", type(plugin).__name__)


@final
class FakeHandle:
    """A real :class:`~kschedlib.framework.Handle` over a fixed snapshot, for plugin tests.

    ``cluster`` is a :class:`~kschedlib.Cluster` (its nodes, bound pods, namespaces, PodDisruptionBudgets,
    owners and storage objects are all used), a :class:`~kschedlib.Snapshot`, or NodeInfos. ``pods``
    adds pods :meth:`get_pod` knows besides the cluster's (such as the pod being scheduled).
    ``nominated`` maps node names to the pods nominated there. ``plugins`` are factories (called with
    ``None`` args and this handle) of the Filter and PreFilterExtensions plugins that
    :meth:`run_filter_plugins_with_nominated_pods` and the ``run_pre_filter_extension_*`` methods run,
    as a profile's would for preemption; :meth:`add_plugin` adds built ones. ``extenders`` are what
    :attr:`extenders` lists. ``seed`` seeds :attr:`rng`; ``clock`` defaults to a :class:`FakeClock`.
    ``kube_version`` and ``feature_gates`` choose the :attr:`switches` as a Scheduler would; ``api`` is what
    :attr:`api` gives the plugins (the API server they write to; ``None`` for a simulation).
    """

    __slots__ = ("_api", "_clock", "_dra", "_extenders", "_nominated", "_owners", "_pdbs", "_plugins", "_pods", "_rng",
                 "_scheduling", "_seed", "_snapshot", "_storage", "_switches")

    def __init__(
        self,
        cluster: Cluster | Snapshot | Iterable[NodeInfo] = (),
        *,
        pods: Iterable[Pod] = (),
        namespaces: Iterable[Namespace] = (),
        pdbs: Iterable[PodDisruptionBudget] = (),
        owners: Iterable[OwnerSelector] = (),
        storage: Iterable[object] = (),
        nominated: Mapping[str, Sequence[PodInfo]] | None = None,
        plugins: Iterable[PluginFactory] = (),
        extenders: Iterable[Extender] = (),
        seed: int = 0,
        clock: Clock | None = None,
        kube_version: str | None = None,
        feature_gates: Mapping[str, bool] | str | None = None,
        api: ClusterApi | None = None,
    ) -> None:
        self._switches = resolve_kube(kube_version, feature_gates).switches
        self._api = api
        extra: tuple[object, ...] = ()
        if isinstance(cluster, Cluster):
            snapshot = _cached_snapshot(Cluster((*namespaces, *cluster.objects)) if namespaces else cluster,
                                        accounting_for(self._switches))
            extra = cluster.objects
        elif isinstance(cluster, Snapshot):
            snapshot = cluster if not namespaces else Snapshot(cluster.node_infos, namespaces={
                **cluster.namespaces, **{ns.name: ns for ns in namespaces}})
        else:
            snapshot = Snapshot(tuple(cluster), namespaces={ns.name: ns for ns in namespaces})
        self._snapshot = snapshot
        self._pods = {p.key: p for p in (*(o for o in extra if isinstance(o, Pod)), *pods)}
        for info in snapshot.node_infos:
            self._pods.update((p.pod.key, p.pod) for p in info.pods)
        self._pdbs = [*(o for o in extra if isinstance(o, PodDisruptionBudget)), *pdbs]
        self._owners = [*(o for o in extra if isinstance(o, OwnerSelector)), *owners]
        self._storage = StorageStore()
        self._dra = DraStore()
        self._scheduling = SchedulingStore(PodTable(self._pods))
        for obj in (*extra, *storage):
            if not self._scheduling.add(obj) and not self._dra.add(obj):
                self._storage.add(obj)
        self._nominated = {name: tuple(infos) for name, infos in (nominated or {}).items()}
        self._seed = seed
        self._rng = random.Random(seed)
        self._clock: Clock = clock if clock is not None else FakeClock()
        self._extenders = tuple(extenders)
        self._plugins: list[Plugin] = []
        for factory in plugins:
            self.add_plugin(factory(None, self.as_handle()))

    # --- what a plugin reads -------------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        """The snapshot plugins see (replace it with :meth:`set_snapshot`)."""
        return self._snapshot

    def set_snapshot(self, snapshot: Snapshot) -> None:
        """Show ``snapshot`` from now on (as the scheduler does at the start of each cycle)."""
        self._snapshot = snapshot

    @property
    def clock(self) -> Clock:
        """The clock (a :class:`FakeClock` unless one was given)."""
        return self._clock

    @property
    def rng(self) -> random.Random:
        """The random generator, seeded with ``seed``."""
        return self._rng

    @property
    def switches(self) -> Switches:
        """The behaviour changes of ``kube_version`` with ``feature_gates`` (as a Scheduler resolves them)."""
        return self._switches

    def reseed(self) -> None:
        """Restart :attr:`rng` from the seed, so a second run sees the same random numbers as the first."""
        self._rng.seed(self._seed)

    @property
    def extenders(self) -> Sequence[Extender]:
        """The ``extenders`` given (preemption consults those that support it)."""
        return self._extenders

    def as_handle(self) -> Handle:
        """This fake, typed as the :class:`~kschedlib.framework.Handle` protocol plugin factories expect."""
        return self

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """The pods ``nominated`` to ``node_name``."""
        return self._nominated.get(node_name, ())

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """A pod of the cluster or of ``pods``."""
        return self._pods.get(f"{namespace}/{name}")

    def pod_disruption_budgets(self) -> Sequence[PodDisruptionBudget]:
        """The cluster's and ``pdbs``."""
        return self._pdbs

    def owner_selectors(self, namespace: str) -> Sequence[OwnerSelector]:
        """The cluster's and ``owners`` in ``namespace``."""
        return [owner for owner in self._owners if owner.namespace == namespace]

    @property
    def scheduling_objects(self) -> SchedulingStore:
        """PodGroups and ElasticQuotas of the cluster and ``storage``; the pods of each PodGroup."""
        return self._scheduling

    @property
    def dra(self) -> DraStore:
        """DeviceClasses, ResourceSlices, ResourceClaims and templates of the cluster and ``storage``."""
        return self._dra

    @property
    def storage(self) -> StorageStore:
        """PersistentVolumes, claims, StorageClasses and CSI objects of the cluster and ``storage``."""
        return self._storage

    def write_volume_bindings(
        self, volumes: Sequence[PersistentVolume], claims: Sequence[PersistentVolumeClaim]
    ) -> None:
        """Store new versions of volumes and claims (VolumeBinding's Reserve and its undo)."""
        self._storage.write_volume_bindings(volumes, claims)

    @property
    def api(self) -> ClusterApi | None:
        """The ``api`` given (a recording fake of an API server, say); ``None``: a simulation."""
        return self._api

    def iterate_waiting_pods(self) -> Sequence[WaitingPodView]:
        """No pod ever waits in Permit here."""
        return ()

    def get_waiting_pod(self, uid: str) -> WaitingPodView | None:
        """No pod ever waits in Permit here."""
        return None

    def reject_waiting_pod(self, uid: str) -> bool:
        """No pod ever waits in Permit here: always False."""
        return False

    # --- the profile's plugins, for preemption-style callers --------------------------------------

    @property
    def plugins(self) -> tuple[Plugin, ...]:
        """The plugins the ``run_*`` methods run, in order."""
        return tuple(self._plugins)

    def add_plugin(self, plugin: Plugin) -> Plugin:
        """Run ``plugin`` (built with this handle) in :meth:`run_filter_plugins_with_nominated_pods` and the
        PreFilter extension runners, after those already added; returns it."""
        self._plugins.append(plugin)
        return plugin

    def build(self, factory: PluginFactory, args: Any = None) -> Plugin:
        """``factory(args, self)``, added with :meth:`add_plugin`."""
        return self.add_plugin(factory(args, self.as_handle()))

    def _filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        for plugin in self._plugins:
            name = _name_of(plugin)
            if not isinstance(plugin, FilterPlugin) or name in state.skip_filter_plugins:
                continue
            try:
                status = plugin.filter(state, pod, node_info)
            except Exception as exc:
                return Status.from_error(f'running "{name}" filter plugin: {exc}', plugin=name)
            if status.is_rejected:
                return status.with_plugin(name)
            if not status.is_success:
                return Status.from_error(f'running "{name}" filter plugin: {status.message()}', plugin=name)
        return Status.success()

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """The Filter plugins, first with the equal- or higher-priority pods nominated to the node added
        (through AddPod on a clone of ``state``), then without them, as kube-scheduler does."""
        relevant = [info for info in self.nominated_pods_for_node(node_info.name)
                    if info.pod.effective_priority >= pod.effective_priority and info.pod.uid != pod.uid]
        if relevant:
            state_with, info_with = state.clone(), node_info
            for info in relevant:
                info_with = info_with.with_pod(info)
                status = self.run_pre_filter_extension_add_pod(state_with, pod, info, info_with)
                if not status.is_success:
                    return status
            status = self._filter(state_with, pod, info_with)
            if not status.is_success:
                return status
        return self._filter(state, pod, node_info)

    def _extension(self, state: CycleState, pod: Pod, info: PodInfo, node_info: NodeInfo, *, add: bool) -> Status:
        verb = "AddPod" if add else "RemovePod"
        for plugin in self._plugins:
            name = _name_of(plugin)
            if not isinstance(plugin, PreFilterExtensions) or name in state.skip_filter_plugins:
                continue
            try:
                status = (plugin.add_pod if add else plugin.remove_pod)(state, pod, info, node_info)
            except Exception as exc:
                status = Status.from_error(str(exc))
            if status.code is not Code.SUCCESS:
                return Status.from_error(f'running {verb} on PreFilter plugin "{name}": {status.message()}',
                                         plugin=name)
        return Status.success()

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        """AddPod on every PreFilterExtensions plugin not skipped in ``state``."""
        return self._extension(state, pod, pod_info_to_add, node_info, add=True)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        """RemovePod on every PreFilterExtensions plugin not skipped in ``state``."""
        return self._extension(state, pod, pod_info_to_remove, node_info, add=False)
