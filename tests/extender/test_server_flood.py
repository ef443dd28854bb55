"""The served extender under a flood: 64 clients each posting a 2,000-node ``/filter`` (about 6 MB) at once
to the real server (``serve-extender`` in a process of its own, on 127.0.0.1), while ``/healthz`` is
probed as kubelet would, with a 1 s timeout.

Kubelet restarts a container after three probes in a row fail; the server must never come near that,
never answer a probe with a 503, answer or shed every request, and keep its memory bounded: bodies
wait for room before they are read and for a worker before they are decoded.
"""

from __future__ import annotations

import http.client
import json
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.extender.support import HEADER

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = 64
NODES = 2000
PROBE_TIMEOUT = 1.0  # kubelet's default timeoutSeconds
FAILURES_IN_A_ROW = 3  # kubelet's default failureThreshold
MEMORY_BOUND = 700 * 2**20  # bytes the server may grow by; about 1.5 GiB before bodies waited for room and workers


def _probe(port: int) -> bool:
    """One kubelet-style probe: whether ``/healthz`` answered 200 within the timeout."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=PROBE_TIMEOUT)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        response.read()
        status = response.status
    except OSError:
        return False
    finally:
        connection.close()
    return status == 200 and time.monotonic() - started <= PROBE_TIMEOUT


def _memory(pid: int, field: str) -> int:
    """``VmRSS`` or ``VmHWM`` (peak) of a process, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


def _port(server: subprocess.Popen[str]) -> int:
    assert server.stdout is not None
    ready, _, _ = select.select([server.stdout], [], [], 60)
    assert ready, "the server did not start within 60 s"
    line = server.stdout.readline()
    return int(line.split()[3].rsplit(":", 1)[1])


def test_probes_pass_and_memory_stays_bounded_under_a_flood_of_big_requests(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(HEADER))
    server = subprocess.Popen([sys.executable, "-m", "kschedlib", "serve-extender", "--config", str(config),
                               "--port", "0"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    flood: subprocess.Popen[str] | None = None
    try:
        port = _port(server)
        baseline = _memory(server.pid, "VmRSS")
        flood = subprocess.Popen([sys.executable, "-m", "tests.extender.flood", str(port), str(CLIENTS), str(NODES)],
                                 cwd=ROOT, stdout=subprocess.PIPE, text=True)
        probes: list[bool] = []
        deadline = time.monotonic() + 180
        while flood.poll() is None and time.monotonic() < deadline:
            probes.append(_probe(port))
            time.sleep(0.2)
        out, _ = flood.communicate(timeout=60)
        peak = _memory(server.pid, "VmHWM")
    finally:
        if flood is not None and flood.poll() is None:
            flood.kill()
            flood.wait()
        server.terminate()
        server.wait(timeout=30)
        if server.stdout is not None:
            server.stdout.close()
    results = json.loads(out)
    assert len(results) == CLIENTS  # every request answered or shed, none left hanging
    assert results.count(200) >= 8, results  # the work went on
    assert set(results) <= {200, 503, "shed"}, results
    assert len(probes) >= 5  # the flood lasted a few probe periods
    run = longest = 0
    for passed in probes:
        run = 0 if passed else run + 1
        longest = max(longest, run)
    assert longest < FAILURES_IN_A_ROW, probes
    assert peak - baseline < MEMORY_BOUND, f"grew by {(peak - baseline) / 2**20:.0f} MiB"
