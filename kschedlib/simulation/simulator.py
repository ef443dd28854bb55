"""The simulator: schedule a cluster's pending pods the way kube-scheduler's loop would (:func:`simulate`)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from typing import Any, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.documents import read_documents
from kschedlib.clock import FakeClock
from kschedlib.dra._report import device_report
from kschedlib.errors import KschedError
from kschedlib.framework.registry import Registry
from kschedlib.framework.status import Status
from kschedlib.scheduler import ConfigSource, Scheduler, ScheduleResult
from kschedlib.simulation._fit_errors import fit_error_groups
from kschedlib.simulation._groups import elastic_quota_report, pod_group_report
from kschedlib.simulation._settings import config_section
from kschedlib.simulation._utilisation import before_after, shapes_of
from kschedlib.simulation.cluster import Cluster, load_cluster
from kschedlib.simulation.skipped import skipped_section
from kschedlib.simulation.timeline import Batch, TimelineEvent, apply_event, batches, parse_events, waiting_for
from kschedlib.versions import KubeSettings, chosen_explicitly, kubelet_note
from kschedlib.versions import resolve as resolve_kube

__all__ = ["SimulationReport", "SimulationRun", "simulate", "simulation_run"]

Progress = Callable[[int, int], None]
"""Called as ``progress(attempts_done, pods_total)`` while a simulation runs."""


@final
@attrs.define(slots=True, repr=False)
class SimulationReport(FieldsRepr):
    """What happened to every pending pod."""

    placements: dict[str, str | None] = attrs.field(factory=dict)
    unschedulable: dict[str, str] = attrs.field(factory=dict)
    gated: list[str] = attrs.field(factory=list)
    gates: dict[str, list[str]] = attrs.field(factory=dict)
    """Each gated pod's scheduling gates (``spec.schedulingGates``), in order."""
    nominations: dict[str, str] = attrs.field(factory=dict)
    evicted: list[str] = attrs.field(factory=list)
    deleted_by_events: list[str] = attrs.field(factory=list)
    events_not_applied: list[dict[str, Any]] = attrs.field(factory=list)
    """Timeline events whose trigger never came (``{index, op, waiting_for}``)."""
    events_refused: list[dict[str, Any]] = attrs.field(factory=list)
    """Timeline events that came but could not apply to the cluster as it then was, which they left
    unchanged (``{index, op, error}``: a pod or node an earlier event or a preemption removed, ...)."""
    node_removals: list[dict[str, Any]] = attrs.field(factory=list)
    """What each ``delete_node`` / ``drain_node`` event did to the node's pods."""
    pending: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    attempts: dict[str, int] = attrs.field(factory=dict)
    bind_order: list[dict[str, Any]] = attrs.field(factory=list)
    checkpoints: list[dict[str, Any]] | None = None
    errors: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    """Pods whose retries ended in the same error each time, so that the simulation stopped
    retrying them: ``{pod: {"error": message, "attempts": n}}``."""
    skipped: dict[str, Any] = attrs.field(factory=dict)
    trace: list[dict[str, Any]] = attrs.field(factory=list)
    seconds: float = 0.0
    pod_groups: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    """Each PodGroup's phase, member counts and timeouts (empty when the cluster has none)."""
    elastic_quotas: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    """Each namespace's ElasticQuota min, max and use at the end (empty when the cluster has none)."""
    dra: dict[str, Any] = attrs.field(factory=dict)
    """Device state at the end (clusters with DRA objects): ``{"allocations": {pod: [{claim, devices}]},
    "free_devices": {node: {driver/pool: [device]}}}``."""
    kube: KubeSettings = attrs.field(factory=resolve_kube)
    """The kube-scheduler version and feature gates the simulation behaved as."""
    notes: list[str] = attrs.field(factory=list)
    """Remarks on the run (e.g. nodes that report another kubelet version than the one in force)."""
    config: dict[str, Any] = attrs.field(factory=dict)
    """The config the simulation ran under: ``{"source", "document"}`` (file, ``default``, ``inline``)."""
    fit_errors: list[dict[str, Any]] = attrs.field(factory=list)
    """The unschedulable pods grouped by message and by their last attempt's verdicts per node:
    ``[{"pods", "message", "rejections": [{"plugin", "reason", "nodes"}]}]``."""
    usage: dict[str, Any] = attrs.field(factory=dict)
    """``utilisation`` and ``fragmentation`` before and after (:func:`simulate` fills it in)."""

    @property
    def scheduled(self) -> int:
        """How many pods ended bound."""
        return sum(1 for node in self.placements.values() if node is not None)

    def unschedulable_reasons(self) -> Counter[str]:
        """How many pods failed for each FitError message."""
        return Counter(self.unschedulable.values())

    def summary(self) -> dict[str, Any]:
        """Counts, scheduling seconds and attempts per second."""
        attempts = sum(self.attempts.values())
        return {
            "pods": len(self.placements),
            "scheduled": self.scheduled,
            "unschedulable": len(self.unschedulable),
            "gated": len(self.gated),
            "seconds": round(self.seconds, 6),
            "pods_per_second": round(attempts / self.seconds, 1) if self.seconds > 0 else 0.0,
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``simulate`` JSON of DESIGN.md."""
        out: dict[str, Any] = {
            **self.kube.to_dict(),
            "config": dict(self.config),
            "notes": list(self.notes),
            "placements": dict(self.placements),
            "unschedulable": dict(self.unschedulable),
            "gated": list(self.gated),
            "gates": dict(self.gates),
            "nominations": dict(self.nominations),
            "evicted": list(self.evicted),
            "pending": dict(self.pending),
            "attempts": dict(self.attempts),
            "bind_order": list(self.bind_order),
            "errors": dict(self.errors),
            "summary": self.summary(),
            "skipped": dict(self.skipped),
            "fit_errors": list(self.fit_errors),
            **self.usage,
        }
        if self.pod_groups:
            out["pod_groups"] = dict(self.pod_groups)
        if self.elastic_quotas:
            out["elastic_quotas"] = dict(self.elastic_quotas)
        if self.dra:
            out["dra"] = dict(self.dra)
        if self.checkpoints is not None:
            out["checkpoints"] = list(self.checkpoints)
            out["deleted_by_events"] = list(self.deleted_by_events)
            out["events_not_applied"] = list(self.events_not_applied)
            out["events_refused"] = list(self.events_refused)
            out["node_removals"] = list(self.node_removals)
        return out


def _trace_entry(result: ScheduleResult) -> dict[str, Any]:
    entry: dict[str, Any] = {"pod": result.pod.key, "attempt": result.attempts}
    if result.scheduled:
        entry.update(result="bound", node=result.node_name)
        return entry
    entry.update(result="unschedulable", message=result.message or "", nominated=result.nominated_node_name or "")
    diagnosis = result.diagnosis
    if diagnosis is not None and diagnosis.unschedulable_plugins:
        entry["plugins"] = sorted(diagnosis.unschedulable_plugins)
    if result.victims:
        entry["victims"] = sorted(result.victims)
    return entry


@final
class SimulationRun:
    """One simulation: the scheduler, the report and the timeline still to apply."""

    def __init__(self, scheduler: Scheduler, clock: FakeClock, events: Sequence[TimelineEvent],
                 progress: Progress | None) -> None:
        self.scheduler = scheduler
        self.clock = clock
        self.report = SimulationReport(checkpoints=[] if events else None)
        self.batches: list[Batch] = batches(events)
        self.progress = progress
        self.done = 0
        self.failures: dict[str, str] = {}
        """The message of each pod's last failed attempt."""
        self.repeating: set[str] = set()
        """Pods whose last two attempts failed alike with no timeline event applied in between."""
        self.changes = 0
        """Changes to the cluster seen so far: bindings, evictions, new nominations, timeline batches."""
        self.seen: dict[str, tuple[int, set[str]]] = {}
        """Pod -> the failure messages it had since the last change (with that change's number)."""
        self.cycling: set[str] = set()
        """Pods whose last failure repeated one they had since the last change, not necessarily the one
        before (a gang whose members fail by turns)."""
        self.failed_at: dict[str, int] = {}
        """Pod -> :attr:`changes` when its last failed attempt started (a retry after a change may end
        otherwise)."""
        self.before_batch: Callable[[Scheduler], None] | None = None
        """Called with the scheduler before each timeline batch is applied (capacity reports read it)."""
        self.budgets: dict[str, int] = {}
        """PodDisruptionBudget -> disruptions still allowed, as the timeline's drains use them up."""
        self.removed: dict[str, str] = {}
        """``Pod ns/name`` / ``Node name`` -> what removed it, for the events that then find it gone."""
        self.rejections: dict[str, Mapping[str, Status]] = {}
        """Each pod's per-node verdicts of its last failed attempt."""

    def record(self, result: ScheduleResult) -> None:
        report = self.report
        key = result.pod.key
        report.attempts[key] = result.attempts
        report.trace.append(_trace_entry(result))
        if result.waiting:
            return
        seen = self.changes
        if result.scheduled:
            self.changes += 1
            self.failures.pop(key, None)
            self.rejections.pop(key, None)
            self.repeating.discard(key)
            self.cycling.discard(key)
            report.placements[key] = result.node_name
            report.unschedulable.pop(key, None)
            report.nominations.pop(key, None)
            report.bind_order.append({"pod": key, "node": result.node_name, "attempt": result.attempts})
        else:
            message = result.message or ""
            if self.failures.get(key) == message:
                self.repeating.add(key)
            self.failures[key] = message
            stamp, messages = self.seen.get(key, (-1, set()))
            if stamp != seen:
                stamp, messages = seen, set()
            (self.cycling.add if message in messages else self.cycling.discard)(key)
            messages.add(message)
            self.seen[key] = (stamp, messages)
            if result.diagnosis is not None:
                self.rejections[key] = result.diagnosis.node_statuses
            report.placements[key] = None
            report.unschedulable[key] = message
            self.failed_at[key] = seen
            if result.nominated_node_name:
                self.changes += report.nominations.get(key) != result.nominated_node_name
                report.nominations[key] = result.nominated_node_name
        for victim in result.victims:
            if self.scheduler.remove_pod(victim):
                self.changes += 1
                report.evicted.append(victim)
                self._gone(victim)
                self.removed[f"Pod {victim}"] = f"evicted by the preemption for {key}"
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, len(report.placements))

    def pending_view(self) -> dict[str, dict[str, Any]]:
        view = {}
        for key, (queue, info) in sorted(self.scheduler.pending().items()):
            if key in self.report.placements:
                view[key] = {"queue": queue, "plugins": sorted(info.unschedulable_plugins | info.pending_plugins),
                             "attempts": info.attempts}
        return view

    def triggered(self, result: ScheduleResult) -> bool:
        if not self.batches:
            return False
        first = self.batches[0].first
        if first.at == "attempts":
            return result.pod.key == first.pod and result.attempts == first.attempts
        if first.at == "nominated":
            return self.scheduler.nominations().get(first.pod) is not None
        return False

    def _gone(self, key: str) -> None:
        """A pod the run placed was deleted (by an event or a preemption): it did not end bound."""
        if self.report.placements.get(key) is not None:
            self.report.placements[key] = None

    def _repeats(self, key: str, attempts: int) -> bool:
        """Whether retrying ``key`` can only fail again as before: nothing changed in the cluster since its last
        attempt, which failed as the one before did, or as an earlier one did once its backoff stopped growing
        (the retries of a gang whose members fail by turns then come round in the same order)."""
        if self.failed_at.get(key) != self.changes:
            return False
        backoff = self.scheduler.backoff_seconds
        return key in self.repeating or (key in self.cycling and backoff(attempts) == backoff(attempts + 1))

    def settled(self) -> bool:
        """Whether only backoff retries that can change nothing are left (:meth:`_repeats`): no retry, and no
        event a retry could trigger, can change the outcome any more.  (A pod in backoff whose cluster changed
        may still bind, as in kube.)"""
        scheduler = self.scheduler
        if not (self.repeating or self.cycling) or scheduler.waiting_pods() or scheduler.binding_pods():
            return False
        attempts_of = {}
        for key, (queue, info) in self.scheduler.pending().items():
            if queue == "active" or (queue == "backoff" and not self._repeats(key, info.attempts)):
                return False
            attempts_of[key] = info.attempts
        if self.batches:
            first = self.batches[0].first
            if first.at == "attempts" and attempts_of.get(first.pod, first.attempts) < first.attempts:
                return False
        return True

    def apply_next(self, *, checkpoint: bool) -> None:
        self.repeating.clear()  # the events may change what the retries find
        self.cycling.clear()
        self.changes += 1
        batch = self.batches.pop(0)
        if checkpoint and self.report.checkpoints is not None:
            self.report.checkpoints.append({"before_event": batch.first.index,
                                            "placements": dict(self.report.placements),
                                            "pending": self.pending_view()})
        if self.before_batch is not None:
            self.before_batch(self.scheduler)
        for event in batch.events:
            try:
                change = apply_event(self.scheduler, event, self.budgets)
            except KschedError as exc:  # the event found the cluster otherwise: say so, and go on
                self.refuse(event, exc)
                continue
            self.report.deleted_by_events.extend(change.deleted)
            for key in change.deleted:
                self._gone(key)
                self.removed[f"Pod {key}"] = f"deleted by event {event.index}, {event.op}"
            for key in change.added_pending:
                self.report.placements[key] = None
                self.report.unschedulable.pop(key, None)
            if change.node_removal is not None:
                self.report.node_removals.append(dict(change.node_removal))
                if change.node_removal.get("blocked") is None:
                    self.removed[f"Node {change.node_removal['node']}"] = f"deleted by event {event.index}, {event.op}"

    def refuse(self, event: TimelineEvent, exc: KschedError) -> None:
        """Report an event the cluster did not take, with what had removed its pod or node."""
        error = str(exc)
        why = self.removed.get(getattr(exc, "obj", ""))
        if why is not None:
            error += f" ({why})"
        self.report.events_refused.append({"index": event.index, "op": event.op, "error": error})

    def step(self) -> bool:
        """Run one cycle, or move time on, or apply the next idle batch; False when done."""
        result = self.scheduler.schedule_one()
        for finished in self.scheduler.take_finished():
            self.record(finished)
        if result is not None:
            self.record(result)
            if self.triggered(result):
                self.apply_next(checkpoint=False)
            return True
        wakeup = self.scheduler.next_wakeup()
        if wakeup is not None and not self.settled():
            self.clock.set(max(wakeup, self.clock.now()))
            return True
        if self.batches and self.batches[0].first.at == "idle":
            self.apply_next(checkpoint=True)
            return True
        return False

    def finish(self) -> SimulationReport:
        """Run the simulation to its end and complete the report."""
        started = time.perf_counter()
        while self.step():
            pass
        report = self.report
        report.seconds = time.perf_counter() - started
        report.pending = self.pending_view()
        report.gated = [key for key, entry in report.pending.items() if entry["queue"] == "gated"]
        report.gates = {key: list(pod.scheduling_gates) for key in report.gated
                        if (pod := self.scheduler.get_pod(key)) is not None}
        report.errors = self.error_view()
        report.fit_errors = fit_error_groups(report.unschedulable, self.rejections)
        report.pod_groups = pod_group_report(self.scheduler)
        report.elastic_quotas = elastic_quota_report(self.scheduler)
        report.dra = device_report(self.scheduler.devices, self.scheduler.pods().values())
        report.events_not_applied = [{"index": event.index, "op": event.op, "waiting_for": waiting_for(event)}
                                     for batch in self.batches for event in batch.events]
        return report

    def error_view(self) -> dict[str, dict[str, Any]]:
        """The pods left in backoff (their retries all failed alike), with their error and attempts."""
        return {key: {"error": self.failures.get(key, ""), "attempts": info.attempts}
                for key, (queue, info) in sorted(self.scheduler.pending().items()) if queue == "backoff"}


def _load_events(events: Any) -> list[TimelineEvent]:
    if events is None:
        return []
    if isinstance(events, str | PathLike):
        docs = read_documents(events)
        events = docs[0] if len(docs) == 1 else docs
    return parse_events(events)


def simulate(
    cluster: Cluster | str | PathLike[str] | Mapping[str, Any] | Sequence[Any],
    config: ConfigSource = None,
    *,
    seed: int = 0,
    once: bool = False,
    events: Any = None,
    progress: Progress | None = None,
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
) -> SimulationReport:
    """Schedule every pending pod of ``cluster``; with ``once`` each pod gets exactly one attempt.

    Victims of preemption are evicted as the simulation goes.  ``events`` (a list or a
    JSON/YAML file) changes the cluster while it runs.  Time runs on a fake clock that
    jumps to the next backoff expiry or Permit timeout when nothing else is left to do,
    so the result depends only on the inputs and ``seed``.  kube-scheduler retries a pod
    whose attempts end in an error (not "does not fit") forever; the simulation stops once
    such retries, each failing as the one before, are all that is left, and reports those
    pods in :attr:`SimulationReport.errors`.  What the cluster held that was not used
    (controllers, custom resources, pods for other schedulers or being deleted) is in
    ``skipped``.  ``registry`` supplies the plugins (default: in-tree plus entry points);
    ``kube_version`` and ``feature_gates`` choose the kube-scheduler behaviour (:mod:`kschedlib.versions`).
    """
    loaded = load_cluster(cluster)
    run = simulation_run(loaded, config, seed=seed, once=once, events=events, progress=progress, registry=registry,
                         kube_version=kube_version, feature_gates=feature_gates)
    before = run.scheduler.fork()
    report = run.finish()
    report.usage = before_after(before, run.scheduler, shapes_of(before, loaded.pending_pods))
    return report


def simulation_run(
    loaded: Cluster,
    config: ConfigSource = None,
    *,
    seed: int = 0,
    once: bool = False,
    events: Any = None,
    progress: Progress | None = None,
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
) -> SimulationRun:
    """A simulation set up and not yet run (:meth:`SimulationRun.finish` runs it): for the capacity questions,
    which read the scheduler before and after."""
    timeline = _load_events(events)
    clock = FakeClock()
    scheduler = Scheduler(config, seed=seed, clock=clock, retry_unschedulable=not once, registry=registry,
                          kube_version=kube_version, feature_gates=feature_gates, flush_unschedulable=False)
    scheduler.add_objects(loaded.objects)
    run = SimulationRun(scheduler, clock, timeline, progress)
    run.report.skipped = skipped_section(loaded, scheduler.profiles)
    run.report.kube = scheduler.kube
    run.report.config = config_section(config)
    note = kubelet_note(scheduler.kube, loaded.kubelet_versions) if not chosen_explicitly(kube_version) else None
    run.report.notes.extend([note] if note else [])
    for pod in loaded.pending_pods:
        if pod.scheduler_name in scheduler.profiles and pod.deletion_timestamp is None:
            run.report.placements[pod.key] = None
    return run
