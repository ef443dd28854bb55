"""Which pools of devices a node can reach, as the structured allocator gathers them.

A pool is a driver's named set of slices.  Only slices of the newest generation count; a pool whose
newest generation has fewer slices than ``resourceSliceCount`` is incomplete (its devices are not
allocated, and asking for ``All`` devices fails); a pool publishing one device name twice is invalid.
Pools are kept in the order their first slice was listed, node-local slices first (kube iterates a Go
map here, so its own order is not fixed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import final

import attrs

from kschedlib.model.dra import CounterSet, ResourceSlice
from kschedlib.model.objects import Node

__all__ = ["Pool", "PoolIndex", "gather_pools", "slice_reaches"]


@final
@attrs.frozen(slots=True)
class Pool:
    driver: str
    name: str
    slices: tuple[ResourceSlice, ...]
    """The newest generation's slices that reach the node, in listing order."""
    all_slices: tuple[ResourceSlice, ...]
    """Every slice of the newest generation (counters are consumed pool-wide)."""
    incomplete: bool
    invalid: bool
    counter_sets: Mapping[str, CounterSet]


def slice_reaches(slice_: ResourceSlice, node: Node) -> bool:
    """Whether the slice's devices can be used from ``node`` (per-device selection: checked per device)."""
    if slice_.node_name is not None:
        return slice_.node_name == node.name
    if slice_.all_nodes:
        return True
    if slice_.node_selector is not None:
        return slice_.node_selector.matches(node.name, node.labels)
    return slice_.per_device_node_selection


@final
class PoolIndex:
    """The slices grouped once per allocator: by pool (newest generation only) and by node."""

    __slots__ = ("_by_node", "_current", "_gathered", "_reached", "_shared")

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        newest: dict[tuple[str, str], int] = {}
        for s in slices:
            key = (s.driver, s.pool)
            if s.generation > newest.get(key, -1):
                newest[key] = s.generation
        self._current: dict[tuple[str, str], list[ResourceSlice]] = {}
        self._by_node: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        self._gathered: dict[str, tuple[Node, list[Pool], tuple[tuple[str, str], ...]]] = {}
        self._reached: dict[tuple[str, str], frozenset[str] | None] = {}
        for s in slices:
            if s.generation != newest[s.driver, s.pool]:
                continue
            self._current.setdefault((s.driver, s.pool), []).append(s)
            if s.node_name is not None:
                self._by_node.setdefault(s.node_name, []).append(s)
            else:
                self._shared.append(s)

    def nodes_of(self, pool: tuple[str, str]) -> frozenset[str] | None:
        """The nodes that can reach ``pool`` (driver, name), when all of its slices are node-local
        (none for a pool not listed); ``None`` when a slice serves several nodes."""
        if pool in self._reached:
            return self._reached[pool]
        names: frozenset[str] | None = frozenset(s.node_name for s in self._current.get(pool, ()) if s.node_name)
        if any(s.node_name is None for s in self._current.get(pool, ())):
            names = None
        self._reached[pool] = names
        return names

    def gather(self, node: Node) -> list[Pool]:
        """The pools ``node`` reaches, node-local slices first (kept per node object: nodes are immutable)."""
        return self._entry(node)[1]

    def keys(self, node: Node) -> tuple[tuple[str, str], ...]:
        """(driver, pool) of the pools ``node`` reaches, in :meth:`gather`'s order."""
        return self._entry(node)[2]

    def _entry(self, node: Node) -> tuple[Node, list[Pool], tuple[tuple[str, str], ...]]:
        known = self._gathered.get(node.name)
        if known is None or known[0] is not node:
            pools = self._gather(node)
            known = self._gathered[node.name] = (node, pools, tuple((p.driver, p.name) for p in pools))
        return known

    def _gather(self, node: Node) -> list[Pool]:
        reaching: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in (*self._by_node.get(node.name, ()), *self._shared):
            if (s.devices or s.shared_counters) and slice_reaches(s, node):
                reaching.setdefault((s.driver, s.pool), []).append(s)
        pools = []
        for (driver, name), targeting in reaching.items():
            current = self._current[driver, name]
            names = [d.name for s in current for d in s.devices]
            counters = {c.name: c for s in current for c in s.shared_counters}
            pools.append(Pool(driver, name, tuple(s for s in targeting if s.devices), tuple(current),
                              incomplete=len(current) != current[0].slice_count,
                              invalid=len(names) != len(set(names)), counter_sets=counters))
        return pools


def gather_pools(slices: Sequence[ResourceSlice], node: Node) -> list[Pool]:
    """The pools ``node`` reaches, each with its newest generation's slices."""
    return PoolIndex(slices).gather(node)
