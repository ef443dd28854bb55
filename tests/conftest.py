"""Test-wide settings: Hypothesis profiles (``ci`` is derandomized; ``dev`` is random)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from kschedlib.versions import ENV_VAR

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture
def kube_v130(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run a test written against kube-scheduler v1.30.6's behaviour with 1.30 as the default version.

    The default is the newest version; modules and tests that check v1.30 decisions, texts or
    conformance data say so with ``pytestmark = pytest.mark.usefixtures("kube_v130")``.  The
    environment variable also reaches command-line subprocesses.
    """
    monkeypatch.setenv(ENV_VAR, "1.30")
