"""Metrics find a sample under the same labels in any order, however many labels there are."""

from __future__ import annotations

from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.metrics import BUCKETS, Metrics


@pytest.mark.parametrize("labels", [{}, {"queue": "active"}, {"result": "scheduled", "profile": "p", "x": "y"}])
def test_samples_are_found_under_their_labels_in_any_order(labels: dict[str, str]) -> None:
    metrics = Metrics()
    reordered = dict(reversed(labels.items()))
    metrics.inc("c_total", labels)
    metrics.inc("c_total", reordered, 2.0)
    metrics.set_gauge("g", reordered, 4.0)
    metrics.observe("h_seconds", labels, 0.5)
    metrics.observe("h_seconds", reordered, 0.25)
    assert metrics.counter("c_total", **labels) == 3.0
    assert metrics.gauge("g", **labels) == 4.0
    assert metrics.histogram_count("h_seconds", **reordered) == 2
    (sample,) = metrics.to_dict()["h_seconds"]
    assert sample["labels"] == dict(sorted(labels.items()))


def test_histogram_buckets_known_and_default() -> None:
    metrics = Metrics()
    metrics.observe("scheduler_pod_scheduling_attempts", None, 3)
    metrics.observe("unknown_seconds", None, 0.003)
    samples = metrics.to_dict()
    known = cast(dict[float, int], samples["scheduler_pod_scheduling_attempts"][0]["buckets"])
    unknown = cast(dict[float, int], samples["unknown_seconds"][0]["buckets"])
    assert tuple(known) == BUCKETS["scheduler_pod_scheduling_attempts"]
    assert tuple(unknown) == tuple(0.001 * 2**i for i in range(15))
    assert unknown[0.004] == 1


@given(st.text(min_size=1, max_size=8), st.dictionaries(st.sampled_from(["a", "b", "c", "le"]), st.text(max_size=4),
                                                       max_size=3),
       st.floats(min_value=0, max_value=100))
def test_series_record_what_the_labelled_methods_record(name: str, labels: dict[str, str], value: float) -> None:
    """inc_series/set_series_all/observe_series with a prebuilt key store exactly what inc/set_gauge/observe store."""
    plain, keyed = Metrics(), Metrics()
    series = Metrics.series(name, labels)
    plain.inc(name, labels, value)
    plain.inc(name, labels)
    keyed.inc_series(series, value)
    keyed.inc_series(series)
    plain.set_gauge(name + "_all", labels, value)
    keyed.set_series_all({Metrics.series(name + "_all", labels): value})
    for known in ("scheduler_pod_scheduling_attempts", name):
        plain.observe(known, labels or None, value)
        keyed.observe_series(Metrics.series(known, labels or None), value)
    assert keyed.to_dict() == plain.to_dict()
    assert keyed.to_prometheus_text() == plain.to_prometheus_text()
