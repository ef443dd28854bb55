"""The GPU batch example: 200 GPU nodes, two teams, 260 jobs; its figures equal ``gpu_batch.out``.

The script prints its wall time on stderr, the only line that varies between runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "gpu_batch.py"


def test_gpu_batch_figures() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    env["PYTHONHASHSEED"] = "0"
    completed = subprocess.run([sys.executable, str(SCRIPT)], cwd=SCRIPT.parent, env=env, capture_output=True,
                               text=True, timeout=600, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr.startswith("wall time: ")
    assert completed.stdout == SCRIPT.with_suffix(".out").read_text(encoding="utf-8")
    figures = dict(line.split(": ", 1) for line in completed.stdout.splitlines())
    assert figures["partial gangs seen"] == "0"
    assert figures["quota overruns seen"] == "0"
