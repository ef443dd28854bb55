"""Sweep speed-up: one what-if grid on 1, 2 and 4 local workers of a process pool, Dask and Ray.

The grid is node pool sizes x workloads x scheduler configs, every scenario a ``simulate`` of the
pool with the workload's pending pods (the ``simulate`` question of ``kschedlib sweep``).  Each run
is checked against the serial answers; executor start-up is timed apart from the sweep; "work" is
the scenarios' own run time summed (where they ran), so sweep time minus work per worker is
overhead.  "shipped" is the bytes of cluster and workload payloads sent; "unshared" what sending
them with every scenario would have cost.

    .venv/bin/python benchmarks/sweep.py                              # all executors, 1, 2 and 4 workers
    .venv/bin/python benchmarks/sweep.py --executor process --workers 2 --scale 0.3
    .venv/bin/python benchmarks/sweep.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import sys
import time
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # measure this checkout's kschedlib, in the workers too
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))

from workloads import TEMPLATES, node, pod  # noqa: E402

import kschedlib  # noqa: E402
from kschedlib.sweeps import Ask, Scenario, open_executor  # noqa: E402

BIN_PACKING = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               "profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
                   {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                       "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                              {"name": "memory", "weight": 1}]}}}]}]}


def grid(scale: float) -> list[Scenario]:
    """Pools of 100-400 nodes x two workloads of 1,500 pods x two configs (16 scenarios at scale 1)."""
    pools = {size: kschedlib.load_cluster([node(i, 4, "8", "32Gi") for i in range(max(4, round(size * scale)))])
             for size in (100, 200, 300, 400)}
    rng = random.Random(7)
    count = max(10, round(1500 * scale))
    web = kschedlib.load_cluster([pod(f"web-{i:05d}", "web", "250m", "512Mi") for i in range(count)])
    mixed = kschedlib.load_cluster([pod(f"{app}-{i:05d}", app, cpu, memory)
                                    for i, (app, cpu, memory) in enumerate(rng.choice(TEMPLATES)
                                                                           for _ in range(count))])
    return [Scenario(cluster, workload, {"config": config, "seed": 0}, f"{size}/{w_name}/{c_name}")
            for size, cluster in pools.items()
            for w_name, workload in (("web", web), ("mixed", mixed))
            for c_name, config in (("default", None), ("bin-packing", BIN_PACKING))]


def payload_bytes(scenarios: list[Scenario]) -> dict[int, int]:
    """The pickled size of each distinct cluster and workload."""
    sizes: dict[int, int] = {}
    for scenario in scenarios:
        for value in (scenario.cluster, scenario.workload):
            sizes.setdefault(id(value), len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)))
    return sizes


def timed(scenarios: list[Scenario], executor: Executor | None, repeat: int) -> tuple[float, float, list[Any], int]:
    """The best of ``repeat`` sweeps: wall seconds, the scenarios' own seconds summed, answers, bytes shipped."""
    best: tuple[float, float, list[Any], int] | None = None
    for _ in range(repeat):
        started = time.perf_counter()
        run = kschedlib.sweep(scenarios, Ask("simulate"), executor)
        results = list(run)
        wall = time.perf_counter() - started
        if best is None or wall < best[0]:
            best = (wall, sum(r.seconds for r in results), [r.unwrap() for r in results], run.shipped_bytes)
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executor", action="append", choices=("process", "dask", "ray"))
    parser.add_argument("--workers", action="append", type=int)
    parser.add_argument("--scale", type=float, default=1.0, help="fewer nodes and pods, for quick runs")
    parser.add_argument("--repeat", type=int, default=2, help="sweeps per measurement; the fastest counts")
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    args = parser.parse_args()
    scenarios = grid(args.scale)
    sizes = payload_bytes(scenarios)
    every_time = sum(sizes[id(s.cluster)] + sizes[id(s.workload)] for s in scenarios) // 1024
    serial: list[float] = []
    reference: list[Any] = []
    rows = []
    for spec in args.executor or ["process", "dask", "ray"]:
        wall, work, reference, _ = timed(scenarios, None, args.repeat)  # the baseline, again before each executor
        serial.append(wall)
        rows.append({"executor": "serial", "workers": 1, "startup_s": 0.0, "sweep_s": round(wall, 2),
                     "work_s": round(work, 2), "shipped_kb": 0, "unshared_kb": 0})
        for workers in args.workers or [1, 2, 4]:
            started = time.perf_counter()
            with open_executor(spec, workers) as executor:
                startup = time.perf_counter() - started
                wall, work, answers, shipped = timed(scenarios, executor, args.repeat)
            if answers != reference:
                raise SystemExit(f"{spec} with {workers} workers gave other answers than the serial run")
            rows.append({"executor": spec, "workers": workers, "startup_s": round(startup, 2),
                         "sweep_s": round(wall, 2), "work_s": round(work, 2), "shipped_kb": shipped // 1024,
                         "unshared_kb": every_time})
    baseline = min(serial)
    for row in rows:
        row["speedup"] = round(baseline / row["sweep_s"], 2)
    if args.json:
        for row in rows:
            print(json.dumps({"scenarios": len(scenarios), "scale": args.scale, **row}))
        return
    print(f"{len(scenarios)} scenarios (scale {args.scale}), best of {args.repeat}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}; speed-up against the best serial run ({baseline:.2f} s)")
    print(f"{'executor':8} {'workers':>7} {'start s':>7} {'sweep s':>8} {'work s':>7} {'speed-up':>8} "
          f"{'shipped KB':>10} {'unshared KB':>11}")
    for row in rows:
        print(f"{row['executor']:8} {row['workers']:>7} {row['startup_s']:>7} {row['sweep_s']:>8} {row['work_s']:>7} "
              f"{row['speedup']:>8} {row['shipped_kb']:>10} {row['unshared_kb']:>11}")


if __name__ == "__main__":
    main()
