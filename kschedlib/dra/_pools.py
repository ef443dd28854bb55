"""Which pools of devices a node can reach, as the structured allocator gathers them.

A pool is a driver's named set of slices.  Per node, kube v1.36 takes the slices that reach the node
(slices with shared counters always count), keeping per pool those of the newest generation among them.
If they are all of the pool (``resourceSliceCount``), the pool is used as it is; otherwise the pool's
slices everywhere decide: a newer generation elsewhere makes the node's view obsolete (the pool is left
out), fewer slices than announced make it incomplete (its devices are not allocated, and asking for
``All`` devices fails).  Before v1.35 (``thorough=False``) only the node's slices are counted, and an
incomplete pool keeps them: only ``All`` requests refuse it.  A pool is invalid when it publishes a
device name twice or, with partitionable devices, a counter set twice or a consumption of a counter set
or counter it lacks.  Pools come sorted by driver and pool name, those with binding conditions last; a
pool's slices sorted by name.  Without partitionable devices, slices with per-device node selection or
shared counters are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.labels import NodeSelector
from kschedlib.model.objects import Node

if TYPE_CHECKING:
    from kschedlib.model.dra import CounterSet, Device, ResourceSlice

__all__ = ["Pool", "PoolIndex", "device_reaches", "slice_reaches"]


@final
@attrs.frozen(slots=True, repr=False)
class Pool(FieldsRepr):
    driver: str
    name: str
    slices: tuple[ResourceSlice, ...]
    """The slices with devices that reach the node, sorted by name."""
    all_slices: tuple[ResourceSlice, ...]
    """Every slice of the pool's generation in use (counters are consumed pool-wide)."""
    incomplete: bool
    invalid: bool
    counter_sets: Mapping[str, CounterSet]


def _matches(node: Node, node_name: str | None, all_nodes: bool, selector: NodeSelector | None) -> bool:
    if node_name is not None:
        return node_name == node.name
    if all_nodes:
        return True
    return selector is not None and selector.matches(node.name, node.labels)


def device_reaches(device: Device, node: Node) -> bool:
    """Whether a device of a slice with per-device node selection can be used from ``node``."""
    return _matches(node, device.node_name, device.all_nodes, device.node_selector)


def slice_reaches(slice_: ResourceSlice, node: Node) -> bool:
    """Whether the slice counts for ``node``: shared counters always do, per-device node selection when one of
    its devices reaches the node."""
    if slice_.shared_counters:
        return True
    if slice_.node_name is not None or slice_.all_nodes or slice_.node_selector is not None:
        return _matches(node, slice_.node_name, slice_.all_nodes, slice_.node_selector)
    if slice_.per_device_node_selection:
        return any(device_reaches(d, node) for d in slice_.devices)
    return False


def _invalid(device_slices: Sequence[ResourceSlice], counter_slices: Sequence[ResourceSlice],
             consuming: Sequence[ResourceSlice], partitionable: bool) -> tuple[bool, dict[str, CounterSet]]:
    """Whether the pool is invalid, and its counter sets."""
    names = [d.name for s in device_slices for d in s.devices]
    if len(names) != len(set(names)):
        return True, {}
    if not partitionable:
        return False, {}
    counters: dict[str, CounterSet] = {}
    for s in counter_slices:
        for counter_set in s.shared_counters:
            if counter_set.name in counters:
                return True, {}
            counters[counter_set.name] = counter_set
    for s in consuming:
        for device in s.devices:
            for consumption in device.consumes_counters:
                found = counters.get(consumption.counter_set)
                if found is None or any(name not in found.counters for name in consumption.counters):
                    return True, {}
    return False, counters


@final
class PoolIndex:
    """The slices grouped once per allocator: by pool and by node."""

    __slots__ = ("_by_node", "_by_pool", "_gathered", "_reached", "_shared")

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        self._by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        self._by_node: dict[str, list[ResourceSlice]] = {}
        self._shared: list[ResourceSlice] = []
        self._gathered: dict[tuple[str, bool, bool], tuple[Node, list[Pool], tuple[tuple[str, str], ...]]] = {}
        self._reached: dict[tuple[str, str], frozenset[str] | None] = {}
        for s in slices:
            self._by_pool.setdefault((s.driver, s.pool), []).append(s)
            if s.node_name is not None:
                self._by_node.setdefault(s.node_name, []).append(s)
            else:
                self._shared.append(s)

    def nodes_of(self, pool: tuple[str, str]) -> frozenset[str] | None:
        """The nodes that can reach ``pool`` (driver, name) through a slice of any generation, when all
        of its slices are node-local (none for a pool not listed); ``None`` when a slice serves several
        nodes."""
        if pool in self._reached:
            return self._reached[pool]
        slices = self._by_pool.get(pool, ())
        names: frozenset[str] | None = frozenset(s.node_name for s in slices if s.node_name is not None)
        if any(s.node_name is None for s in slices):
            names = None
        self._reached[pool] = names
        return names

    def gather(self, node: Node, partitionable: bool = True, thorough: bool = True) -> list[Pool]:
        """The pools ``node`` reaches, in kube's order (kept per node object: nodes are immutable)."""
        return self._entry(node, partitionable, thorough)[1]

    def keys(self, node: Node, partitionable: bool = True, thorough: bool = True) -> tuple[tuple[str, str], ...]:
        """(driver, pool) of the pools ``node`` reaches, in :meth:`gather`'s order."""
        return self._entry(node, partitionable, thorough)[2]

    def _entry(self, node: Node, partitionable: bool,
               thorough: bool) -> tuple[Node, list[Pool], tuple[tuple[str, str], ...]]:
        key = (node.name, partitionable, thorough)
        known = self._gathered.get(key)
        if known is None or known[0] is not node:
            pools = self._gather(node, partitionable, thorough)
            known = self._gathered[key] = (node, pools, tuple((p.driver, p.name) for p in pools))
        return known

    def _gather(self, node: Node, partitionable: bool, thorough: bool) -> list[Pool]:
        reaching: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in (*self._by_node.get(node.name, ()), *self._shared):
            if not partitionable and (s.per_device_node_selection or s.shared_counters):
                continue
            if not slice_reaches(s, node):
                continue
            found = reaching.get((s.driver, s.pool))
            if found is None or s.generation > found[0].generation:
                reaching[s.driver, s.pool] = [s]
            elif s.generation == found[0].generation:
                found.append(s)
        pools: list[Pool] = []
        for (driver, name), targeting in reaching.items():
            pool = self._pool(driver, name, targeting, partitionable, thorough)
            if pool is not None:
                pools.append(pool)
        with_conditions = [p for p in pools if any(d.binding_conditions for s in p.slices for d in s.devices)]
        pools = [p for p in pools if p not in with_conditions]
        return sorted(pools, key=_pool_id) + sorted(with_conditions, key=_pool_id)

    def _pool(self, driver: str, name: str, targeting: list[ResourceSlice], partitionable: bool,
              thorough: bool) -> Pool | None:
        generation, count = targeting[0].generation, targeting[0].slice_count
        in_use = targeting
        incomplete = len(targeting) != count and not thorough  # v1.32-v1.34 look no further
        if len(targeting) != count and thorough:
            everywhere = self._by_pool[driver, name]
            if any(s.generation > generation for s in everywhere):
                return None  # the node's slices are obsolete
            in_use = [s for s in everywhere if s.generation == generation]
            if len(in_use) != count:
                return Pool(driver, name, (), (), incomplete=True, invalid=False, counter_sets={})
        targeting = sorted(targeting, key=lambda s: s.name)
        counter_slices = [s for s in targeting if s.shared_counters] if partitionable else []
        device_slices = [s for s in targeting if not s.shared_counters] if partitionable else targeting
        invalid, counters = _invalid(device_slices, counter_slices, in_use, partitionable)
        return Pool(driver, name, tuple(s for s in device_slices if s.devices), tuple(in_use),
                    incomplete=incomplete, invalid=invalid, counter_sets=counters)


def _pool_id(pool: Pool) -> tuple[str, str]:
    return pool.driver, pool.name
