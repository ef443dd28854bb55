"""Whether an object is a DRA or a storage model object, asked without importing the model module.

Many clusters have no DeviceClasses, ResourceSlices or ResourceClaims, and a cluster an embedder builds
often has no PersistentVolumes, StorageClasses or CSI objects either, so those models (their classes,
readers and checks) are imported by the first such object read, not by every process that schedules:
until then no object can be one, and the stores and event routing that sort objects by kind ask here
first.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DRA_MODULE", "STORAGE_MODULE", "dra_kind", "is_dra_object", "is_storage_object", "storage_kind"]

DRA_MODULE: Final = "kschedlib.model.dra"
"""The module that defines every DRA model class."""
STORAGE_MODULE: Final = "kschedlib.model.storage"
"""The module that defines every storage model class."""


def is_dra_object(obj: object) -> bool:
    """Whether ``obj`` is an instance of a class of :mod:`kschedlib.model.dra`."""
    return type(obj).__module__ == DRA_MODULE


def dra_kind(obj: object) -> str | None:
    """The class name of a DRA model object (the classes are final, so the name is the kind), else ``None``.

    For the paths an event takes per pending pod, where even an import statement of a loaded module costs."""
    cls = type(obj)
    return cls.__name__ if cls.__module__ == DRA_MODULE else None


def is_storage_object(obj: object) -> bool:
    """Whether ``obj`` is an instance of a class of :mod:`kschedlib.model.storage`."""
    return type(obj).__module__ == STORAGE_MODULE


def storage_kind(obj: object) -> str | None:
    """The class name of a storage model object (the classes are final, so the name is the kind), else ``None``."""
    cls = type(obj)
    return cls.__name__ if cls.__module__ == STORAGE_MODULE else None
