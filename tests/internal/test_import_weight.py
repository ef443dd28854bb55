"""What a default Scheduler loads: only what scheduling needs (start-up and memory of one-cycle commands)."""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROBE = """
import sys
import kschedlib
kschedlib.Scheduler()
print(" ".join(sorted(name for name in {names!r} if name in sys.modules)))
"""


def _loaded_after_default_scheduler(names: tuple[str, ...]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE.format(names=names)],
                          capture_output=True, text=True, check=True, timeout=120)
    return done.stdout.split()


def test_a_scheduler_without_http_extenders_loads_no_http_client() -> None:
    assert _loaded_after_default_scheduler(("http.client", "ssl", "kschedlib._internal.http_extender")) == []


def test_a_config_with_http_extenders_still_checks_them() -> None:
    import kschedlib

    extender = {"urlPrefix": "ftp://127.0.0.1:1/", "filterVerb": "filter"}
    with pytest.raises(kschedlib.ConfigError, match="urlPrefix"):
        kschedlib.Scheduler(config={"extenders": [extender]})
