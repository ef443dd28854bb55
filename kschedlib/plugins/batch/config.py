"""A ready-made configuration for batch scheduling with Coscheduling and CapacityScheduling.

Both plugins come from the scheduler-plugins project; no default profile enables
them.  :func:`batch_scheduling_config` returns the KubeSchedulerConfiguration that
scheduler-plugins' documentation recommends: Coscheduling in every point it
implements (its QueueSort replaces PrioritySort), and CapacityScheduling in place
of DefaultPreemption.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["batch_scheduling_config"]


def batch_scheduling_config(*, coscheduling: bool = True, capacity_scheduling: bool = True,
                            coscheduling_args: Mapping[str, Any] | None = None,
                            capacity_scheduling_args: Mapping[str, Any] | None = None,
                            scheduler_name: str = "default-scheduler") -> dict[str, Any]:
    """The default profile with the batch plugins enabled (and the plugins they replace disabled)."""
    enabled: list[dict[str, str]] = []
    disabled: list[dict[str, str]] = []
    plugin_config: list[dict[str, Any]] = []
    if coscheduling:
        enabled.append({"name": "Coscheduling"})
        disabled.append({"name": "PrioritySort"})
        if coscheduling_args is not None:
            plugin_config.append({"name": "Coscheduling", "args": dict(coscheduling_args)})
    if capacity_scheduling:
        enabled.append({"name": "CapacityScheduling"})
        disabled.append({"name": "DefaultPreemption"})
        if capacity_scheduling_args is not None:
            plugin_config.append({"name": "CapacityScheduling", "args": dict(capacity_scheduling_args)})
    profile: dict[str, Any] = {"schedulerName": scheduler_name,
                               "plugins": {"multiPoint": {"enabled": enabled, "disabled": disabled}}}
    if plugin_config:
        profile["pluginConfig"] = plugin_config
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}
