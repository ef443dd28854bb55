"""Whether an object is a DRA model object, asked without importing :mod:`kschedlib.model.dra`.

Most clusters have no DeviceClasses, ResourceSlices or ResourceClaims, so the DRA model (its classes,
readers and checks) is imported by the first DRA object read, not by every process that schedules:
until then no object can be one, and the stores and event routing that sort objects by kind ask
here first.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DRA_MODULE", "is_dra_object"]

DRA_MODULE: Final = "kschedlib.model.dra"
"""The module that defines every DRA model class."""


def is_dra_object(obj: object) -> bool:
    """Whether ``obj`` is an instance of a class of :mod:`kschedlib.model.dra`."""
    return type(obj).__module__ == DRA_MODULE
