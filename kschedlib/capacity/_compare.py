"""compare: the same cluster scheduled under two (or more) scheduler configs, side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike, fspath
from typing import Any, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.capacity._common import ClusterSource, ProgressCallback, before_after, load, shapes_of
from kschedlib.errors import ManifestError
from kschedlib.framework.registry import Registry
from kschedlib.scheduler import ConfigSource
from kschedlib.simulation.simulator import simulation_run
from kschedlib.versions import KubeSettings

__all__ = ["Comparison", "compare"]

_TIMINGS = ("seconds", "pods_per_second")
"""Left out of the summaries, so that the same inputs give the same output."""


@final
@attrs.frozen(slots=True, repr=False)
class Comparison(FieldsRepr):
    """Per config: the simulation's outcome, utilisation and fragmentation; and the pods placed differently."""

    configs: tuple[str, ...]
    differences: Mapping[str, tuple[str | None, ...]]
    """Pending pod -> its node under each config (``None``: unschedulable), for pods placed differently."""
    runs: Mapping[str, Mapping[str, Any]]
    """Config label -> ``{"summary", "placements", "unschedulable", "utilisation", "fragmentation"}``."""
    kube: KubeSettings

    @property
    def csv_columns(self) -> tuple[str, ...]:
        """The CSV header: the pod, then one column per config."""
        return ("pod", *self.configs)

    def to_dict(self) -> dict[str, Any]:
        """The ``compare`` JSON."""
        return {"configs": list(self.configs), "differences": {k: list(v) for k, v in self.differences.items()},
                "runs": {k: dict(v) for k, v in self.runs.items()}, **self.kube.to_dict()}

    def rows(self) -> list[dict[str, Any]]:
        """One CSV row per pod placed differently, one column per config."""
        return [{"pod": pod, **{label: node or "" for label, node in zip(self.configs, nodes, strict=True)}}
                for pod, nodes in self.differences.items()]

    def text(self) -> str:
        lines = []
        for label in self.configs:
            summary = self.runs[label]["summary"]
            lines.append(f"{label}: {summary['scheduled']} scheduled, {summary['unschedulable']} unschedulable")
        lines.append(f"{len(self.differences)} pod(s) placed differently")
        for pod, nodes in self.differences.items():
            lines.append(f"  {pod}: " + " | ".join(node or "-" for node in nodes))
        return "\n".join(lines)


def _label(config: ConfigSource, index: int) -> str:
    if isinstance(config, str | PathLike):
        return fspath(config)
    return "default" if config is None else f"config-{index + 1}"


def compare(
    cluster: ClusterSource,
    configs: Sequence[ConfigSource],
    *,
    labels: Sequence[str] | None = None,
    expand_controllers: bool = False,
    seed: int = 0,
    registry: Registry | None = None,
    kube_version: str | None = None,
    feature_gates: Mapping[str, bool] | str | None = None,
    progress: ProgressCallback | None = None,
) -> Comparison:
    """Simulate ``cluster`` once per config (as :func:`kschedlib.simulate` does) and put the runs side by side.

    ``labels`` names the configs in the output (default: the file name, ``default`` for ``None``,
    else ``config-N``).  ``progress(configs_run, len(configs))`` is called after each config's run.
    """
    if len(configs) < 2:
        raise ManifestError("needs at least two configs", obj="compare", field="configs", value=len(configs))
    names = list(labels) if labels is not None else [_label(c, i) for i, c in enumerate(configs)]
    if len(names) != len(configs) or len(set(names)) != len(names):
        raise ManifestError("needs one distinct label per config", obj="compare", field="labels", value=names)
    loaded = load(cluster, expand=expand_controllers)
    runs: dict[str, dict[str, Any]] = {}
    kube: KubeSettings | None = None
    placements: list[Mapping[str, str | None]] = []
    for label, config in zip(names, configs, strict=True):
        run = simulation_run(loaded, config, seed=seed, registry=registry, kube_version=kube_version,
                             feature_gates=feature_gates)
        before = run.scheduler.fork()
        report = run.finish()
        kube = report.kube
        shapes = shapes_of(before, list(loaded.pending_pods))
        counts = {key: value for key, value in report.summary().items() if key not in _TIMINGS}
        runs[label] = {"summary": counts, "placements": dict(report.placements),
                       "unschedulable": dict(report.unschedulable), "evicted": list(report.evicted),
                       "config": report.config, "fit_errors": report.fit_errors,
                       **before_after(before, run.scheduler, shapes)}
        placements.append(report.placements)
        if progress is not None:
            progress(len(placements), len(configs))
    pods = sorted({key for placed in placements for key in placed})
    differences = {key: tuple(placed.get(key) for placed in placements) for key in pods
                   if len({placed.get(key) for placed in placements}) > 1}
    assert kube is not None
    return Comparison(tuple(names), differences, runs, kube)
