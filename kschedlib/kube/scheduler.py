"""kschedlib as a scheduler process on a cluster: list + watch in, kube-scheduler's writes out.

One thread owns the :class:`~kschedlib.Scheduler` and feeds it only through its public methods: the informers'
changes arrive in an inbox (in the order the API server made them), the loop applies them, runs cycles, and acts
on the results the way kube-scheduler does (:mod:`kschedlib.kube._writer`, :mod:`kschedlib.kube._events`).
Bindings run on a thread pool through the API binder (``DefaultBinder``), so scheduling goes on while the API
server answers; their outcome comes back through :meth:`Scheduler.tick`.  Changes to a pod whose binding is in
flight wait until the binding's outcome is known, as the scheduler learns its own bindings from its binder.

It starts from one consistent snapshot (:mod:`kschedlib.kube._snapshot`), added the way a cluster file is, so a
run places pods as ``simulate`` does on a dump of the same cluster; the watches resume from that snapshot's
resourceVersion.
"""

from __future__ import annotations

import logging
import queue
import random
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from os import PathLike
from typing import Any, Final, final

from kschedlib.errors import KschedError, LoopNotRunning
from kschedlib.framework import Plugin
from kschedlib.kube._cluster_api import LiveClusterApi
from kschedlib.kube._events import EventRecorder
from kschedlib.kube._informer import DELETED, Backoff, Informer, object_key
from kschedlib.kube._leader import LeaderElector
from kschedlib.kube._loading import load_live
from kschedlib.kube._outcomes import Outcomes, WakingExecutor, bind_pod, leader_event, structured
from kschedlib.kube._plugins import registry as make_registry
from kschedlib.kube._resources import Resource, for_scheduler
from kschedlib.kube._serving import HealthServer, parse_address
from kschedlib.kube._snapshot import Snapshot, read_snapshot
from kschedlib.kube.client import KubeApiError, KubeClient, connect
from kschedlib.kube.settings import RunSettings, read_settings
from kschedlib.model import Pod
from kschedlib.model.convert import object_from_dict
from kschedlib.scheduler import Scheduler
from kschedlib.versions import resolve

__all__ = ["LiveScheduler", "LoopNotRunning", "run"]

log = logging.getLogger("kschedlib.kube")
BINDING_THREADS: Final = 16
_MAX_IDLE: Final = 1.0
"""The loop wakes at least this often (seconds) to notice timers and a stop."""
_BATCH_PODS: Final = 64
_WRITTEN_KINDS: Final = frozenset({"ResourceClaim", "PersistentVolume", "PersistentVolumeClaim"})
"""Kinds the scheduler itself writes: an informer event older than its write is not applied (kube's assume cache)."""


@final
class LiveScheduler:
    """A kschedlib scheduler on a cluster (see the module docstring).

    Build it, then :meth:`run` (blocks until :meth:`stop`; returns the exit status) — or :meth:`start` it on a
    thread of its own.  ``client`` talks to the API server (:func:`kschedlib.kube.connect`); ``settings`` come
    from the KubeSchedulerConfiguration (:func:`kschedlib.kube.read_settings`).
    """

    def __init__(self, client: KubeClient, settings: RunSettings, *, kube_version: str | None = None,
                 feature_gates: Mapping[str, bool] | str | None = None,
                 plugins: Sequence[str | type[Plugin]] = (),
                 seed: int | None = None, metrics_address: tuple[str, int] | None = None,
                 verbosity: int = 0, identity: str | None = None) -> None:
        self.client = client
        self.settings = settings
        self.verbosity = verbosity
        self.inbox: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.stopping = threading.Event()
        self.ready = threading.Event()
        self.stopped = threading.Event()
        self.exit_status = 0
        self._executor = WakingExecutor(BINDING_THREADS, lambda: self.inbox.put(("wake",)))
        self.events = EventRecorder(client.with_limits(settings.client.qps, settings.client.burst))
        self.api = LiveClusterApi(client, self.events, self.stopping)
        """The writes besides bindings (claims, volumes, nominations), as kube-scheduler makes them."""
        self.scheduler = Scheduler(
            settings.document, registry=make_registry(lambda pod, node: bind_pod(client, pod, node), plugins),
            binding_executor=self._executor, seed=seed if seed is not None else random.SystemRandom().randrange(2**32),
            kube_version=kube_version, feature_gates=feature_gates, api=self.api)
        self.raw_pods: dict[str, dict[str, Any]] = {}
        """The latest version of every pod the scheduler has been told of, as the API server wrote it."""
        self.outcomes = Outcomes(client, self.scheduler, self.events, self.raw_pods, self._log,
                                 on_loop=lambda fn: self.inbox.put(("call", fn, Future())))
        self.informers: list[Informer] = []
        self._by_kind: dict[str, Informer] = {}
        self._deferred: dict[str, list[tuple[Resource, str, dict[str, Any]]]] = {}
        self._heartbeat = time.monotonic()
        self.elector: LeaderElector | None = None
        if settings.leader_election.leader_elect:
            self.elector = LeaderElector(client, settings.leader_election, on_lost=self._lost, identity=identity,
                                         on_started=self._became_leader, on_leading=self._wake)
        self.server: HealthServer | None = None
        if metrics_address is not None:
            self.server = HealthServer(metrics_address, checks=self._checks(), metrics=self.metrics_text)
        self._thread: threading.Thread | None = None
        self._calls_lock = threading.Lock()
        self._taking_calls = False
        """Whether the loop answers :meth:`call` (after the cluster is read, until the stop begins)."""

    # --- the loop ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Run on a thread of its own (``ready`` is set once the cluster is read)."""
        self._thread = threading.Thread(target=self.run, name="scheduler", daemon=True)
        self._thread.start()

    def run(self) -> int:
        """Read the cluster, then schedule until :meth:`stop`; the exit status (1 when leadership was lost)."""
        try:
            if not self._begin():
                return self.exit_status
            with self._calls_lock:
                self._taking_calls = True
            while not self.stopping.is_set():
                self._heartbeat = time.monotonic()
                self._drain(self._idle_wait())
                if self._leading():
                    self._schedule()
        except KubeApiError as exc:  # the API server refused what the scheduler must have (a 401, a 403 on nodes)
            log.error("the scheduler stopped: %s", exc)
            self.exit_status = 1
        except Exception:
            log.exception("the scheduler stopped on an unexpected error")
            self.exit_status = 1
        finally:
            self._finish()
        return self.exit_status

    def stop(self) -> None:
        """Stop gracefully: no new cycle starts, bindings in flight finish, queued events are sent."""
        self.stopping.set()
        self._wake()

    def _wake(self) -> None:
        """End the loop's idle wait (a stop, or leadership just taken: kube-scheduler starts at once)."""
        self.inbox.put(("wake",))

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def call(self, fn: Callable[[Scheduler], Any], timeout: float = 10.0) -> Any:
        """Run ``fn(scheduler)`` on the loop's thread (the only one that may touch the scheduler); its result.

        Raises :class:`LoopNotRunning` at once while the loop does not take calls (the cluster is being read, or
        the scheduler is stopping), so that a metrics scrape then fails fast instead of waiting ``timeout``.
        """
        future: Future[Any] = Future()
        with self._calls_lock:
            if not self._taking_calls:
                raise LoopNotRunning("the scheduling loop is not running (reading the cluster, or stopped)")
            self.inbox.put(("call", fn, future))
        return future.result(timeout)

    def _begin(self) -> bool:
        """Read the cluster and start the informers, election and server; False when stopped before that."""
        kube = self.scheduler.kube
        batch = any(self.scheduler.plugin(name) is not None for name in ("Coscheduling", "CapacityScheduling"))
        resources = for_scheduler(dynamic_resources=kube.switches.dynamic_resources, batch=batch)
        if self.server is not None:  # /healthz answers while the cluster is read (/readyz only after)
            self.server.start()
        read = self._first_read(resources)
        if read is None:
            return False
        version = read.version
        self.scheduler.add_objects(load_live(read.objects, version))
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for obj in read.objects:
            by_kind.setdefault(str(obj["kind"]), []).append(obj)
        self.raw_pods.update((object_key(o), o) for o in by_kind.get("Pod", ()))
        for res in resources:
            if res not in read.served:
                log.warning("%s: not served by this API server, or not readable by this user: not watched, so the "
                            "scheduler decides without them", res.plural)  # kube-scheduler would not start
                continue
            informer = Informer(self.client, res, self._deliver, stop=self.stopping,
                                initial=by_kind.get(res.kind, []), version=version)
            self.informers.append(informer)
            self._by_kind[res.kind] = informer
            informer.start()
        self.api.attach(self._lookup)
        if self.elector is not None:
            self.elector.start()
        self.ready.set()
        self._log(2, "scheduler started", pods=len(self.raw_pods), version=version, profiles=self.scheduler.profiles)
        return True

    def _first_read(self, resources: Sequence[Resource]) -> Snapshot | None:
        """The snapshot to start from.  An API server that cannot be reached or answers 5xx is waited for with the
        informers' backoff, as kube-scheduler waits for its caches to sync; ``None`` when stopped meanwhile."""
        backoff = Backoff()
        while True:
            try:
                return read_snapshot(self.client, resources)
            except KubeApiError as exc:
                if exc.status != 0 and exc.status < 500:
                    raise
                wait = backoff.next()
                log.warning("reading the cluster failed (%s); retrying in %.1f s", exc, wait)
            until = time.monotonic() + wait
            while (left := until - time.monotonic()) > 0:
                self._heartbeat = time.monotonic()  # waiting is healthy: /healthz stays ok
                if self.stopping.wait(min(left, _MAX_IDLE)):
                    return None

    def _leading(self) -> bool:
        return self.elector is None or self.elector.leading.is_set()

    def _idle_wait(self) -> float:
        if not self._leading():
            return _MAX_IDLE
        wakeup = self.scheduler.next_wakeup()
        if wakeup is None:
            return _MAX_IDLE
        return min(max(wakeup - self.scheduler.clock.now(), 0.0), _MAX_IDLE)

    def _drain(self, wait: float) -> None:
        """Apply what the inbox holds (waiting up to ``wait`` seconds for the first item)."""
        try:
            item = self.inbox.get(timeout=wait) if wait > 0 else self.inbox.get_nowait()
        except queue.Empty:
            return
        binding = set(self.scheduler.binding_pods())
        while True:
            self._take(item, binding)
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return

    def _take(self, item: tuple[Any, ...], binding: set[str]) -> None:
        if item[0] == "delta":
            _, res, kind, obj = item
            key = object_key(obj)
            if res.kind == "Pod" and (key in binding or key in self._deferred):
                self._deferred.setdefault(key, []).append((res, kind, obj))
                return
            self._apply(res, kind, obj)
        elif item[0] == "call":
            _, fn, future = item
            try:
                future.set_result(fn(self.scheduler))
            except Exception as exc:
                future.set_exception(exc)

    def _deliver(self, res: Resource, kind: str, obj: dict[str, Any]) -> None:
        self.inbox.put(("delta", res, kind, obj))

    def _lookup(self, kind: str, key: str) -> dict[str, Any] | None:
        """The object of ``kind`` under ``key`` as its informer last saw it (any thread may ask)."""
        informer = self._by_kind.get(kind)
        return informer.store.get(key) if informer is not None else None

    def _schedule(self) -> None:
        """Pods whose bindings or Permit waits ended, then cycles until the queue has nothing ready."""
        ended = self.scheduler.tick()
        self._flush_deferred()  # what the cluster did meanwhile (someone else bound the pod?) first
        for result in ended:
            self.outcomes.handle(result)
        for _ in range(_BATCH_PODS):
            if self.stopping.is_set():
                return
            attempt = self.scheduler.schedule_one()
            for finished in self.scheduler.take_finished():
                self.outcomes.handle(finished)
            if attempt is None:
                return
            self.outcomes.handle(attempt)
            if not self.inbox.empty():
                return

    def _flush_deferred(self) -> None:
        if not self._deferred:
            return
        binding = set(self.scheduler.binding_pods())
        for key in [k for k in self._deferred if k not in binding]:
            for res, kind, obj in self._deferred.pop(key):
                self._apply(res, kind, obj)

    # --- cluster changes in -----------------------------------------------------------------------

    def _apply(self, res: Resource, kind: str, obj: dict[str, Any]) -> None:
        if kind != DELETED and res.kind in _WRITTEN_KINDS and self.api.stale(res.kind, obj):
            self._log(5, "older than our own write; not applied", kind=res.kind, key=object_key(obj))
            return
        try:
            if res.kind == "Pod":
                self._apply_pod(kind, obj)
            elif res.kind == "Node":
                self._apply_node(kind, obj)
            else:
                model = object_from_dict(obj)
                if model is not None:
                    (self.scheduler.remove_objects if kind == DELETED else self.scheduler.add_objects)([model])
        except KschedError as exc:  # a refused change changed nothing: say so and go on
            log.warning("%s %s %s not applied: %s", kind.lower(), res.kind, object_key(obj), exc)

    def _apply_pod(self, kind: str, obj: dict[str, Any]) -> None:
        key = object_key(obj)
        if kind == DELETED:
            self.raw_pods.pop(key, None)
            self.scheduler.remove_pod(key)
            self._log(5, "pod deleted", pod=key)
            return
        pod = object_from_dict(obj)
        assert isinstance(pod, Pod)
        known = self.scheduler.get_pod(key)
        if known is not None and known.node_name and not pod.node_name and known.uid == pod.uid:
            self._log(5, "an older version of a bound pod; not applied", pod=key)  # our nomination's echo, say
            return
        self.raw_pods[key] = obj
        if known is None:
            self.scheduler.add_pod(pod)
        else:
            self.scheduler.update_pod(pod)

    def _apply_node(self, kind: str, obj: dict[str, Any]) -> None:
        name = object_key(obj)
        if kind == DELETED:
            if self.scheduler.has_node(name):
                self.scheduler.remove_node(name)
            return
        node = object_from_dict(obj)
        assert node is not None
        if self.scheduler.has_node(name):
            self.scheduler.update_node(node)  # type: ignore[arg-type]
        else:
            self.scheduler.add_node(node)  # type: ignore[arg-type]

    # --- leadership, health, shutdown -------------------------------------------------------------

    def _became_leader(self, lease: Mapping[str, Any]) -> None:
        assert self.elector is not None
        leader_event(self.client, lease, f"{self.elector.identity} became leader", self.scheduler.profiles[0])

    def _lost(self) -> None:
        self.exit_status = 1
        self.stop()

    def _checks(self) -> dict[str, Callable[[], bool]]:
        checks: dict[str, Callable[[], bool]] = {
            "healthz": lambda: not self.stopped.is_set() and time.monotonic() - self._heartbeat < 60,
            "sched-handler-sync": self.ready.is_set,
        }
        if self.elector is not None:
            checks["leaderElection"] = self.elector.healthy
        return checks

    def metrics_text(self) -> str:
        """The scheduler's metrics in Prometheus' text format, rendered on the loop's thread."""
        from kschedlib.prometheus import render

        text: str = self.call(render)
        return text

    def _finish(self) -> None:
        self.stopping.set()
        self._refuse_calls()
        self._executor.shutdown(wait=True)  # no binding is left half done
        for result in self.scheduler.tick():
            self.outcomes.handle(result)
        self.outcomes.close()
        self.events.close()
        if self.elector is not None:
            self.elector.release()
        for informer in self.informers:
            informer.close()
        if self.server is not None:
            self.server.close()
        self.stopped.set()
        self._log(2, "scheduler stopped", status=self.exit_status)

    def _refuse_calls(self) -> None:
        """Stop taking calls, and answer the ones still queued with :class:`LoopNotRunning` (the rest of the
        inbox is left for nobody: the scheduler no longer applies changes)."""
        with self._calls_lock:
            self._taking_calls = False
            while True:
                try:
                    item = self.inbox.get_nowait()
                except queue.Empty:
                    return
                if item[0] == "call" and not item[2].done():
                    item[2].set_exception(LoopNotRunning("the scheduling loop stopped before this call ran"))

    def _log(self, level: int, message: str, **values: object) -> None:
        """A klog-style structured line at verbosity ``level`` (shown with ``-v level`` or more)."""
        if level <= self.verbosity:
            log.info("%s", structured(message, values))


def _first_profile(document: Mapping[str, Any] | None) -> str:
    profiles = (document or {}).get("profiles") or [{}]
    first = profiles[0] if isinstance(profiles, list) and profiles and isinstance(profiles[0], Mapping) else {}
    return str(first.get("schedulerName") or "default-scheduler")


def run(config: str | PathLike[str] | Mapping[str, Any] | None = None, *, kubeconfig: str | None = None,
        context: str | None = None, kube_version: str | None = None,
        feature_gates: Mapping[str, bool] | str | None = None, leader_elect: bool = False,
        metrics_bind_address: str | None = None, plugins: Sequence[str | type[Plugin]] = (),
        seed: int | None = None, verbosity: int = 0) -> int:
    """Schedule the cluster's pods of ``config``'s profiles until SIGTERM/SIGINT; returns the exit status.

    ``kubeconfig`` (or the config's ``clientConnection.kubeconfig``; ``""`` for ``$KUBECONFIG`` or
    ``~/.kube/config``) names the cluster; with neither, the in-cluster service account is used, as
    kube-scheduler does.  ``leader_elect`` (or the config's ``leaderElection.leaderElect``) runs leader election
    on a Lease named after the first profile unless the config names one.  ``metrics_bind_address``
    (``HOST:PORT``) serves ``/healthz``, ``/readyz`` and ``/metrics``.  ``plugins``: modules, ``.py`` files or
    plugin classes to register (besides the in-tree plugins and the installed entry points).
    """
    resolve(kube_version, feature_gates)  # a bad version or gate is refused before anything connects
    document: Any = config
    if config is not None and not isinstance(config, Mapping):
        from kschedlib._internal.documents import read_config_document

        document = read_config_document(config)
    settings = read_settings(document, default_lease=_first_profile(document))
    if leader_elect and not settings.leader_election.leader_elect:
        import attrs

        settings = attrs.evolve(settings, leader_election=attrs.evolve(settings.leader_election, leader_elect=True))
    where = kubeconfig if kubeconfig is not None else settings.client.kubeconfig
    client = connect(where, context, qps=settings.client.qps, burst=settings.client.burst,
                     user_agent="kschedlib/scheduler")
    live = LiveScheduler(client, settings, kube_version=kube_version, feature_gates=feature_gates, plugins=plugins,
                         seed=seed, verbosity=verbosity,
                         metrics_address=parse_address(metrics_bind_address) if metrics_bind_address else None)
    if threading.current_thread() is not threading.main_thread():
        return live.run()
    previous = {sig: signal.signal(sig, lambda number, frame: live.stop()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        return live.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
