"""ClusterApi: the API server a scheduler writes to, besides its bindings.

A :class:`~kschedlib.Scheduler` without one is a simulation: its own state is the cluster, and it plays the
controllers' part too (the PV controller completing a volume binding at once, the resourceclaim controller
releasing a deleted pod's claims).  Given one (``Scheduler(api=...)``; :mod:`kschedlib.kube`'s live scheduler
does), the in-tree plugins make kube-scheduler's own writes through it, at the points kube-scheduler makes
them, and leave the controllers' part to the cluster: the scheduler's state then follows what the cluster
reports back.

Plugins capture the handle's ``api`` in PreFilter and use it for the rest of that attempt (the binding
cycle runs on other threads; an ``explain`` of the live state runs without one, so it writes nothing).
Every method raises :class:`~kschedlib.errors.KubeApiError` whose message is the error kube-scheduler
reports for that write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from kschedlib.model.objects import ContainerExtendedResourceRequest, Pod

if TYPE_CHECKING:
    from kschedlib.model.dra import ResourceClaim
    from kschedlib.model.storage import PersistentVolume, PersistentVolumeClaim

__all__ = ["ClusterApi"]


class ClusterApi(Protocol):
    """kube-scheduler's writes besides the binding (see the module docstring)."""

    def nominate(self, pod: Pod, node_name: str) -> None:
        """Set the pod's ``status.nominatedNodeName`` to the node it is about to be bound to (v1.35+, before a
        Permit wait or PreBind work).  Never raises: a failure is logged and binding goes on, as in kube."""
        ...

    def create_claim(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        """DynamicResources' PreBind, first for the pod's extended-resource claim (made by the scheduler, without
        a name of its own yet): create it (its requests, the pod as controller); the claim as created."""
        ...

    def reserve_claim(self, claim: ResourceClaim, pod: Pod, *, allocate: bool,
                      mappings: Sequence[ContainerExtendedResourceRequest] = ()) -> ResourceClaim:
        """DynamicResources' PreBind for one claim: ``claim`` as it must become (its allocation, ``reservedFor``
        listing ``pod``); ``allocate`` when the allocation is new (the claim gets its finalizer first).
        ``mappings`` (the extended-resource claim's) then go into the pod's ``status.extendedResourceClaimStatus``.
        Returns the claim as the API server keeps it."""
        ...

    def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        """Unreserve: take ``pod`` out of the claim's ``reservedFor``; the claim as written."""
        ...

    def deallocate_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """PostFilter: drop the claim's allocation, reservations and device status; the claim as written."""
        ...

    def record_event(self, pod: Pod, event_type: str, reason: str, action: str, note: str) -> None:
        """An Event about ``pod`` (DynamicResources' ``BindingConditionsPending``); never raises."""
        ...

    def delete_claim(self, claim: ResourceClaim) -> None:
        """Delete an extended-resource claim the pod no longer uses (its finalizer removed first)."""
        ...

    def bind_volumes(self, pod: Pod, node_name: str, volumes: Sequence[PersistentVolume],
                     claims: Sequence[PersistentVolumeClaim], timeout: float) -> None:
        """VolumeBinding's PreBind: write ``volumes`` (bound to their claims by ``claimRef``) and ``claims``
        (annotated with the node to provision on), then wait, up to ``timeout`` seconds, until the cluster's
        PV controller and provisioners have bound every claim of the pod."""
        ...

    def latest_volumes(self, volumes: Sequence[str], claims: Sequence[str]) -> tuple[list[PersistentVolume],
                                                                                    list[PersistentVolumeClaim]]:
        """The volumes (by name) and claims (``namespace/name``) as the API server last reported them (those
        it has): what Unreserve puts back in place of its assumptions."""
        ...
