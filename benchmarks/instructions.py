"""Count the instructions of kschedlib's scheduling loop with callgrind (load-independent before/after).

Run by hand, never by the test suite (each workload runs twice under valgrind, 30-100x slower)::

    .venv/bin/python benchmarks/instructions.py --workload small --scale 0.5
    .venv/bin/python benchmarks/instructions.py --workload affinity --scale 0.2 --kube-version 1.30

For each workload, ``worker.py`` (``run.py``'s worker) runs under ``valgrind --tool=callgrind`` once in full and
once stopping right after setup (generation, loading, ``add_objects``); the difference is the
scheduling loop's instruction count.  Both runs print the same digest of decisions, so a change
that claims to keep decisions can be checked on the spot.

The checkout is byte-compiled first (``compileall``): without bytecode caches (a fresh tree, or
``PYTHONDONTWRITEBYTECODE`` set) every run compiles what it imports, and a module first imported
inside the loop would be compiled inside the loop's count.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import workloads
from run import summarize

_WORKER = Path(__file__).resolve().parent / "worker.py"
_COLLECTED = re.compile(r"Collected : (\d+)")


def count(name: str, scale: float, kube_version: str | None, setup_only: bool) -> tuple[int, dict[str, object]]:
    """Instructions of one worker run under callgrind, and the worker's figures."""
    fd, result = tempfile.mkstemp(prefix=f"kschedlib-instr-{name}-", suffix=".json")
    os.close(fd)
    try:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, str(_WORKER),
               name, "--scale", repr(scale), "--result-file", result]
        cmd += ["--kube-version", kube_version] if kube_version else []
        cmd += ["--setup-only"] if setup_only else []
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        match = _COLLECTED.search(done.stderr)
        if match is None:
            raise RuntimeError(f"no callgrind summary in: {done.stderr[-2000:]}")
        with open(result, encoding="utf-8") as f:
            return int(match.group(1)), summarize(json.load(f))
    finally:
        os.unlink(result)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", action="append", choices=sorted(workloads.WORKLOADS), required=True)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--kube-version", metavar="V")
    args = p.parse_args(argv)
    root = _WORKER.parent.parent
    for folder in (root / "kschedlib", root / "benchmarks"):
        compileall.compile_dir(folder, quiet=1)
    print(f"{'workload':>14}  {'scale':>5}  {'loop instr':>14}  {'setup instr':>14}  {'digest':>16}", flush=True)
    for name in args.workload:
        full, figures = count(name, args.scale, args.kube_version, setup_only=False)
        setup, _ = count(name, args.scale, args.kube_version, setup_only=True)
        print(f"{name:>14}  {args.scale:>5}  {full - setup:>14,}  {setup:>14,}  {str(figures['digest'])[:16]:>16}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
