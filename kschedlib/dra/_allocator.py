"""The structured allocator: pick devices for a pod's unallocated claims on one node.

Depth-first first-fit search with backtracking, in the order kube-scheduler v1.36 searches
(claims, their requests, a prioritized list's subrequests in order, then one device after another
in pool, slice and device order; a request's later devices only come after its earlier ones, so
combinations are tried, not permutations).  A device is a candidate when it is not in use (unless
the request has admin access or the device allows several allocations), matches its class' and
the request's selectors, its taints are tolerated, shared counters and consumable capacity
suffice, and every ``matchAttribute`` constraint still holds.  The first complete solution wins;
there is no scoring inside the allocator.  Problems with a claim itself (a missing class, an
``All`` request over an incomplete pool, a selector that fails) raise :class:`AllocationError`,
which the plugin reports as an Error status.
"""

from __future__ import annotations

import abc
import enum
import functools
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Literal, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.dra._allocated import (
    AllocatedState,
    AllocationError,
    DeviceID,
    Features,
    NodeAllocationFailed,
    claims_signature,
)
from kschedlib.dra._capacity import consumed as consumed_capacity
from kschedlib.dra._capacity import consumed_amount, violates
from kschedlib.dra._pools import Pool, PoolIndex, device_reaches
from kschedlib.dra._selectors import SelectorCache, SelectorError, SelectorRuntimeError
from kschedlib.model._convert_base import Reader, node_selector
from kschedlib.model.dra import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    CONFIG_FROM_CLAIM,
    CONFIG_FROM_CLASS,
    AllocationResult,
    Device,
    DeviceAllocation,
    DeviceAttribute,
    DeviceClass,
    DeviceConfig,
    DeviceConstraint,
    DeviceToleration,
    ExactRequest,
    ResourceClaim,
    ResourceSlice,
)
from kschedlib.model.labels import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.model.objects import Node
from kschedlib.model.quantity import Quantity

__all__ = ["ALLOCATION_RESULTS_MAX_SIZE", "AllocatedState", "AllocationError", "Allocator", "DeviceID", "Features",
           "NodeAllocationFailed", "claims_signature"]

ALLOCATION_RESULTS_MAX_SIZE: Final = 32
_ZERO: Final = Quantity.from_int(0)
_SHARE_NAMESPACE: Final = uuid.UUID("6f1c1a52-7d1e-4a7b-9d8e-3c2b5a4f0e11")


class _Stop(Exception):
    """Adding more devices to this claim's result would pass the 32-device limit."""


@final
@attrs.frozen(slots=True, repr=False)
class _Candidate(FieldsRepr):
    id: DeviceID
    device: Device
    slice: ResourceSlice
    pool: Pool


@attrs.define(slots=True, repr=False)
class _RequestData(FieldsRepr):
    request: ExactRequest
    parent: str | None
    device_class: DeviceClass
    num_devices: int
    all_devices: list[_Candidate] | None = None

    @property
    def qualified_name(self) -> str:
        return self.request.name if self.parent is None else f"{self.parent}/{self.request.name}"


@attrs.define(slots=True, repr=False)
class _Picked(FieldsRepr):
    candidate: _Candidate
    request: str
    admin_access: bool | None
    consumed: dict[str, Quantity] | None
    shared: bool
    tolerations: tuple[DeviceToleration, ...] = ()


@attrs.define(slots=True, repr=False)
class _Constraint(FieldsRepr, abc.ABC):
    """A claim constraint on one attribute of its requests' devices (all requests when ``requests`` is
    empty; a subrequest counts by its own ``request/sub`` name too)."""

    requests: frozenset[str]
    attribute: str
    count: int = 0

    def applies(self, base: str, sub: str | None) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (sub is not None and f"{base}/{sub}" in self.requests)

    def add(self, base: str, sub: str | None, candidate: _Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        attribute = lookup_attribute(candidate.device, candidate.id[0], self.attribute)
        if attribute is None or (self.count and not self._fits(attribute)):
            return False
        self._keep(base, attribute)
        self.count += 1
        return True

    def remove(self, base: str, sub: str | None) -> None:
        if self.applies(base, sub):
            self._drop(base)
            self.count -= 1

    @abc.abstractmethod
    def _fits(self, attribute: DeviceAttribute) -> bool:
        """Whether a further device with ``attribute`` keeps the constraint."""

    @abc.abstractmethod
    def _keep(self, base: str, attribute: DeviceAttribute) -> None:
        """Remember a device of request ``base`` with ``attribute``."""

    @abc.abstractmethod
    def _drop(self, base: str) -> None:
        """Forget the device :meth:`_keep` remembered last for request ``base``."""


@final
@attrs.define(slots=True, repr=False)
class _MatchAttribute(_Constraint):
    """``matchAttribute``: every device has the first device's value."""

    value: DeviceAttribute | None = None

    def _fits(self, attribute: DeviceAttribute) -> bool:
        return self.value is not None and self.value.kind == attribute.kind and self.value.value == attribute.value

    def _keep(self, base: str, attribute: DeviceAttribute) -> None:
        if self.count == 0:
            self.value = attribute

    def _drop(self, base: str) -> None:
        pass


@final
@attrs.define(slots=True, repr=False)
class _DistinctAttribute(_Constraint):
    """``distinctAttribute``: no two devices share a value.  As kube does, values are kept per request
    name, so a request's later device replaces its earlier one's value."""

    values: dict[str, DeviceAttribute] = attrs.field(factory=dict)

    def _fits(self, attribute: DeviceAttribute) -> bool:
        return not any(v.kind == attribute.kind and v.value == attribute.value for v in self.values.values())

    def _keep(self, base: str, attribute: DeviceAttribute) -> None:
        self.values[base] = attribute

    def _drop(self, base: str) -> None:
        self.values.pop(base, None)


def lookup_attribute(device: Device, driver: str, qualified: str) -> DeviceAttribute | None:
    """A ``domain/name`` attribute; an unqualified attribute name belongs to the driver's domain."""
    found = device.attributes.get(qualified)
    if found is not None:
        return found
    domain, sep, name = qualified.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(name)


def _add(into: dict[str, Quantity], amounts: Mapping[str, Quantity], sign: int = 1) -> None:
    for name, q in amounts.items():
        into[name] = Quantity(into.get(name, _ZERO).amount + sign * q.amount, q.format)


class _Needs(enum.Enum):
    FULL_SEARCH = "full search"


_GENERAL: Final = _Needs.FULL_SEARCH
""":meth:`_Search._first_fit`'s "this needs the full search"."""


@final
class Allocator:
    """Allocates claims against fixed slices, classes and allocated devices (one per PreFilter)."""

    __slots__ = ("_allocated", "_classes", "_features", "_pools", "_selectors")

    def __init__(self, features: Features, allocated: AllocatedState, classes: Mapping[str, DeviceClass],
                 slices: Sequence[ResourceSlice] | PoolIndex, selectors: SelectorCache) -> None:
        self._features = features
        self._allocated = allocated
        self._classes = classes
        self._pools = slices if isinstance(slices, PoolIndex) else PoolIndex(slices)
        self._selectors = selectors

    def pool_keys(self, node: Node) -> tuple[tuple[str, str], ...]:
        """(driver, pool) of the pools ``node`` reaches."""
        features = self._features
        return self._pools.keys(node, features.partitionable_devices, features.incomplete_pools_skipped)

    def allocate(self, node: Node, claims: Sequence[ResourceClaim],
                 deadline: Callable[[], bool] | None = None) -> list[AllocationResult] | None:
        """One allocation per claim in order, or ``None`` if the node cannot serve them all."""
        return _Search(self, node, claims, deadline).run()


class _Search:
    """One :meth:`Allocator.allocate` call: the state of the depth-first search."""

    def __init__(self, owner: Allocator, node: Node, claims: Sequence[ResourceClaim],
                 deadline: Callable[[], bool] | None) -> None:
        self.a = owner
        self.node = node
        self.claims = claims
        self.deadline = deadline
        features = owner._features
        self.pools = owner._pools.gather(node, features.partitionable_devices, features.incomplete_pools_skipped)
        self.data: dict[tuple[int, int, int], _RequestData] = {}
        self.chosen_sub: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_Constraint]] = []
        self.results: list[list[_Picked]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Quantity]]] = {}
        self.available_counters: dict[str, dict[str, dict[str, Quantity]]] = {}
        self.matches: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.calls = -1

    # --- preparation ------------------------------------------------------------------------

    def run(self) -> list[AllocationResult] | None:
        if len(self.claims) == 1:
            quick = self._first_fit()
            if quick is not _GENERAL:
                return quick
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for ri, request in enumerate(claim.requests):
                if request.first_available:
                    if not self.a._features.prioritized_list:
                        raise AllocationError(f"claim {claim.key}, request {request.name}: has subrequests, "
                                              "but the DRAPrioritizedList feature is disabled")
                    counts = [self._prepare((ci, ri, si), claim, sub, request.name)
                              for si, sub in enumerate(request.first_available)]
                    minimum += min(counts)
                elif request.exactly is not None:
                    minimum += self._prepare((ci, ri, 0), claim, request.exactly, None)
                else:
                    raise AllocationError(f"claim {claim.key}, request {request.name}: "
                                          "missing device class name (unsupported request type?)")
            if minimum > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {claim.key}: number of requested devices {minimum} exceeds the "
                                      f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            self.constraints.append([self._constraint(claim, i, c) for i, c in enumerate(claim.constraints)])
        if not self.pools and all(claim.requests for claim in self.claims):
            return None  # nothing reachable: every request needs at least one device
        if not self._one(0, 0, 0, 0, sub_fixed=False, start=(0, 0, 0)):
            if any(pool.invalid for pool in self.pools):
                raise NodeAllocationFailed("invalid resource pools were encountered")
            return None
        return [self._result(ci) for ci in range(len(self.claims))]

    def _first_fit(self) -> list[AllocationResult] | Literal[_Needs.FULL_SEARCH] | None:
        """The search's answer for one claim with one plain ExactCount request (no constraints, admin
        access or capacity) while the devices met are plain too: with nothing to backtrack over, the
        search takes the first ``count`` free matching devices in order.  ``_GENERAL`` when the
        claim or a device met needs the full search (which then runs from the start)."""
        claim = self.claims[0]
        request = claim.requests[0].exactly if len(claim.requests) == 1 else None
        if (request is None or claim.constraints or request.allocation_mode != ALLOCATION_MODE_EXACT_COUNT
                or request.admin_access is not None or request.capacity is not None
                or not 0 < request.count <= ALLOCATION_RESULTS_MAX_SIZE):
            return _GENERAL
        key = (0, 0, 0)
        self._prepare(key, claim, request, None)  # refuses what the full search refuses, with its words
        if self.deadline is not None and self.deadline():
            raise TimeoutError  # the full search looks at the clock first too (bounded by the devices after)
        taints = self.a._features.device_taints
        skip_incomplete = self.a._features.incomplete_pools_skipped
        allocated = self.a._allocated.devices
        picked: list[_Picked] = []
        for pool in self.pools:
            if pool.invalid:
                return _GENERAL
            if pool.incomplete and skip_incomplete:
                continue
            held = allocated.in_pool(pool.driver, pool.name)
            for slice_ in pool.slices:
                if slice_.per_device_node_selection:
                    return _GENERAL
                for device in slice_.devices:
                    if (device.binding_conditions or device.consumes_counters or device.allow_multiple_allocations
                            or (taints and device.taints)):
                        return _GENERAL
                    if device.name in held:
                        continue
                    candidate = _Candidate((pool.driver, pool.name, device.name), device, slice_, pool)
                    if self._selectable(key, candidate):
                        picked.append(_Picked(candidate, request.name, None, None, False, request.tolerations))
                        if len(picked) == request.count:
                            self.results[0] = picked
                            return [self._result(0)]
        return None

    @staticmethod
    def _constraint(claim: ResourceClaim, index: int,
                    constraint: DeviceConstraint) -> _Constraint:
        if constraint.match_attribute is not None:
            return _MatchAttribute(frozenset(constraint.requests), constraint.match_attribute)
        if constraint.distinct_attribute is not None:
            return _DistinctAttribute(frozenset(constraint.requests), constraint.distinct_attribute)
        raise AllocationError(f"claim {claim.key}, constraint #{index}: empty constraint "
                              "(unsupported constraint type?)")

    def _prepare(self, key: tuple[int, int, int], claim: ResourceClaim, request: ExactRequest,
                 parent: str | None) -> int:
        if request.admin_access is not None and not self.a._features.admin_access:
            raise AllocationError(f"claim {claim.key}, request {request.name}: admin access is requested, "
                                  "but the feature is disabled")
        if request.capacity is not None and not self.a._features.consumable_capacity:
            kind = "request" if parent is None else "subrequest"
            raise AllocationError(f"claim {claim.key}, {kind} {request.name}: has capacity requests, "
                                  "but the DRAConsumableCapacity feature is disabled")
        if not request.device_class_name:
            raise AllocationError(f"claim {claim.key}, request {request.name}: missing device class name "
                                  "(unsupported request type?)")
        device_class = self.a._classes.get(request.device_class_name)
        if device_class is None:
            raise AllocationError(f"claim {claim.key}, request {request.name}: could not retrieve device class "
                                  f"{request.device_class_name}: deviceclass.resource.k8s.io "
                                  f'"{request.device_class_name}" not found')
        data = _RequestData(request, parent, device_class, request.count)
        self.data[key] = data
        if request.allocation_mode == ALLOCATION_MODE_ALL:
            data.all_devices = []
            for pool in self.pools:
                if pool.incomplete or pool.invalid:
                    state = "being updated" if pool.incomplete else "invalid"
                    raise AllocationError(f"claim {claim.key}, request {request.name}: asks for all devices, but "
                                          f"resource pool {pool.driver}/{pool.name} is currently {state}")
                for candidate in self._candidates(pool, 0, 0):
                    if self._selectable(key, candidate) and self._capacity_fits(data.request, candidate):
                        data.all_devices.append(candidate)
            data.num_devices = len(data.all_devices)
        elif request.allocation_mode != ALLOCATION_MODE_EXACT_COUNT:
            raise AllocationError(f"claim {claim.key}, request {request.name}: unsupported count mode "
                                  f"{request.allocation_mode}")
        return data.num_devices

    @staticmethod
    def _candidates(pool: Pool, slice_start: int, device_start: int) -> list[_Candidate]:
        out: list[_Candidate] = []
        for si in range(slice_start, len(pool.slices)):
            slice_ = pool.slices[si]
            first = device_start if si == slice_start else 0
            out.extend(_Candidate((pool.driver, pool.name, d.name), d, slice_, pool) for d in slice_.devices[first:])
        return out

    # --- matching ---------------------------------------------------------------------------

    def _selectable(self, key: tuple[int, int, int], candidate: _Candidate) -> bool:
        device = candidate.device
        if device.binding_conditions and not self.a._features.binding_conditions:
            return False
        memo = (candidate.id, *key)
        known = self.matches.get(memo)
        if known is not None:
            return known
        data = self.data[key]
        result = (self._selectors_match(key, candidate, data.device_class.selectors, data.device_class)
                  and self._selectors_match(key, candidate, data.request.selectors, None))
        if result and candidate.slice.per_device_node_selection:
            result = device_reaches(device, self.node)
        self.matches[memo] = result
        return result

    def _selectors_match(self, key: tuple[int, int, int], candidate: _Candidate, selectors: Sequence[str],
                         device_class: DeviceClass | None) -> bool:
        match = self.a._selectors.match
        for i, expression in enumerate(selectors):
            try:
                if not match(expression, candidate.device, candidate.id[0]):
                    return False
            except (SelectorError, SelectorRuntimeError) as exc:
                owner = (f"class {device_class.name}" if device_class is not None
                         else f"claim {self.claims[key[0]].key}")
                if isinstance(exc, SelectorError):
                    raise AllocationError(f"{owner}: selector #{i}: CEL compile error: {exc}") from exc
                raise AllocationError(f"{owner}: selector #{i}: CEL runtime error: {exc}") from exc
        return True

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a._allocated.devices or bool(self.allocating.get(device_id))

    def _capacity_fits(self, request: ExactRequest, candidate: _Candidate) -> bool:
        """Consumable capacity: the request names only capacities the device has, the device's request
        policies allow the amounts, and what is taken already leaves room for them."""
        if not self.a._features.consumable_capacity:
            return True
        device = candidate.device
        capacity = device.capacity
        requested = request.capacity or {}
        if any(name not in capacity for name in requested):
            return False
        allocated = self.a._allocated.capacity.get(candidate.id)
        allocating = self.allocating_capacity.get(candidate.id)
        policies = device.capacity_policies
        if not requested and not policies and allocated is None and allocating is None:
            return True  # each capacity taken whole from a device nobody uses
        for name, total in capacity.items():
            policy = policies.get(name)
            amount = consumed_amount(requested.get(name), total, policy)
            if violates(amount, policy):
                return False
            used = amount.amount
            for taken in (allocated, allocating):
                if taken is not None and name in taken:
                    used += taken[name].amount
            if used > total.amount:
                return False
        return True

    def _taint_blocks(self, device: Device, request: ExactRequest) -> bool:
        if not self.a._features.device_taints:
            return False
        for taint in device.taints:
            if taint.effect in ("NoSchedule", "NoExecute") and not any(
                    t.tolerates(taint) for t in request.tolerations):
                return True
        return False

    # --- counters (partitionable devices) -----------------------------------------------------

    def _available(self, pool: Pool) -> dict[str, dict[str, Quantity]]:
        found = self.available_counters.get(pool.name)
        if found is None:
            found = {name: dict(cs.counters) for name, cs in pool.counter_sets.items()}
            for slice_ in pool.all_slices:
                for device in slice_.devices:
                    device_id = (pool.driver, pool.name, device.name)
                    if device_id not in self.a._allocated.devices and device_id not in self.a._allocated.capacity:
                        continue
                    for consumption in device.consumes_counters:
                        counters = found.get(consumption.counter_set)
                        if counters is not None:
                            _add(counters, {n: q for n, q in consumption.counters.items() if n in counters}, -1)
            self.available_counters[pool.name] = found
        return found

    def _take_counters(self, candidate: _Candidate, sign: int) -> None:
        consumed = self.consumed_counters.setdefault(candidate.pool.name, {})
        for consumption in candidate.device.consumes_counters:
            _add(consumed.setdefault(consumption.counter_set, {}), consumption.counters, sign)

    def _counters_fit(self, candidate: _Candidate) -> bool:
        available = self._available(candidate.pool)
        self._take_counters(candidate, 1)
        consumed = self.consumed_counters[candidate.pool.name]
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            if any(q < used.get(name, _ZERO) for name, q in counters.items()):
                self._take_counters(candidate, -1)
                return False
        return True

    # --- the search ---------------------------------------------------------------------------

    def _one(self, ci: int, ri: int, si: int, di: int, *, sub_fixed: bool, start: tuple[int, int, int]) -> bool:
        if self.deadline is not None:
            self.calls += 1
            if not self.calls & 63 and self.deadline():
                raise TimeoutError
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, sub_fixed=False, start=(0, 0, 0))
            except _Stop:
                return False
        data = self.data[ci, ri, si]
        if not sub_fixed and data.parent is not None:
            all_exceeded = True
            for sub in range(len(claim.requests[ri].first_available)):
                try:
                    done = self._one(ci, ri, sub, 0, sub_fixed=True, start=(0, 0, 0))
                except _Stop:
                    continue
                all_exceeded = False
                if done:
                    self.chosen_sub[ci, ri] = sub
                    return True
            if all_exceeded:
                raise _Stop
            return False
        if data.all_devices is not None and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._one(ci, ri + 1, 0, 0, sub_fixed=False, start=(0, 0, 0))
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _Stop
        if data.all_devices is not None:
            undo = self._allocate_device(ci, ri, si, data.all_devices[di], must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, sub_fixed=sub_fixed, start=(0, 0, 0))
            except _Stop:
                undo()
                raise
            if not done:
                undo()
            return done
        request = data.request
        admin = bool(request.admin_access)
        allocated = self.a._allocated.devices
        allocating = self.allocating
        skip_incomplete = self.a._features.incomplete_pools_skipped
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.invalid or (pool.incomplete and skip_incomplete):
                continue
            held = allocated.in_pool(pool.driver, pool.name)
            slice_start = start[1] if pi == start[0] else 0
            for si2 in range(slice_start, len(pool.slices)):
                slice_ = pool.slices[si2]
                first = start[2] if pi == start[0] and si2 == start[1] else 0
                devices = slice_.devices
                for dj in range(first, len(devices)):
                    device = devices[dj]
                    device_id = (pool.driver, pool.name, device.name)
                    if admin:
                        if ci in allocating.get(device_id, ()):
                            continue
                    elif device.name in held or allocating.get(device_id):
                        continue
                    candidate = _Candidate(device_id, device, slice_, pool)
                    if not self._selectable((ci, ri, si), candidate):
                        continue
                    if not self._capacity_fits(request, candidate):
                        continue
                    undo = self._allocate_device(ci, ri, si, candidate, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._one(ci, ri, si, di + 1, sub_fixed=sub_fixed, start=(pi, si2, dj + 1))
                    except _Stop:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _allocate_device(self, ci: int, ri: int, si: int, candidate: _Candidate, *,
                         must: bool) -> Callable[[], None] | None:
        data = self.data[ci, ri, si]
        request = data.request
        device = candidate.device
        shared = self.a._features.consumable_capacity and device.allow_multiple_allocations
        admin = bool(request.admin_access)
        if not shared and admin and ci in self.allocating.get(candidate.id, ()):
            return None
        if not admin and self._in_use(candidate.id):
            return None
        if device.consumes_counters and not self.a._features.partitionable_devices:
            return None
        capacity_in_use = candidate.id in self.a._allocated.capacity or candidate.id in self.allocating_capacity
        counted = bool(device.consumes_counters) and not (shared and capacity_in_use)
        if counted and not self._counters_fit(candidate):
            return None
        base, sub = (data.parent, request.name) if data.parent is not None else (request.name, None)
        if self._taint_blocks(device, request):
            if counted:
                self._take_counters(candidate, -1)
            return None
        constraints = self.constraints[ci]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, candidate):
                if must:
                    raise AllocationError(
                        f"claim {self.claims[ci].key}, request {request.name}: cannot add device "
                        f"{'/'.join(candidate.id)} because a claim constraint would not be satisfied")
                for earlier in constraints[:i]:
                    earlier.remove(base, sub)
                if counted:
                    self._take_counters(candidate, -1)
                return None
        consumed = None
        if shared:
            if not self._capacity_fits(request, candidate):
                for constraint in constraints:
                    constraint.remove(base, sub)
                if counted:
                    self._take_counters(candidate, -1)
                return None
            consumed = consumed_capacity(request.capacity or {}, device)
            _add(self.allocating_capacity.setdefault(candidate.id, {}), consumed)
        else:
            self.allocating.setdefault(candidate.id, set()).add(ci)
        self.results[ci].append(_Picked(candidate, data.qualified_name, True if admin else None, consumed or None,
                                        shared, request.tolerations))

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base, sub)
            if consumed is not None:
                _add(self.allocating_capacity[candidate.id], consumed, -1)
                if all(q.amount == 0 for q in self.allocating_capacity[candidate.id].values()):
                    del self.allocating_capacity[candidate.id]
            else:
                self.allocating[candidate.id].discard(ci)
            if counted:
                self._take_counters(candidate, -1)
            self.results[ci].pop()

        return undo

    # --- results ------------------------------------------------------------------------------

    def _result(self, ci: int) -> AllocationResult:
        picked = self.results[ci]
        claim = self.claims[ci]
        devices = tuple(DeviceAllocation(p.request, *p.candidate.id, admin_access=p.admin_access,
                                         consumed_capacity=p.consumed,
                                         share_id=_share_id(claim, p.request, p.candidate.id, i) if p.shared else None,
                                         binding_conditions=p.candidate.device.binding_conditions,
                                         binding_failure_conditions=p.candidate.device.binding_failure_conditions,
                                         tolerations=p.tolerations)
                        for i, p in enumerate(picked))
        selector, raw = node_selector_for([p.candidate for p in picked], self.node, claim.name)
        return AllocationResult(devices, selector, raw, config=self._config(ci))

    def _chosen(self, ci: int, ri: int) -> _RequestData:
        """The data of request ``ri`` of claim ``ci``, of its chosen subrequest for a prioritized list."""
        return self.data[ci, ri, self.chosen_sub.get((ci, ri), 0)]

    def _config(self, ci: int) -> tuple[DeviceConfig, ...]:
        """The allocation's ``devices.config``, as kube's allocator builds it: each class's configs once (naming
        every request served from the class), then each claim config once per request it names (a config
        naming none applies to all and comes once)."""
        claim = self.claims[ci]
        by_class: dict[str, list[list[str]]] = {}
        ordered: list[tuple[DeviceConfig, list[str]]] = []
        for ri in range(len(claim.requests)):
            data = self._chosen(ci, ri)
            known = by_class.get(data.device_class.name)
            if known is not None:
                for names in known:
                    names.append(data.qualified_name)
                continue
            entries = [(config, [data.qualified_name]) for config in data.device_class.config]
            by_class[data.device_class.name] = [names for _, names in entries]
            ordered.extend(entries)
        out = [attrs.evolve(config, requests=tuple(names), source=CONFIG_FROM_CLASS) for config, names in ordered]
        for config in claim.config:
            from_claim = attrs.evolve(config, source=CONFIG_FROM_CLAIM)
            if not config.requests:
                out.append(from_claim)
                continue
            for ri, request in enumerate(claim.requests):
                data = self._chosen(ci, ri)
                if request.name in config.requests or (data.parent is not None
                                                       and data.qualified_name in config.requests):
                    out.append(from_claim)
        return tuple(out)


def _share_id(claim: ResourceClaim, request: str, device: DeviceID, index: int) -> str:
    """The share ID of one allocation of a shareable device.  kube draws a random UID; this one is derived
    from what it names, so runs stay reproducible and no two results of a claim share one."""
    return str(uuid.uuid5(_SHARE_NAMESPACE, "/".join((claim.uid or claim.key, request, *device, str(index)))))


@functools.lru_cache(maxsize=8192)
def _node_local(node_name: str) -> tuple[NodeSelector, Mapping[str, object]]:
    """The selector of an allocation bound to one node (``metadata.name In [node]``), shared per node."""
    raw = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    term = NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", (node_name,)),))
    return NodeSelector((term,)), raw


def _requirement_key(requirement: Mapping[str, object]) -> tuple[object, object, frozenset[str]]:
    values = requirement.get("values") or []
    return requirement.get("key"), requirement.get("operator"), frozenset(str(v) for v in values)  # type: ignore[attr-defined]


def node_selector_for(
    picked: Sequence[_Candidate], node: Node, claim: str
) -> tuple[NodeSelector | None, Mapping[str, object] | None]:
    """The allocation's node selector (model, v1 dict): the node itself when a device is node-local,
    else the union of the slices' selectors, else ``None`` (reachable everywhere).  kube cannot merge
    selectors of several terms: claim ``claim``'s allocation is then an error."""
    fields: list[Mapping[str, object]] = []
    expressions: list[Mapping[str, object]] = []
    for candidate in picked:
        if candidate.slice.per_device_node_selection:
            node_name, binds = candidate.device.node_name, candidate.device.binds_to_node
            raw = candidate.device.node_selector_raw
        else:
            node_name, binds = candidate.slice.node_name, candidate.device.binds_to_node
            raw = candidate.slice.node_selector_raw
        if node_name is not None or binds:
            return _node_local(node.name)
        terms = raw.get("nodeSelectorTerms") if raw is not None else None
        if isinstance(terms, list) and len(terms) > 1:
            raise AllocationError(f"create NodeSelector for claim {claim}: unsupported ResourceSlice.NodeSelector "
                                  f"with {len(terms)} terms")
        if isinstance(terms, list) and len(terms) == 1 and isinstance(terms[0], Mapping):
            for target, key in ((fields, "matchFields"), (expressions, "matchExpressions")):
                for requirement in terms[0].get(key) or []:
                    if _requirement_key(requirement) not in {_requirement_key(r) for r in target}:
                        target.append(requirement)
    if not fields and not expressions:
        return None, None
    term: dict[str, object] = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    merged: dict[str, object] = {"nodeSelectorTerms": [term]}
    return node_selector(Reader("AllocationResult"), merged, "nodeSelector"), merged
