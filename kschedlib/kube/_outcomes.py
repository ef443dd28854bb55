"""Decisions out: what a running scheduler writes for each result, as kube-scheduler v1.36 does.

- Bound: a ``Scheduled`` Event (the binding itself was the API binder's, on a binding thread).
- Failed: a ``FailedScheduling`` Event and the ``PodScheduled: False`` status patch (reason ``Unschedulable``
  for a rejection, ``SchedulerError`` for an error, kube's message; ``nominatedNodeName`` set to what the
  scheduler nominated, or cleared when a rejection left no nomination) — not for a pod gone or bound meanwhile.
- Preempting: each victim gets its ``DisruptionTarget`` condition and is deleted, then a ``Preempted`` Event
  (off the loop's thread, as kube's asynchronous preemption does), and pods whose nomination to the node the
  preemption took away have it cleared.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, final

from kschedlib.kube import _writer as writer
from kschedlib.kube._events import EventRecorder
from kschedlib.kube._informer import object_key
from kschedlib.kube._resources import resource
from kschedlib.kube.client import KubeApiError, KubeClient
from kschedlib.model import Pod
from kschedlib.results import ScheduleResult
from kschedlib.scheduler import Scheduler

__all__ = ["Log", "Outcomes", "WakingExecutor", "bind_pod", "leader_event", "structured"]

log = logging.getLogger("kschedlib.kube")
Log = Callable[..., None]
"""``log(verbosity, message, **values)``."""


class WakingExecutor(Executor):
    """A thread pool that wakes the loop once a binding's outcome has reached the scheduler."""

    def __init__(self, workers: int, wake: Callable[[], None]) -> None:
        self._inner = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="binding")
        self._wake = wake

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        outer: Future[Any] = Future()
        outer.set_running_or_notify_cancel()

        def relay(inner: Future[Any]) -> None:
            try:
                outer.set_result(inner.result())  # runs the scheduler's callback first
            except BaseException as exc:
                outer.set_exception(exc)
            self._wake()

        try:
            inner = self._inner.submit(fn, *args, **kwargs)
        except RuntimeError as exc:  # shut down: a Permit wait allowed by the last tick fails, it does not raise
            outer.set_exception(exc)
            self._wake()
            return outer
        inner.add_done_callback(relay)
        return outer

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._inner.shutdown(wait=wait, cancel_futures=cancel_futures)


def bind_pod(client: KubeClient, pod: Pod, node: str) -> None:
    """The API binder's call (on a binding thread).  A binding sent again after a lost answer that finds the pod
    bound to this node counts as made; a first binding refused because someone else bound the pod is an error,
    as kube-scheduler reports it."""
    writer.bind(client, pod.namespace, pod.name, pod.uid, node, made=lambda: _bound_to(client, pod, node))


def _bound_to(client: KubeClient, pod: Pod, node: str) -> bool:
    try:
        live = client.request("GET", resource("Pod").object_path(pod.name, pod.namespace))
    except KubeApiError:
        return False
    return (live.get("metadata") or {}).get("uid") == pod.uid and (live.get("spec") or {}).get("nodeName") == node


def leader_event(client: KubeClient, lease: Mapping[str, Any], message: str, controller: str) -> None:
    """The ``LeaderElection`` Event kube-scheduler records (core/v1) on its Lease."""
    meta = lease.get("metadata") or {}
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    body = {"kind": "Event", "apiVersion": "v1",
            "metadata": {"name": f"{meta.get('name')}.{time.time_ns():x}", "namespace": meta.get("namespace")},
            "involvedObject": {"kind": "Lease", "namespace": meta.get("namespace"), "name": meta.get("name"),
                               "uid": meta.get("uid"), "apiVersion": "coordination.k8s.io/v1",
                               "resourceVersion": meta.get("resourceVersion")},
            "reason": "LeaderElection", "message": message, "source": {"component": controller},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": "Normal",
            "reportingComponent": controller, "reportingInstance": ""}
    try:
        client.request("POST", f"/api/v1/namespaces/{meta.get('namespace')}/events", body=body)
    except KubeApiError as exc:
        log.warning("leader election event not recorded: %s", exc)


def structured(message: str, values: Mapping[str, object]) -> str:
    """A klog-style structured line: ``"message" key="value" count=3``."""
    parts = [f'"{message}"', *(f"{key}={_quote(value)}" for key, value in values.items())]
    return " ".join(parts)


def _quote(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


@final
class Outcomes:
    """Acts on results (on the loop's thread); ``raw_pods`` is the loop's own map of pods as last read."""

    def __init__(self, client: KubeClient, scheduler: Scheduler, events: EventRecorder,
                 raw_pods: dict[str, dict[str, Any]], vlog: Log,
                 on_loop: Callable[[Callable[[Scheduler], object]], None] = lambda fn: None) -> None:
        self.client = client
        self.scheduler = scheduler
        self.events = events
        self.raw_pods = raw_pods
        self._log = vlog
        self._on_loop = on_loop
        """Runs a function of the scheduler on the loop's thread (evictions end on threads of their own)."""
        self._writes = ThreadPoolExecutor(max_workers=4, thread_name_prefix="evict")

    def close(self) -> None:
        """Wait for the evictions under way."""
        self._writes.shutdown(wait=True)

    def _regarding(self, pod: Pod) -> Mapping[str, Any]:
        raw = self.raw_pods.get(pod.key)
        if raw is not None and (raw.get("metadata") or {}).get("uid") == pod.uid:
            return raw
        return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": pod.name, "namespace": pod.namespace,
                                                               "uid": pod.uid}}

    def handle(self, result: ScheduleResult) -> None:
        pod = result.pod
        if result.waiting:
            self._log(3, "pod waits", pod=pod.key, node=result.node_name, reason=result.status.message())
            return
        outcome = result.outcome
        counts = {} if outcome is None else {"evaluatedNodes": outcome.evaluated_nodes,
                                              "feasibleNodes": len(outcome.feasible)}
        if result.scheduled:
            self._log(2, "Successfully bound pod to node", pod=pod.key, node=result.node_name, **counts)
            self.events.record(self._regarding(pod), controller=pod.scheduler_name, event_type="Normal",
                               reason="Scheduled", action="Binding",
                               note=f"Successfully assigned {pod.key} to {result.node_name}")
            return
        self._failed(result)

    def _failed(self, result: ScheduleResult) -> None:
        pod = result.pod
        rejected = result.status.is_rejected
        message = result.message or result.status.message()
        self._log(2, "Unable to schedule pod; no fit; waiting" if rejected else "Error scheduling pod; retrying",
                  pod=pod.key, err=message)
        if result.victims:
            self._preempt(result)
        self.events.record(self._regarding(pod), controller=pod.scheduler_name, event_type="Warning",
                           reason="FailedScheduling", action="Scheduling", note=message)
        raw = self.raw_pods.get(pod.key)
        if raw is None or (raw.get("metadata") or {}).get("uid") != pod.uid:
            return  # gone (or made again): nothing to tell it
        if (raw.get("spec") or {}).get("nodeName") or result.node_name:
            nominated: str | None = ""  # bound by someone else, or the chosen node failed: kube clears the nomination
        else:
            nominated = self.scheduler.nominations().get(pod.key, "") if rejected else None
        patch = writer.condition_patch(raw, writer.POD_SCHEDULED, "False",
                                       "Unschedulable" if rejected else "SchedulerError", message, nominated=nominated)
        if patch is not None:
            self._patch(raw, patch)

    def _patch(self, raw: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
        try:
            writer.patch_status(self.client, raw, patch)
        except KubeApiError as exc:
            log.warning("status of pod %s not updated: %s", object_key(raw), exc)

    def _preempt(self, result: ScheduleResult) -> None:
        """Evict the victims (off the loop's thread) and clear nominations the preemption took away."""
        pod, node = result.pod, result.nominated_node_name
        self._log(2, "Preempting", pod=pod.key, node=node, victims=list(result.victims))
        for key in result.victims:
            victim = self.raw_pods.get(key)
            if victim is not None:
                self._writes.submit(self._evict, victim, pod, str(node))
        nominations = self.scheduler.nominations()
        for key, raw in self.raw_pods.items():
            status = raw.get("status") or {}
            if (status.get("nominatedNodeName") == node and key != pod.key and key not in nominations
                    and not (raw.get("spec") or {}).get("nodeName")):
                self._patch(raw, {"status": {"nominatedNodeName": None}})

    def _evict(self, victim: Mapping[str, Any], preemptor: Pod, node: str) -> None:
        try:
            writer.mark_victim(self.client, victim, preemptor.scheduler_name)
            writer.delete_victim(self.client, victim)
        except KubeApiError as exc:  # kube gives up on this preemption and retries the preemptor at once
            log.warning("preemption victim %s not evicted: %s", object_key(victim), exc)
            self._on_loop(lambda scheduler: scheduler.preemption_failed(preemptor.key))
            return
        self.events.record(victim, controller=preemptor.scheduler_name, event_type="Normal", reason="Preempted",
                           action="Preempting", note=f"Preempted by pod {preemptor.uid} on node {node}")
