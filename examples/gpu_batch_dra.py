"""GPUs as DRA devices: 40 nodes publish 8 GPUs each in ResourceSlices; 300 pods claim them.

The GPU-batch example's cluster, with the GPUs not as the extended resource ``nvidia.com/gpu`` but
as devices of the driver ``gpu.example.com`` (kube-scheduler v1.36's Dynamic Resource Allocation).
Half the nodes have A100s, half H100s.  Each pod has its own ResourceClaim: some ask for 1-4 GPUs of
any model, some for H100s only (a CEL selector), some for one H100 or else two A100s (a prioritized
list, scored).  The run prints pods placed, GPUs allocated per model, that no device went to two
claims, and where one claim's devices are; ``gpu_batch_dra.out`` holds its output.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from kschedlib import Scheduler, load_cluster

DRIVER = "gpu.example.com"
NODES = 40


def node(index: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"gpu-{index:03d}"},
            "status": {"allocatable": {"cpu": "64", "memory": "512Gi", "pods": "110"}}}


def model(index: int) -> str:
    return "a100" if index % 2 == 0 else "h100"


def gpu_slice(index: int) -> dict[str, Any]:
    name = f"gpu-{index:03d}"
    devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": model(index)}, "index": {"int": i}},
                "capacity": {"memory": {"value": "80Gi"}}} for i in range(8)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": name, "pool": {"name": name, "generation": 1,
                                                                  "resourceSliceCount": 1}, "devices": devices}}


DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
H100 = {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "h100"'}}
A100 = {"cel": {"expression": f'device.attributes["{DRIVER}"].model == "a100"'}}


def request(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(["any", "any", "h100", "prioritized"])
    if kind == "prioritized":
        return {"name": "gpu", "firstAvailable": [
            {"name": "one-h100", "deviceClassName": "gpu", "count": 1, "selectors": [H100]},
            {"name": "two-a100", "deviceClassName": "gpu", "count": 2, "selectors": [A100]}]}
    exactly: dict[str, Any] = {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                               "count": rng.choice([1, 2, 4])}
    if kind == "h100":
        exactly["selectors"] = [H100]
    return {"name": "gpu", "exactly": exactly}


def workload(rng: random.Random, count: int) -> list[dict[str, Any]]:
    objects = []
    for index in range(count):
        name = f"job-{index:03d}"
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": name, "namespace": "default", "uid": f"uid-claim-{name}"},
                        "spec": {"devices": {"requests": [request(rng)]}}})
        objects.append({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                        "spec": {"containers": [{"name": "worker", "image": "trainer",
                                                 "resources": {"requests": {"cpu": "4", "memory": "32Gi"}}}],
                                 "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}})
    return objects


def main() -> None:
    rng = random.Random(7)
    sched = Scheduler(kube_version="1.36", seed=7)
    cluster = load_cluster([*(node(i) for i in range(NODES)), *(gpu_slice(i) for i in range(NODES)), DEVICE_CLASS,
                            *workload(rng, 300)])
    sched.add_objects(cluster.objects)
    results = sched.run_until_idle()
    placed = {r.pod.key for r in results if r.scheduled}
    claims = sched.devices.claims
    devices = [(d.driver, d.pool, d.device) for c in claims.values() if c.allocation for d in c.allocation.devices]
    by_model = Counter(model(int(pool.split("-")[1])) for _, pool, _ in devices)
    print(f"nodes: {NODES} x 8 GPUs (A100 and H100 nodes alternate); pods: 300, one claim each")
    print(f"pods placed: {len(placed)}")
    print(f"GPUs allocated: {len(devices)} ({by_model['a100']} A100, {by_model['h100']} H100)")
    print(f"devices allocated twice: {len(devices) - len(set(devices))}")
    chosen = Counter(d.request for c in claims.values() if c.allocation for d in c.allocation.devices
                     if "/" in d.request)
    print(f"prioritized lists: {chosen['gpu/one-h100']} got one H100, {chosen['gpu/two-a100'] // 2} got two A100s")
    first = claims["default/job-000"]
    assert first.allocation is not None
    print("default/job-000:", ", ".join(f"{d.pool}/{d.device}" for d in first.allocation.devices))


if __name__ == "__main__":
    main()
