"""Start-up: ``import kschedlib`` and a CLI ``explain`` on a 1,000-node dump, and how much of it is the cycle.

Run by hand, never by the test suite::

    .venv/bin/python benchmarks/startup.py             # best of 5 of each
    .venv/bin/python benchmarks/startup.py --repeat 9

Each figure is the best wall time of ``--repeat`` fresh interpreters (``python -c pass`` is the floor):

* ``import kschedlib``;
* ``python -m kschedlib explain DUMP --pod POD --format json`` on ``basic`` at scale 0.2 (1,000 nodes,
  2,000 pending pods), written once to a temporary file;
* the same explain inside one interpreter, done twice: the first time pays for every import (``import
  kschedlib`` and the modules its calls import lazily), the second does the same work with everything
  imported.  The split is: imports (the first time minus the second), reading the dump
  (``load_cluster``) and the explain itself (scheduler built from the objects, one cycle over every node).

The checkout is byte-compiled first (``compileall``), as ``pip install`` does for an installed package:
with ``PYTHONDONTWRITEBYTECODE`` set and no caches, every run would compile each module it imports,
and that would be counted as import time a user never pays.
"""

from __future__ import annotations

import argparse
import compileall
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import workloads

_ROOT = Path(__file__).resolve().parent.parent

_SPLIT = """
import sys, time, json
def once():
    t0 = time.perf_counter()
    import kschedlib
    cluster = kschedlib.load_cluster(sys.argv[1])
    t1 = time.perf_counter()
    answer = kschedlib.explain(cluster, sys.argv[2])
    feasible = len(answer.to_dict()["feasible"])
    return t1 - t0, time.perf_counter() - t1, feasible
first_load, first_explain, feasible = once()
load, explain, _ = once()
imports = (first_load - load) + max(0.0, first_explain - explain)
print(json.dumps({"import": imports, "load": load, "explain": explain, "feasible": feasible}))
"""


def _best(cmd: Sequence[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=_ROOT, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    python = sys.executable
    for folder in (_ROOT / "kschedlib", _ROOT / "benchmarks"):
        compileall.compile_dir(folder, quiet=1)
    with tempfile.TemporaryDirectory(prefix="kschedlib-startup-") as tmp:
        dump = Path(tmp) / "basic-1000.json"
        objects = workloads.build("basic", 0.2)
        dump.write_text(json.dumps(workloads.as_list(objects)))
        pod = next(f"default/{o['metadata']['name']}" for o in objects if o["kind"] == "Pod")
        floor = _best([python, "-c", "pass"], args.repeat)
        imported = _best([python, "-c", "import kschedlib"], args.repeat)
        explained = _best([python, "-m", "kschedlib", "explain", str(dump), "--pod", pod, "--format", "json"],
                          args.repeat)
        splits = [json.loads(subprocess.run([python, "-c", _SPLIT, str(dump), pod], check=True, cwd=_ROOT,
                                            capture_output=True, text=True).stdout) for _ in range(args.repeat)]
    split = min(splits, key=lambda s: s["import"] + s["load"] + s["explain"])
    print(f"python -c pass                     {floor * 1000:8.0f} ms")
    alone = (imported - floor) * 1000
    print(f"python -c 'import kschedlib'       {imported * 1000:8.0f} ms  (the import alone: {alone:.0f} ms)")
    print(f"kschedlib explain (1,000 nodes)    {explained * 1000:8.0f} ms")
    total = split["import"] + split["load"] + split["explain"]
    for part in ("import", "load", "explain"):
        print(f"  in one interpreter: {part:8} {split[part] * 1000:8.0f} ms  ({split[part] / total:.0%})")
    print(f"  feasible nodes: {split['feasible']:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
