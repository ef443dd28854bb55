"""Inline disks that two pods cannot share (GCE PD, AWS EBS, iSCSI, RBD): kube's ``isVolumeConflict``.

Shared by VolumeRestrictions' Filter and its queueing hint (a deleted pod that held a conflicting
disk may free the node).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, cast

from kschedlib.model.objects import Pod, Volume
from kschedlib.plugins._helpers.volumes import inline_source

if TYPE_CHECKING:
    from kschedlib.model.storage import (
        AWSElasticBlockStoreVolumeSource,
        GCEPersistentDiskVolumeSource,
        ISCSIVolumeSource,
        PersistentVolumeSource,
        RBDVolumeSource,
    )

__all__ = ["inline_disks", "is_volume_conflict", "needs_restrictions_check"]

_DISK_KINDS: Final = frozenset({"gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi"})


def needs_restrictions_check(volume: Volume) -> bool:
    """Whether ``volume`` is an inline disk kind this plugin compares across pods."""
    return volume.source_kind in _DISK_KINDS


def _conflicts(disk: PersistentVolumeSource, other: PersistentVolumeSource) -> bool:
    """kube's per-kind rule; different kinds never conflict."""
    kind = type(disk).__name__  # the source classes are final: a name is a class, and no import per pair
    if type(other) is not type(disk):
        return False
    if kind == "GCEPersistentDiskVolumeSource":
        gce, other_gce = cast("GCEPersistentDiskVolumeSource", disk), cast("GCEPersistentDiskVolumeSource", other)
        return gce.pd_name == other_gce.pd_name and not (gce.read_only and other_gce.read_only)
    if kind == "AWSElasticBlockStoreVolumeSource":
        ebs, other_ebs = cast("AWSElasticBlockStoreVolumeSource", disk), cast("AWSElasticBlockStoreVolumeSource", other)
        return ebs.volume_id == other_ebs.volume_id
    if kind == "ISCSIVolumeSource":
        iscsi, other_iscsi = cast("ISCSIVolumeSource", disk), cast("ISCSIVolumeSource", other)
        return iscsi.iqn == other_iscsi.iqn and not (iscsi.read_only and other_iscsi.read_only)
    if kind == "RBDVolumeSource":
        rbd, other_rbd = cast("RBDVolumeSource", disk), cast("RBDVolumeSource", other)
        return (
            not set(rbd.monitors).isdisjoint(other_rbd.monitors)
            and rbd.pool == other_rbd.pool
            and rbd.image == other_rbd.image
            and not (rbd.read_only and other_rbd.read_only)
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
