"""DynamicResources' cluster events and queueing hints (kube-scheduler v1.34-v1.36).

A pod DynamicResources rejected may become schedulable when a node is added or its labels or
allocatable change, when one of its claims is created or its status changes, when any claim is
deallocated (its devices are free again), when its own generated claims are named in its status,
and whenever a DeviceClass or ResourceSlice is added or updated (those two have no hint: every such
event requeues).  Deletions of DRA objects are no event: they never help.

The hints look the pod's claims up at the time of the event: a pod some of whose claims are
missing, being deleted or not owned by it stays where it is (PreEnqueue would stop it again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, cast

from kschedlib.dra._store import ClaimProblem
from kschedlib.framework.events import (
    DEVICE_CLASS,
    NODE,
    POD,
    RESOURCE_CLAIM,
    RESOURCE_SLICE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    QueueingHintFn,
    hint_of,
)
from kschedlib.model._kinds import dra_kind
from kschedlib.model.objects import Pod

if TYPE_CHECKING:
    from kschedlib.model.dra import ResourceClaim

__all__ = ["PodClaims", "after_claim_change", "after_pod_change", "dynamic_resources_events"]

PodClaims = Callable[[Pod], Sequence["ResourceClaim"]]
"""The pod's claims as PreEnqueue resolves them (raising :class:`ClaimProblem` where it would reject)."""

_ADD_OR_UPDATE: Final = ActionType.ADD | ActionType.UPDATE
_NODE_ACTIONS: Final = ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE
"""Node topology (labels) and allocatable (extended resources DRA may back); v1.30-style scheduling
without narrow hints adds taint updates for every Node/Add watcher (:mod:`kschedlib._internal.admission`)."""


def _identity(claim: ResourceClaim) -> str:
    """What tells claims apart: the uid, or the key for claims given without one."""
    return claim.uid or claim.key


def _claim_or_none(obj: object, which: str) -> ResourceClaim | None:
    if obj is None or dra_kind(obj) == "ResourceClaim":
        return cast("ResourceClaim | None", obj)
    raise TypeError(f"{which} object of a ResourceClaim event is a {type(obj).__name__}, not a ResourceClaim")


def after_claim_change(pod_claims: PodClaims, pod: Pod, old: object, new: object) -> QueueingHint:
    """A claim was added or updated: Queue when it is one of the pod's claims that was just created or whose
    status (allocation, reservations, devices' status) changed, or when any claim was deallocated, provided every claim
    of the pod exists; QueueSkip otherwise.  An object that is not a claim raises (the queue then Queues)."""
    before, after = _claim_or_none(old, "old"), _claim_or_none(new, "new")
    if after is None:
        return QueueingHint.QUEUE_SKIP  # a deletion: not registered, never helps
    try:
        claims = pod_claims(pod)
    except ClaimProblem:
        return QueueingHint.QUEUE_SKIP
    if before is not None and before.allocation is not None and after.allocation is None:
        return QueueingHint.QUEUE
    changed = _identity(after)
    if not any(_identity(claim) == changed for claim in claims):
        return QueueingHint.QUEUE_SKIP
    if before is None:
        return QueueingHint.QUEUE
    return hint_of(_status(before) != _status(after))


def _status(claim: ResourceClaim) -> tuple[object, ...]:
    """The parts of ``status`` kschedlib keeps: the allocation, the reservations and the devices' status."""
    return claim.allocation, claim.reserved_for, claim.devices


def after_pod_change(pod_claims: PodClaims, pod: Pod, old: object, new: object) -> QueueingHint:
    """The pod's own ``resourceClaimStatuses`` changed: Queue once every claim it names exists and is its own."""
    if not isinstance(new, Pod):
        raise TypeError(f"new object of a Pod event is a {type(new).__name__}, not a Pod")
    if new.uid != pod.uid:
        return QueueingHint.QUEUE_SKIP
    try:
        pod_claims(new)
    except ClaimProblem:
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE


def _bound(hint: Callable[[PodClaims, Pod, object, object], QueueingHint], pod_claims: PodClaims) -> QueueingHintFn:
    return lambda pod, old, new: hint(pod_claims, pod, old, new)


def dynamic_resources_events(pod_claims: PodClaims) -> tuple[ClusterEventWithHint, ...]:
    """DynamicResources' registrations, its hints reading the claims through ``pod_claims``."""
    return (ClusterEventWithHint(ClusterEvent(NODE, _NODE_ACTIONS)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_CLAIM, _ADD_OR_UPDATE), _bound(after_claim_change, pod_claims)),
            ClusterEventWithHint(ClusterEvent(POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                                 _bound(after_pod_change, pod_claims)),
            ClusterEventWithHint(ClusterEvent(DEVICE_CLASS, _ADD_OR_UPDATE)),
            ClusterEventWithHint(ClusterEvent(RESOURCE_SLICE, _ADD_OR_UPDATE)))
