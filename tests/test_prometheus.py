"""The optional Prometheus exporter publishes kube-scheduler's metric names."""

from __future__ import annotations

import pytest

from kschedlib import Scheduler
from tests.helpers import make_node, make_pod

prometheus_client = pytest.importorskip("prometheus_client")


def test_exporter_serves_the_scheduler_metrics() -> None:
    import kschedlib.prometheus

    sched = Scheduler()
    sched.add_node(make_node("n1"))
    sched.add_pod(make_pod("fits", requests={"cpu": "1"}))
    sched.add_pod(make_pod("too-big", requests={"cpu": "64"}))
    sched.run_until_idle()
    registry = prometheus_client.CollectorRegistry()
    kschedlib.prometheus.register(sched, registry)
    text = prometheus_client.generate_latest(registry).decode()
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1.0' in text
    assert 'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"} 1.0' in text
    assert "scheduler_scheduling_attempt_duration_seconds_bucket" in text
    assert registry.get_sample_value(
        "scheduler_schedule_attempts_total", {"profile": "default-scheduler", "result": "scheduled"}) == 1.0
