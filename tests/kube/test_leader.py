"""Leader election survives an unexpected error in one attempt (a real API server holds the Lease)."""

from __future__ import annotations

import uuid
from typing import Any

from kschedlib.kube import KubeClient
from kschedlib.kube._leader import LeaderElector
from kschedlib.kube.settings import LeaderElection
from tests.kube.cluster import wait_for


def test_an_unexpected_error_in_an_attempt_is_a_failed_try_not_a_dead_elector(admin: KubeClient) -> None:
    started: list[dict[str, Any]] = []

    def announce(lease: dict[str, Any]) -> None:
        started.append(lease)
        if len(started) == 1:
            raise RuntimeError("boom")  # say, a credential plugin failing: not a KubeApiError

    settings = LeaderElection(leader_elect=True, lease_duration=2.0, renew_deadline=1.5, retry_period=0.05,
                              resource_name=f"survivor-{uuid.uuid4().hex[:8]}", resource_namespace="default")
    elector = LeaderElector(admin, settings, on_lost=lambda: None, on_started=announce, identity="survivor")
    elector.start()
    try:
        wait_for("leading after the failed attempt", elector.leading.is_set, timeout=10)
        assert elector.thread.is_alive()
    finally:
        elector.release()
    assert not elector.thread.is_alive()
