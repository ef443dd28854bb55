"""Expose a Scheduler's metrics to a ``prometheus_client`` registry (the ``prometheus`` extra).

    from prometheus_client import start_http_server
    import kschedlib.prometheus

    kschedlib.prometheus.register(scheduler)
    start_http_server(9100)

Metric names and labels are kube-scheduler's (``scheduler_schedule_attempts_total``, ...).
``Scheduler.metrics.to_prometheus_text()`` gives the same text without this dependency.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import REGISTRY, CollectorRegistry

from kschedlib.metrics import HELP, Metrics
from kschedlib.scheduler import Scheduler

__all__ = ["SchedulerCollector", "register", "render"]


@final
class SchedulerCollector:
    """A ``prometheus_client`` collector reading a scheduler's in-process metrics at scrape time."""

    __slots__ = ("_metrics",)

    def __init__(self, source: Scheduler | Metrics) -> None:
        self._metrics = source.metrics if isinstance(source, Scheduler) else source

    def collect(self) -> Iterator[Metric]:
        """The metric families, one per metric name."""
        for name, samples in self._metrics.to_dict().items():
            yield _family(name, samples)


def _family(name: str, samples: list[dict[str, Any]]) -> Metric:
    label_names = sorted({key for sample in samples for key in sample["labels"]})
    documentation = HELP.get(name, name)
    if "buckets" in samples[0]:
        histogram = HistogramMetricFamily(name, documentation, labels=label_names)
        for sample in samples:
            buckets = [(repr(float(bound)), count) for bound, count in sample["buckets"].items()]
            buckets.append(("+Inf", sample["count"]))
            histogram.add_metric([sample["labels"].get(k, "") for k in label_names], buckets, sample["sum"])
        return histogram
    if name.endswith("_total"):
        counter = CounterMetricFamily(name.removesuffix("_total"), documentation, labels=label_names)
        for sample in samples:
            counter.add_metric([sample["labels"].get(k, "") for k in label_names], sample["value"])
        return counter
    gauge = GaugeMetricFamily(name, documentation, labels=label_names)
    for sample in samples:
        gauge.add_metric([sample["labels"].get(k, "") for k in label_names], sample["value"])
    return gauge


def register(source: Scheduler | Metrics, registry: CollectorRegistry | None = None) -> SchedulerCollector:
    """Register a collector for ``source`` in ``registry`` (the default ``prometheus_client`` one)."""
    collector = SchedulerCollector(source)
    (registry if registry is not None else REGISTRY).register(collector)
    return collector


def render(source: Scheduler | Metrics) -> str:
    """``source``'s metrics in Prometheus' text format, as a scrape of a registry holding only them returns it."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SchedulerCollector(source))
    return generate_latest(registry).decode()
