"""In-process metrics with kube-scheduler's names, exportable as Prometheus text."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Final, final

__all__ = ["Metrics"]


def _exponential(start: float, factor: float, count: int) -> tuple[float, ...]:
    return tuple(start * factor**i for i in range(count))


BUCKETS: Final[Mapping[str, tuple[float, ...]]] = {
    "scheduler_scheduling_attempt_duration_seconds": _exponential(0.001, 2, 15),
    "scheduler_scheduling_algorithm_duration_seconds": _exponential(0.001, 2, 15),
    "scheduler_pod_scheduling_sli_duration_seconds": _exponential(0.01, 2, 20),
    "scheduler_pod_scheduling_attempts": _exponential(1, 2, 5),
    "scheduler_framework_extension_point_duration_seconds": _exponential(0.0001, 2, 12),
    "scheduler_permit_wait_duration_seconds": _exponential(0.001, 2, 15),
    "scheduler_preemption_victims": _exponential(1, 2, 7),
}
_DEFAULT_BUCKETS: Final = _exponential(0.001, 2, 15)
HELP: Final[Mapping[str, str]] = {
    "scheduler_schedule_attempts_total": "Number of attempts to schedule pods, by result and profile.",
    "scheduler_scheduling_attempt_duration_seconds": "Scheduling attempt latency (algorithm + binding).",
    "scheduler_scheduling_algorithm_duration_seconds": "Scheduling algorithm latency.",
    "scheduler_pod_scheduling_sli_duration_seconds": "E2e latency for a pod being scheduled, from its first attempt.",
    "scheduler_pod_scheduling_attempts": "Number of attempts to successfully schedule a pod.",
    "scheduler_framework_extension_point_duration_seconds": "Latency for running all plugins of an extension point.",
    "scheduler_permit_wait_duration_seconds": "Duration of waiting on permit.",
    "scheduler_preemption_attempts_total": "Total preemption attempts in the cluster till now.",
    "scheduler_preemption_victims": "Number of selected preemption victims.",
    "scheduler_pending_pods": "Number of pending pods, by the queue type.",
    "scheduler_queue_incoming_pods_total": "Number of pods added to scheduling queues by event and queue type.",
}

Labels = tuple[tuple[str, str], ...]
Series = tuple[str, Labels]
"""A metric's name with its labels, as samples are stored (:meth:`Metrics.series`)."""


@final
class _Histogram:
    __slots__ = ("buckets", "count", "counts", "total")

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.count = 0
        self.total = 0.0

    def observe(self, value: float) -> None:
        index = bisect.bisect_left(self.buckets, value)
        if index < len(self.counts):
            self.counts[index] += 1
        self.count += 1
        self.total += value


@final
class Metrics:
    """Counters, gauges and histograms keyed by metric name and labels."""

    __slots__ = ("_counters", "_gauges", "_histograms")

    def __init__(self) -> None:
        self._counters: dict[tuple[str, Labels], float] = {}
        self._gauges: dict[tuple[str, Labels], float] = {}
        self._histograms: dict[tuple[str, Labels], _Histogram] = {}

    @staticmethod
    def _key(name: str, labels: Mapping[str, str]) -> tuple[str, Labels]:
        if len(labels) < 2:  # recorded on every cycle: no sort for none or one label
            return name, tuple(labels.items())
        return name, tuple(sorted(labels.items()))

    def inc(self, name: str, labels: Mapping[str, str] | None = None, value: float = 1.0) -> None:
        """Add ``value`` to a counter."""
        self.inc_series(self._key(name, labels or {}), value)

    def set_gauge(self, name: str, labels: Mapping[str, str], value: float) -> None:
        """Set a gauge."""
        self._gauges[self._key(name, labels)] = value

    def observe(self, name: str, labels: Mapping[str, str] | None, value: float) -> None:
        """Record one observation in a histogram (kube-scheduler's buckets for known names)."""
        self.observe_series(self._key(name, labels or {}), value)

    # A caller that records the same series on every cycle builds its key once (``series``) and hands it to
    # the ``*_series`` methods, which store exactly what inc, set_gauge and observe would.

    @classmethod
    def series(cls, name: str, labels: Mapping[str, str] | None = None) -> Series:
        """The key under which ``name`` with ``labels`` is stored."""
        return cls._key(name, labels or {})

    def inc_series(self, series: Series, value: float = 1.0) -> None:
        """:meth:`inc` of a series from :meth:`series`."""
        counters = self._counters
        counters[series] = counters.get(series, 0.0) + value

    def set_series_all(self, values: Mapping[Series, float]) -> None:
        """:meth:`set_gauge` of every series in ``values`` (keys from :meth:`series`)."""
        self._gauges.update(values)

    def observe_series(self, series: Series, value: float) -> None:
        """:meth:`observe` of a series from :meth:`series`."""
        histogram = self._histograms.get(series)
        if histogram is None:
            buckets = BUCKETS.get(series[0])
            histogram = self._histograms[series] = _Histogram(buckets if buckets is not None else _DEFAULT_BUCKETS)
        histogram.observe(value)

    def counter(self, name: str, **labels: str) -> float:
        """A counter's value (0 when never incremented)."""
        return self._counters.get(self._key(name, labels), 0.0)

    def gauge(self, name: str, **labels: str) -> float:
        """A gauge's value (0 when never set)."""
        return self._gauges.get(self._key(name, labels), 0.0)

    def histogram_count(self, name: str, **labels: str) -> int:
        """How many observations a histogram holds."""
        histogram = self._histograms.get(self._key(name, labels))
        return histogram.count if histogram is not None else 0

    def to_dict(self) -> dict[str, list[dict[str, object]]]:
        """Every sample: ``{name: [{"labels": {...}, "value"|"count"+"sum"+"buckets": ...}]}``."""
        out: dict[str, list[dict[str, object]]] = {}
        for (name, labels), value in sorted({**self._counters, **self._gauges}.items()):
            out.setdefault(name, []).append({"labels": dict(labels), "value": value})
        for (name, labels), hist in sorted(self._histograms.items()):
            out.setdefault(name, []).append({
                "labels": dict(labels), "count": hist.count, "sum": hist.total,
                "buckets": dict(zip(hist.buckets, _cumulative(hist.counts), strict=True)),
            })
        return out

    def to_prometheus_text(self) -> str:
        """The Prometheus text exposition format (version 0.0.4)."""
        lines: list[str] = []
        emitted: set[str] = set()

        def header(name: str, kind: str) -> None:
            if name not in emitted:
                emitted.add(name)
                lines.append(f"# HELP {name} {HELP.get(name, name)}")
                lines.append(f"# TYPE {name} {kind}")

        for (name, labels), value in sorted(self._counters.items()):
            header(name, "counter")
            lines.append(f"{name}{_labels(labels)} {_number(value)}")
        for (name, labels), value in sorted(self._gauges.items()):
            header(name, "gauge")
            lines.append(f"{name}{_labels(labels)} {_number(value)}")
        for (name, labels), hist in sorted(self._histograms.items()):
            header(name, "histogram")
            for bound, count in zip(hist.buckets, _cumulative(hist.counts), strict=True):
                lines.append(f"{name}_bucket{_labels((*labels, ('le', _number(bound))))} {count}")
            lines.append(f"{name}_bucket{_labels((*labels, ('le', '+Inf')))} {hist.count}")
            lines.append(f"{name}_sum{_labels(labels)} {_number(hist.total)}")
            lines.append(f"{name}_count{_labels(labels)} {hist.count}")
        return "\n".join(lines) + ("\n" if lines else "")


def _cumulative(counts: list[int]) -> list[int]:
    total = 0
    out = []
    for count in counts:
        total += count
        out.append(total)
    return out


def _labels(labels: Labels) -> str:
    if not labels:
        return ""
    body = ",".join(f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"' for k, v in labels)
    return "{" + body + "}"


def _number(value: float) -> str:
    return repr(int(value)) if float(value).is_integer() else repr(value)
