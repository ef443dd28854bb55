"""simulate: schedule a cluster's pending pods the way kube-scheduler's loop would."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from os import PathLike
from typing import Any, final

import attrs

from kschedlib.clock import FakeClock
from kschedlib.scheduler import Scheduler, ScheduleResult
from kschedlib.simulation.cluster import Cluster, load_cluster

__all__ = ["SimulationReport", "simulate"]

Progress = Callable[[int, int], None]
"""Called as ``progress(attempts_done, pods_total)`` while a simulation runs."""


@final
@attrs.define(slots=True)
class SimulationReport:
    """What happened to every pending pod."""

    placements: dict[str, str | None] = attrs.field(factory=dict)
    unschedulable: dict[str, str] = attrs.field(factory=dict)
    gated: list[str] = attrs.field(factory=list)
    nominations: dict[str, str] = attrs.field(factory=dict)
    evicted: list[str] = attrs.field(factory=list)
    pending: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    attempts: dict[str, int] = attrs.field(factory=dict)
    bind_order: list[dict[str, Any]] = attrs.field(factory=list)
    seconds: float = 0.0

    @property
    def scheduled(self) -> int:
        return sum(1 for node in self.placements.values() if node is not None)

    def unschedulable_reasons(self) -> Counter[str]:
        """How many pods failed for each FitError message."""
        return Counter(self.unschedulable.values())

    def summary(self) -> dict[str, Any]:
        attempts = sum(self.attempts.values())
        return {
            "pods": len(self.placements) + len(self.gated),
            "scheduled": self.scheduled,
            "unschedulable": len(self.unschedulable),
            "gated": len(self.gated),
            "seconds": round(self.seconds, 6),
            "pods_per_second": round(attempts / self.seconds, 1) if self.seconds > 0 else 0.0,
        }

    def to_dict(self) -> dict[str, Any]:
        """The ``simulate`` JSON of DESIGN.md."""
        return {
            "placements": dict(self.placements),
            "unschedulable": dict(self.unschedulable),
            "gated": list(self.gated),
            "nominations": dict(self.nominations),
            "evicted": list(self.evicted),
            "pending": dict(self.pending),
            "attempts": dict(self.attempts),
            "bind_order": list(self.bind_order),
            "summary": self.summary(),
        }


def _record(report: SimulationReport, result: ScheduleResult) -> None:
    key = result.pod.key
    report.attempts[key] = result.attempts
    if result.node_name is not None:
        report.placements[key] = result.node_name
        report.unschedulable.pop(key, None)
        report.nominations.pop(key, None)
        report.bind_order.append({"pod": key, "node": result.node_name, "attempt": result.attempts})
        return
    report.placements[key] = None
    report.unschedulable[key] = result.message or ""
    if result.nominated_node_name:
        report.nominations[key] = result.nominated_node_name


def _evict(scheduler: Scheduler, report: SimulationReport, result: ScheduleResult) -> None:
    for victim in result.victims:
        scheduler.remove_pod(victim)
        report.evicted.append(victim)
        if report.placements.get(victim) is not None:
            report.placements[victim] = None


def simulate(
    cluster: Cluster | str | PathLike[str] | Mapping[str, Any],
    config: Any = None,
    *,
    seed: int = 0,
    once: bool = False,
    progress: Progress | None = None,
) -> SimulationReport:
    """Schedule every pending pod of ``cluster``; with ``once`` each pod gets exactly one attempt.

    Victims of preemption are evicted as the simulation goes.  Time runs on a
    fake clock, so the result depends only on the inputs and ``seed``.
    """
    loaded = load_cluster(cluster)
    scheduler = Scheduler(config, seed=seed, clock=FakeClock(), retry_unschedulable=not once)
    scheduler.add_objects(loaded.objects)
    report = SimulationReport()
    pending = [p.key for p in loaded.pending_pods if p.scheduler_name in scheduler.profiles]
    started = time.perf_counter()
    done = 0
    while (result := scheduler.schedule_one()) is not None:
        _record(report, result)
        _evict(scheduler, report, result)
        done += 1
        if progress is not None:
            progress(done, len(pending))
    report.seconds = time.perf_counter() - started
    _finish(scheduler, report, pending)
    return report


def _finish(scheduler: Scheduler, report: SimulationReport, pending: list[str]) -> None:
    queued = scheduler.pending()
    for key in pending:
        where = queued.get(key)
        if where is None:
            continue
        queue, info = where
        if queue == "gated":
            report.gated.append(key)
            report.placements.pop(key, None)
        report.pending[key] = {"queue": queue, "plugins": sorted(info.unschedulable_plugins),
                               "attempts": info.attempts}
