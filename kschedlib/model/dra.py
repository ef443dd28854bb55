"""Dynamic Resource Allocation objects (``resource.k8s.io/v1``) as the scheduler reads them.

DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate, reduced to the fields
kube-scheduler's DynamicResources plugin and its structured allocator look at.  Frozen data:
an allocation is a new :class:`ResourceClaim` made with :func:`attrs.evolve`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.labels import NodeSelector
from kschedlib.model.objects import OwnerReference
from kschedlib.model.quantity import Quantity

__all__ = [
    "ALLOCATION_MODE_ALL",
    "ALLOCATION_MODE_EXACT_COUNT",
    "CONFIG_FROM_CLAIM",
    "CONFIG_FROM_CLASS",
    "AllocatedDeviceStatus",
    "AllocationResult",
    "CapacityRequestPolicy",
    "ClaimConsumer",
    "CounterSet",
    "Device",
    "DeviceAllocation",
    "DeviceAttribute",
    "DeviceClass",
    "DeviceCondition",
    "DeviceConfig",
    "DeviceConstraint",
    "DeviceCounterConsumption",
    "DeviceRequest",
    "DeviceTaint",
    "DeviceToleration",
    "ExactRequest",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "ResourceSlice",
]

ALLOCATION_MODE_EXACT_COUNT: Final = "ExactCount"
ALLOCATION_MODE_ALL: Final = "All"
CONFIG_FROM_CLASS: Final = "FromClass"
CONFIG_FROM_CLAIM: Final = "FromClaim"

AttributeKind = Literal["int", "bool", "string", "version"]


@final
@attrs.frozen(slots=True, repr=False)
class DeviceAttribute(FieldsRepr):
    """One typed device attribute (exactly one of int, bool, string, version in the API)."""

    kind: AttributeKind
    value: int | bool | str


@final
@attrs.frozen(slots=True, repr=False)
class DeviceTaint(FieldsRepr):
    key: str
    value: str = ""
    effect: str = ""


@final
@attrs.frozen(slots=True, repr=False)
class DeviceToleration(FieldsRepr):
    """A request's toleration of device taints (``operator`` Equal or Exists)."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None
    """How long a NoExecute taint is tolerated (the scheduler does not read it; kept for the allocation)."""

    def tolerates(self, taint: DeviceTaint) -> bool:
        """kube's ToleratesTaint for devices: effect, key and (for Equal) value must agree."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.operator in ("Equal", "") and self.value == taint.value


@final
@attrs.frozen(slots=True, repr=False)
class DeviceCounterConsumption(FieldsRepr):
    counter_set: str
    counters: Mapping[str, Quantity]


@final
@attrs.frozen(slots=True, repr=False)
class CounterSet(FieldsRepr):
    name: str
    counters: Mapping[str, Quantity]


@final
@attrs.frozen(slots=True, repr=False)
class CapacityRequestPolicy(FieldsRepr):
    """How much of a shareable capacity one allocation may take (``capacity[name].requestPolicy``):
    a ``default`` for requests that name none, and either ``valid_values`` (ascending) or a range
    (``valid_min`` .. ``valid_max`` in steps of ``valid_step``; ``has_range`` says one was given)."""

    default: Quantity | None = None
    valid_values: tuple[Quantity, ...] = ()
    has_range: bool = False
    valid_min: Quantity | None = None
    valid_max: Quantity | None = None
    valid_step: Quantity | None = None


@final
@attrs.frozen(slots=True, repr=False)
class Device(FieldsRepr):
    """A device in a ResourceSlice; attribute and capacity names as written (domain optional)."""

    name: str
    attributes: Mapping[str, DeviceAttribute] = attrs.field(factory=dict)
    capacity: Mapping[str, Quantity] = attrs.field(factory=dict)
    capacity_policies: Mapping[str, CapacityRequestPolicy] = attrs.field(factory=dict)
    """The request policies of the capacities that have one (consumable capacity)."""
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    taints: tuple[DeviceTaint, ...] = ()
    allow_multiple_allocations: bool = False
    binds_to_node: bool = False
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    node_name: str | None = None
    all_nodes: bool = False
    node_selector: NodeSelector | None = None
    node_selector_raw: Mapping[str, object] | None = None
    """``node_selector`` as a v1 dict (an allocation of the device carries it)."""


@final
@attrs.frozen(slots=True, repr=False)
class ResourceSlice(FieldsRepr):
    """One slice of a driver's pool of devices; where they are reachable from is one of
    ``node_name``, ``node_selector``, ``all_nodes`` or ``per_device_node_selection``."""

    name: str
    driver: str
    pool: str
    generation: int = 0
    slice_count: int = 1
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    node_selector_raw: Mapping[str, object] | None = None
    all_nodes: bool = False
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class DeviceConfig(FieldsRepr):
    """A device configuration for a driver (``opaque``, the one kind ``resource.k8s.io/v1`` has).

    ``parameters`` are the driver's own, kept as read (the scheduler only passes them on into the
    allocation, so they are left out of the hash).  ``requests`` names the requests it applies to (in a
    claim or an allocation; empty: all of them); ``source`` is ``FromClass`` or ``FromClaim`` in an
    allocation, ``None`` elsewhere.
    """

    driver: str
    parameters: object = attrs.field(default=None, hash=False)
    requests: tuple[str, ...] = ()
    source: str | None = None


@final
@attrs.frozen(slots=True, repr=False)
class DeviceClass(FieldsRepr):
    name: str
    selectors: tuple[str, ...] = ()
    extended_resource_name: str | None = None
    config: tuple[DeviceConfig, ...] = ()
    """``spec.config``: what every allocation of the class's devices carries (``FromClass``)."""


@final
@attrs.frozen(slots=True, repr=False)
class ExactRequest(FieldsRepr):
    """What to allocate for a request (``exactly``) or one ``firstAvailable`` subrequest."""

    name: str
    device_class_name: str
    selectors: tuple[str, ...] = ()
    allocation_mode: str = ALLOCATION_MODE_EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    capacity: Mapping[str, Quantity] | None = None


@final
@attrs.frozen(slots=True, repr=False)
class DeviceRequest(FieldsRepr):
    """A claim's request: ``exactly`` one device spec, or a prioritized list ``first_available``."""

    name: str
    exactly: ExactRequest | None = None
    first_available: tuple[ExactRequest, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class DeviceConstraint(FieldsRepr):
    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@final
@attrs.frozen(slots=True, repr=False)
class DeviceAllocation(FieldsRepr):
    """One allocated device (``status.allocation.devices.results[]``)."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    consumed_capacity: Mapping[str, Quantity] | None = None
    share_id: str | None = None
    binding_conditions: tuple[str, ...] = ()
    """Conditions a driver must set True in the claim's ``status.devices`` before the pod binds."""
    binding_failure_conditions: tuple[str, ...] = ()
    """Conditions of which any True means the device failed to bind."""
    tolerations: tuple[DeviceToleration, ...] = ()
    """The device taints the request tolerated (copied from the request)."""

    @property
    def device_id(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device)


@final
@attrs.frozen(slots=True, repr=False)
class AllocationResult(FieldsRepr):
    devices: tuple[DeviceAllocation, ...] = ()
    node_selector: NodeSelector | None = None
    node_selector_raw: Mapping[str, object] | None = None
    """The node selector as a v1 dict (what ``explain`` prints)."""
    allocation_timestamp: float | None = None
    """``allocationTimestamp`` in seconds on the clock's timeline (binding timeouts count from it)."""
    config: tuple[DeviceConfig, ...] = ()
    """``devices.config``: the class's configs then the claim's, for the requests they apply to."""


@final
@attrs.frozen(slots=True, repr=False)
class DeviceCondition(FieldsRepr):
    """A condition a driver reports for an allocated device (``metav1.Condition``: ``status`` is
    ``True``, ``False`` or ``Unknown``)."""

    type: str
    status: str
    reason: str = ""
    message: str = ""


@final
@attrs.frozen(slots=True, repr=False)
class AllocatedDeviceStatus(FieldsRepr):
    """An entry of a claim's ``status.devices``, written by the device's driver.

    ``data`` and ``network_data`` are kept as read: the scheduler does not look into them.
    """

    driver: str
    pool: str
    device: str
    share_id: str | None = None
    conditions: tuple[DeviceCondition, ...] = ()
    data: object = None
    network_data: Mapping[str, object] | None = None

    def condition(self, kind: str) -> DeviceCondition | None:
        """The condition of type ``kind``, if reported."""
        for condition in self.conditions:
            if condition.type == kind:
                return condition
        return None


@final
@attrs.frozen(slots=True, repr=False)
class ClaimConsumer(FieldsRepr):
    """An entry of ``status.reservedFor``."""

    name: str
    uid: str
    resource: str = "pods"


@final
@attrs.frozen(slots=True, repr=False)
class ResourceClaim(FieldsRepr):
    name: str
    namespace: str = "default"
    uid: str = ""
    annotations: Mapping[str, str] = attrs.field(factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    allocation: AllocationResult | None = None
    reserved_for: tuple[ClaimConsumer, ...] = ()
    deletion_timestamp: float | None = None
    devices: tuple[AllocatedDeviceStatus, ...] = ()
    """``status.devices``: what drivers report about the allocated devices (binding conditions among them)."""
    config: tuple[DeviceConfig, ...] = ()
    """``spec.devices.config``."""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@final
@attrs.frozen(slots=True, repr=False)
class ResourceClaimTemplate(FieldsRepr):
    name: str
    namespace: str = "default"
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceConfig, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
