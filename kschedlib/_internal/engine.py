"""The scheduler's moving parts wired together: events in, cycles, binding, failure handling.

kube-scheduler's ``scheduleOne`` / ``bindingCycle`` / ``handleSchedulingFailure``
and its informer event handlers, run synchronously (or with binding on an
executor).  :class:`kschedlib.Scheduler` is the public face of this class.
"""

from __future__ import annotations

import contextlib
import queue as thread_queue
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.admission import node_pre_check
from kschedlib._internal.assembly import assemble
from kschedlib._internal.changes import event_resource, node_changes, object_changes, spec_changed
from kschedlib._internal.collector import raised_threshold
from kschedlib._internal.cycle import CycleOutcome, run_cycle
from kschedlib._internal.extenders import (
    bind_with_extenders,
)
from kschedlib._internal.nominator import Nominator
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib._internal.store import ObjectStore
from kschedlib._internal.waiting import WaitingPod
from kschedlib._internal.what_if import Isolated
from kschedlib.clock import Clock
from kschedlib.errors import CacheError
from kschedlib.framework import events as ev
from kschedlib.framework._slots import builder
from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.config import PluginSet, SchedulerConfig
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, fit_error_message
from kschedlib.framework.extender import Extender
from kschedlib.framework.plugin_state import KeepsState
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.pods_to_activate import PODS_TO_ACTIVATE
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.registry import Registry
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import REJECTED_CODES, Code, Status
from kschedlib.metrics import Metrics, Series
from kschedlib.model._placed import placed
from kschedlib.model.objects import Node, Pod
from kschedlib.model.resources import accounting_for
from kschedlib.results import ScheduleResult, SchedulerListener
from kschedlib.versions import KubeSettings
from kschedlib.versions import resolve as resolve_kube

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["Engine", "EngineOptions"]

_REJECTED: Final = REJECTED_CODES
_TERMINATED: Final = frozenset({"Succeeded", "Failed"})
_NO_NODES: Final = Snapshot(())
DEFAULT_PREEMPTION: Final = "DefaultPreemption"
WAITING_FOR_PREEMPTION: Final = "waiting for the preemption for this pod to be finished"
_PENDING_PODS: Final = {queue: Metrics.series("scheduler_pending_pods", {"queue": queue})
                        for queue in ("active", "backoff", "unschedulable", "gated")}
"""The ``scheduler_pending_pods`` series by queue, set after every cycle."""
_SLI_SERIES: Final = tuple(Metrics.series("scheduler_pod_scheduling_sli_duration_seconds",
                                          {"attempts": str(n) if n < 15 else "15+"}) for n in range(16))
"""``scheduler_pod_scheduling_sli_duration_seconds`` by attempts (15 and more share one series)."""
_ATTEMPTS_SERIES: Final = Metrics.series("scheduler_pod_scheduling_attempts")
_ALGORITHM_SERIES: Final = Metrics.series("scheduler_scheduling_algorithm_duration_seconds")
_bound_result: Final = builder(ScheduleResult)
"""``ScheduleResult(...)`` with all eight fields given (a bound pod's, once per cycle)."""


@final
@attrs.define(slots=True, repr=False)
class _Attempt(FieldsRepr):
    """A pod between its scheduling cycle and the end of its binding cycle."""

    info: QueuedPodInfo
    runtime: ProfileRuntime
    outcome: CycleOutcome
    """What the cycle decided, without its plugin state (results keep it; see :func:`run_cycle`)."""
    state: CycleState
    assumed: PodInfo
    started: float
    pre_flown: bool = False
    """Whether the binding cycle's PreBind pre-flight already ran (before a Permit wait)."""
    nominate: ClusterApi | None = None
    """Where the binding cycle first writes the pod's nomination to its node (v1.35+, PreBind work ahead)."""

    @property
    def node(self) -> str:
        return self.assumed.pod.node_name


@final
@attrs.frozen(slots=True, repr=False)
class EngineOptions(FieldsRepr):
    """An engine's construction options besides config, clock, seed and kube."""

    registry: Registry
    defaults: dict[str, PluginSet]
    retry_unschedulable: bool
    binding_executor: Executor | None
    assumed_ttl: float
    extenders: tuple[Extender, ...]


@final
class Engine:
    """Cache, queue, nominator, waiting pods and one runtime per profile."""

    def __init__(
        self,
        config: SchedulerConfig,
        *,
        clock: Clock,
        seed: int,
        registry: Registry,
        defaults: dict[str, PluginSet],
        retry_unschedulable: bool = True,
        listeners: Sequence[SchedulerListener] = (),
        binding_executor: Executor | None = None,
        assumed_ttl: float = 0.0,
        extenders: Sequence[Extender] = (),
        kube: KubeSettings | None = None,
        store: ObjectStore | None = None,
        nominator: Nominator | None = None,
        api: ClusterApi | None = None,
    ) -> None:
        self.config = config
        self.options = EngineOptions(registry, defaults, retry_unschedulable, binding_executor, assumed_ttl,
                                     tuple(extenders))
        """What this engine was built with besides config, clock, seed and kube (a fork is built alike)."""
        self.kube = kube if kube is not None else resolve_kube()
        switches = self.kube.switches
        self.accounting = accounting_for(switches)
        """How this version counts pods' requests (PodInfos made here carry them into the cache)."""
        self.clock = clock
        parts = assemble(config, self.kube, clock=clock, seed=seed, registry=registry, defaults=defaults,
                         extenders=extenders, assumed_ttl=assumed_ttl, retry_unschedulable=retry_unschedulable,
                         pre_enqueue=self._pre_enqueue, store=store, nominator=nominator)
        self.rng, self.cache, self.store, self.nominator = parts.rng, parts.cache, parts.store, parts.nominator
        self.waiting, self.extenders, self.queue = parts.waiting, parts.extenders, parts.queue
        self.profiles, self.handles = parts.profiles, parts.handles
        self.store.api = api
        self.metrics = Metrics()
        self.listeners = list(listeners)
        self.executor = binding_executor
        self._narrow_hints = switches.narrow_queueing_hints
        """v1.36: every assigned-pod event goes to every pooled pod's hints, a node deletion requeues."""
        self._hints = switches.queueing_hints
        self._dra_events = switches.dynamic_resources
        """DRA objects (and the scheduler's claim writes) are cluster events."""
        self._declared_features = switches.node_declared_features
        self._nominate_before_pre_bind = switches.nominated_node_name_before_prebind
        self._clear_nomination: str | None = None if switches.nominated_node_name_kept else ""
        """What a failure does to the pod's nominated node: ``""`` clears it (v1.30), ``None`` keeps it."""
        self._async_preemption = switches.async_preemption
        self._nominated_leaves_requeue = switches.nominated_pod_delete_requeues
        """v1.33+: a nominated pending pod leaving the queue requeues the pods it may have held back."""
        self._binding_leaves_quietly = switches.binding_is_not_a_nominated_delete
        """v1.35+: ... except when it leaves because it was bound."""
        self._preempting: dict[str, set[str]] = {}
        """Preemptor uid -> victims (``namespace/name``) still to go (asynchronous preemption)."""
        self.flush_unschedulable = True
        self.next_start_index = 0
        self._attempts: dict[str, _Attempt] = {}
        self._completions: thread_queue.SimpleQueue[tuple[_Attempt, Status]] = thread_queue.SimpleQueue()
        self.deferred: list[ScheduleResult] = []
        """Results of pods whose Permit wait or binding ended outside their cycle, until taken."""
        self._keeping: tuple[KeepsState, ...] | None = None
        """The plugins with state of their own (:class:`KeepsState`), found on the first what-if cycle."""
        self._attempt_series: dict[tuple[str, str], tuple[Series, Series]] = {}
        """(result, profile) -> the attempts counter's and the attempt duration's series."""

    def _pre_enqueue(self, pod: Pod) -> Status:
        if self._preempting and pod.uid in self._preempting:  # DefaultPreemption's PreEnqueue
            return Status.unresolvable(WAITING_FOR_PREEMPTION, plugin=DEFAULT_PREEMPTION)
        return self.profiles[pod.scheduler_name].run_pre_enqueue(pod)

    # --- events in ----------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        known = self.cache.node(node.name)
        if known is not None and known.node is not None:
            self.update_node(node)
            return
        self.cache.add_node(node)
        info = self.cache.node(node.name)
        assert info is not None
        self.queue.move_all(ev.NODE_ADD, node_pre_check(info), new=node)

    def update_node(self, node: Node) -> None:
        known = self.cache.node(node.name)
        if known is None or known.node is None:
            self.add_node(node)
            return
        old = known.node
        if node is old:
            # The object the scheduler holds, changed in place (the model's objects are meant to be replaced,
            # not changed): what changed cannot be told, and the old version is gone.  A copy gives it a new
            # identity, so that nothing reused per Node object outlives it, and the pods are told of it as of a
            # node that joined (judged by what it is now).  The copy has maps of its own, so that the next change
            # made in place to the host's object is told apart from this version.
            node = _detached(node)
            self.cache.update_node(node)
            info = self.cache.node(node.name)
            assert info is not None
            self.queue.move_all(ev.NODE_ADD, node_pre_check(info), new=node)
            return
        self.cache.update_node(node)
        info = self.cache.node(node.name)
        assert info is not None
        for event in node_changes(old, node, declared_features=self._declared_features):
            self.queue.move_all(event, node_pre_check(info), old=old, new=node)

    def remove_node(self, name: str) -> None:
        known = self.cache.node(name)
        self.cache.remove_node(name)
        if self._narrow_hints and known is not None and known.node is not None:
            self.queue.move_all(ev.NODE_DELETE, old=known.node)
        for waiting in self.waiting:
            if waiting.node_name == name:
                waiting.reject("", f'node "{name}" was removed')

    def _affinity_matching(self, pod: Pod) -> list[QueuedPodInfo]:
        labels = self.store.namespaces.get(pod.namespace)
        ns_labels = labels.labels if labels is not None else {}
        return [info for info in self.queue.unschedulable_pods()
                if any(term.matches(pod, ns_labels) for term in info.pod_info.required_affinity_terms)]

    def _check_uid(self, pod: Pod) -> None:
        """Refuse a pod whose uid belongs to another known pod (before anything changes)."""
        owner = self.store.key_of_uid(pod.uid)
        if owner is not None and owner != pod.key:
            raise CacheError(f"pod {pod.key} has uid {pod.uid!r}, which belongs to pod {owner}; refused")

    def _check_uids(self, pods: Iterable[Pod]) -> None:
        """Refuse a batch in which two pods share a uid, or one takes a known pod's uid."""
        owners: dict[str, str] = {}
        for pod in pods:
            owner = owners.setdefault(pod.uid, pod.key)
            if owner != pod.key:
                raise CacheError(f"pods {owner} and {pod.key} share uid {pod.uid!r}; refused")
            self._check_uid(pod)

    def add_pod(self, pod: Pod) -> None:
        if pod.key in self.store.pods:
            self.update_pod(pod)
            return
        if pod.phase in _TERMINATED:
            self.store.scheduling.pod_ended(pod)  # the PodGroup controller counts it
            return  # kube-scheduler's informers never hand it finished pods
        self._check_uid(pod)
        self.store.put_pod(pod)
        info = PodInfo.of(pod, self.accounting)
        if pod.node_name:
            self.cache.add_pod(info)
            self._assigned_pod_added(pod)
            return
        if pod.scheduler_name not in self.profiles:
            return
        queued = self.queue.add(info)
        if not queued.gated and pod.nominated_node_name:
            self.nominator.add(info, pod.nominated_node_name)

    def update_pod(self, pod: Pod) -> None:
        old = self.store.pods.get(pod.key)
        if old is None:
            self.add_pod(pod)
            return
        if old.uid != pod.uid:  # a new pod under the old name: kube's informers see delete + add
            self._check_uid(pod)
            self.remove_pod(pod.key)
            self.add_pod(pod)
            return
        if pod.phase in _TERMINATED:
            self.store.scheduling.pod_ended(pod)
            self.remove_pod(pod.key)  # a finished pod frees its node, as if deleted
            return
        if old.node_name and not pod.node_name:
            raise CacheError(f"pod {pod.key} is bound to {old.node_name}; it cannot become pending")
        if not pod.nominated_node_name and old.nominated_node_name and not pod.node_name:
            pod = attrs.evolve(pod, nominated_node_name=old.nominated_node_name)
        self.store.put_pod(pod)
        info = PodInfo.of(pod, self.accounting)
        if pod.node_name:
            self._update_bound(old, info)
            return
        if self.cache.is_assumed(pod.uid):
            return
        if pod.scheduler_name not in self.profiles:  # no longer ours: kube's informers see a delete
            self.queue.delete(old)
            self.nominator.remove(old.uid)
            return
        self.queue.update(info, changed=spec_changed(old, pod))
        self.nominator.add(info, pod.nominated_node_name or self.nominator.node_of(pod.uid) or "")

    def _update_bound(self, old: Pod, info: PodInfo) -> None:
        pod = info.pod
        if old.node_name:
            self.cache.update_pod(info)
            if self._narrow_hints:
                for event in ev.pod_changes(old, pod, generated_claims=self._dra_events):
                    self.queue.move_all(event, old=old, new=pod)
            else:
                self.queue.move_pods(self._affinity_matching(pod), ev.ASSIGNED_POD_UPDATE, old=old, new=pod)
            return
        self.queue.delete(old)
        self.nominator.remove(old.uid)
        state = self.cache.pod_state(pod.uid)
        if state is not None and not state.assumed:
            self.cache.update_pod(info)
        else:
            self.waiting.pop(pod.uid)
            self._attempts.pop(pod.uid, None)
            self.cache.add_pod(info)
        self._assigned_pod_added(pod)
        self._nominated_pod_bound(old)

    def _assigned_pod_added(self, pod: Pod) -> None:
        """kube v1.30 moves only pods whose affinity terms match; with v1.36's hints every pod is asked."""
        if self._narrow_hints:
            self.queue.move_all(ev.ASSIGNED_POD_ADD, new=pod)
        else:
            self.queue.move_pods(self._affinity_matching(pod), ev.ASSIGNED_POD_ADD, new=pod)

    def _nominated_pod_left(self, pod: Pod) -> None:
        """kube v1.33+ ``deletePodFromSchedulingQueue``: a nominated pending pod that leaves made room only for
        pods of lower or equal priority (the two-pass filter), so they are asked as after an assigned pod's
        deletion."""
        if not self._nominated_leaves_requeue or not pod.nominated_node_name:
            return
        priority = pod.effective_priority
        held = [info for info in self.queue.unschedulable_pods() if info.pod.effective_priority <= priority]
        self.queue.move_pods(held, ev.ASSIGNED_POD_DELETE, old=pod)

    def _nominated_pod_bound(self, old: Pod) -> None:
        """In v1.33 and v1.34 the informer reports a pending pod's binding to the queue as its deletion."""
        if not self._binding_leaves_quietly:
            self._nominated_pod_left(old)

    def _victim_gone(self, key: str) -> None:
        """A preemption victim left: a preemptor whose last victim this was is no longer held."""
        for preemptor, victims in list(self._preempting.items()):
            victims.discard(key)
            if not victims:
                del self._preempting[preemptor]

    def preemption_failed(self, key: str) -> bool:
        """The victims of the pod's preemption could not all be evicted: it is held back no longer and goes to
        activeQ (kube's async preemption after a failed API call).  Whether it was held back."""
        pod = self.store.pods.get(key)
        if pod is None or self._preempting.pop(pod.uid, None) is None:
            return False
        self.queue.activate([key])
        return True

    def remove_pod(self, key: str) -> bool:
        known = self.store.pop_pod(key)
        if known is None:
            self.store.scheduling.pod_deleted(key)  # one that ended is no longer counted
            return False
        if self.store.api is None and (known.resource_claims or self.store.dra.claims):
            self.store.dra.release_pod(known)  # the resourceclaim controller's part (a live cluster runs its own)
        if self._preempting:
            self._preempting.pop(known.uid, None)
            self._victim_gone(key)
        self.nominator.remove(known.uid)
        waiting = self.waiting.get(known.uid)
        if waiting is not None:
            waiting.reject("", "removed")
            self._advance()
            self.queue.move_all(ev.ASSIGNED_POD_DELETE, old=known)
            return True
        state = self.cache.pod_state(known.uid)
        if state is not None and not state.assumed:
            self.cache.remove_pod(state.pod_info.pod)
            self.queue.move_all(ev.ASSIGNED_POD_DELETE, old=state.pod_info.pod)
        elif state is None:
            self.queue.delete(known)
            self._nominated_pod_left(known)
        self._claims_written()
        return True

    # --- the scheduling cycle -----------------------------------------------------------------

    def schedule_one(self) -> ScheduleResult | None:
        """One scheduling cycle for the head of activeQ (after processing what is due)."""
        guard = raised_threshold()
        if guard is None:  # inside run_until_idle, or the embedder's own setting is larger
            return self._schedule_next()
        with guard:
            return self._schedule_next()

    def _schedule_next(self) -> ScheduleResult | None:
        self._advance()
        while True:
            info = self.queue.pop()
            if info is None:
                return None
            if self.cache.pod_state(info.pod.uid) is None and info.pod.deletion_timestamp is None:
                break  # kube-scheduler skips assumed pods and pods being deleted
            self.queue.done(info.pod.key)
        runtime = self.profiles[info.pod.scheduler_name]
        state = CycleState()  # kept here: results hold an empty one (embedders keep every result)
        try:
            result = self._schedule(info, runtime, state)
        except BaseException:  # KeyboardInterrupt, SystemExit, or a bug: the pod is not lost
            self._put_back(info, runtime, state)
            raise
        self._claims_written()
        return result

    def _schedule(self, info: QueuedPodInfo, runtime: ProfileRuntime, state: CycleState) -> ScheduleResult:
        started = time.perf_counter()
        pod = info.pod
        handle = self.handles[pod.scheduler_name]
        handle.set_snapshot(_NO_NODES)  # the last cycle's snapshot, if nothing else holds it, needs no copy
        snapshot = self.cache.snapshot(self.store.namespaces)
        handle.set_snapshot(snapshot)
        outcome = run_cycle(
            runtime, pod, snapshot,
            start_index=self.next_start_index,
            percentage_of_nodes_to_score=self.config.percentage_of_nodes_to_score,
            rng=self.rng,
            nominator=self.nominator,
            detail=False,
            state=state,
        )
        self.next_start_index = outcome.next_start_index
        self.metrics.observe_series(_ALGORITHM_SERIES, time.perf_counter() - started)
        if outcome.selected is None:
            return self._cycle_failed(info, runtime, outcome, started)
        return self._assume(info, runtime, outcome, state, started)

    def _assume(self, info: QueuedPodInfo, runtime: ProfileRuntime, outcome: CycleOutcome, state: CycleState,
                started: float) -> ScheduleResult:
        node = outcome.selected
        assert node is not None
        assumed_pod = placed(info.pod, "node_name", node)
        attempt = _Attempt(info, runtime, outcome, state, info.pod_info.with_pod(assumed_pod), started)
        try:
            self.cache.assume_pod(attempt.assumed)
        except CacheError as exc:
            return self._failed(attempt.info, runtime, outcome, Status.from_error(str(exc)), started,
                                nominate=self._clear_nomination)
        self.nominator.remove(info.pod.uid)
        status = runtime.run_reserve(attempt.state, assumed_pod, node)
        if status.is_success:
            permit = runtime.run_permit(attempt.state, assumed_pod, node)
            if isinstance(permit, dict) or permit.is_success:
                self._activate_requested(attempt.state)
            if isinstance(permit, dict):
                failed = self._nominate_expected_node(attempt, waits=True) if self._nominate_before_pre_bind else None
                return self._park(attempt, permit) if failed is None else self._binding_failed(attempt, failed)
            status = permit
        if not status.is_success:
            runtime.run_unreserve(attempt.state, assumed_pod, node)
            self.cache.forget_pod(assumed_pod)
            return self._failed(info, runtime, outcome, status, started, nominate=self._clear_nomination, node=node)
        return self._bind(attempt)

    def _put_back(self, info: QueuedPodInfo, runtime: ProfileRuntime, state: CycleState) -> None:
        """Undo an attempt that an exception cut short: unreserve, forget, back to the queue.

        A pod already parked in Permit, binding on the executor or bound keeps going as it is.
        """
        pod = info.pod
        if self.waiting.get(pod.uid) is not None or pod.uid in self._attempts:
            return
        known = self.cache.pod_state(pod.uid)
        if known is not None and known.assumed:
            assumed = known.pod_info.pod
            with contextlib.suppress(BaseException):  # the first interruption is the one reported
                runtime.run_unreserve(state, assumed, assumed.node_name)
            self.cache.forget_pod(assumed)
        stored = self.store.pods.get(pod.key)
        if stored is not None and not stored.node_name and self.cache.pod_state(pod.uid) is None:
            self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)

    def _activate_requested(self, state: CycleState) -> None:
        """Move the pods a plugin asked for (PodsToActivate) to activeQ: the cycle succeeded."""
        wanted = state.get(PODS_TO_ACTIVATE)
        if wanted is not None and wanted.keys:
            self.queue.activate(wanted.take())

    def _nominate_expected_node(self, attempt: _Attempt, *, waits: bool) -> Status | None:
        """v1.35+: the pod's nominated node becomes the chosen node when a Permit wait or PreBind work
        lies ahead (kube's PreBindPreFlight); an Error from the pre-flight is returned (binding fails)."""
        attempt.pre_flown = True
        status = attempt.runtime.run_pre_bind_pre_flights(attempt.state, attempt.assumed.pod, attempt.node)
        if status.code is Code.ERROR:
            return status
        if status.is_success or waits:
            key = attempt.info.pod.key
            stored = self.store.pods.get(key)
            if stored is not None and not stored.node_name and stored.nominated_node_name != attempt.node:
                self.store.pods[key] = attrs.evolve(stored, nominated_node_name=attempt.node)
                attempt.nominate = self.store.api
                if waits and attempt.nominate is not None:  # a Permit wait first: written now, not when it ends
                    attempt.nominate.nominate(attempt.assumed.pod, attempt.node)
                    attempt.nominate = None
        return None

    def _park(self, attempt: _Attempt, timeouts: dict[str, float]) -> ScheduleResult:
        pod = attempt.assumed.pod
        if attempt.pre_flown:
            pod = attrs.evolve(pod, nominated_node_name=attempt.node)
        self.waiting.add(WaitingPod(pod, attempt.node, attempt.state, timeouts, self.clock.now()))
        self._attempts[pod.uid] = attempt
        message = f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"'
        result = ScheduleResult(pod, attempt.node, Status(Code.WAIT, (message,)), message,
                                attempts=attempt.info.attempts, outcome=attempt.outcome)
        for listener in self.listeners:
            listener.on_waiting(result)
        return result

    # --- the binding cycle --------------------------------------------------------------------

    def _bind(self, attempt: _Attempt) -> ScheduleResult:
        if self._nominate_before_pre_bind and not attempt.pre_flown:
            failed = self._nominate_expected_node(attempt, waits=False)
            if failed is not None:
                return self._binding_failed(attempt, failed)
        if self.executor is None:
            try:
                status = self._binding_work(attempt)
            except BaseException:
                self._put_back(attempt.info, attempt.runtime, attempt.state)
                raise
            return self._finish_binding(attempt, status)
        self._attempts[attempt.assumed.pod.uid] = attempt
        future = self.executor.submit(self._binding_work, attempt)
        future.add_done_callback(lambda done: self._completions.put((attempt, _future_status(done))))
        pod = attempt.assumed.pod
        return ScheduleResult(pod, attempt.node, Status(Code.WAIT, ("binding",)), "binding",
                              attempts=attempt.info.attempts, outcome=attempt.outcome)

    @staticmethod
    def _binding_work(attempt: _Attempt) -> Status:
        """PreBind and Bind (safe to run on another thread: touches no scheduler state)."""
        pod, node, state, runtime = attempt.assumed.pod, attempt.node, attempt.state, attempt.runtime
        if attempt.nominate is not None:
            attempt.nominate.nominate(pod, node)
        status = runtime.run_pre_bind(state, pod, node)
        if status.is_success:
            by_extender = bind_with_extenders(runtime.extenders, pod, node)  # schedule_one.go: extendersBinding
            status = by_extender if by_extender is not None else runtime.run_bind(state, pod, node)
            if status.is_skip:
                status = Status.from_error(f"no Bind plugin bound pod {pod.key}")
        return status

    def _finish_binding(self, attempt: _Attempt, status: Status) -> ScheduleResult:
        pod = attempt.assumed.pod
        key = pod.key
        self._attempts.pop(pod.uid, None)
        self._claims_written()  # PreBind's claim writes come before the pod's own events, as in kube
        pods = self.store.pods
        latest = pods.get(key)
        if latest is None:
            status = Status.from_error(f"pod {key} was deleted while binding")
        if latest is None or not status.is_success:
            self.cache.finish_binding(pod, self.clock.now())
            return self._binding_failed(attempt, status)
        # Bound: the cache confirms the pod at once, so marking its binding finished first (and reading the
        # clock for the mark's expiry) would be replaced unread.
        info = attempt.info
        node = attempt.node
        if latest is not info.pod and not latest.node_name:
            pod = placed(latest, "node_name", node)
            self.cache.add_pod(PodInfo.of(pod, self.accounting))
        else:
            self.cache.add_pod(attempt.assumed)
        pods[key] = pod
        self.queue.done(key)
        self._assigned_pod_added(pod)
        self._nominated_pod_bound(latest)
        runtime = attempt.runtime
        runtime.run_post_bind(attempt.state, pod, node)
        attempts = info.attempts
        result = _bound_result(pod, node, Status.success(), None, None, (), attempts, attempt.outcome)
        self._observe_attempt("scheduled", runtime, attempt.started)
        metrics = self.metrics
        metrics.observe_series(_ATTEMPTS_SERIES, attempts)
        first = info.initial_attempt_timestamp
        if first is not None:
            metrics.observe_series(_SLI_SERIES[min(attempts, 15)], self.clock.now() - first)
        for listener in self.listeners:
            listener.on_bound(result)
        return result

    def _binding_failed(self, attempt: _Attempt, status: Status, *, in_permit: bool = False) -> ScheduleResult:
        """Roll back a pod whose Permit wait, PreBind or Bind failed; a Permit rejection is a FitError."""
        pod = attempt.assumed.pod
        attempt.runtime.run_unreserve(attempt.state, pod, attempt.node)
        self.cache.forget_pod(pod)
        if status.code not in _REJECTED:
            self.queue.move_all(ev.ASSIGNED_POD_DELETE, old=pod)
        result = self._failed(attempt.info, attempt.runtime, attempt.outcome, status, attempt.started,
                              nominate=self._clear_nomination, node=attempt.node, fit_error=in_permit)
        if status.code in _REJECTED:
            self.queue.move_pods([i for i in self.queue.unschedulable_pods() if i.pod.key != pod.key],
                                 ev.ASSIGNED_POD_DELETE, old=pod)
        return result

    # --- failures -----------------------------------------------------------------------------

    def _cycle_failed(self, info: QueuedPodInfo, runtime: ProfileRuntime, outcome: CycleOutcome,
                      started: float) -> ScheduleResult:
        if outcome.diagnosis is None:
            status = outcome.error or Status.from_error("scheduling failed")
            return self._failed(info, runtime, outcome, status, started, nominate=self._clear_nomination)
        post = outcome.post_filter
        nominate = post.nominated_node_name if post is not None else None
        status = Status(Code.UNSCHEDULABLE, (outcome.message or "",))
        return self._failed(info, runtime, outcome, status, started, nominate=nominate,
                            diagnosis=outcome.diagnosis)

    def _failed(
        self,
        info: QueuedPodInfo,
        runtime: ProfileRuntime,
        outcome: CycleOutcome,
        status: Status,
        started: float,
        *,
        nominate: str | None,
        diagnosis: Diagnosis | None = None,
        node: str | None = None,
        fit_error: bool = True,
    ) -> ScheduleResult:
        """kube-scheduler's failure handler: record rejectors, requeue, update the nomination.

        ``node`` is the node tried after the cycle chose one (Reserve, Permit or binding failed);
        a rejection there is a FitError on that one node unless ``fit_error`` is false (PreBind/Bind).
        """
        message = status.message()
        if fit_error and diagnosis is None and node is not None and status.code in _REJECTED:
            diagnosis = Diagnosis({node: status}, frozenset({status.plugin}) if status.plugin else frozenset())
            message = fit_error_message(1, diagnosis)
        info.unschedulable_plugins = diagnosis.unschedulable_plugins if diagnosis is not None else frozenset()
        info.pending_plugins = diagnosis.pending_plugins if diagnosis is not None else frozenset()
        if nominate:  # preemption chose this node: lower-priority nominated pods there lose it (prepareCandidate)
            for other in self.nominator.pods_for_node(nominate):
                if other.pod.effective_priority < info.pod.effective_priority:
                    self.nominator.remove(other.pod.uid)
                    stored = self.store.pods.get(other.pod.key)
                    if stored is not None and stored.nominated_node_name:
                        self.store.pods[stored.key] = cleared = placed(stored, "nominated_node_name", "")
                        if (queued := self.queue.get(stored.key)) is not None:
                            queued.pod_info = queued.pod_info.with_pod(cleared)
        pod = self.store.pods.get(info.pod.key)
        if pod is not None and not pod.node_name:
            if nominate is not None and nominate != pod.nominated_node_name:
                pod = placed(pod, "nominated_node_name", nominate)  # a failed cycle nominating: not checked again
                self.store.pods[pod.key] = pod
            info.pod_info = info.pod_info.with_pod(pod) if pod is not info.pod else info.pod_info
            self.queue.add_unschedulable_if_not_present(info, self.queue.scheduling_cycle)
            self.nominator.add(info.pod_info, nominate if nominate is not None else pod.nominated_node_name)
        self.queue.done(info.pod.key)
        post = outcome.post_filter
        victims = post.victims if post is not None and post.status.is_success else ()
        if victims and self._async_preemption:
            self._preempting[info.pod.uid] = set(victims)
        if post is not None:
            self.metrics.inc("scheduler_preemption_attempts_total")
            if victims:
                self.metrics.observe("scheduler_preemption_victims", None, len(victims))
        result_pod = pod if pod is not None else info.pod
        result = ScheduleResult(result_pod, node, status, message, nominate or None, victims,
                                info.attempts, outcome)
        self._observe_attempt("error" if status.code is Code.ERROR else "unschedulable", runtime, started)
        for listener in self.listeners:
            listener.on_failed(result)
            if victims:
                listener.on_preempting(result)
        return result

    def _observe_attempt(self, result: str, runtime: ProfileRuntime, started: float) -> None:
        which = (result, runtime.scheduler_name)
        series = self._attempt_series.get(which)
        if series is None:
            labels = {"result": result, "profile": runtime.scheduler_name}
            series = self._attempt_series[which] = (
                Metrics.series("scheduler_schedule_attempts_total", labels),
                Metrics.series("scheduler_scheduling_attempt_duration_seconds", labels))
        self.metrics.inc_series(series[0])
        self.metrics.observe_series(series[1], time.perf_counter() - started)

    # --- what is due --------------------------------------------------------------------------

    def _advance(self) -> None:
        """Finish bindings, resolve waiting pods, flush expired backoff and stale pool entries."""
        while not self._completions.empty():
            attempt, status = self._completions.get()
            if self._attempts.get(attempt.assumed.pod.uid) is not attempt:
                continue  # the embedder reported the pod bound (or deleted it) while its binding ran
            self.deferred.append(self._finish_binding(attempt, status))
        held, expiring = len(self.waiting) > 0, self.cache.assumed_ttl > 0
        now = self.clock.now() if held or expiring else 0.0  # read only when something is timed
        for waiting in self.waiting if held else ():
            outcome = waiting.outcome(now)
            if outcome is None:
                continue
            self.waiting.pop(waiting.pod.uid)
            attempt = self._attempts.pop(waiting.pod.uid)
            self.metrics.observe("scheduler_permit_wait_duration_seconds", {"result": outcome.code.label},
                                 now - waiting.started)
            if outcome.is_success:
                self.deferred.append(self._bind(attempt))
            else:
                self.deferred.append(self._binding_failed(attempt, outcome, in_permit=True))
        for pod in self.cache.expire_assumed(now) if expiring else ():
            self.queue.move_all(ev.ASSIGNED_POD_DELETE, old=pod)
        self._claims_written()
        self.queue.flush_backoff_completed()
        if self.flush_unschedulable:
            self.queue.flush_unschedulable_leftover(ev.UNSCHEDULABLE_TIMEOUT)
        self.metrics.set_series_all({_PENDING_PODS[name]: count for name, count in self.queue.counts().items()})

    def tick(self) -> list[ScheduleResult]:
        """Process what is due now; returns results of pods whose waiting or binding ended."""
        self._advance()
        return self.take_deferred()

    def take_deferred(self) -> list[ScheduleResult]:
        results, self.deferred = self.deferred, []
        return results

    def next_wakeup(self) -> float | None:
        """The clock time at which something queued becomes due (backoff end, permit timeout).

        Now, when pods are ready in activeQ (a ``tick()`` may have moved them there): a host
        that sleeps until this time never leaves them waiting.
        """
        if self.queue.has_active() or self.queue.has_poppable_backoff():
            return self.clock.now()
        candidates = [self.queue.next_backoff_expiry(), self.waiting.next_deadline()]
        if self.flush_unschedulable:
            candidates.append(self.queue.next_unschedulable_flush())
        times = [t for t in candidates if t is not None]
        return min(times) if times else None

    def binding_keys(self) -> list[str]:
        """Pods binding on the executor (not waiting in Permit)."""
        waiting = {w.pod.uid for w in self.waiting}
        return [attempt.assumed.pod.key for uid, attempt in self._attempts.items() if uid not in waiting]

    def busy(self) -> bool:
        """Whether bindings are in flight on the executor."""
        return any(uid not in {w.pod.uid for w in self.waiting} for uid in self._attempts)

    def what_if(self) -> Isolated:
        """A what-if context: inside it plugins write to copies of the scheduler's state (see
        :mod:`kschedlib._internal.what_if`), which is as before once it ends."""
        if self._keeping is None:
            plugins = {id(p): p for runtime in self.profiles.values() for p in runtime.profile.plugins.values()}
            self._keeping = tuple(p for p in plugins.values() if isinstance(p, KeepsState))
        return Isolated(self.store, self.waiting, self.nominator, self.rng, self._keeping)

    def evaluate(self, pod: Pod, *, start_index: int, percentage_of_nodes_to_score: int) -> Status | CycleOutcome:
        """PreEnqueue, then one scheduling cycle for ``pod`` against the current state with every detail,
        changing nothing: the PreEnqueue status that held the pod back, or the cycle's outcome.

        The live snapshot and plugin caches are reused; both run in one :meth:`what_if` (the pod is
        visible to plugins, ``get_pod``, meanwhile only), so later decisions are the same as without
        this call.
        """
        runtime = self.profiles[pod.scheduler_name]
        snapshot = self.cache.snapshot(self.store.namespaces)
        self.handles[pod.scheduler_name].set_snapshot(snapshot)
        pods = self.store.pods
        previous = pods.get(pod.key)
        with self.what_if():
            gate = runtime.run_pre_enqueue(pod)
            if not gate.is_success:
                return gate
            pods[pod.key] = pod
            try:
                return run_cycle(runtime, pod, snapshot, start_index=start_index,
                                 percentage_of_nodes_to_score=percentage_of_nodes_to_score, rng=self.rng,
                                 nominator=self.nominator, score_single_node=True)
            finally:
                if previous is None:
                    del pods[pod.key]
                else:
                    pods[pod.key] = previous

    def fork(self, clock: Clock, listeners: Sequence[SchedulerListener]) -> Engine:
        """An independent engine in the same state: cluster, queue, nominations, rng, start index.

        Immutable parts (NodeInfos, pods, PodStates) are shared; containers are copied.  Plugins are
        built anew, so their caches start empty.  Refused (:class:`CacheError`) while a pod waits in
        Permit or binds on the executor: that work belongs to this engine's plugins and threads.
        """
        if self._attempts or len(self.waiting) or not self._completions.empty():
            raise CacheError("a scheduler cannot be forked while pods wait in Permit or bind on the executor "
                             f"({sorted(a.assumed.pod.key for a in self._attempts.values())}); "
                             "let them finish (tick) first")
        opts = self.options
        other = Engine(self.config, clock=clock, seed=0, registry=opts.registry, defaults=opts.defaults,
                       retry_unschedulable=opts.retry_unschedulable, listeners=listeners,
                       binding_executor=opts.binding_executor, assumed_ttl=opts.assumed_ttl,
                       extenders=opts.extenders, kube=self.kube,
                       store=self.store.copy(), nominator=self.nominator.copy())
        other.rng.setstate(self.rng.getstate())
        other.cache = self.cache.copy()
        self.queue.copy_into(other.queue)
        other.flush_unschedulable = self.flush_unschedulable
        other.next_start_index = self.next_start_index
        other._preempting = {uid: set(victims) for uid, victims in self._preempting.items()}
        other.deferred = list(self.deferred)
        return other

    def add_objects(self, objects: Iterable[object], add_node: Callable[[Node], None]) -> None:
        items = list(objects)
        pods = [o for o in items if isinstance(o, Pod)]
        self._check_uids(pods)
        changes = object_changes(self.store, items, storage_events=self._hints, dra_events=self._dra_events)
        self.store.add(items)
        for event, old, new in changes:
            self.queue.move_all(event, old=old, new=new)
        for node in sorted((o for o in items if isinstance(o, Node)), key=lambda n: n.name):
            add_node(node)
        for pod in pods:
            if pod.node_name:
                self.add_pod(pod)
        for pod in pods:
            if not pod.node_name:
                self.add_pod(pod)


    def remove_objects(self, objects: Iterable[object]) -> None:
        """Objects deleted in the cluster (not nodes or pods): forgotten, and their delete events requeue pods
        as kube's informers would (storage objects with queueing hints, DRA objects with DRA on)."""
        for obj in objects:
            resource = event_resource(self.store, obj, storage_events=self._hints, dra_events=self._dra_events)
            old = self.store.remove(obj)
            if old is not None and resource is not None:
                self.queue.move_all(ev.object_change(resource, old, None), old=old, new=None)

    def _claims_written(self) -> None:
        """The scheduler's own ResourceClaim writes (PreBind, PostFilter's deallocation, Unreserve, a pod's
        release) as claim events, as kube's claim cache and informer deliver them."""
        dra = self.store.dra
        if not dra.pending_writes:  # nothing written: most cycles
            return
        written = dra.take_written()
        if not written or not self._dra_events:
            return
        for old, new in written:
            self.queue.move_all(ev.object_change(ev.RESOURCE_CLAIM, old, new), old=old, new=new)


def _future_status(done: object) -> Status:
    try:
        result = done.result()  # type: ignore[attr-defined]
    except BaseException as exc:  # even an interrupt on the worker: the binding failed, the pod is rolled back
        return Status.from_error(str(exc) or type(exc).__name__)
    assert isinstance(result, Status)
    return result


def _detached(node: Node) -> Node:
    """A copy of ``node`` that shares none of its writable maps (labels, allocatable, ...) with it."""
    maps: dict[str, Any] = {field.name: dict(value) for field in attrs.fields(Node)
                            if field.init and type(value := getattr(node, field.name)) is dict}
    return attrs.evolve(node, **maps)
