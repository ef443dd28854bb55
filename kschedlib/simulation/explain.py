"""explain: where would this pod go, and why not elsewhere — one pure scheduling cycle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any

import attrs

from kschedlib._internal.documents import load_config, read_config_document
from kschedlib.explanation import Explanation
from kschedlib.framework.config import SchedulerConfig
from kschedlib.framework.extender import Extender
from kschedlib.framework.registry import Registry
from kschedlib.model.objects import Pod
from kschedlib.scheduler import ConfigSource, Scheduler
from kschedlib.simulation._groups import explain_group_sections
from kschedlib.simulation._settings import config_section
from kschedlib.simulation.cluster import Cluster, load_cluster, resolve_pod
from kschedlib.simulation.skipped import skipped_section
from kschedlib.versions import chosen_explicitly, kubelet_note

__all__ = ["Explanation", "explain"]


def _explain_config(config: ConfigSource) -> SchedulerConfig:
    """The config explain uses: every node is evaluated unless the config sets percentageOfNodesToScore."""
    if isinstance(config, SchedulerConfig):
        return config
    raw = config
    parsed = load_config(config)
    if isinstance(config, str | PathLike):
        raw = read_config_document(config)
    if isinstance(raw, Mapping) and "percentageOfNodesToScore" in raw:
        return parsed
    return attrs.evolve(parsed, percentage_of_nodes_to_score=100)


def explain(
    cluster: Cluster | str | PathLike[str] | Mapping[str, Any] | Sequence[Any],
    pod: Pod | Mapping[str, Any] | str,
    config: ConfigSource = None,
    *,
    start_index: int = 0,
    seed: int = 0,
    extenders: Sequence[Extender] = (),
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
) -> Explanation:
    """Run one scheduling cycle for ``pod`` against ``cluster`` without changing anything.

    ``pod`` is a Pod, a v1 Pod dict, ``namespace/name`` of a pod in the cluster, or a pod file.
    Other pending pods of the cluster that carry ``status.nominatedNodeName`` count as nominated.
    ``extenders`` run after the config's own (HTTP) extenders; nodes they reject show ``plugin: ""``.
    ``registry`` supplies the plugins (default: in-tree plus entry points), for profiles using your own.
    A pod whose scheduler has no profile gets ``error`` (and :attr:`Explanation.refused`); a pending
    pod being deleted is not tried, as kube-scheduler skips it (``skipped_pod`` says so).
    ``kube_version`` and ``feature_gates`` choose the kube-scheduler behaviour (:mod:`kschedlib.versions`).
    """
    loaded = load_cluster(cluster)
    target = resolve_pod(loaded, pod)
    settings = _explain_config(config)
    scheduler = Scheduler(settings, seed=seed, extenders=extenders, registry=registry,
                          kube_version=kube_version, feature_gates=feature_gates)
    kube = scheduler.kube
    note = kubelet_note(kube, loaded.kubelet_versions) if not chosen_explicitly(kube_version) else None
    notes = (note,) if note else ()
    scheduler.add_objects(loaded.without_pod(target).objects)
    skipped = skipped_section(loaded, scheduler.profiles)
    answer = scheduler.explain(target, start_index=start_index, percentage_of_nodes_to_score=None)
    groups = explain_group_sections(scheduler, target) if answer.outcome is not None else {}
    return attrs.evolve(answer, skipped=skipped, notes=notes, groups=groups, config=config_section(config))
