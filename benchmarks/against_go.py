"""kschedlib against kube-scheduler's real scheduling loop on the same workloads (``run.py --against-go``).

For each workload the objects of ``workloads.py`` are written once as a ``ksoracle schedule``
WORKLOAD file; then kschedlib (``run.py``'s worker, a fresh process) and kube-scheduler (``ksoracle
schedule``: the real ``sched.Run`` loop, parallelism 16, fed through a fake API server) run
alternately, ``--pairs`` times, the first runner swapping each pair.  Each pair gives a ratio (Go's
seconds over kschedlib's, for the same pods); the median ratio is the figure.  Peak RSS is each
process's ``ru_maxrss``.  The load average is recorded before every run: the machine is shared.

Preemption, end to end.  ``ksoracle schedule`` stops once every pending pod has been bound or has
failed once, and a preemptor's first cycle fails (it nominates a node; kube-scheduler deletes the
victims asynchronously).  Go's figure is therefore two timed runs of the real loop, added:
*phase 1*, the workload as given (every preemptor's cycle, victims chosen and deleted); *phase 2*,
the cluster after kschedlib's evictions with every preemptor carrying the node kschedlib nominated
(``status.nominatedNodeName``), which kube-scheduler tries first and binds.  kschedlib's figure is
its own end-to-end loop: both attempts of every preemptor, the victims removed by the host loop.

Decisions are compared where they are comparable: the number of pods scheduled (and the victims'
count for preemption), and the first pending pod's cycle on the initial cluster, asked of both
with ``explain`` (``ksoracle explain``, every node evaluated): feasible nodes, each node's total
score, the best nodes and the FitError/preemption outcome.  Later placements differ by design:
kube-scheduler breaks ties with its own random source and filters with 16 goroutines.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import workloads
from worker import vm_hwm_mb

Json = dict[str, Any]
Figures = dict[str, Any]

DEFAULT_ORACLE = Path(__file__).resolve().parent.parent.parent / "oracles" / "ksoracle-1.36.3"
AGAINST_GO_WORKLOADS = ("small", "basic", "affinity", "large", "preemption-pdb", "gpu-extended", "gpu-dra")


def go_workload(objects: Sequence[Json]) -> Json:
    """The v1 dicts as a ``ksoracle schedule`` WORKLOAD: namespaces, nodes, bound pods, pending pods, the rest.

    Objects get ``metadata.resourceVersion`` "1" where they have none, as an API server would give
    them (kube-scheduler's assume cache refuses a ResourceClaim without one).
    """
    out: Json = {"namespaces": [], "nodes": [], "pods": [], "pending": [], "objects": []}
    namespaces = {"default"}
    for obj in objects:
        obj = {**obj, "metadata": {"resourceVersion": "1", **obj["metadata"]}}
        kind = obj["kind"]
        if kind == "Pod":
            namespaces.add(obj["metadata"].get("namespace", "default"))
            out["pods" if obj["spec"].get("nodeName") else "pending"].append(obj)
        elif kind == "Node":
            out["nodes"].append(obj)
        else:
            out["objects"].append(obj)
    out["namespaces"] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                         for name in sorted(namespaces)]
    return out


def after_preemption(workload: Json, decisions: Figures) -> Json:
    """Phase 2 of a preemption run: kschedlib's victims gone, every preemptor nominated where kschedlib nominated it."""
    victims = set(decisions["victims"])
    nominated: dict[str, str] = decisions["nominations"]
    pending = []
    for pod in workload["pending"]:
        node = nominated.get(_key(pod))
        pending.append({**pod, "status": {"nominatedNodeName": node}} if node else pod)
    return {**workload, "pods": [p for p in workload["pods"] if _key(p) not in victims], "pending": pending}


def _key(pod: Json) -> str:
    return f"{pod['metadata'].get('namespace', 'default')}/{pod['metadata']['name']}"


def run_go(oracle: Path, path: Path) -> Figures:
    """One ``ksoracle schedule`` run: its JSON line plus the process's peak RSS (MB).

    The peak is the process's ``VmHWM``, read every 20 ms until it exits (``ru_maxrss`` would count
    this driver's own memory too: Linux carries it over ``exec``).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([str(oracle), "schedule", str(path)], stdout=out, stderr=err)
        peak = 0.0
        while (hwm := vm_hwm_mb(proc.pid)) is not None:
            peak = max(peak, hwm)
            time.sleep(0.02)
        proc.wait()
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"ksoracle schedule {path} exited {proc.returncode}: {err.read().decode()[-2000:]}")
        figures: Figures = json.loads(out.read())
        figures["peak_rss_mb"] = peak
        figures["stderr_lines"] = len(err.read().splitlines())
    return figures


def run_go_end_to_end(oracle: Path, phases: Sequence[Path]) -> Figures:
    """The phases of one Go measurement run in turn (one for most workloads, two for preemption), summed."""
    runs = [run_go(oracle, path) for path in phases]
    last = runs[-1]
    seconds = sum(r["seconds"] for r in runs)
    return {"seconds": seconds, "scheduled": last["scheduled"], "unschedulable": last["unschedulable"],
            "pods": runs[0]["pods"], "phase_seconds": [r["seconds"] for r in runs],
            "peak_rss_mb": max(r["peak_rss_mb"] for r in runs), "placements": last.get("placements", {}),
            "stderr_lines": sum(r["stderr_lines"] for r in runs)}


def _load() -> float:
    return os.getloadavg()[0]


def measure_pairs(
    name: str, pairs: int, run_ks: Callable[[], Figures], run_go_once: Callable[[], Figures],
) -> list[tuple[Figures, Figures]]:
    """``pairs`` alternating runs of both sides (kschedlib first in even pairs, Go first in odd ones)."""
    out = []
    for i in range(pairs):
        results: dict[str, Figures] = {}
        order = (("ks", run_ks), ("go", run_go_once)) if i % 2 == 0 else (("go", run_go_once), ("ks", run_ks))
        for side, runner in order:
            load = _load()
            figures = runner()
            figures["load"] = load
            results[side] = figures
        ks, go = results["ks"], results["go"]
        ratio = go["seconds"] / ks["seconds"]
        print(f"  {name} pair {i + 1}/{pairs}: kschedlib {ks['seconds']:.2f} s (load {ks['load']:.1f}), "
              f"kube-scheduler {go['seconds']:.2f} s (load {go['load']:.1f}), ratio {ratio:.2f}", flush=True)
        out.append((ks, go))
    return out


def first_cycle_check(oracle: Path, objects: Sequence[Json], kube_version: str | None) -> list[str]:
    """Differences between kschedlib's and kube-scheduler's ``explain`` of the first pending pod ([] if none)."""
    import kschedlib

    workload = go_workload(objects)
    first = workload["pending"][0]
    scenario = {"id": "first", "namespaces": workload["namespaces"], "nodes": workload["nodes"],
                "pods": workload["pods"], "pod": first, "objects": workload["objects"]}
    go = json.loads(subprocess.run([str(oracle), "explain", "-"], input=json.dumps(scenario), text=True,
                                   capture_output=True, check=True).stdout.splitlines()[0])
    ours = kschedlib.explain(list(objects), _key(first), kube_version=kube_version).to_dict()
    return compare_explanations(ours, go)


def compare_explanations(ours: Json, go: Json) -> list[str]:
    """What differs between two explain answers in feasible nodes, totals, best nodes, message, victims' count."""
    diffs = []
    for field in ("feasible", "best", "message"):
        if ours.get(field) != go.get(field):
            diffs.append(f"{field}: kschedlib {_short(ours.get(field))}, kube-scheduler {_short(go.get(field))}")
    totals = {node: s["total"] for node, s in (ours.get("scores") or {}).items()}
    go_totals = {node: s["total"] for node, s in (go.get("scores") or {}).items()}
    if totals != go_totals:
        differing = sorted(n for n in totals.keys() | go_totals.keys() if totals.get(n) != go_totals.get(n))
        diffs.append(f"totals differ on {len(differing)} nodes, e.g. {differing[:3]}")
    ours_victims = len((ours.get("postfilter") or {}).get("victims") or ())
    go_victims = len((go.get("postfilter") or {}).get("victims") or ())
    if ours_victims != go_victims:
        diffs.append(f"victims: kschedlib {ours_victims}, kube-scheduler {go_victims}")
    return diffs


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) < 80 else text[:77] + "..."


def summarize(name: str, runs: Sequence[tuple[Figures, Figures]], pending: int) -> Figures:
    """Medians over the pairs: seconds, pods/s (pending pods over seconds), ratio, peak RSS, loads."""
    ratios = [go["seconds"] / ks["seconds"] for ks, go in runs]
    ks_s = statistics.median(ks["seconds"] for ks, _ in runs)
    go_s = statistics.median(go["seconds"] for _, go in runs)
    loads = [f["load"] for pair in runs for f in pair]
    ks, go = runs[0]
    return {
        "workload": name, "pending": pending, "pairs": len(runs),
        "ks_pods_per_second": pending / ks_s, "go_pods_per_second": pending / go_s,
        "ratio": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
        "ks_peak_rss_mb": max(k["peak_rss_mb"] for k, _ in runs),
        "go_peak_rss_mb": max(g["peak_rss_mb"] for _, g in runs),
        "ks_scheduled": ks["scheduled"], "go_scheduled": go["scheduled"], "digest": ks["digest"],
        "digests_agree": len({k["digest"] for k, _ in runs}) == 1,
        "load_min": min(loads), "load_max": max(loads),
        "go_phase_seconds": [round(s, 3) for s in go["phase_seconds"]],
    }


_COLUMNS = (
    ("workload", "{}", 14), ("pending", "{:,}", 7), ("ks_pods_per_second", "{:,.0f}", 9),
    ("go_pods_per_second", "{:,.0f}", 9), ("ratio", "{:.2f}", 6), ("ks_peak_rss_mb", "{:,.0f}", 6),
    ("go_peak_rss_mb", "{:,.0f}", 6), ("ks_scheduled", "{:,}", 8), ("go_scheduled", "{:,}", 8),
    ("digest", "{:.16}", 16),
)
_HEADERS = {"ks_pods_per_second": "ks pods/s", "go_pods_per_second": "go pods/s", "ks_peak_rss_mb": "ks MB",
            "go_peak_rss_mb": "go MB", "ks_scheduled": "ks bound", "go_scheduled": "go bound"}


def header() -> str:
    return "  ".join(_HEADERS.get(key, key).rjust(width) for key, _, width in _COLUMNS) + "  ratio range, load"


def row(s: Figures) -> str:
    cells = "  ".join(fmt.format(s[key]).rjust(width) for key, fmt, width in _COLUMNS)
    return f"{cells}  {s['ratio_min']:.2f}-{s['ratio_max']:.2f}, {s['load_min']:.1f}-{s['load_max']:.1f}"


def against_go(
    names: Sequence[str], scale: float, pairs: int, oracle: Path, kube_version: str | None, as_json: bool,
    run_worker: Callable[[str], Figures | None],
) -> int:
    """Run every workload against kube-scheduler; print a line per pair and a summary table. Exit status."""
    if not os.access(oracle, os.X_OK):
        print(f"{oracle}: no ksoracle there; unpack ../shared/oracles/ksoracle-v1.36.3.xz (its README says how) "
              "or pass --oracle", file=sys.stderr)
        return 2
    summaries, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="kschedlib-against-go-") as tmp:
        for name in names:
            summary = _one_workload(name, scale, pairs, oracle, kube_version, run_worker, Path(tmp))
            if summary is None:
                failed += 1
                continue
            summaries.append(summary)
            if as_json:
                print(json.dumps(summary), flush=True)
    if not as_json:
        print(header())
        for summary in summaries:
            print(row(summary))
    return 1 if failed or any(s["problems"] for s in summaries) else 0


def _one_workload(
    name: str, scale: float, pairs: int, oracle: Path, kube_version: str | None,
    run_worker: Callable[[str], Figures | None], tmp: Path,
) -> Figures | None:
    objects = workloads.build(name, scale)
    workload = go_workload(objects)
    phases = [tmp / f"{name}.json"]
    phases[0].write_text(json.dumps(workload, separators=(",", ":")))
    started = time.perf_counter()
    decisions = run_worker(name)
    if decisions is None:
        return None
    if workloads.WORKLOADS[name].evicts:
        phases.append(tmp / f"{name}-phase2.json")
        phases[1].write_text(json.dumps(after_preemption(workload, decisions), separators=(",", ":")))
    print(f"{name}: {len(workload['nodes']):,} nodes, {len(workload['pending']):,} pending pods; "
          f"warm-up run {time.perf_counter() - started:.1f} s", flush=True)

    def ks_once() -> Figures:
        figures = run_worker(name)
        if figures is None:
            raise RuntimeError(f"{name}: the kschedlib worker failed")
        return figures

    runs = measure_pairs(name, pairs, ks_once, lambda: run_go_end_to_end(oracle, phases))
    summary = summarize(name, runs, len(workload["pending"]))
    summary["problems"] = _problems(summary, runs, decisions)
    summary["first_cycle"] = first_cycle_check(oracle, objects, kube_version)
    summary["preempted"] = len(decisions["victims"])
    for problem in summary["problems"] + [f"first cycle: {d}" for d in summary["first_cycle"]]:
        print(f"  {name}: {problem}", flush=True)
    return summary


def _problems(summary: Figures, runs: Sequence[tuple[Figures, Figures]], decisions: Figures) -> list[str]:
    problems = []
    if summary["ks_scheduled"] != summary["go_scheduled"]:
        problems.append(f"scheduled: kschedlib {summary['ks_scheduled']}, kube-scheduler {summary['go_scheduled']}")
    if not summary["digests_agree"] or any(k["digest"] != decisions["digest"] for k, _ in runs):
        problems.append("kschedlib's digest changed between runs")
    if any(go["stderr_lines"] for _, go in runs):
        problems.append("kube-scheduler wrote to stderr (see a run by hand)")
    return problems
