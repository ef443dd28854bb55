"""One workload measured in this process: what ``run.py`` starts in a fresh interpreter per workload.

It imports only kschedlib and the workload generator (``--profile`` adds cProfile), so the peak RSS it
reports is the scheduler's and its input's, not the benchmark driver's: the driver's own modules
(subprocess, statistics, hashlib with OpenSSL, ...) would add about 10 MB.  It writes its figures and
every attempt as JSON; ``run.py`` derives the digest and the counts from the attempts.

    python benchmarks/worker.py NAME --scale S --result-file PATH [--kube-version V] [--stream]
        [--profile] [--setup-only]
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

# Benchmark the checkout this script lives in, whether or not kschedlib is installed.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import workloads  # noqa: E402

import kschedlib  # noqa: E402

Attempt = tuple[str, str | None, str | None, tuple[str, ...]]
"""What the benchmark keeps of a ScheduleResult: pod, node, nominated node, victims."""


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


def peak_rss_mb() -> float:
    """This process's peak resident set size: ``VmHWM`` on Linux, else ``ru_maxrss`` (bytes on macOS)."""
    hwm = vm_hwm_mb()
    if hwm is not None:
        return hwm
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _attempt(result: kschedlib.ScheduleResult) -> Attempt:
    return result.pod.key, result.node_name, result.nominated_node_name, result.victims


def drive(scheduler: kschedlib.Scheduler, clock: kschedlib.FakeClock, evicts: bool, stream: bool) -> list[Attempt]:
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


def print_profile(profiler: Any, title: str) -> None:
    import pstats

    stats = pstats.Stats(profiler, stream=sys.stdout)
    print(f"--- {title}: top 30 functions by cumulative time ---")
    stats.sort_stats("cumulative").print_stats(30)
    print(f"--- {title}: top 15 functions by own time ---")
    stats.sort_stats("tottime").print_stats(15)
    sys.stdout.flush()


def measure(
    name: str, scale: float, profile: bool, stream: bool = False, kube_version: str | None = None,
    setup_only: bool = False,
) -> dict[str, Any]:
    """Build, load and schedule one workload in this process; its figures and every attempt.

    ``setup_only`` stops before scheduling (``instructions.py`` subtracts such a run from a full one).
    """
    workload = workloads.WORKLOADS[name]
    started = time.perf_counter()
    cluster = kschedlib.load_cluster(workload.stream(scale))  # no list of every dict alongside the objects
    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(seed=0, clock=clock, kube_version=kube_version)
    scheduler.add_objects(cluster.objects)
    pending = len(cluster.pending_pods)
    nodes = len(cluster.nodes)
    bound_before = len(cluster.bound_pods)
    del cluster
    gc.collect()
    setup = time.perf_counter() - started
    setup_rss = peak_rss_mb()
    if setup_only:
        return {"workload": name, "setup_seconds": round(setup, 3), "setup_peak_rss_mb": round(setup_rss, 1),
                "attempts": []}
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    attempts = drive(scheduler, clock, workload.evicts, stream)
    if profiler is not None:
        profiler.disable()
    seconds = time.perf_counter() - started
    if profiler is not None:
        print_profile(profiler, f"{name}: profiled run, {seconds:.1f} s")
    return {
        "workload": name,
        "kube_version": str(scheduler.kube.version),
        "scale": scale,
        "nodes": nodes,
        "bound_pods": bound_before,
        "pending_pods": pending,
        "setup_seconds": round(setup, 3),
        "seconds": round(seconds, 3),
        "pods_per_second": round(len(attempts) / seconds, 1) if seconds > 0 else 0.0,
        "setup_peak_rss_mb": round(setup_rss, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "profiled": profile,
        "streamed": stream or workload.evicts,
        "attempts": attempts,
    }


def main(argv: list[str]) -> int:
    name, flags = argv[0], argv[1:]

    def value(flag: str) -> str | None:
        return flags[flags.index(flag) + 1] if flag in flags else None

    result_file = value("--result-file")
    if result_file is None:
        print(__doc__, file=sys.stderr)
        return 2
    figures = measure(name, float(value("--scale") or 1.0), "--profile" in flags, "--stream" in flags,
                      value("--kube-version"), "--setup-only" in flags)
    with open(result_file, "w", encoding="utf-8") as f:
        json.dump(figures, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
