"""Whether an object is a DRA model object, asked without importing :mod:`kschedlib.model.dra`.

Most clusters have no DeviceClasses, ResourceSlices or ResourceClaims, so the DRA model (its classes,
readers and checks) is imported by the first DRA object read, not by every process that schedules:
until then no object can be one, and the stores and event routing that sort objects by kind ask
here first.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DRA_MODULE", "dra_kind", "is_dra_object"]

DRA_MODULE: Final = "kschedlib.model.dra"
"""The module that defines every DRA model class."""


def is_dra_object(obj: object) -> bool:
    """Whether ``obj`` is an instance of a class of :mod:`kschedlib.model.dra`."""
    return type(obj).__module__ == DRA_MODULE


def dra_kind(obj: object) -> str | None:
    """The class name of a DRA model object (the classes are final, so the name is the kind), else ``None``.

    For the paths an event takes per pending pod, where even an import statement of a loaded module costs."""
    cls = type(obj)
    return cls.__name__ if cls.__module__ == DRA_MODULE else None
