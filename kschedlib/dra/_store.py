"""DraStore: the cluster's DeviceClasses, ResourceSlices, ResourceClaims and templates.

Claims change while a simulation runs: Reserve records an allocation in flight (kube's assume
cache), PreBind writes it (with the pod in ``reservedFor``), Unreserve drops it, and a pod that goes
releases its reservations (a claim reserved for nobody is deallocated, as kube's resourceclaim
controller does).  Devices held by an allocated claim are in use for every later pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final, final

import attrs

from kschedlib.dra._allocator import AllocatedState, DeviceID
from kschedlib.dra._pools import PoolIndex
from kschedlib.model.dra import ClaimConsumer, DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from kschedlib.model.objects import Pod
from kschedlib.model.quantity import Quantity

__all__ = ["EXTENDED_CLAIM_SUFFIX", "ClaimProblem", "DraStore", "pod_claim_name"]

EXTENDED_CLAIM_SUFFIX: Final = "-extended-resources"
"""The name of the claim DynamicResources makes for a pod's DRA-backed extended resources: pod name + this."""


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
class DraStore:
    """Read by the DynamicResources plugin through ``handle.dra``."""

    __slots__ = ("_pool_index", "claims", "classes", "in_flight", "slices", "templates")

    def __init__(self) -> None:
        self.classes: dict[str, DeviceClass] = {}
        self.slices: dict[str, ResourceSlice] = {}
        self.claims: dict[str, ResourceClaim] = {}
        self.templates: dict[str, ResourceClaimTemplate] = {}
        self.in_flight: dict[str, ResourceClaim] = {}
        """claim uid -> the claim with the allocation a reserved pod is about to write."""
        self._pool_index: PoolIndex | None = None

    def add(self, obj: object) -> bool:
        """Record (or replace) ``obj`` if it is a DRA object; returns whether it was one."""
        if isinstance(obj, DeviceClass):
            self.classes[obj.name] = obj
        elif isinstance(obj, ResourceSlice):
            self.slices[obj.name] = obj
            self._pool_index = None
        elif isinstance(obj, ResourceClaim):
            self.claims[obj.key] = obj
        elif isinstance(obj, ResourceClaimTemplate):
            self.templates[obj.key] = obj
        else:
            return False
        return True

    def copy(self) -> DraStore:
        other = DraStore()
        other.classes = dict(self.classes)
        other.slices = dict(self.slices)
        other.claims = dict(self.claims)
        other.templates = dict(self.templates)
        other.in_flight = dict(self.in_flight)
        other._pool_index = self._pool_index
        return other

    def pool_index(self) -> PoolIndex:
        """The slices grouped by pool and node, rebuilt only after a ResourceSlice changes."""
        if self._pool_index is None:
            self._pool_index = PoolIndex(tuple(self.slices.values()))
        return self._pool_index

    def get_claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get(f"{namespace}/{name}")

    def has_pending_allocation(self, uid: str) -> bool:
        return uid in self.in_flight

    def _effective(self) -> Iterator[ResourceClaim]:
        for claim in self.claims.values():
            yield self.in_flight.get(claim.uid, claim) if claim.uid else claim

    def allocated_state(self) -> AllocatedState:
        """Devices held by allocated claims (including allocations in flight), as the allocator sees them."""
        devices: set[DeviceID] = set()
        capacity: dict[DeviceID, dict[str, Quantity]] = {}
        seen: set[str] = set()
        claims = list(self._effective())
        claims.extend(c for uid, c in self.in_flight.items() if not any(x.uid == uid for x in self.claims.values()))
        for claim in claims:
            if claim.allocation is None or claim.key in seen:
                continue
            seen.add(claim.key)
            for result in claim.allocation.devices:
                if result.consumed_capacity is not None:
                    used = capacity.setdefault(result.device_id, {})
                    for name, q in result.consumed_capacity.items():
                        used[name] = Quantity(used.get(name, Quantity.from_int(0)).amount + q.amount, q.format)
                elif not result.admin_access:
                    devices.add(result.device_id)
        return AllocatedState(frozenset(devices), capacity)

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
        self.in_flight[claim.uid or claim.key] = claim

    def forget(self, claim: ResourceClaim) -> None:
        self.in_flight.pop(claim.uid or claim.key, None)

    def bind(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        """Write the claim's allocation and reserve it for ``pod`` (PreBind)."""
        self.in_flight.pop(claim.uid or claim.key, None)
        consumers = claim.reserved_for
        if not any(c.uid == pod.uid for c in consumers):
            consumers = (*consumers, ClaimConsumer(pod.name, pod.uid))
        written = attrs.evolve(claim, reserved_for=consumers)
        self.claims[written.key] = written
        return written

    def release(self, pod: Pod, claim_keys: Iterable[str]) -> None:
        """``pod`` is gone: drop its reservations; a claim reserved for nobody is deallocated."""
        for key in claim_keys:
            claim = self.claims.get(key)
            if claim is None:
                continue
            consumers = tuple(c for c in claim.reserved_for if c.uid != pod.uid)
            if consumers == claim.reserved_for:
                continue
            self.claims[key] = attrs.evolve(claim, reserved_for=consumers,
                                            allocation=claim.allocation if consumers else None)

    def release_pod(self, pod: Pod) -> None:
        """``pod`` is gone (or its binding was undone): release the claims it names and its extended-resource claim."""
        keys = [f"{pod.namespace}/{pod.name}{EXTENDED_CLAIM_SUFFIX}"]
        for pod_claim in pod.resource_claims:
            try:
                name = pod_claim_name(pod, pod_claim.name, pod_claim.resource_claim_name)
            except ClaimProblem:
                continue
            if name is not None:
                keys.append(f"{pod.namespace}/{name}")
        self.release(pod, keys)

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
