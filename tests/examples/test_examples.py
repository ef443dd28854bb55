"""Every script in ``examples/`` runs and prints exactly its saved ``.out`` file (SimPy's docs/conftest idea).

To refresh the saved output after a deliberate change, run the examples with
``KSCHEDLIB_UPDATE_EXAMPLES=1 python -m pytest tests/examples`` and read the diff before committing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TESTED_ELSEWHERE = frozenset({"gang_scheduling.py", "gpu_batch.py"})
SCRIPTS = sorted(path for path in EXAMPLES.glob("*.py") if path.name not in TESTED_ELSEWHERE)


def run_example(script: Path) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with this interpreter, importing kschedlib from this checkout, outside the repository."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    env["PYTHONHASHSEED"] = "0"
    return subprocess.run(
        [sys.executable, str(script)], cwd=EXAMPLES, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_examples_exist() -> None:
    assert SCRIPTS, "no examples found"
    missing = [script.name for script in SCRIPTS if not script.with_suffix(".out").exists()]
    if os.environ.get("KSCHEDLIB_UPDATE_EXAMPLES"):
        return
    assert not missing, f"examples without saved output: {missing}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[script.stem for script in SCRIPTS])
def test_example_output(script: Path) -> None:
    completed = run_example(script)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    expected_file = script.with_suffix(".out")
    if os.environ.get("KSCHEDLIB_UPDATE_EXAMPLES"):
        expected_file.write_text(completed.stdout, encoding="utf-8")
    assert completed.stdout == expected_file.read_text(encoding="utf-8")
