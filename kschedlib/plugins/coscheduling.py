"""Deprecated: Coscheduling moved to :mod:`kschedlib.plugins.batch.coscheduling` (scheduler-plugins' plugins
have a package of their own). This alias will be removed in a later release."""

from __future__ import annotations

import warnings

from kschedlib.plugins.batch.coscheduling import (
    NAME,
    POD_GROUP_GVK,
    Coscheduling,
    CoschedulingArgs,
    decode_args,
    pod_group_statuses,
)

__all__ = ["Coscheduling", "CoschedulingArgs", "NAME", "POD_GROUP_GVK", "decode_args", "pod_group_statuses"]

warnings.warn("kschedlib.plugins.coscheduling is deprecated: import kschedlib.plugins.batch.coscheduling",
              DeprecationWarning, stacklevel=2)
