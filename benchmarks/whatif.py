"""Benchmark the what-if calls: ``Scheduler.fork`` and ``Scheduler.explain``.

Run by hand, never by the test suite::

    .venv/bin/python benchmarks/whatif.py               # fork on 5,000 nodes, explain on 1,000
    .venv/bin/python benchmarks/whatif.py --json

* fork: the ``basic`` workload (5,000 nodes, 10,000 pending pods), forked as loaded and again after
  5,000 of its pods were scheduled (bound pods on the nodes, the rest queued).
* explain: the ``basic`` workload at scale 0.2 (1,000 nodes) with its first 1,000 pods bound; one
  pending pod asked about with ``kschedlib.explain`` (which loads the cluster each time) and with
  ``Scheduler.explain`` on the loaded scheduler (reusing its caches), both evaluating every node.
  The two answers are checked to be equal.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import workloads

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import kschedlib  # noqa: E402


def _median_ms(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times) * 1000, 2)


def _loaded(scale: float) -> tuple[kschedlib.Scheduler, kschedlib.Cluster]:
    cluster = kschedlib.load_cluster(workloads.build("basic", scale))
    sched = kschedlib.Scheduler(seed=0, clock=kschedlib.FakeClock())
    sched.add_objects(cluster.objects)
    return sched, cluster


def fork_figures(repeat: int) -> dict[str, Any]:
    sched, _ = _loaded(1.0)
    sched.snapshot()
    loaded = _median_ms(sched.fork, repeat)
    for _ in range(5000):
        sched.schedule_one()
    busy = _median_ms(sched.fork, repeat)
    twin = sched.fork()
    same = [(r.pod.key, r.node_name) for r in twin.run_until_idle()[:200]] == \
        [(r.pod.key, r.node_name) for r in sched.run_until_idle()[:200]]
    return {"nodes": len(sched.node_names()), "fork_loaded_ms": loaded, "fork_after_5000_bound_ms": busy,
            "fork_decides_alike": same}


_asked = itertools.count()


def _renamed(pod: kschedlib.Pod) -> kschedlib.Pod:
    """The same pod under a new name and uid: nothing the caches kept for the pod itself helps."""
    index = next(_asked)
    return attrs.evolve(pod, name=f"{pod.name}-ask-{index}", uid=f"ask-{index}")


def explain_figures(repeat: int) -> dict[str, Any]:
    sched, cluster = _loaded(0.2)
    for _ in range(1000):
        sched.schedule_one()
    bound = [pod for pod in sched.pods().values() if pod.node_name]
    nodes = [info.node for info in sched.snapshot().node_infos]
    pod = cluster.pending_pods[-1]
    objects = [*nodes, *bound]
    live = sched.explain(pod).to_dict()
    pure = kschedlib.explain(objects, pod).to_dict()
    keys = ("feasible", "filtered", "scores", "best", "message")
    return {
        "nodes": len(nodes),
        "bound_pods": len(bound),
        "module_explain_ms": _median_ms(lambda: kschedlib.explain(objects, pod), max(3, repeat // 4)),
        "scheduler_explain_ms": _median_ms(lambda: sched.explain(pod), repeat),
        "scheduler_explain_new_pod_ms": _median_ms(lambda: sched.explain(_renamed(pod)), repeat),
        "scheduler_feasible_nodes_ms": _median_ms(lambda: sched.feasible_nodes(pod), repeat),
        "answers_equal": all(live[k] == pure[k] for k in keys),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="timed calls per figure (median reported)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = {"fork": fork_figures(args.repeat), "explain": explain_figures(args.repeat)}
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, values in figures.items():
            print(name + ": " + ", ".join(f"{k}={v}" for k, v in values.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
