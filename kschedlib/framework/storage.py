"""StorageLister: the storage objects of the cluster as the volume plugins read them.

kube-scheduler's volume plugins read PersistentVolumeClaims, PersistentVolumes,
StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities through informer
listers; a plugin here reads them through ``handle.storage``.  Lookups return
``None`` for a missing object; the plugin turns that into kube's "not found" text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

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


__all__ = ["StorageLister"]


class StorageLister(Protocol):
    """Read-only access to the cluster's storage objects (the latest known versions)."""

    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """The claim ``namespace/name``, or ``None``."""
        ...

    def get_pv(self, name: str) -> PersistentVolume | None:
        """The PersistentVolume ``name``, or ``None``."""
        ...

    def get_storage_class(self, name: str) -> StorageClass | None:
        """The StorageClass ``name``, or ``None``."""
        ...

    def get_csi_node(self, name: str) -> CSINode | None:
        """The CSINode of the node ``name``, or ``None``."""
        ...

    def get_csi_driver(self, name: str) -> CSIDriver | None:
        """The CSIDriver ``name``, or ``None``."""
        ...

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        """Every CSIStorageCapacity of the cluster."""
        ...

    def volume_attachments(self, node_name: str) -> Sequence[VolumeAttachment]:
        """The VolumeAttachments to the node ``node_name`` (NodeVolumeLimits counts them from v1.32)."""
        ...

    def pvs_of_class(self, class_name: str) -> Sequence[PersistentVolume]:
        """The PersistentVolumes whose class (annotation first, then ``spec.storageClassName``) is
        ``class_name``, in name order (kube lists them in map order; any fixed order is a valid refinement)."""
        ...
