"""Consumable capacity: how much of a device's capacity one allocation takes (DRAConsumableCapacity).

A request names amounts per capacity; a capacity it does not name is taken whole, or the policy's
``default``.  A request policy rounds a named amount up to the next valid value or step of its range
(never below the range's minimum), and an amount the policy does not allow (above the range's
maximum, off its steps, not among the valid values -- the default is always allowed) cannot be
allocated.  The comparisons are by value, as kube's ``Cmp``; steps count whole units as kube does.
"""

from __future__ import annotations

from collections.abc import Mapping

from kschedlib.model.dra import CapacityRequestPolicy, Device
from kschedlib.model.quantity import Quantity

__all__ = ["consumed", "consumed_amount", "violates"]


def consumed_amount(requested: Quantity | None, total: Quantity, policy: CapacityRequestPolicy | None) -> Quantity:
    """What one allocation takes of a capacity of ``total``."""
    if requested is None:
        return policy.default if policy is not None and policy.default is not None else total
    if policy is None:
        return requested
    if policy.has_range and policy.valid_min is not None:
        low = policy.valid_min
        if requested < low:
            return low
        if policy.valid_step is None:
            return requested
        step = policy.valid_step.value()
        steps = -(-(requested.value() - low.value()) // step) if step else 0
        return Quantity.from_int(low.value() + step * steps, "BinarySI")
    for value in policy.valid_values:
        if requested <= value:
            return value
    return requested


def violates(amount: Quantity, policy: CapacityRequestPolicy | None) -> bool:
    """Whether the policy forbids taking ``amount``."""
    if policy is None or (policy.default is not None and amount == policy.default):
        return False
    if policy.has_range:
        if policy.valid_max is not None and amount > policy.valid_max:
            return True
        if policy.valid_step is not None and policy.valid_step.value():
            low = policy.valid_min.value() if policy.valid_min is not None else 0
            return (amount.value() - low) % policy.valid_step.value() != 0
        return False
    if policy.valid_values:
        return amount not in policy.valid_values
    return False


def consumed(requested: Mapping[str, Quantity], device: Device) -> dict[str, Quantity]:
    """What one allocation takes from each of the device's capacities."""
    policies = device.capacity_policies
    return {name: consumed_amount(requested.get(name), total, policies.get(name))
            for name, total in device.capacity.items()}
