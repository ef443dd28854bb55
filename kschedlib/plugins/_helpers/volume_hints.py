"""The volume plugins' queueing hints (kube v1.36): which storage and pod events may help a pod.

VolumeBinding, VolumeRestrictions, VolumeZone and NodeVolumeLimits register these with queueing
hints on (the ``narrow_queueing_hints`` switch); otherwise, and with v1.30's hints (which give
these plugins no hint functions), they keep watching every event, as kschedlib's v1.30 mode always
did.  A hint receives ``(pod, old, new)``; an object of an unexpected type means Queue, as kube's
hints do when they cannot read the event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, cast

from kschedlib.framework.events import (
    ALL_EVENTS,
    CSI_DRIVER,
    CSI_NODE,
    CSI_STORAGE_CAPACITY,
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    STORAGE_CLASS,
    VOLUME_ATTACHMENT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    QueueingHint,
    QueueingHintFn,
    hint_of,
)
from kschedlib.framework.handle import Handle
from kschedlib.model._kinds import storage_kind
from kschedlib.model.objects import Pod
from kschedlib.model.quantity import Quantity
from kschedlib.plugins._helpers.csi_translation import CSI_DRIVERS, IN_TREE_PLUGINS
from kschedlib.plugins._helpers.inline_disks import inline_disks, is_volume_conflict
from kschedlib.plugins._helpers.volume_topology import volume_topologies
from kschedlib.plugins._helpers.volumes import MIGRATED_PLUGINS_ANNOTATION, WAIT_FOR_FIRST_CONSUMER, claim_of

if TYPE_CHECKING:
    from kschedlib.model.storage import (
        CSIDriver,
        CSINode,
        CSIStorageCapacity,
        PersistentVolume,
        PersistentVolumeClaim,
        StorageClass,
        VolumeAttachment,
    )

__all__ = [
    "WATCH_EVERYTHING",
    "binding_events",
    "watched",
    "limits_events",
    "restrictions_events",
    "zone_events",
]

WATCH_EVERYTHING: Final = (ClusterEventWithHint(ALL_EVENTS),)
"""What the volume plugins watch with hints off (kschedlib's v1.30 behaviour)."""

_QUEUE: Final = QueueingHint.QUEUE
_SKIP: Final = QueueingHint.QUEUE_SKIP


def watched(handle: Handle, events: Callable[[Handle], Sequence[ClusterEventWithHint]]
            ) -> Sequence[ClusterEventWithHint]:
    """``events(handle)`` with v1.36's queueing hints, every event otherwise."""
    return events(handle) if handle.switches.narrow_queueing_hints else WATCH_EVERYTHING


def _on(resource: str, action: ActionType, hint: QueueingHintFn | None = None) -> ClusterEventWithHint:
    return ClusterEventWithHint(ClusterEvent(resource, action), hint)


def _claims(pod: Pod, *, ephemeral: bool) -> set[str]:
    """The claim names the pod's volumes use (generic ephemeral ones too when ``ephemeral``)."""
    names = set()
    for volume in pod.volumes:
        claim = claim_of(pod, volume)
        if claim is not None and (ephemeral or not claim[1]):
            names.add(claim[0])
    return names


def _both(old: object, new: object, kind: str, *, old_may_be_none: bool = False) -> bool:
    """Whether ``new`` (and ``old``, unless it is ``None`` and may be) is a storage object of class ``kind``:
    asked by name, since the storage model is imported only by the first storage object and a hint runs per
    pending pod per event."""
    return storage_kind(new) == kind and ((old is None and old_may_be_none) or storage_kind(old) == kind)


def _claim_hint(*, ephemeral: bool) -> QueueingHintFn:
    """A claim of the pod's namespace that one of its volumes uses was created (or updated)."""
    def hint(pod: Pod, old: object, new: object) -> QueueingHint:
        if storage_kind(new) != "PersistentVolumeClaim":
            return _QUEUE
        new = cast("PersistentVolumeClaim", new)
        return hint_of(new.namespace == pod.namespace and new.name in _claims(pod, ephemeral=ephemeral))
    return hint


# --- VolumeBinding --------------------------------------------------------------------------------


def after_storage_class_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A new class, or one whose allowed topologies changed (its binding mode cannot change)."""
    if not _both(old, new, "StorageClass", old_may_be_none=True):
        return _QUEUE
    old, new = cast("StorageClass | None", old), cast("StorageClass", new)
    return hint_of(old is None or old.allowed_topologies != new.allowed_topologies)


def after_csi_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A new CSINode, or one whose migrated-plugins annotation changed."""
    if old is None or not _both(old, new, "CSINode"):
        return _QUEUE
    old, new = cast("CSINode", old), cast("CSINode", new)
    return hint_of(old.annotations.get(MIGRATED_PLUGINS_ANNOTATION) != new.annotations.get(MIGRATED_PLUGINS_ANNOTATION))


def after_csi_driver_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A driver of one of the pod's inline CSI volumes stopped tracking storage capacity."""
    if not _both(old, new, "CSIDriver"):
        return _QUEUE
    old, new = cast("CSIDriver", old), cast("CSIDriver", new)
    uses = any(volume.source_kind == "csi" and volume.source.get("driver") == new.name for volume in pod.volumes)
    return hint_of(uses and old.storage_capacity and not new.storage_capacity)


def _volume_limit(capacity: CSIStorageCapacity) -> Quantity | None:
    return capacity.maximum_volume_size if capacity.maximum_volume_size is not None else capacity.capacity


def after_csi_storage_capacity_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """New capacity, or a larger volume limit (maximum volume size, else capacity)."""
    if old is None or not _both(old, new, "CSIStorageCapacity"):
        return _QUEUE
    old, new = cast("CSIStorageCapacity", old), cast("CSIStorageCapacity", new)
    before, after = _volume_limit(old), _volume_limit(new)
    return hint_of(after is not None and (before is None or after.amount > before.amount))


def binding_events(handle: Handle) -> Sequence[ClusterEventWithHint]:
    """VolumeBinding's v1.36 registrations (no pod events: a deleted pod frees no volume for it)."""
    return (
        _on(STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE, after_storage_class_change),
        _on(PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE, _claim_hint(ephemeral=True)),
        _on(PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
        _on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        _on(CSI_NODE, ActionType.ADD | ActionType.UPDATE, after_csi_node_change),
        _on(CSI_DRIVER, ActionType.UPDATE, after_csi_driver_change),
        _on(CSI_STORAGE_CAPACITY, ActionType.ADD | ActionType.UPDATE, after_csi_storage_capacity_change),
    )


# --- VolumeRestrictions ---------------------------------------------------------------------------


def after_pod_deleted_restrictions(pod: Pod, old: object, new: object) -> QueueingHint:
    """A pod of the namespace that held a conflicting inline disk, or shared one of the pod's claims."""
    if not isinstance(old, Pod):
        return _QUEUE
    if old.namespace != pod.namespace:
        return _SKIP
    if any(is_volume_conflict(disk, old) for disk in inline_disks(pod)):
        return _QUEUE
    return hint_of(bool(_claims(pod, ephemeral=False) & _claims(old, ephemeral=False)))


def restrictions_events(handle: Handle) -> Sequence[ClusterEventWithHint]:
    """VolumeRestrictions' v1.36 registrations."""
    return (
        _on(POD, ActionType.DELETE, after_pod_deleted_restrictions),
        _on(NODE, ActionType.ADD),
        _on(PERSISTENT_VOLUME_CLAIM, ActionType.ADD, _claim_hint(ephemeral=False)),
    )


# --- VolumeZone -----------------------------------------------------------------------------------


def after_storage_class_added(pod: Pod, old: object, new: object) -> QueueingHint:
    """Only a new WaitForFirstConsumer class may help."""
    if storage_kind(new) != "StorageClass":
        return _QUEUE
    new = cast("StorageClass", new)
    return hint_of(new.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER)


def after_pv_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A new volume, or one whose zone/region labels changed."""
    if old is None or not _both(old, new, "PersistentVolume"):
        return _QUEUE
    old, new = cast("PersistentVolume", old), cast("PersistentVolume", new)
    return hint_of(volume_topologies(old) != volume_topologies(new))


def zone_events(handle: Handle) -> Sequence[ClusterEventWithHint]:
    """VolumeZone's v1.36 registrations."""
    return (
        _on(STORAGE_CLASS, ActionType.ADD, after_storage_class_added),
        _on(NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        _on(PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE, _claim_hint(ephemeral=False)),
        _on(PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE, after_pv_change),
    )


# --- NodeVolumeLimits -----------------------------------------------------------------------------


def _migratable(kind: str) -> bool:
    return kind in IN_TREE_PLUGINS


def after_pod_deleted_limits(pod: Pod, old: object, new: object) -> QueueingHint:
    """A placed (or nominated) pod with a claim, an ephemeral or a migratable inline volume went away."""
    if not isinstance(old, Pod):
        return _QUEUE
    if not old.volumes or not (old.node_name or old.nominated_node_name):
        return _SKIP
    return hint_of(any(v.claim_name is not None or v.ephemeral or _migratable(v.source_kind) for v in old.volumes))


def _counts(csi_node: CSINode) -> dict[str, int]:
    return {driver.name: driver.allocatable_count or 0 for driver in csi_node.drivers}


def after_csi_node_updated(pod: Pod, old: object, new: object) -> QueueingHint:
    """A driver's allocatable volume count grew (mutable CSINode allocatable, beta on from 1.34)."""
    if not _both(old, new, "CSINode"):
        return _QUEUE
    old, new = cast("CSINode", old), cast("CSINode", new)
    before = _counts(old)
    return hint_of(any(count > before.get(name, 0) for name, count in _counts(new).items()))


def after_volume_attachment_deleted(handle: Handle) -> QueueingHintFn:
    """A detached volume the pod uses: the volume of one of its claims, or its inline volumes' driver."""
    def hint(pod: Pod, old: object, new: object) -> QueueingHint:
        if storage_kind(old) != "VolumeAttachment":
            return _QUEUE
        old = cast("VolumeAttachment", old)
        lister = handle.storage
        for volume in pod.volumes:
            if volume.claim_name is not None:
                pvc = lister.get_pvc(pod.namespace, volume.claim_name)
                if pvc is not None and old.persistent_volume_name is not None and \
                        pvc.volume_name == old.persistent_volume_name:
                    return _QUEUE
            plugin = IN_TREE_PLUGINS.get(volume.source_kind)
            if plugin is not None and old.attacher == CSI_DRIVERS[plugin]:
                return _QUEUE
        return _SKIP
    return hint


def limits_events(handle: Handle) -> Sequence[ClusterEventWithHint]:
    """NodeVolumeLimits' v1.36 registrations (a new CSINode may raise any limit: no hint)."""
    return (
        _on(CSI_NODE, ActionType.ADD),
        _on(CSI_NODE, ActionType.UPDATE, after_csi_node_updated),
        _on(POD, ActionType.DELETE, after_pod_deleted_limits),
        _on(PERSISTENT_VOLUME_CLAIM, ActionType.ADD, _claim_hint(ephemeral=True)),
        _on(VOLUME_ATTACHMENT, ActionType.DELETE, after_volume_attachment_deleted(handle)),
    )
