"""Benchmark kschedlib's scheduling throughput on generated workloads.

Run by hand, never by the test suite::

    .venv/bin/python benchmarks/run.py                      # small, basic, affinity, preemption
    .venv/bin/python benchmarks/run.py --workload small --profile
    .venv/bin/python benchmarks/run.py --workload basic --scale 0.2
    .venv/bin/python benchmarks/run.py --workload basic --write-cluster /tmp/basic.json
    .venv/bin/python benchmarks/run.py --against-go --workload small   # side by side with kube-scheduler

Each workload runs in a fresh subprocess so its peak RSS is its own.  Only the
scheduling loop is timed (not generating, loading or adding the objects).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import against_go
import workloads

# Benchmark the checkout this script lives in, whether or not kschedlib is installed.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import kschedlib  # noqa: E402

DEFAULT_WORKLOADS = ("small", "basic", "affinity", "preemption")


def vm_hwm_mb(pid: int | str = "self") -> float | None:
    """A Linux process's peak resident set size (``VmHWM``), or ``None`` (no such process, or no memory left).

    Unlike ``ru_maxrss``, it counts this program's memory only: Linux carries ``ru_maxrss`` over
    ``exec``, so a benchmark started by a big process would report at least that process's size.
    """
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _peak_rss_mb() -> float:
    """This process's peak resident set size: ``VmHWM`` on Linux, else ``ru_maxrss`` (bytes on macOS)."""
    hwm = vm_hwm_mb()
    if hwm is not None:
        return hwm
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


Attempt = tuple[str, str | None, str | None, tuple[str, ...]]
"""What the benchmark keeps of a ScheduleResult: pod, node, nominated node, victims."""


def _attempt(result: kschedlib.ScheduleResult) -> Attempt:
    return result.pod.key, result.node_name, result.nominated_node_name, result.victims


def _drive(scheduler: kschedlib.Scheduler, clock: kschedlib.FakeClock, evicts: bool, stream: bool) -> list[Attempt]:
    """Schedule until nothing is left to try, as ``simulate`` does.

    Each round schedules until the active queue is empty — through ``run_until_idle`` (which
    keeps every ScheduleResult until it returns), or with ``evicts``/``stream`` one
    ``schedule_one`` at a time, keeping only an :data:`Attempt` and, with ``evicts``, removing
    each result's victims as it arrives (the embedder's job).  Then, while pods are backing off,
    the fake clock jumps to the next wake-up and ``tick`` requeues them; pods left in the
    unschedulable pool wait for a cluster event that never comes, and the run ends.
    """
    attempts: list[Attempt] = []

    def record(result: kschedlib.ScheduleResult) -> None:
        attempts.append(_attempt(result))
        if evicts:
            for victim in result.victims:
                scheduler.remove_pod(victim)

    while True:
        if evicts or stream:
            while (result := scheduler.schedule_one()) is not None:
                record(result)
        else:
            attempts.extend(_attempt(result) for result in scheduler.run_until_idle())
        wakeup = scheduler.next_wakeup()
        if wakeup is None or not any(queue == "backoff" for queue, _ in scheduler.pending().values()):
            return attempts
        clock.set(max(wakeup, clock.now()))
        for result in scheduler.tick():
            record(result)


def _digest(attempts: Sequence[Attempt]) -> str:
    """sha256 over every attempt in order: pod, node (or ``-``), nominated node (or ``-``), victims."""
    h = hashlib.sha256()
    for pod, node, nominated, victims in attempts:
        h.update(f"{pod}\t{node or '-'}\t{nominated or '-'}\t{','.join(victims)}\n".encode())
    return h.hexdigest()


def _scheduled(attempts: Sequence[Attempt]) -> int:
    """Pods bound at the end: each pod's last attempt bound it, and no later attempt evicted it."""
    final: dict[str, str | None] = {}
    for pod, node, _, victims in attempts:
        final[pod] = node
        for victim in victims:
            if victim in final:
                final[victim] = None
    return sum(1 for node in final.values() if node is not None)


def _print_profile(profiler: cProfile.Profile, title: str) -> None:
    stats = pstats.Stats(profiler, stream=sys.stdout)
    print(f"--- {title}: top 30 functions by cumulative time ---")
    stats.sort_stats("cumulative").print_stats(30)
    print(f"--- {title}: top 15 functions by own time ---")
    stats.sort_stats("tottime").print_stats(15)
    sys.stdout.flush()


def _decisions(attempts: Sequence[Attempt]) -> dict[str, Any]:
    """Every victim, and the node each pod was first nominated to (what ``--against-go`` needs)."""
    nominations: dict[str, str] = {}
    for pod, _, nominated, _ in attempts:
        if nominated is not None:
            nominations.setdefault(pod, nominated)
    return {"victims": [victim for *_, victims in attempts for victim in victims], "nominations": nominations}


def measure(
    name: str, scale: float, profile: bool, stream: bool = False, kube_version: str | None = None,
    decisions: bool = False, setup_only: bool = False,
) -> dict[str, Any]:
    """Build, load and schedule one workload in this process; returns its figures.

    ``setup_only`` stops before scheduling (``instructions.py`` subtracts such a run from a full one).
    """
    workload = workloads.WORKLOADS[name]
    started = time.perf_counter()
    cluster = kschedlib.load_cluster(workload.objects(scale))
    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(seed=0, clock=clock, kube_version=kube_version)
    scheduler.add_objects(cluster.objects)
    pending = len(cluster.pending_pods)
    nodes = len(cluster.nodes)
    bound_before = len(cluster.bound_pods)
    del cluster
    gc.collect()
    setup = time.perf_counter() - started
    setup_rss = _peak_rss_mb()
    if setup_only:
        return {"workload": name, "setup_seconds": round(setup, 3), "setup_peak_rss_mb": round(setup_rss, 1)}
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    results = _drive(scheduler, clock, workload.evicts, stream)
    if profiler is not None:
        profiler.disable()
    seconds = time.perf_counter() - started
    if profiler is not None:
        _print_profile(profiler, f"{name}: profiled run, {seconds:.1f} s")
    return {
        "workload": name,
        "kube_version": str(scheduler.kube.version),
        "scale": scale,
        "nodes": nodes,
        "bound_pods": bound_before,
        "pending_pods": pending,
        "attempts": len(results),
        "scheduled": _scheduled(results),
        "preempted": sum(len(victims) for *_, victims in results),
        "setup_seconds": round(setup, 3),
        "seconds": round(seconds, 3),
        "pods_per_second": round(len(results) / seconds, 1) if seconds > 0 else 0.0,
        "setup_peak_rss_mb": round(setup_rss, 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "digest": _digest(results),
        "profiled": profile,
        "streamed": stream or workload.evicts,
        **(_decisions(results) if decisions else {}),
    }


def _in_subprocess(
    name: str, scale: float, profile: bool, stream: bool, kube_version: str | None = None, decisions: bool = False,
) -> dict[str, Any] | None:
    """Run :func:`measure` in a fresh interpreter so peak memory is this workload's alone; ``None`` if it failed."""
    fd, path = tempfile.mkstemp(prefix=f"kschedlib-bench-{name}-", suffix=".json")
    os.close(fd)
    try:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--scale", repr(scale),
               "--result-file", path]
        cmd += ["--kube-version", kube_version] if kube_version else []
        cmd += [flag for flag, on in (("--profile", profile), ("--stream", stream), ("--decisions", decisions)) if on]
        if subprocess.run(cmd, check=False).returncode != 0:
            return None
        with open(path, encoding="utf-8") as f:
            figures: dict[str, Any] = json.load(f)
        return figures
    finally:
        os.unlink(path)


_COLUMNS = (
    ("workload", "{}", 14), ("nodes", "{:,}", 7), ("pending_pods", "{:,}", 8), ("scheduled", "{:,}", 9),
    ("attempts", "{:,}", 8), ("preempted", "{:,}", 9), ("seconds", "{:.2f}", 8), ("pods_per_second", "{:,.1f}", 9),
    ("setup_peak_rss_mb", "{:,.0f}", 8), ("peak_rss_mb", "{:,.0f}", 8), ("digest", "{:.16}", 16),
)
_HEADERS = {"pending_pods": "pending", "seconds": "sched s", "pods_per_second": "pods/s",
            "setup_peak_rss_mb": "setup MB", "peak_rss_mb": "peak MB"}


def _row(figures: dict[str, Any]) -> str:
    return "  ".join(fmt.format(figures[key]).rjust(width) for key, fmt, width in _COLUMNS)


def _header() -> str:
    return "  ".join(_HEADERS.get(key, key).rjust(width) for key, _, width in _COLUMNS)


def _write_cluster(name: str, scale: float, path: str) -> None:
    objects = workloads.build(name, scale)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(workloads.as_list(objects), f, separators=(",", ":"))
    print(f"wrote {name} (scale {scale}): {len(objects):,} objects to {path}")
    print(f"time it with: python -m kschedlib simulate {path} --format json > /dev/null")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", action="append", choices=sorted(workloads.WORKLOADS),
                   help="workload to run (repeatable; default: all)")
    p.add_argument("--scale", type=float, default=1.0, help="multiply node and pod counts (default 1.0)")
    p.add_argument("--profile", action="store_true", help="run under cProfile; print the top 30 by cumulative time")
    p.add_argument("--write-cluster", metavar="PATH", help="write the workload as a v1 List JSON file and exit")
    p.add_argument("--stream", action="store_true",
                   help="call schedule_one in a loop, keeping no ScheduleResult, instead of run_until_idle")
    p.add_argument("--json", action="store_true", help="print the figures as JSON lines instead of a table")
    p.add_argument("--kube-version", metavar="V", help="kube-scheduler version to behave as (default: kschedlib's)")
    p.add_argument("--against-go", action="store_true",
                   help="run each workload alternately with kube-scheduler's real loop (ksoracle schedule); "
                        f"default workloads: {', '.join(against_go.AGAINST_GO_WORKLOADS)}")
    p.add_argument("--pairs", type=int, default=3, help="--against-go: alternating pairs per workload (default 3)")
    p.add_argument("--keep-results", action="store_true",
                   help="--against-go: drive kschedlib through run_until_idle, keeping every ScheduleResult "
                        "(default: a schedule_one loop, as a scheduler serving a cluster runs)")
    p.add_argument("--oracle", type=Path, default=against_go.DEFAULT_ORACLE,
                   help=f"--against-go: the ksoracle binary (default {against_go.DEFAULT_ORACLE})")
    p.add_argument("--worker", metavar="NAME", help=argparse.SUPPRESS)
    p.add_argument("--decisions", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--result-file", metavar="PATH", help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.scale <= 0:
        parser.error("--scale must be positive")
    if args.worker:
        with open(args.result_file, "w", encoding="utf-8") as f:
            json.dump(measure(args.worker, args.scale, args.profile, args.stream, args.kube_version,
                              args.decisions, args.setup_only), f)
        return 0
    if args.against_go:
        if args.pairs < 1:
            parser.error("--pairs must be at least 1")
        return against_go.against_go(
            args.workload or against_go.AGAINST_GO_WORKLOADS, args.scale, args.pairs, args.oracle,
            args.kube_version, args.json,
            lambda name: _in_subprocess(name, args.scale, False, not args.keep_results, args.kube_version,
                                        decisions=True))
    names: list[str] = args.workload or list(DEFAULT_WORKLOADS)
    if args.write_cluster:
        if len(names) != 1:
            parser.error("--write-cluster needs exactly one --workload")
        _write_cluster(names[0], args.scale, args.write_cluster)
        return 0
    if not args.json:
        print(f"kschedlib {kschedlib.__version__}, Python {sys.version.split()[0]}, scale {args.scale}")
        print(_header(), flush=True)
    failed = 0
    for name in names:
        figures = _in_subprocess(name, args.scale, args.profile, args.stream, args.kube_version)
        if figures is None:
            print(f"{name}: the benchmark process failed (see its traceback above)", file=sys.stderr, flush=True)
            failed += 1
            continue
        if args.profile and not args.json:
            print(_header())
        print(json.dumps(figures) if args.json else _row(figures), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
