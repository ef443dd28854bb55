"""What every capacity question shares: loading, a scheduler to ask, and the report's common parts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from typing import Any

import attrs

from kschedlib.capacity._controllers import expand_controllers
from kschedlib.clock import FakeClock
from kschedlib.framework.registry import Registry
from kschedlib.model.objects import Pod
from kschedlib.scheduler import ConfigSource, Scheduler
from kschedlib.simulation._utilisation import before_after, shapes_of
from kschedlib.simulation.cluster import Cluster, load_cluster
from kschedlib.simulation.skipped import listing

__all__ = ["ClusterSource", "ProgressCallback", "Versions", "before_after", "held_reason", "load", "new_scheduler",
           "pending_line", "schedule_once", "shapes_of"]

ClusterSource = Cluster | str | PathLike[str] | Mapping[str, Any] | Sequence[Any]
"""A cluster as :func:`kschedlib.load_cluster` reads it."""

ProgressCallback = Callable[[int, int | None], None]
"""Called as ``progress(done, total)`` while a capacity question runs (``total`` ``None``: not known);
:meth:`kschedlib.progress.Progress.update` is one."""

Versions = tuple[str | None, Mapping[str, bool] | str | None]


def load(cluster: ClusterSource, *, expand: bool) -> Cluster:
    """The cluster, with its controllers expanded into pods when asked."""
    return expand_controllers(cluster) if expand else load_cluster(cluster)


def new_scheduler(config: ConfigSource, *, seed: int, registry: Registry | None, kube_version: str | None,
                  feature_gates: Mapping[str, bool] | str | None) -> Scheduler:
    """A scheduler on a fake clock that gives every pod one attempt (capacity questions never wait)."""
    return Scheduler(config, seed=seed, clock=FakeClock(), registry=registry, retry_unschedulable=False,
                     flush_unschedulable=False, kube_version=kube_version, feature_gates=feature_gates)


def held_reason(scheduler: Scheduler, pod: Pod) -> tuple[str, str]:
    """Why kube-scheduler never tries ``pod`` (one that got no attempt): ``(what holds it, kube's words)``.

    A PreEnqueue plugin (``SchedulingGates``: its gates; ``DynamicResources``: a ResourceClaim not
    created yet), a deletion in progress, or a scheduler name without a profile.  Nothing is scheduled
    to find out: :meth:`Scheduler.explain` answers these before any cycle.
    """
    answer = scheduler.explain(pod)
    if answer.pre_enqueue is not None:
        return answer.pre_enqueue.plugin, answer.pre_enqueue.message()
    if answer.skip_reason is not None:
        return "deletion", answer.skip_reason
    return "schedulerName", answer.error or "not tried"


def pending_line(pending: Mapping[str, str | None]) -> str:
    """The text line for the cluster's pending pods scheduled before the question (pod -> node or ``None``),
    naming those that found no node."""
    unplaced = [pod for pod, node in pending.items() if node is None]
    line = (f"the cluster's {len(pending)} pending pod(s) were scheduled first: {len(pending) - len(unplaced)} "
            f"placed, {len(unplaced)} not")
    return f"{line} ({listing(unplaced)})" if unplaced else line



def schedule_once(scheduler: Scheduler) -> tuple[dict[str, str | None], list[str]]:
    """Give each queued pod one attempt, in queue order: (pod -> its node or ``None``, the pods evicted).

    A pod that fits only by preempting lower-priority pods gets its node as in kube-scheduler: its
    victims are deleted, and it is tried again, nominated to the node they leave (which the nomination
    holds for it against pods of lower priority)."""
    outcome: dict[str, str | None] = {}
    preempting: dict[str, str] = {}
    evicted: list[str] = []
    for result in scheduler.run_until_idle():
        outcome[result.pod.key] = result.node_name if result.scheduled else None
        if not result.scheduled and result.nominated_node_name:
            preempting[result.pod.key] = result.nominated_node_name
        evicted.extend(victim for victim in result.victims if scheduler.remove_pod(victim))
    for key, node in preempting.items():
        pod = scheduler.get_pod(key)
        assert pod is not None
        scheduler.remove_pod(key)
        scheduler.add_pod(attrs.evolve(pod, nominated_node_name=node, conditions=()))
    for result in scheduler.run_until_idle():
        outcome[result.pod.key] = result.node_name if result.scheduled else None
    return outcome, evicted
