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
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import against_go
import workloads
from worker import Attempt, kschedlib  # worker puts this checkout first on sys.path
from worker import drive as _drive  # noqa: F401 (dra.py drives its variants through run)
from worker import peak_rss_mb as _peak_rss_mb  # noqa: F401
from worker import print_profile as _print_profile  # noqa: F401

WORKER = Path(__file__).resolve().parent / "worker.py"

DEFAULT_WORKLOADS = ("small", "basic", "affinity", "preemption")


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


def _decisions(attempts: Sequence[Attempt]) -> dict[str, Any]:
    """Every victim, and the node each pod was first nominated to (what ``--against-go`` needs)."""
    nominations: dict[str, str] = {}
    for pod, _, nominated, _ in attempts:
        if nominated is not None:
            nominations.setdefault(pod, nominated)
    return {"victims": [victim for *_, victims in attempts for victim in victims], "nominations": nominations}


def _in_subprocess(
    name: str, scale: float, profile: bool, stream: bool, kube_version: str | None = None, decisions: bool = False,
) -> dict[str, Any] | None:
    """Measure one workload in a fresh ``worker.py`` interpreter (its peak memory is the workload's alone),
    then derive the digest and counts from its attempts; ``None`` if it failed."""
    fd, path = tempfile.mkstemp(prefix=f"kschedlib-bench-{name}-", suffix=".json")
    os.close(fd)
    try:
        cmd = [sys.executable, str(WORKER), name, "--scale", repr(scale), "--result-file", path]
        cmd += ["--kube-version", kube_version] if kube_version else []
        cmd += [flag for flag, on in (("--profile", profile), ("--stream", stream)) if on]
        if subprocess.run(cmd, check=False).returncode != 0:
            return None
        with open(path, encoding="utf-8") as f:
            figures: dict[str, Any] = json.load(f)
    finally:
        os.unlink(path)
    return summarize(figures, decisions)


def summarize(figures: dict[str, Any], decisions: bool = False) -> dict[str, Any]:
    """A worker's figures with its attempts replaced by their count, digest, pods scheduled and victims."""
    attempts: list[Attempt] = [(pod, node, nominated, tuple(victims))
                               for pod, node, nominated, victims in figures.pop("attempts")]
    figures.update(attempts=len(attempts), scheduled=_scheduled(attempts),
                   preempted=sum(len(victims) for *_, victims in attempts), digest=_digest(attempts))
    if decisions:
        figures.update(_decisions(attempts))
    return figures


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
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.scale <= 0:
        parser.error("--scale must be positive")
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
