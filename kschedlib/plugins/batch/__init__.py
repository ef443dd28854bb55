"""scheduler-plugins' batch plugins: Coscheduling (PodGroup gangs) and CapacityScheduling (ElasticQuota).

They come from another project with its own version line — kubernetes-sigs/scheduler-plugins
v0.30.6 (commit d250c4b9), built against kube-scheduler v1.30 — and no kube default profile enables
them, so they live apart from kube's in-tree plugins: nothing in ``kschedlib.plugins`` outside this
package imports it, except the registration in :func:`kschedlib.plugins.in_tree_registry`.
:func:`batch_scheduling_config` gives the configuration scheduler-plugins recommends.
"""

from __future__ import annotations

from kschedlib.framework.registry import Registry
from kschedlib.plugins.batch import capacity_scheduling, coscheduling
from kschedlib.plugins.batch.config import batch_scheduling_config

__all__ = ["batch_scheduling_config", "register"]


def register(registry: Registry) -> None:
    """Register Coscheduling and CapacityScheduling (with their args decoders) in ``registry``."""
    registry.register(coscheduling.Coscheduling.name, coscheduling.Coscheduling, args=coscheduling.decode_args)
    registry.register(capacity_scheduling.CapacityScheduling.name, capacity_scheduling.CapacityScheduling,
                      args=capacity_scheduling.decode_args)
