"""DraStore: the cluster's DeviceClasses, ResourceSlices, ResourceClaims and templates.

Claims change while a simulation runs: Reserve records an allocation in flight (kube's assume
cache), PreBind writes it (with the pod in ``reservedFor``), Unreserve drops it, and a pod that goes
releases its reservations (a claim reserved for nobody is deallocated, as kube's resourceclaim
controller does).  Devices held by an allocated claim are in use for every later pod.

Every write that kube makes through its API server (PreBind, PostFilter's deallocation, Unreserve
after PreBind, the controller's release) is logged as ``(old, new)`` for the scheduler to deliver as a
ResourceClaim event; the in-flight allocations of Reserve/Unreserve are not (kube keeps them in memory
and sends none).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, cast, final

import attrs

from kschedlib.dra._allocated import AllocatedState, DeviceID, HeldDevices
from kschedlib.dra._pools import PoolIndex
from kschedlib.model._kinds import dra_kind, is_dra_object
from kschedlib.model.objects import Pod
from kschedlib.model.quantity import Quantity

if TYPE_CHECKING:
    from kschedlib.model.dra import AllocationResult, DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice

__all__ = ["EXTENDED_CLAIM_ANNOTATION", "EXTENDED_CLAIM_SUFFIX", "ClaimProblem", "DraStore", "pod_claim_name"]

_ZERO: Final = Quantity.from_int(0)
_NO_NAMES: Final[frozenset[str]] = frozenset()
EXTENDED_CLAIM_SUFFIX: Final = "-extended-resources"
"""The name of the claim DynamicResources makes for a pod's DRA-backed extended resources: pod name + this."""


EXTENDED_CLAIM_ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
"""Set to ``"true"`` on the claim made for a pod's DRA-backed extended resources (the pod is its controller)."""


def _extended_owner(claim: ResourceClaim) -> tuple[str, str] | None:
    """(namespace, controller uid) of an extended-resource claim; ``None`` for any other claim."""
    if claim.annotations.get(EXTENDED_CLAIM_ANNOTATION) != "true":
        return None
    for ref in claim.owner_references:
        if ref.controller:
            return claim.namespace, ref.uid
    return None


class ClaimProblem(Exception):
    """A pod claim that cannot be resolved (DynamicResources rejects the pod with this text)."""


def pod_claim_name(pod: Pod, pod_claim: str, direct: str | None) -> str | None:
    """The ResourceClaim a pod claim names: ``resourceClaimName``, else the one generated from the template
    (``status.resourceClaimStatuses``; ``None`` there means no claim is needed)."""
    if direct is not None:
        return direct
    for name, generated in pod.resource_claim_statuses:
        if name == pod_claim:
            return generated
    raise ClaimProblem(f'pod "{pod.key}": ResourceClaim not created yet')


@final
class _Holdings:
    """How many claims hold each device, and the capacity they consume from shareable devices."""

    __slots__ = ("allocations", "by_pool", "capacity", "devices", "log", "pool_versions")

    def __init__(self) -> None:
        self.allocations: dict[str, AllocationResult] = {}
        self.devices: Counter[DeviceID] = Counter()
        self.by_pool: dict[tuple[str, str], frozenset[str]] = {}
        """(driver, pool) -> the names of its devices whose count is positive, kept as counts change
        (a snapshot copies this dict; only the changed pool's set is rebuilt per change)."""
        self.capacity: dict[DeviceID, dict[str, Quantity]] = {}
        self.pool_versions: Counter[tuple[str, str]] = Counter()
        """(driver, pool) -> how often devices of the pool were taken or given back."""
        self.log: list[tuple[str, str]] = []
        """The (driver, pool) of every such change, in order (read by :meth:`DraStore.pools_changed`)."""

    def copy(self) -> _Holdings:
        other = _Holdings()
        other.allocations = dict(self.allocations)
        other.devices = Counter(self.devices)
        other.by_pool = dict(self.by_pool)
        other.capacity = {device: dict(amounts) for device, amounts in self.capacity.items()}
        other.pool_versions = Counter(self.pool_versions)
        return other

    def update(self, key: str, allocation: AllocationResult | None) -> bool:
        """Make ``allocation`` the one claim ``key`` holds; whether anything changed."""
        old = self.allocations.get(key)
        if old is allocation:
            return False
        if old is not None and allocation is not None and old.devices is allocation.devices:
            self.allocations[key] = allocation  # the same devices (PreBind stamped the allocation time)
            return False
        if old is not None:
            self._count(old, -1)
        if allocation is None:
            self.allocations.pop(key, None)
        else:
            self.allocations[key] = allocation
            self._count(allocation, 1)
        return True

    def _count(self, allocation: AllocationResult, sign: int) -> None:
        for result in allocation.devices:
            pool = result.driver, result.pool
            self.pool_versions[pool] += 1
            self.log.append(pool)
            if result.consumed_capacity is not None:
                used = self.capacity.setdefault(result.device_id, {})
                for name, q in result.consumed_capacity.items():
                    total = used.get(name, _ZERO).amount + sign * q.amount
                    if total:
                        used[name] = Quantity(total, q.format)
                    else:
                        used.pop(name, None)
            elif not result.admin_access:
                self._hold(result.device_id, sign)

    def _hold(self, device: DeviceID, sign: int) -> None:
        count = self.devices[device] = self.devices[device] + sign
        pool, name = device[:2], device[2]
        names = self.by_pool.get(pool, _NO_NAMES)
        if count > 0:
            if name not in names:
                self.by_pool[pool] = names | {name}
        elif name in names:
            rest = names - {name}
            if rest:
                self.by_pool[pool] = rest
            else:
                del self.by_pool[pool]


@final
class DraStore:
    """Read by the DynamicResources plugin through ``handle.dra``."""

    __slots__ = ("_allocated", "_epoch", "_extended", "_held", "_pool_index", "claims", "classes",
                 "classes_version", "in_flight", "pending_writes", "slices", "templates")
    MAX_LOG: Final = 65_536
    """Pool-use changes kept for :meth:`pools_changed`; beyond it the log starts again (readers see "all")."""

    def __init__(self) -> None:
        self.classes: dict[str, DeviceClass] = {}
        self.slices: dict[str, ResourceSlice] = {}
        self.claims: dict[str, ResourceClaim] = {}
        self.templates: dict[str, ResourceClaimTemplate] = {}
        self.in_flight: dict[str, ResourceClaim] = {}
        """claim uid -> the claim with the allocation a reserved pod is about to write."""
        self._pool_index: PoolIndex | None = None
        self._allocated: AllocatedState | None = None
        self._held = _Holdings()
        self.classes_version = 0
        """Bumped whenever a DeviceClass is added or replaced."""
        self._epoch = object()
        """Identifies this store's change log (a copy, or a restarted log, has another)."""
        self.pending_writes: deque[tuple[ResourceClaim | None, ResourceClaim | None]] = deque()
        """Claims written since :meth:`take_written` was last called: (before, after; None if absent).  A deque:
        PreBind may write on a binding thread while the scheduler's thread takes them."""
        self._extended: dict[tuple[str, str], str] = {}
        """(namespace, pod uid) -> the key of the pod's extended-resource claim (see :meth:`extended_claim`)."""

    @property
    def epoch(self) -> object:
        """What a :meth:`pools_changed` position is relative to: equal epochs, same log."""
        return self._epoch

    def add(self, obj: object) -> bool:
        """Record (or replace) ``obj`` if it is a DRA object; returns whether it was one."""
        if not is_dra_object(obj):
            return False
        from kschedlib.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice

        if isinstance(obj, DeviceClass):
            self.classes[obj.name] = obj
            self.classes_version += 1
        elif isinstance(obj, ResourceSlice):
            self.slices[obj.name] = obj
            self._pool_index = None
        elif isinstance(obj, ResourceClaim):
            self._index(self.claims.get(obj.key), obj)
            self.claims[obj.key] = obj
            self._refresh(obj.key)
        elif isinstance(obj, ResourceClaimTemplate):
            self.templates[obj.key] = obj
        else:
            return False
        return True

    def remove(self, obj: object) -> object | None:
        """Forget the stored DRA object of ``obj``'s kind and name (deleted in the cluster); returns it."""
        if not is_dra_object(obj):
            return None
        from kschedlib.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice

        if isinstance(obj, DeviceClass):
            old: object | None = self.classes.pop(obj.name, None)
            self.classes_version += old is not None
        elif isinstance(obj, ResourceSlice):
            old = self.slices.pop(obj.name, None)
            self._pool_index = None
        elif isinstance(obj, ResourceClaim):
            claim = self.claims.pop(obj.key, None)
            self._index(claim, None)
            self._refresh(obj.key)
            old = claim
        elif isinstance(obj, ResourceClaimTemplate):
            old = self.templates.pop(obj.key, None)
        else:
            return None
        return old

    def stored(self, obj: DeviceClass | ResourceSlice | ResourceClaim) -> object | None:
        """The version of ``obj`` (same kind and name) this store holds, if any."""
        kind = dra_kind(obj)
        if kind == "ResourceClaim":
            return self.claims.get(cast("ResourceClaim", obj).key)
        if kind == "ResourceSlice":
            return self.slices.get(obj.name)
        return self.classes.get(obj.name)

    def take_written(self) -> list[tuple[ResourceClaim | None, ResourceClaim | None]]:
        """The claim writes logged since the last call (oldest first), forgetting them."""
        pending = self.pending_writes
        written = []
        while pending:
            written.append(pending.popleft())
        return written

    def _write(self, key: str, claim: ResourceClaim | None) -> None:
        """Store (or, with ``None``, drop) the claim ``key`` as an API write, logging the change."""
        old = self.claims.get(key)
        self._index(old, claim)
        if claim is None:
            self.claims.pop(key, None)
        else:
            self.claims[key] = claim
        self._refresh(key)
        if old != claim:
            self.pending_writes.append((old, claim))

    def copy(self) -> DraStore:
        other = DraStore()
        other.classes = dict(self.classes)
        other.slices = dict(self.slices)
        other.claims = dict(self.claims)
        other.templates = dict(self.templates)
        other.in_flight = dict(self.in_flight)
        other._pool_index = self._pool_index
        other._allocated = self._allocated
        other._held = self._held.copy()
        other.classes_version = self.classes_version
        other._extended = dict(self._extended)
        return other

    def _index(self, old: ResourceClaim | None, new: ResourceClaim | None) -> None:
        """Keep :attr:`_extended` up to date as claim ``old`` becomes ``new`` (``None``: absent)."""
        if old is not None and (owner := _extended_owner(old)) is not None and self._extended.get(owner) == old.key:
            del self._extended[owner]
        if new is not None and (owner := _extended_owner(new)) is not None:
            self._extended[owner] = new.key

    def extended_claim(self, pod: Pod) -> ResourceClaim | None:
        """The claim made in an earlier cycle for the pod's DRA-backed extended resources: annotated
        ``resource.kubernetes.io/extended-resource-claim: "true"``, with the pod (name and uid) as controller."""
        key = self._extended.get((pod.namespace, pod.uid))
        claim = self.claims.get(key) if key is not None else None
        if claim is None or not any(ref.controller and ref.uid == pod.uid and ref.name == pod.name
                                    for ref in claim.owner_references):
            return None
        return claim

    def delete(self, claim: ResourceClaim) -> None:
        """Delete ``claim`` (PostFilter drops a stale extended-resource claim so the next attempt starts anew)."""
        self._write(claim.key, None)

    def pool_index(self) -> PoolIndex:
        """The slices grouped by pool and node, rebuilt only after a ResourceSlice changes."""
        if self._pool_index is None:
            self._pool_index = PoolIndex(tuple(self.slices.values()))
        return self._pool_index

    def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def has_pending_allocation(self, uid: str) -> bool:
        return uid in self.in_flight

    def allocated_state(self) -> AllocatedState:
        """Devices held by allocated claims (including allocations in flight), as the allocator sees them.

        Kept up to date claim by claim (a simulation changes one claim per bound pod), so reading it
        costs the size of the answer, not a pass over every claim."""
        if self._allocated is None:
            held = self._held
            capacity = {device: dict(amounts) for device, amounts in held.capacity.items() if amounts}
            self._allocated = AllocatedState(HeldDevices(dict(held.by_pool)), capacity)
        return self._allocated

    def pools_changed(self, since: object) -> tuple[object, frozenset[tuple[str, str]] | None]:
        """The (driver, pool)s whose use changed since ``since`` (a position this method returned
        before), and the position now; ``None`` instead of pools when ``since`` is not of this log."""
        log = self._held.log
        if len(log) > self.MAX_LOG:
            log.clear()
            self._epoch = object()
        now = (self._epoch, len(log))
        if not isinstance(since, tuple) or len(since) != 2 or since[0] is not self._epoch:
            return now, None
        return now, frozenset(log[since[1]:])

    def pools_version(self, pools: Sequence[tuple[str, str]]) -> int:
        """The summed versions of the use of these (driver, pool)s.  Each version only grows, so an equal sum
        means the same devices are in use there (one number to compare per node)."""
        get = self._held.pool_versions.get
        total = 0
        for pool in pools:
            total += get(pool, 0)
        return total

    def _refresh(self, key: str) -> None:
        """Account for a change of the claim ``key`` or of its allocation in flight."""
        claim = self.claims.get(key)
        flight = self.in_flight.get(claim.uid) if claim is not None and claim.uid else None
        if flight is None:
            flight = self.in_flight.get(key)
        holder = flight if flight is not None else claim
        current = holder.allocation if holder is not None else None
        if self._held.update(key, current):
            self._allocated = None

    def extended_resource_classes(self) -> Mapping[str, DeviceClass]:
        """Extended resource name -> the DeviceClass that provides it (explicit names win over the implicit
        ``deviceclass.resource.kubernetes.io/<class>``)."""
        out: dict[str, DeviceClass] = {f"deviceclass.resource.kubernetes.io/{c.name}": c
                                       for c in self.classes.values()}
        for device_class in sorted(self.classes.values(), key=lambda c: c.name):
            if device_class.extended_resource_name:
                out.setdefault(device_class.extended_resource_name, device_class)
        return out

    # --- writes -------------------------------------------------------------------------------

    def assume(self, claim: ResourceClaim) -> None:
        """Hold ``claim`` (with its new allocation) in flight until PreBind writes it or Unreserve drops it."""
        self.in_flight[claim.uid or claim.key] = claim
        self._refresh(claim.key)

    def forget(self, claim: ResourceClaim) -> None:
        if self.in_flight.pop(claim.uid or claim.key, None) is not None:
            self._refresh(claim.key)

    def deallocate(self, claim: ResourceClaim) -> None:
        """Drop the claim's allocation, reservations and device status (PostFilter, or the last consumer gone)."""
        self._write(claim.key, attrs.evolve(claim, allocation=None, reserved_for=(), devices=()))

    @staticmethod
    def reservation(claim: ResourceClaim, pod: Pod, allocated_at: float | None = None) -> ResourceClaim:
        """``claim`` reserved for ``pod`` (PreBind): the pod added to ``reservedFor``, and ``allocated_at`` as its
        allocation time unless it has one; ``claim`` itself when it is reserved for the pod already."""
        if any(c.uid == pod.uid for c in claim.reserved_for):
            return claim
        allocation = claim.allocation
        if allocated_at is not None and allocation is not None and allocation.allocation_timestamp is None:
            claim = attrs.evolve(claim, allocation=attrs.evolve(allocation, allocation_timestamp=allocated_at))
        from kschedlib.model.dra import ClaimConsumer

        return attrs.evolve(claim, reserved_for=(*claim.reserved_for, ClaimConsumer(pod.name, pod.uid)))

    def bind(self, claim: ResourceClaim, pod: Pod, allocated_at: float | None = None) -> ResourceClaim:
        """Write the claim's allocation and reserve it for ``pod`` (PreBind, see :meth:`reservation`)."""
        written = self.reservation(claim, pod, allocated_at)
        self.commit(claim, written)
        return written

    def commit(self, assumed: ResourceClaim, written: ResourceClaim) -> None:
        """``assumed`` (held in flight since Reserve, if it was) was written as ``written``."""
        self.in_flight.pop(assumed.uid or assumed.key, None)
        if written.key != assumed.key:  # made under a generated name: the in-memory one counts no more
            self._refresh(assumed.key)
        self._write(written.key, written)

    def record(self, key: str, claim: ResourceClaim | None) -> None:
        """The API server now has ``claim`` under ``key`` (``None``: deleted), as one of the scheduler's writes."""
        self._write(key, claim)

    def reserved_claims(self, pod: Pod) -> list[ResourceClaim]:
        """The claims the pod names that list it in ``reservedFor``."""
        _, *keys = self._claim_keys(pod)
        claims = (self.claims.get(key) for key in keys)
        return [c for c in claims if c is not None and any(r.uid == pod.uid for r in c.reserved_for)]

    def release(self, pod: Pod, claim_keys: Iterable[str]) -> None:
        """``pod`` is gone: drop its reservations; a claim reserved for nobody is deallocated."""
        for key in claim_keys:
            claim = self.claims.get(key)
            if claim is None:
                continue
            consumers = tuple(c for c in claim.reserved_for if c.uid != pod.uid)
            if consumers == claim.reserved_for:
                continue
            self._write(key, attrs.evolve(claim, reserved_for=consumers,
                                          allocation=claim.allocation if consumers else None,
                                          devices=claim.devices if consumers else ()))

    @staticmethod
    def _claim_keys(pod: Pod) -> list[str]:
        """The keys of the pod's extended-resource claim (first) and of the claims it names."""
        status = pod.extended_resource_claim_status
        extended = status.resource_claim_name if status is not None else f"{pod.name}{EXTENDED_CLAIM_SUFFIX}"
        keys = [f"{pod.namespace}/{extended}"]
        for pod_claim in pod.resource_claims:
            try:
                name = pod_claim_name(pod, pod_claim.name, pod_claim.resource_claim_name)
            except ClaimProblem:
                continue
            if name is not None:
                keys.append(f"{pod.namespace}/{name}")
        return keys

    def release_pod(self, pod: Pod) -> None:
        """``pod`` is gone: release the claims it names and its extended-resource claim, then delete the latter
        (its controller is gone: kube's garbage collector deletes it once the claim controller released it)."""
        keys = self._claim_keys(pod)
        owned = self.extended_claim(pod)
        if owned is not None and owned.key not in keys:
            keys.append(owned.key)
        self.release(pod, keys)
        if owned is not None:
            self._write(owned.key, None)

    def unreserve_pod(self, pod: Pod) -> None:
        """Undo PreBind for ``pod`` (a later step failed), as kube's Unreserve does: its claims keep their
        allocations but no longer list it in ``reservedFor``; its extended-resource claim is deleted."""
        extended, *keys = self._claim_keys(pod)
        if extended in self.claims:
            self._write(extended, None)
        for key in keys:
            claim = self.claims.get(key)
            if claim is not None and any(c.uid == pod.uid for c in claim.reserved_for):
                self._write(key, attrs.evolve(claim, reserved_for=tuple(
                    c for c in claim.reserved_for if c.uid != pod.uid)))

    def free_devices(self, node_name: str) -> dict[str, list[str]]:
        """Per driver/pool, the devices of slices on ``node_name`` that no claim holds (simulation report)."""
        held = self.allocated_state().devices
        free: dict[str, list[str]] = {}
        for slice_ in self.slices.values():
            if slice_.node_name != node_name:
                continue
            for device in slice_.devices:
                if (slice_.driver, slice_.pool, device.name) not in held:
                    free.setdefault(f"{slice_.driver}/{slice_.pool}", []).append(device.name)
        return free
