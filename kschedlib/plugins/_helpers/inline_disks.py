"""Inline disks that two pods cannot share (GCE PD, AWS EBS, iSCSI, RBD): kube's ``isVolumeConflict``.

Shared by VolumeRestrictions' Filter and its queueing hint (a deleted pod that held a conflicting
disk may free the node).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from kschedlib.model.objects import Pod, Volume
from kschedlib.plugins._helpers.volumes import inline_source

if TYPE_CHECKING:
    from kschedlib.model.storage import (
        PersistentVolumeSource,
    )

__all__ = ["inline_disks", "is_volume_conflict", "needs_restrictions_check"]

_DISK_KINDS: Final = frozenset({"gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi"})


def needs_restrictions_check(volume: Volume) -> bool:
    """Whether ``volume`` is an inline disk kind this plugin compares across pods."""
    return volume.source_kind in _DISK_KINDS


def _conflicts(disk: PersistentVolumeSource, other: PersistentVolumeSource) -> bool:
    """kube's per-kind rule; different kinds never conflict."""
    from kschedlib.model.storage import (
        AWSElasticBlockStoreVolumeSource,
        GCEPersistentDiskVolumeSource,
        ISCSIVolumeSource,
        RBDVolumeSource,
    )

    if isinstance(disk, GCEPersistentDiskVolumeSource) and isinstance(other, GCEPersistentDiskVolumeSource):
        return disk.pd_name == other.pd_name and not (disk.read_only and other.read_only)
    if isinstance(disk, AWSElasticBlockStoreVolumeSource) and isinstance(other, AWSElasticBlockStoreVolumeSource):
        return disk.volume_id == other.volume_id
    if isinstance(disk, ISCSIVolumeSource) and isinstance(other, ISCSIVolumeSource):
        return disk.iqn == other.iqn and not (disk.read_only and other.read_only)
    if isinstance(disk, RBDVolumeSource) and isinstance(other, RBDVolumeSource):
        return (
            not set(disk.monitors).isdisjoint(other.monitors)
            and disk.pool == other.pool
            and disk.image == other.image
            and not (disk.read_only and other.read_only)
        )
    return False


def is_volume_conflict(disk: PersistentVolumeSource, pod: Pod) -> bool:
    """Whether the inline ``disk`` clashes with one of ``pod``'s inline volumes."""
    kind = disk.source_kind
    for volume in pod.volumes:
        if volume.source_kind != kind:
            continue
        other = inline_source(volume)
        if other is not None and _conflicts(disk, other):
            return True
    return False


def inline_disks(pod: Pod) -> tuple[PersistentVolumeSource, ...]:
    """The pod's inline disks that can conflict (GCE PD, AWS EBS, iSCSI, RBD)."""
    disks = (inline_source(v) for v in pod.volumes if needs_restrictions_check(v))
    return tuple(disk for disk in disks if disk is not None)
