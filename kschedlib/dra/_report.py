"""What a simulation reports about devices: the claims each pod holds and each node's free devices."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kschedlib.dra._store import DraStore
from kschedlib.model.objects import Pod

__all__ = ["device_report"]


def device_report(store: DraStore, pods: Iterable[Pod]) -> dict[str, Any]:
    """``{"allocations": {pod: [{claim, devices}]}, "free_devices": {node: {driver/pool: [device]}}}``;
    empty for a cluster without ResourceSlices."""
    if not store.slices:
        return {}
    by_uid = {pod.uid: pod for pod in pods}
    allocations: dict[str, list[dict[str, Any]]] = {}
    for claim in sorted(store.claims.values(), key=lambda c: c.key):
        if claim.allocation is None:
            continue
        devices = [f"{d.driver}/{d.pool}/{d.device}" for d in claim.allocation.devices]
        for consumer in claim.reserved_for:
            pod = by_uid.get(consumer.uid)
            if pod is not None:
                allocations.setdefault(pod.key, []).append({"claim": claim.key, "devices": devices})
    nodes = sorted({s.node_name for s in store.slices.values() if s.node_name is not None})
    return {"allocations": dict(sorted(allocations.items())),
            "free_devices": {node: store.free_devices(node) for node in nodes}}
