"""What the allocator's callers share with it without needing the search itself: its errors, its feature
switches, the devices already allocated, and the signature that makes two allocations interchangeable.

Kept apart from :mod:`kschedlib.dra._allocator` so that the DRA store and the DynamicResources plugin can be
built, and pods without claims scheduled, without importing the allocator.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.quantity import Quantity

if TYPE_CHECKING:
    from kschedlib.model.dra import ExactRequest, ResourceClaim

__all__ = ["AllocatedState", "AllocationError", "DeviceID", "Features", "HeldDevices", "NodeAllocationFailed",
           "claims_signature"]

DeviceID = tuple[str, str, str]
"""(driver, pool, device)."""


class AllocationError(Exception):
    """The claims cannot be allocated anywhere as written (kube: an Error from Filter)."""


class NodeAllocationFailed(AllocationError):
    """Allocation failed on this node only (invalid pools): kube rejects the node with this text."""


@final
@attrs.frozen(slots=True, repr=False)
class Features(FieldsRepr):
    """The allocator features kube-scheduler v1.36 turns on by default."""

    admin_access: bool = True
    prioritized_list: bool = True
    device_taints: bool = True
    partitionable_devices: bool = True
    consumable_capacity: bool = True
    binding_conditions: bool = True
    incomplete_pools_skipped: bool = True
    """v1.35+: no device comes from an incomplete pool (before, only ``All`` requests refused one)."""


_NO_NAMES: Final[frozenset[str]] = frozenset()


@final
class HeldDevices(AbstractSet[DeviceID]):
    """A set of devices kept as (driver, pool) -> device names.

    The store's snapshot after one claim changes copies one small set per changed pool rather than
    every device in use, and the allocator, which looks at one pool at a time, tests names in it.
    """

    __slots__ = ("_by_pool",)

    def __init__(self, by_pool: Mapping[tuple[str, str], frozenset[str]] | None = None) -> None:
        self._by_pool: Mapping[tuple[str, str], frozenset[str]] = by_pool if by_pool is not None else {}

    @classmethod
    def of(cls, devices: Iterable[DeviceID]) -> HeldDevices:
        by_pool: dict[tuple[str, str], set[str]] = {}
        for driver, pool, name in devices:
            by_pool.setdefault((driver, pool), set()).add(name)
        return cls({key: frozenset(names) for key, names in by_pool.items()})

    def in_pool(self, driver: str, pool: str) -> frozenset[str]:
        """The names of the pool's devices in the set."""
        return self._by_pool.get((driver, pool), _NO_NAMES)

    def __contains__(self, device: object) -> bool:
        if not isinstance(device, tuple) or len(device) != 3:
            return False
        return device[2] in self._by_pool.get((device[0], device[1]), _NO_NAMES)

    def __iter__(self) -> Iterator[DeviceID]:
        for (driver, pool), names in self._by_pool.items():
            for name in names:
                yield driver, pool, name

    def __len__(self) -> int:
        return sum(map(len, self._by_pool.values()))

    def __eq__(self, other: object) -> bool:
        """Equal to any set of the same devices (a ``frozenset`` too)."""
        return AbstractSet.__eq__(self, other)

    def __hash__(self) -> int:
        return self._hash()

    def __repr__(self) -> str:
        return f"HeldDevices({sorted(self)!r})"


def _held(devices: Iterable[DeviceID]) -> HeldDevices:
    return devices if isinstance(devices, HeldDevices) else HeldDevices.of(devices)


@final
@attrs.frozen(slots=True, repr=False)
class AllocatedState(FieldsRepr):
    """Devices already allocated to claims (admin-access results excluded), and capacity consumed
    from devices that allow several allocations."""

    devices: HeldDevices = attrs.field(factory=HeldDevices, converter=_held)
    capacity: Mapping[DeviceID, Mapping[str, Quantity]] = attrs.field(factory=dict)


def _request_signature(request: ExactRequest) -> Hashable:
    capacity = tuple(sorted(request.capacity.items())) if request.capacity is not None else None
    return (request.name, request.device_class_name, request.selectors, request.allocation_mode, request.count,
            request.admin_access, request.tolerations, capacity)


def claims_signature(claims: Sequence[ResourceClaim]) -> Hashable:
    """What an allocation depends on in ``claims``: two lists with equal signatures get equal results on a node.
    Claim names and namespaces are left out: results carry them only in share IDs, so a result reused for
    another claim keeps the share IDs made for the first (no decision reads them)."""
    return tuple(
        (tuple((r.name, _request_signature(r.exactly) if r.exactly is not None else None,
                tuple(_request_signature(sub) for sub in r.first_available)) for r in claim.requests),
         claim.constraints, claim.config)
        for claim in claims)
