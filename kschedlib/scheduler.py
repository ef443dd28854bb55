"""Scheduler: the facade an embedder drives — cluster events in, placement decisions out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any, final

from kschedlib._internal.collector import fewer_collections
from kschedlib._internal.documents import load_config
from kschedlib._internal.engine import Engine
from kschedlib._internal.node_checks import NodeScores, Progress, filter_nodes, score_nodes
from kschedlib.clock import Clock, FakeClock, SystemClock
from kschedlib.dra._store import DraStore
from kschedlib.errors import ModelError
from kschedlib.explanation import Explanation, deleting_message
from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.config import SchedulerConfig
from kschedlib.framework.extender import Extender
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.registry import Registry
from kschedlib.framework.scheduling_objects import SchedulingObjectLister
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Status
from kschedlib.metrics import Metrics
from kschedlib.model.objects import Node, Pod, PodDisruptionBudget
from kschedlib.plugins import default_plugin_sets, default_registry
from kschedlib.results import ScheduleResult, SchedulerListener
from kschedlib.versions import KubeSettings
from kschedlib.versions import resolve as resolve_kube

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["ConfigSource", "NodeScores", "ScheduleResult", "Scheduler", "SchedulerListener"]

ConfigSource = SchedulerConfig | Mapping[str, Any] | str | PathLike[str] | None
"""What a ``config`` argument takes: a SchedulerConfig, a KubeSchedulerConfiguration dict, a JSON/YAML
file path, or ``None`` for kube-scheduler's default profile."""


def _require(value: object, kinds: tuple[type, ...], call: str) -> None:
    """Refuse an argument of the wrong type before anything changes."""
    if not isinstance(value, kinds):
        expected = " or ".join(f"a {kind.__name__}" for kind in kinds)
        raise ModelError(f"must be {expected}", obj=f"Scheduler.{call}", field="argument", value=value)


def _require_not(value: object, kinds: tuple[type, ...], call: str) -> None:
    """Refuse nodes and pods where they have their own methods."""
    if isinstance(value, kinds):
        raise ModelError("nodes and pods are removed with remove_node and remove_pod", obj=f"Scheduler.{call}",
                         field="argument", value=value)


@final
class Scheduler:
    """kube-scheduler's scheduling loop as a synchronous, embeddable object.

    Feed it nodes and pods (:meth:`add_objects`, or the ``add_*``/``update_*``/
    ``remove_*`` events) and call :meth:`schedule_one` or :meth:`run_until_idle`.
    ``config`` is a SchedulerConfig, a KubeSchedulerConfiguration dict, a JSON/YAML
    file path, or ``None`` for kube-scheduler's default profile.  ``registry`` defaults to the
    in-tree plugins plus those published under the ``kschedlib.plugins`` entry-point group, looked up
    only when the config names a plugin that is not in-tree (:func:`~kschedlib.plugins.default_registry`).
    Random choices use ``random.Random(seed)``; backoff and Permit timeouts read ``clock``.

    ``retry_unschedulable=False`` gives every pod a single attempt.  With a
    ``binding_executor``, PreBind and Bind plugins run on it and their results
    arrive through :meth:`tick` and the listeners; the cache is only ever
    changed on the calling thread.

    Extenders come from the config's ``extenders`` section (HTTP extenders, built
    once here) followed by ``extenders`` (e.g. in-process ones); ignorable
    extenders run after the others.

    ``flush_unschedulable=False`` turns off the 5-minute flush of the unschedulable pool (pods there
    move only on cluster events), as a simulation of a fixed timeline wants.

    ``api`` connects the scheduler to an API server for the writes kube-scheduler's plugins make besides the
    binding (claims, volumes, the nomination before PreBind; :class:`~kschedlib.framework.ClusterApi`); without
    it the scheduler is a simulation and plays the controllers' part itself.
    """

    def __init__(
        self,
        config: ConfigSource = None,
        *,
        seed: int = 0,
        clock: Clock | None = None,
        registry: Registry | None = None,
        listeners: Sequence[SchedulerListener] = (),
        binding_executor: Executor | None = None,
        retry_unschedulable: bool = True,
        assumed_pod_ttl: float = 0.0,
        extenders: Sequence[Extender] = (),
        kube_version: str | None = None,
        feature_gates: Mapping[str, bool] | str | None = None,
        flush_unschedulable: bool = True,
        api: ClusterApi | None = None,
    ) -> None:
        kube = resolve_kube(kube_version, feature_gates)
        parsed = load_config(config)
        self._engine = Engine(
            parsed,
            clock=clock if clock is not None else SystemClock(),
            seed=seed,
            registry=registry if registry is not None else default_registry(parsed),
            defaults=dict(default_plugin_sets(kube.switches)),
            retry_unschedulable=retry_unschedulable,
            listeners=listeners,
            binding_executor=binding_executor,
            assumed_ttl=assumed_pod_ttl,
            extenders=extenders,
            kube=kube,
            api=api,
        )
        self._engine.flush_unschedulable = flush_unschedulable

    # --- events in ----------------------------------------------------------------------------

    def add_objects(self, objects: Iterable[object]) -> None:
        """Add a cluster (a :class:`~kschedlib.Cluster` or any iterable of model objects): nodes in name
        order, as an API server lists them, then bound pods, then pending pods in the given order, plus
        namespaces, PodDisruptionBudgets and owners."""
        self._engine.add_objects(objects, self.add_node)

    def remove_objects(self, objects: Iterable[object]) -> None:
        """Objects other than nodes and pods were deleted (namespaces, PodDisruptionBudgets, owners, storage,
        DRA and batch objects): they are forgotten, and pods their deletion may help are requeued.  Unknown
        objects are ignored."""
        objects = list(objects)
        for obj in objects:
            _require_not(obj, (Node, Pod), "remove_objects")
        self._engine.remove_objects(objects)

    def add_node(self, node: Node) -> None:
        """A node joined (or, if known, changed)."""
        _require(node, (Node,), "add_node")
        self._engine.add_node(node)

    def update_node(self, node: Node) -> None:
        """A node changed (or, if unknown, joined); pods its changes may help are requeued."""
        _require(node, (Node,), "update_node")
        self._engine.update_node(node)

    def remove_node(self, name: str) -> None:
        """A node left; its pods stay counted until they are removed.

        Raises :class:`~kschedlib.errors.CacheError` (and changes nothing) if the node is unknown.
        """
        _require(name, (str,), "remove_node")
        self._engine.remove_node(name)

    def add_pod(self, pod: Pod) -> None:
        """A pod appeared: bound pods are counted on their node, pending ones queued.

        A known ``namespace/name`` is an update.  A pod whose uid belongs to another known pod is
        refused with :class:`~kschedlib.errors.CacheError`, and nothing changes.
        """
        _require(pod, (Pod,), "add_pod")
        self._engine.add_pod(pod)

    def update_pod(self, pod: Pod) -> None:
        """A pod changed (labels, gates, or it was bound by the embedder).

        An unknown pod is added.  A pod whose uid changed is a new pod under the old name: the old
        one is removed and the new one added, as kube's informers deliver it.  A bound pod cannot
        become pending (:class:`~kschedlib.errors.CacheError`, nothing changes).
        """
        _require(pod, (Pod,), "update_pod")
        self._engine.update_pod(pod)

    def preemption_failed(self, pod: str) -> bool:
        """Evicting the victims of pod ``namespace/name``'s preemption failed (an embedder deleting them through an
        API server was refused): the pod no longer waits for them and is retried at once, as kube-scheduler's
        asynchronous preemption does.  Returns whether the pod was waiting for its victims."""
        return self._engine.preemption_failed(pod)

    def remove_pod(self, pod: Pod | str) -> bool:
        """A pod was deleted (given as a Pod or ``namespace/name``); returns whether it was known."""
        _require(pod, (Pod, str), "remove_pod")
        return self._engine.remove_pod(pod if isinstance(pod, str) else pod.key)

    # --- decisions out ------------------------------------------------------------------------

    def schedule_one(self) -> ScheduleResult | None:
        """Run one scheduling cycle for the next pod; ``None`` when the active queue is empty.

        While a cycle runs, CPython's young-generation collection threshold is raised to 20,000 and then
        restored (left alone when it is already larger, or the collector is off).
        """
        return self._engine.schedule_one()

    def run_until_idle(self) -> list[ScheduleResult]:
        """Schedule until the active queue is empty (without waiting for backoff or timeouts).

        Returns every result in order, including pods whose Permit wait or binding ended meanwhile.
        The collector's threshold is raised for the whole loop, as in :meth:`schedule_one`.
        """
        results: list[ScheduleResult] = []
        engine = self._engine
        with fewer_collections():
            while True:
                result = engine.schedule_one()
                if engine.deferred:
                    results.extend(engine.take_deferred())
                if result is None:
                    return results
                results.append(result)

    def take_finished(self) -> list[ScheduleResult]:
        """Results of pods whose Permit wait or binding ended during the last :meth:`schedule_one`.

        :meth:`run_until_idle` and :meth:`tick` collect them themselves; a host that calls
        :meth:`schedule_one` in its own loop takes them here.
        """
        return self._engine.take_deferred()

    def tick(self) -> list[ScheduleResult]:
        """Process what is due now: Permit timeouts and allowances, finished bindings, expired backoff."""
        return self._engine.tick()

    def next_wakeup(self) -> float | None:
        """The clock time when a backoff, a Permit timeout or the unschedulable-pool flush next falls due.

        The current time when pods are ready in the active queue; ``None`` when nothing is due.
        """
        return self._engine.next_wakeup()

    def backoff_seconds(self, attempts: int) -> float:
        """How long a pod that failed its ``attempts``-th attempt backs off (``podInitialBackoffSeconds``
        doubling per attempt up to ``podMaxBackoffSeconds``)."""
        return self._engine.queue.backoff_duration(attempts)

    # --- introspection ------------------------------------------------------------------------

    @property
    def profiles(self) -> list[str]:
        """Scheduler names of the configured profiles."""
        return list(self._engine.profiles)

    @property
    def kube(self) -> KubeSettings:
        """The kube-scheduler version and feature gates this scheduler behaves as."""
        return self._engine.kube

    @property
    def clock(self) -> Clock:
        """The clock backoff and Permit timeouts read."""
        return self._engine.clock

    @property
    def metrics(self) -> Metrics:
        """In-process metrics with kube-scheduler's names (``to_prometheus_text()`` exports them)."""
        return self._engine.metrics

    def pending(self) -> dict[str, tuple[str, QueuedPodInfo]]:
        """Queued pods: ``namespace/name`` -> (``active``/``backoff``/``unschedulable``/``gated``, info)."""
        return self._engine.queue.pending()

    def permit_deadlines(self) -> dict[str, float | None]:
        """Pods parked by a Permit plugin -> when their wait times out (``None``: decided, not yet acted on)."""
        return {w.pod.key: w.next_deadline() for w in self._engine.waiting}

    def plugin(self, name: str) -> object | None:
        """The instance of plugin ``name`` in the first profile that runs it, else ``None``."""
        for runtime in self._engine.profiles.values():
            found = runtime.profile.plugins.get(name)
            if found is not None:
                return found
        return None

    def waiting_pods(self) -> list[str]:
        """Pods parked by a Permit plugin (``namespace/name``)."""
        return [w.pod.key for w in self._engine.waiting]

    def nominations(self) -> dict[str, str]:
        """``namespace/name`` -> nominated node, for pods that preemption made room for."""
        store = self._engine.store
        return {key: node for uid, node in self._engine.nominator.nominations().items()
                if (key := store.key_of_uid(uid)) is not None}

    def bound_pods(self) -> dict[str, str]:
        """``namespace/name`` -> node of every pod the cache holds (bound or assumed)."""
        return {s.pod_info.pod.key: s.pod_info.pod.node_name for s in self._engine.cache.pods()}

    def node_names(self) -> list[str]:
        """Known nodes in scheduling order."""
        return self._engine.cache.node_names()

    def snapshot(self) -> Snapshot:
        """The cluster as the next cycle would see it; the caller's to keep, on any thread."""
        snapshot = self._engine.cache.snapshot(self._engine.store.namespaces)
        snapshot._freeze()  # its own node tuple: the cache may write its list while another thread reads this
        return snapshot

    def cache_dump(self) -> dict[str, object]:
        """Nodes with their pods and the assumed pods, for debugging."""
        return self._engine.cache.dump()

    def get_pod(self, key: str) -> Pod | None:
        """The latest version of a known pod (``namespace/name``), pending or bound."""
        return self._engine.store.pods.get(key)

    def pods(self) -> dict[str, Pod]:
        """Every known pod by ``namespace/name`` (pending and bound), latest versions."""
        return dict(self._engine.store.pods)

    def has_node(self, name: str) -> bool:
        """Whether a node of this name is known (removed nodes are not)."""
        info = self._engine.cache.node(name)
        return info is not None and info.node is not None

    def binding_pods(self) -> list[str]:
        """Pods whose PreBind/Bind runs on the binding executor right now (``namespace/name``)."""
        return self._engine.binding_keys()

    def pod_disruption_budgets(self) -> list[PodDisruptionBudget]:
        """The known PodDisruptionBudgets (with their status, as read)."""
        return list(self._engine.store.pod_disruption_budgets())

    @property
    def scheduling_objects(self) -> SchedulingObjectLister:
        """PodGroups, ElasticQuotas and the pods naming each group, as plugins see them."""
        return self._engine.store.scheduling

    @property
    def devices(self) -> DraStore:
        """DRA objects (DeviceClasses, ResourceSlices, claims) and the devices allocated, as plugins see them."""
        return self._engine.store.dra

    # --- what-if ------------------------------------------------------------------------------

    def fork(self, *, clock: Clock | None = None, listeners: Sequence[SchedulerListener] = ()) -> Scheduler:
        """An independent scheduler in this one's state: nodes, pods, queue (with attempts and
        backoff), nominations, profiles, random state and rotating start index.

        Changes to either never show in the other.  Nodes' and pods' immutable parts are shared, so
        a fork costs milliseconds even for thousands of nodes.  ``clock`` defaults to a copy of a
        :class:`~kschedlib.FakeClock` (same time, moved apart) or to this scheduler's clock otherwise;
        listeners are not inherited.  Metrics start at zero; plugins are built anew (state a plugin
        keeps of its own, such as Coscheduling's backed-off gangs, starts empty).  Raises
        :class:`~kschedlib.errors.CacheError` (changing nothing) while pods wait in Permit or bind
        on the executor.
        """
        if clock is None:
            mine = self._engine.clock
            clock = FakeClock(mine.now()) if isinstance(mine, FakeClock) else mine
        twin = object.__new__(Scheduler)
        twin._engine = self._engine.fork(clock, listeners)
        return twin

    def explain(self, pod: Pod, *, start_index: int = 0,
                percentage_of_nodes_to_score: int | None = 100) -> Explanation:
        """Where ``pod`` would go now and why not elsewhere: the :func:`kschedlib.explain` answer
        against this scheduler's current state.

        Nothing changes: the pod is not queued, bound or nominated, no random number is used up, and
        later decisions are the same as without the call, whatever the plugins write on the way (the
        cycle works on copies of the store, device, PodGroup and quota state, waiting pods and
        nominations; plugins with state of their own implement
        :class:`~kschedlib.framework.KeepsState`).  The live snapshot and plugin caches are reused.
        ``percentage_of_nodes_to_score`` defaults to every node; ``None`` samples as this
        scheduler's config says (from ``start_index``).
        """
        _require(pod, (Pod,), "explain")
        engine = self._engine
        kube = engine.kube
        if pod.scheduler_name not in engine.profiles:
            return Explanation(pod, None, f'profile not found for scheduler name "{pod.scheduler_name}"', kube=kube)
        if pod.deletion_timestamp is not None and not pod.node_name:
            return Explanation(pod, None, skip_reason=deleting_message(pod), kube=kube)
        percentage = percentage_of_nodes_to_score
        if percentage is None:
            percentage = engine.config.percentage_of_nodes_to_score
        outcome = engine.evaluate(pod, start_index=start_index, percentage_of_nodes_to_score=percentage)
        if isinstance(outcome, Status):
            return Explanation(pod, None, pre_enqueue=outcome, kube=kube)
        return Explanation(pod, outcome, kube=kube)

    def filter_nodes(self, pod: Pod, snapshot: Snapshot, nodes: Sequence[NodeInfo], *, profile: str | None = None,
                     progress: Progress | None = None) -> dict[str, Status] | Status:
        """A profile's PreFilter and Filter plugins for ``pod`` on ``nodes`` of ``snapshot`` alone (the
        extender protocol's ``filter``): node -> its status, in the order given; nodes a PreFilter
        result leaves out get no entry.  An Error status (PreFilter's or a Filter's) is returned instead.

        Nothing of the scheduler changes; ``profile`` defaults to the first; ``progress`` is told what
        comes next and may raise to stop.  One thread at a time per scheduler.
        """
        name = profile if profile is not None else self.profiles[0]
        return filter_nodes(self._engine.profiles[name], self._engine.handles[name], pod, snapshot, nodes, progress)

    def score_nodes(self, pod: Pod, snapshot: Snapshot, nodes: Sequence[NodeInfo], *, profile: str | None = None,
                    progress: Progress | None = None) -> NodeScores | Status:
        """A profile's PreScore and Score plugins for ``pod`` on ``nodes`` of ``snapshot`` (the extender
        protocol's ``prioritize``): the weighted totals in the order given and the highest total
        possible, or the status that failed.  As :meth:`filter_nodes` otherwise."""
        name = profile if profile is not None else self.profiles[0]
        return score_nodes(self._engine.profiles[name], self._engine.handles[name], pod, snapshot, nodes, progress)

    def feasible_nodes(self, pod: Pod) -> list[str]:
        """Sorted names of the nodes ``pod`` fits on now (PreFilter and Filter passed), changing nothing."""
        outcome = self.explain(pod).outcome
        return sorted(outcome.feasible) if outcome is not None else []
