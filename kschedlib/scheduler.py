"""Scheduler: the facade an embedder drives — cluster events in, placement decisions out."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any, Final, final

import attrs

from kschedlib._internal.cache import Cache
from kschedlib._internal.cycle import CycleOutcome, run_cycle
from kschedlib._internal.documents import load_config
from kschedlib._internal.handle import FrameworkHandle
from kschedlib._internal.nominator import Nominator
from kschedlib._internal.profile import build_profile
from kschedlib._internal.queue import SchedulingQueue
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib._internal.store import ObjectStore
from kschedlib.clock import Clock, SystemClock
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.registry import Registry
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Node, Pod
from kschedlib.plugins import default_plugin_sets, in_tree_registry

__all__ = ["ScheduleResult", "Scheduler"]

_UNSCHEDULABLE_NO_PROFILE: Final = 'profile not found for scheduler name "{}"'


@final
@attrs.frozen(slots=True)
class ScheduleResult:
    """The outcome of one scheduling attempt.

    ``node_name`` is set when the pod was bound.  Otherwise ``status`` says
    why (``UNSCHEDULABLE`` with the FitError ``message``, or ``ERROR``), and a
    successful preemption sets ``nominated_node_name`` and lists the
    ``victims`` (``namespace/name``) that the embedder should evict.
    """

    pod: Pod
    node_name: str | None
    status: Status
    message: str | None = None
    nominated_node_name: str | None = None
    victims: tuple[str, ...] = ()
    attempts: int = 1
    outcome: CycleOutcome | None = attrs.field(default=None, repr=False, eq=False)

    @property
    def scheduled(self) -> bool:
        return self.node_name is not None

    @property
    def diagnosis(self) -> Diagnosis | None:
        """Per-node statuses when no node fitted."""
        return self.outcome.diagnosis if self.outcome is not None else None


ConfigSource = Any
"""A SchedulerConfig, a KubeSchedulerConfiguration dict, a path to a JSON/YAML file, or None (defaults)."""


@final
class Scheduler:
    """kube-scheduler's scheduling loop as a synchronous, embeddable object.

    Feed it nodes and pods (``add_objects`` or the ``add_*``/``update_*``/
    ``remove_*`` events) and call :meth:`schedule_one` or :meth:`run_until_idle`.
    Every random choice uses ``random.Random(seed)``; every timeout the clock.
    """

    def __init__(
        self,
        config: ConfigSource = None,
        *,
        seed: int = 0,
        clock: Clock | None = None,
        registry: Registry | None = None,
        retry_unschedulable: bool = True,
    ) -> None:
        """``retry_unschedulable=False`` gives every pod one attempt: failed pods are not moved by events."""
        self._config = load_config(config)
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._rng = random.Random(seed)
        self._cache = Cache()
        self._store = ObjectStore()
        self._nominator = Nominator()
        self._registry = registry if registry is not None else in_tree_registry()
        self._profiles: dict[str, ProfileRuntime] = {}
        self._handles: dict[str, FrameworkHandle] = {}
        defaults = default_plugin_sets()
        for index, profile in enumerate(self._config.profiles):
            handle = FrameworkHandle(self._store, self._nominator, self._clock, self._rng)
            built = build_profile(profile, self._registry, handle, defaults, where=f"profiles[{index}]")
            runtime = ProfileRuntime(built)
            handle.bind_runtime(runtime)
            self._profiles[profile.scheduler_name] = runtime
            self._handles[profile.scheduler_name] = handle
        first = next(iter(self._profiles.values()))
        self._check_queue_sort(first)
        self._queue = SchedulingQueue(first.less, self._pre_enqueue, self._clock.now)
        self._queue.retry_failed = retry_unschedulable
        self._next_start_index = 0

    def _check_queue_sort(self, first: ProfileRuntime) -> None:
        names = {runtime.profile.points["queueSort"][0] for runtime in self._profiles.values()}
        if len(names) > 1:
            raise ConfigError("queueSort must be the same for all profiles", field="profiles", value=sorted(names))
        del first

    def _pre_enqueue(self, pod: Pod) -> Status:
        return self._profiles[pod.scheduler_name].run_pre_enqueue(pod)

    # --- introspection ------------------------------------------------------------------------

    @property
    def profiles(self) -> Sequence[str]:
        """Scheduler names of the configured profiles."""
        return list(self._profiles)

    @property
    def clock(self) -> Clock:
        return self._clock

    def runtime(self, scheduler_name: str) -> ProfileRuntime:
        """The plugins of one profile (internal: for explain and tools)."""
        return self._profiles[scheduler_name]

    def handle(self, scheduler_name: str) -> FrameworkHandle:
        return self._handles[scheduler_name]

    @property
    def next_start_index(self) -> int:
        """Where the next cycle's node search starts (kube-scheduler's rotating index)."""
        return self._next_start_index

    @next_start_index.setter
    def next_start_index(self, value: int) -> None:
        self._next_start_index = value

    @property
    def nominator(self) -> Nominator:
        return self._nominator

    @property
    def store(self) -> ObjectStore:
        return self._store

    def pending(self) -> dict[str, tuple[str, QueuedPodInfo]]:
        """Pods waiting in the queue: key -> (``active``/``unschedulable``/``gated``, info)."""
        return self._queue.pending()

    def node_names(self) -> list[str]:
        """Known nodes in scheduling order."""
        return self._cache.node_names()

    def bound_pods(self) -> dict[str, str]:
        """``namespace/name`` -> node of every pod the cache holds (bound or assumed)."""
        return {state.pod_info.pod.key: state.pod_info.pod.node_name for state in self._cache.pods()}

    def snapshot(self) -> Any:
        """A snapshot of the cluster as the next cycle would see it."""
        return self._cache.snapshot(self._store.namespaces)

    # --- events in ----------------------------------------------------------------------------

    def add_objects(self, objects: Iterable[object]) -> None:
        """Add nodes (in name order, as an API server lists them), then bound pods, then pending pods."""
        items = list(getattr(objects, "objects", objects))
        self._store.add(items)
        for node in sorted((o for o in items if isinstance(o, Node)), key=lambda n: n.name):
            self.add_node(node)
        pods = [o for o in items if isinstance(o, Pod)]
        for pod in pods:
            if pod.node_name:
                self.add_pod(pod)
        for pod in pods:
            if not pod.node_name:
                self.add_pod(pod)

    def add_node(self, node: Node) -> None:
        self._cache.add_node(node)
        self._queue.move_all_to_active()

    def update_node(self, node: Node) -> None:
        self._cache.update_node(node)
        self._queue.move_all_to_active()

    def remove_node(self, name: str) -> None:
        self._cache.remove_node(name)

    def add_pod(self, pod: Pod) -> None:
        """A pod appeared: bound pods go to the cache, pending pods of a known profile to the queue."""
        self._store.pods[pod.key] = pod
        info = PodInfo.of(pod)
        if pod.node_name:
            self._cache.add_pod(info)
            return
        if pod.scheduler_name not in self._profiles:
            return
        queued = self._queue.add(info)
        if pod.nominated_node_name and not queued.gated:
            self._nominator.add(info, pod.nominated_node_name)

    def update_pod(self, pod: Pod) -> None:
        """A pod changed (labels, gates, binding ...)."""
        old = self._store.pods.get(pod.key)
        self._store.pods[pod.key] = pod
        info = PodInfo.of(pod)
        if pod.node_name:
            if self._cache.pod_state(pod.uid) is not None:
                self._cache.update_pod(info)
            else:
                self._queue.delete(pod)
                self._nominator.remove(pod.uid)
                self._cache.add_pod(info)
            return
        if old is not None and old.node_name:
            raise ConfigError("a bound pod cannot become pending", field="spec.nodeName", value=pod.key)
        if pod.scheduler_name in self._profiles and not self._cache.is_assumed(pod.uid):
            self._queue.update(info)

    def remove_pod(self, pod: Pod | str) -> None:
        """A pod was deleted (``pod`` or its ``namespace/name``)."""
        key = pod if isinstance(pod, str) else pod.key
        known = self._store.pods.pop(key, None)
        if known is None:
            return
        self._nominator.remove(known.uid)
        if self._cache.pod_state(known.uid) is not None:
            state = self._cache.pod_state(known.uid)
            assert state is not None
            self._cache.remove_pod(state.pod_info.pod)
            self._queue.move_all_to_active()
        else:
            self._queue.delete(known)

    # --- decisions out ------------------------------------------------------------------------

    def schedule_one(self) -> ScheduleResult | None:
        """Pop the next pod and run one scheduling (and binding) cycle; ``None`` when none is queued."""
        info = self._queue.pop()
        if info is None:
            return None
        pod = info.pod
        runtime = self._profiles[pod.scheduler_name]
        handle = self._handles[pod.scheduler_name]
        snapshot = self._cache.snapshot(self._store.namespaces)
        handle.set_snapshot(snapshot)
        outcome = run_cycle(
            runtime, pod, snapshot,
            start_index=self._next_start_index,
            percentage_of_nodes_to_score=self._config.percentage_of_nodes_to_score,
            rng=self._rng,
            nominator=self._nominator,
        )
        self._next_start_index = outcome.next_start_index
        if outcome.selected is None:
            return self._failed(info, outcome)
        return self._assume_and_bind(info, runtime, outcome.state, outcome.selected, outcome)

    def run_until_idle(self) -> list[ScheduleResult]:
        """Schedule until the active queue is empty; returns every attempt's result in order."""
        results = []
        while (result := self.schedule_one()) is not None:
            results.append(result)
        return results

    def _assume_and_bind(
        self, info: QueuedPodInfo, runtime: ProfileRuntime, state: CycleState, node: str, outcome: CycleOutcome
    ) -> ScheduleResult:
        pod = info.pod
        assumed = attrs.evolve(pod, node_name=node)
        assumed_info = info.pod_info.with_pod(assumed)
        self._cache.assume_pod(assumed_info)
        self._nominator.remove(pod.uid)
        status = runtime.run_reserve(state, assumed, node)
        if status.is_success:
            permit = runtime.run_permit(state, assumed, node)
            status = permit if isinstance(permit, Status) else Status(
                Code.ERROR, ("waiting in Permit needs the scheduler's waiting-pod support",), "")
        if status.is_success:
            status = runtime.run_pre_bind(state, assumed, node)
        if status.is_success:
            status = runtime.run_bind(state, assumed, node)
            if status.is_skip:
                status = Status.from_error(f"no bind plugin bound pod {pod.key}")
        if not status.is_success:
            runtime.run_unreserve(state, assumed, node)
            self._cache.forget_pod(assumed)
            return self._failed(info, outcome, status)
        self._cache.finish_binding(assumed, self._clock.now())
        self._cache.add_pod(assumed_info)
        self._store.pods[pod.key] = assumed
        runtime.run_post_bind(state, assumed, node)
        return ScheduleResult(assumed, node, Status.success(), attempts=info.attempts, outcome=outcome)

    def _failed(self, info: QueuedPodInfo, outcome: CycleOutcome, status: Status | None = None) -> ScheduleResult:
        pod = info.pod
        post = outcome.post_filter
        nominated = post.nominated_node_name if post is not None else None
        victims = post.victims if post is not None else ()
        if status is None:
            if outcome.error is not None:
                status = outcome.error
            else:
                status = Status(Code.UNSCHEDULABLE, (outcome.message or "",))
        rejectors = outcome.diagnosis.unschedulable_plugins if outcome.diagnosis is not None else frozenset()
        if nominated is not None:
            if nominated:
                self._nominator.add(info.pod_info, nominated)
                pod = attrs.evolve(pod, nominated_node_name=nominated)
                info.pod_info = info.pod_info.with_pod(pod)
                self._store.pods[pod.key] = pod
            else:
                self._nominator.remove(pod.uid)
        self._queue.add_unschedulable(info, rejectors)
        return ScheduleResult(pod, None, status, status.message() or outcome.message, nominated or None,
                              victims, info.attempts, outcome)

