"""Device binding conditions (``DRADeviceBindingConditions``): when an allocated claim lets its pod bind.

A device may ask to be prepared before a pod using it binds (a fabric-attached GPU being attached to
the node, say).  Its allocation result then lists ``bindingConditions`` that the driver sets True in
the claim's ``status.devices``, and ``bindingFailureConditions`` of which any True means it failed.
kube-scheduler waits for them in PreBind (polling every 5 s up to ``bindingTimeout``), and a later
attempt treats a claim that failed, or is still not ready ``bindingTimeout`` after its
``allocationTimestamp``, as not available (PostFilter then deallocates it).

Nothing changes a claim while kschedlib's binding cycle runs (there is no driver), so the wait is
not run: :func:`wait_outcome` answers at once with what kube-scheduler's wait ends in when nothing
changes during it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, Literal, final

import attrs

from kschedlib._fields_repr import FieldsRepr

if TYPE_CHECKING:
    from kschedlib.model.dra import AllocatedDeviceStatus, DeviceAllocation, ResourceClaim

__all__ = ["BINDING_POLL_INTERVAL", "DEVICE_BINDING_TIMEOUT", "ERRORS_V134", "ERRORS_V136", "BindingErrors",
           "has_binding_conditions", "poll_outcome", "readiness", "timed_out", "wait_outcome"]

BINDING_POLL_INTERVAL: Final = 5.0
"""Seconds between two looks at the claims while PreBind waits."""
DEVICE_BINDING_TIMEOUT: Final = "device binding timeout"


@final
@attrs.frozen(slots=True, repr=False)
class BindingErrors(FieldsRepr):
    """How a version words the ends of the wait: a device whose binding failed, a claim past its own timeout,
    and the wait's deadline (kube v1.36 wraps them in ``device binding failed/timeout``)."""

    failed: str
    """Formatted with ``claim``, ``reason`` and ``message`` (Go's ``%q`` of it)."""
    claim_timeout: str
    """Formatted with ``claim``."""
    deadline: str


ERRORS_V134: Final = BindingErrors("claim {claim} binding failed: reason={reason}, message={message}",
                                   "claim {claim} binding timeout", DEVICE_BINDING_TIMEOUT)
"""kube v1.34-v1.35's texts."""
ERRORS_V136: Final = BindingErrors("device binding failed: claim={claim}, reason={reason}, message={message}",
                                   "device binding timeout: claim={claim}",
                                   "device binding timeout: context deadline exceeded")
"""kube v1.36's texts (``ErrDeviceBindingFailed`` / ``ErrDeviceBindingTimeout`` wrapping the cause)."""


def _device_status(claim: ResourceClaim, result: DeviceAllocation) -> AllocatedDeviceStatus | None:
    for status in claim.devices:
        if status.device == result.device and status.driver == result.driver and status.pool == result.pool:
            return status
    return None


def readiness(claim: ResourceClaim, errors: BindingErrors = ERRORS_V136) -> bool | str:
    """``True`` when every device's binding conditions are True (or it has none), ``False`` while one is
    not (or an unallocated claim), else the failure text when a binding failure condition is True.

    Devices are looked at in result order and the first that is not ready decides, as kube does."""
    allocation = claim.allocation
    if allocation is None:
        return False
    for result in allocation.devices:
        if not result.binding_conditions:
            continue
        status = _device_status(claim, result)
        if status is None:
            return False
        for kind in result.binding_failure_conditions:
            failed = status.condition(kind)
            if failed is not None and failed.status == "True":
                # Go's %q of the message (JSON's quoting agrees for printable text)
                return errors.failed.format(claim=claim.name, reason=failed.reason,
                                            message=json.dumps(failed.message, ensure_ascii=False))
        for kind in result.binding_conditions:
            condition = status.condition(kind)
            if condition is None or condition.status != "True":
                return False
    return True


def _waits_since(claim: ResourceClaim) -> float | None:
    """The allocation time of a claim with binding conditions (``None``: no time or no conditions)."""
    allocation = claim.allocation
    if allocation is None or allocation.allocation_timestamp is None:
        return None
    if not any(result.binding_conditions for result in allocation.devices):
        return None
    return allocation.allocation_timestamp


def timed_out(claim: ResourceClaim, timeout: float, now: float) -> bool:
    """Whether ``timeout`` seconds have passed since the claim's allocation (strictly), for a claim
    with binding conditions."""
    since = _waits_since(claim)
    return since is not None and since + timeout < now


def has_binding_conditions(claims: Iterable[ResourceClaim]) -> bool:
    """Whether any allocated device of these claims has binding conditions (then PreBind waits)."""
    return any(result.binding_conditions for claim in claims if claim.allocation is not None
               for result in claim.allocation.devices)


def wait_outcome(claims: Iterable[ResourceClaim], timeout: float, now: float,
                 errors: BindingErrors = ERRORS_V136) -> str | None:
    """How PreBind's wait for binding conditions ends when nothing changes during it: ``None`` (the pod
    binds), or the error text.

    The wait looks at the claims at ``now`` and every :data:`BINDING_POLL_INTERVAL` seconds until
    ``timeout`` has passed; each look stops at the first claim not ready.  A failed claim fails the
    wait at once; a claim not ready fails it with ``errors.claim_timeout`` at the first look after its own
    timeout, if that look comes before the wait's deadline, else the wait ends with ``errors.deadline``.
    """
    found = _first_not_ready(claims, errors)
    if found is None or isinstance(found, str):
        return found
    since = _waits_since(found)
    if since is not None:
        expires = since + timeout
        looks = 0 if expires < now else math.floor((expires - now) / BINDING_POLL_INTERVAL) + 1
        if looks * BINDING_POLL_INTERVAL < timeout:
            return errors.claim_timeout.format(claim=found.name)
    return errors.deadline


def poll_outcome(claims: Iterable[ResourceClaim], timeout: float, now: float,
                 errors: BindingErrors = ERRORS_V136) -> str | Literal[False] | None:
    """One look of kube's wait on a live cluster (where drivers do change the claims): ``None`` when every claim
    is ready, the error text when one failed or timed out, ``False`` to look again later."""
    found = _first_not_ready(claims, errors)
    if found is None or isinstance(found, str):
        return found
    return errors.claim_timeout.format(claim=found.name) if timed_out(found, timeout, now) else False


def _first_not_ready(claims: Iterable[ResourceClaim], errors: BindingErrors) -> ResourceClaim | str | None:
    """What one look at the claims finds first: a failure's text, a claim not ready yet, or ``None`` (all ready)."""
    for claim in claims:
        state = readiness(claim, errors)
        if state is True:
            continue
        return claim if state is False else state
    return None
