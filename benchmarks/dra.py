"""Benchmark Dynamic Resource Allocation against the same workload with an extended resource.

Run by hand, never by the test suite::

    .venv/bin/python benchmarks/dra.py                 # 1,000 nodes x 8 GPUs, 2,000 pods
    .venv/bin/python benchmarks/dra.py --scale 0.1     # quicker
    .venv/bin/python benchmarks/dra.py --profile       # cProfile of the DRA run
    .venv/bin/python benchmarks/dra.py --json

Both variants have the same nodes (5 zones, 64 CPU / 512Gi / 110 pods) and the same 2,000 pending
pods (1 CPU, 4Gi) asking for 1, 2 or 4 GPUs (counts drawn from a seeded RNG):

* ``dra``: every node publishes a ResourceSlice with 8 devices of driver ``gpu.example.com``
  (``model`` a100 x4, h100 x2, l4 x2; ``index``; ``memory`` capacity 80Gi or 40Gi); a DeviceClass
  ``gpu`` selects the driver; each pod has its own ResourceClaim whose request adds one of four
  selectors (none, ``model == "a100"``, ``memory.compareTo(quantity("40Gi")) > 0``,
  ``model in ["h100", "l4"]``), so CEL runs on every candidate device.
* ``extended``: the nodes have ``example.com/gpu: 8`` allocatable and the pods request the same
  counts of it, with no selector.

Only the scheduling loop is timed (as in ``run.py``); the figure to compare is pods/s.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import random
import sys
import time
from typing import Any, Final

import run  # puts this checkout first on sys.path

import kschedlib

Json = dict[str, Any]

SEED: Final = 20261203
DRIVER: Final = "gpu.example.com"
GPU: Final = "example.com/gpu"
MODELS: Final = ("a100", "a100", "a100", "a100", "h100", "h100", "l4", "l4")
SELECTORS: Final = (
    None,
    f'device.attributes["{DRIVER}"].model == "a100"',
    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) > 0',
    f'device.attributes["{DRIVER}"].model in ["h100", "l4"]',
)
COUNTS: Final = (1, 1, 2, 4)


def _node(i: int, extended: bool) -> Json:
    name = f"node-{i:05d}"
    allocatable = {"cpu": "64", "memory": "512Gi", "pods": "110"}
    if extended:
        allocatable[GPU] = "8"
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                              "topology.kubernetes.io/zone": f"zone-{i % 5}"}},
        "status": {"allocatable": allocatable, "capacity": allocatable,
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }  # fmt: skip


def _slice(i: int) -> Json:
    node = f"node-{i:05d}"
    devices = [
        {"name": f"gpu-{d}",
         "attributes": {"model": {"string": model}, "index": {"int": d}},
         "capacity": {"memory": {"value": "80Gi" if model != "l4" else "40Gi"}}}
        for d, model in enumerate(MODELS)
    ]  # fmt: skip
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
        "spec": {"driver": DRIVER, "nodeName": node, "devices": devices,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}},
    }  # fmt: skip


def _pod(i: int, count: int, claim: str | None) -> Json:
    requests = {"cpu": "1", "memory": "4Gi"}
    resources: Json = {"requests": requests}
    spec: Json = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9", "resources": resources}]}
    if claim is None:
        requests[GPU] = str(count)
        resources["limits"] = {GPU: str(count)}  # as the API server insists for extended resources
    else:
        resources["claims"] = [{"name": "gpu"}]
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"train-{i:05d}", "namespace": "default", "uid": f"uid-train-{i:05d}"},
            "spec": spec, "status": {"phase": "Pending"}}  # fmt: skip


def _claim(i: int, count: int, selector: str | None) -> Json:
    exactly: Json = {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}
    if selector is not None:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"train-{i:05d}-gpu", "namespace": "default", "uid": f"uid-claim-{i:05d}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}  # fmt: skip


def objects(variant: str, scale: float) -> list[Json]:
    """The v1 objects of one variant; the same scale gives the same pods in both."""
    rng = random.Random(SEED)
    nodes, pods = max(1, round(1000 * scale)), max(1, round(2000 * scale))
    dra = variant == "dra"
    out: list[Json] = [_node(i, extended=not dra) for i in range(nodes)]
    if dra:
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
        out.extend(_slice(i) for i in range(nodes))
    for i in range(pods):
        count, selector = rng.choice(COUNTS), rng.choice(SELECTORS)
        if dra:
            out.append(_claim(i, count, selector))
        out.append(_pod(i, count, f"train-{i:05d}-gpu" if dra else None))
    return out


def measure(variant: str, scale: float, profile: bool) -> dict[str, Any]:
    cluster = kschedlib.load_cluster(objects(variant, scale))
    clock = kschedlib.FakeClock()
    scheduler = kschedlib.Scheduler(seed=0, clock=clock)
    scheduler.add_objects(cluster.objects)
    pending, nodes = len(cluster.pending_pods), len(cluster.nodes)
    del cluster
    gc.collect()
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    attempts = run._drive(scheduler, clock, evicts=False, stream=False)
    if profiler is not None:
        profiler.disable()
        run._print_profile(profiler, variant)
    seconds = time.perf_counter() - started
    scheduled = run._scheduled(attempts)
    return {"variant": variant, "nodes": nodes, "pending": pending, "scheduled": scheduled,
            "attempts": len(attempts), "seconds": round(seconds, 3),
            "pods_per_second": round(len(attempts) / seconds, 1), "peak_rss_mb": round(run._peak_rss_mb(), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply node and pod counts")
    parser.add_argument("--profile", action="store_true", help="cProfile the DRA run")
    parser.add_argument("--json", action="store_true", help="one JSON object per variant")
    args = parser.parse_args(argv)
    figures = [measure("extended", args.scale, False), measure("dra", args.scale, args.profile)]
    for row in figures:
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{row['variant']:>9}: {row['nodes']} nodes, {row['scheduled']}/{row['pending']} pods scheduled "
                  f"in {row['seconds']} s ({row['pods_per_second']} pods/s), peak RSS {row['peak_rss_mb']} MB")
    if not args.json:
        ratio = figures[0]["pods_per_second"] / figures[1]["pods_per_second"]
        print(f"DRA is {ratio:.2f}x slower than the extended resource")
    return 0


if __name__ == "__main__":
    sys.exit(main())
