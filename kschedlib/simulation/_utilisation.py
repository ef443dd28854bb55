"""Utilisation per node, per zone and in total, and how much free capacity no pod shape can use."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.model.objects import Pod
from kschedlib.model.resources import Resources, accounting_for
from kschedlib.scheduler import Scheduler

__all__ = ["before_after", "fragmentation", "shape_of", "shapes_of", "utilisation"]

ZONE_LABEL: Final = "topology.kubernetes.io/zone"
NO_ZONE: Final = "(none)"

Shape = tuple[int, int, int, tuple[tuple[str, int], ...]]
"""A pod's requests as (milli-cpu, memory, ephemeral storage, sorted extended resources)."""


def shape_of(requests: Resources) -> Shape:
    """The shape of a pod's requests (zero extended amounts dropped)."""
    scalar = tuple(sorted((name, amount) for name, amount in requests.scalar.items() if amount))
    return requests.milli_cpu, requests.memory, requests.ephemeral_storage, scalar


def _amounts(info: NodeInfo) -> tuple[dict[str, int], dict[str, int]]:
    """(requested, allocatable) by resource: cpu in millicores, memory in bytes, pods, extended resources."""
    requested, allocatable = info.requested, info.allocatable
    used = {"cpu": requested.milli_cpu, "memory": requested.memory, "pods": len(info.pods)}
    alloc = {"cpu": allocatable.milli_cpu, "memory": allocatable.memory, "pods": allocatable.allowed_pod_number}
    for name in sorted(set(allocatable.scalar) | set(requested.scalar)):
        used[name] = requested.scalar.get(name, 0)
        alloc[name] = allocatable.scalar.get(name, 0)
    return used, alloc


def _entry(used: Mapping[str, int], alloc: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    return {name: {"requested": used[name], "allocatable": alloc[name],
                   "ratio": round(used[name] / alloc[name], 4) if alloc[name] else None} for name in alloc}


def _add(total: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        total[name] = total.get(name, 0) + amount


def _zone(info: NodeInfo) -> str:
    node = info.node
    return node.labels.get(ZONE_LABEL, NO_ZONE) if node is not None else NO_ZONE


def utilisation(snapshot: Snapshot) -> dict[str, Any]:
    """``{"nodes": {node: {resource: {requested, allocatable, ratio}}}, "zones": {...}, "total": {...}}``.

    ``cpu`` is in millicores, ``memory`` and storage in bytes, ``pods`` a count, extended resources
    (``nvidia.com/gpu``...) in their own units; ``ratio`` is requested/allocatable (``null`` when
    nothing is allocatable).  Zones come from ``topology.kubernetes.io/zone`` (``(none)`` without it).
    """
    nodes: dict[str, Any] = {}
    zones_used: dict[str, dict[str, int]] = {}
    zones_alloc: dict[str, dict[str, int]] = {}
    total_used: dict[str, int] = {}
    total_alloc: dict[str, int] = {}
    for info in sorted(snapshot.node_infos, key=lambda i: i.name):
        used, alloc = _amounts(info)
        nodes[info.name] = _entry(used, alloc)
        zone = _zone(info)
        _add(zones_used.setdefault(zone, {}), used)
        _add(zones_alloc.setdefault(zone, {}), alloc)
        _add(total_used, used)
        _add(total_alloc, alloc)
    zones = {zone: _entry(zones_used[zone], zones_alloc[zone]) for zone in sorted(zones_used)}
    return {"nodes": nodes, "zones": zones, "total": _entry(total_used, total_alloc)}


def _fits(shape: Shape, free: Mapping[str, int]) -> bool:
    cpu, memory, storage, scalar = shape
    return (free["pods"] >= 1 and cpu <= free["cpu"] and memory <= free["memory"]
            and storage <= free["ephemeral-storage"] and all(amount <= free.get(name, 0) for name, amount in scalar))


def fragmentation(snapshot: Snapshot, shapes: Iterable[Shape]) -> dict[str, Any] | None:
    """Free capacity that none of ``shapes`` can use, per resource: ``{resource: {free, stranded, ratio}}``.

    A node's free capacity (allocatable minus requested) is stranded when no shape fits in it by
    resources alone (cpu, memory, ephemeral storage, extended resources and one pod slot).
    ``None`` when there is no shape to judge by.
    """
    distinct = sorted(set(shapes))
    if not distinct:
        return None
    free_total: dict[str, int] = {}
    stranded: dict[str, int] = {}
    unusable_nodes = 0
    for info in snapshot.node_infos:
        used, alloc = _amounts(info)
        free = {name: max(alloc[name] - used[name], 0) for name in alloc}
        free["ephemeral-storage"] = max(info.allocatable.ephemeral_storage - info.requested.ephemeral_storage, 0)
        _add(free_total, free)
        if not any(_fits(shape, free) for shape in distinct):
            unusable_nodes += 1
            _add(stranded, free)
    resources = {name: {"free": free_total[name], "stranded": stranded.get(name, 0),
                        "ratio": round(stranded.get(name, 0) / free_total[name], 4) if free_total[name] else 0.0}
                 for name in free_total if name != "ephemeral-storage" or free_total[name]}
    return {"shapes": len(distinct), "nodes_without_room": unusable_nodes, "resources": resources}


def shapes_of(scheduler: Scheduler, pods: Sequence[Pod]) -> list[Shape]:
    """The request shapes of ``pods`` as this scheduler's version counts requests."""
    accounting = accounting_for(scheduler.kube.switches)
    return [shape_of(PodInfo.of(pod, accounting).requests) for pod in pods]


def before_after(before: Scheduler, after: Scheduler, shapes: Sequence[Shape]) -> dict[str, Any]:
    """The ``utilisation`` and ``fragmentation`` sections: before and after."""
    first, last = before.snapshot(), after.snapshot()
    return {"utilisation": {"before": utilisation(first), "after": utilisation(last)},
            "fragmentation": {"before": fragmentation(first, shapes), "after": fragmentation(last, shapes)}}
