"""Deprecated: CapacityScheduling moved to :mod:`kschedlib.plugins.batch.capacity_scheduling`
(scheduler-plugins' plugins have a package of their own). This alias will be removed in a later release."""

from __future__ import annotations

import warnings

from kschedlib.plugins.batch.capacity_scheduling import (
    ELASTIC_QUOTA_GVK,
    NAME,
    CapacityScheduling,
    CapacitySchedulingArgs,
    decode_args,
)

__all__ = ["CapacityScheduling", "CapacitySchedulingArgs", "ELASTIC_QUOTA_GVK", "NAME", "decode_args"]

warnings.warn("kschedlib.plugins.capacity_scheduling is deprecated: import kschedlib.plugins.batch.capacity_scheduling",
              DeprecationWarning, stacklevel=2)
