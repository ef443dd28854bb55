"""scheduler-plugins' batch plugins: Coscheduling (PodGroup gangs) and CapacityScheduling (ElasticQuota).

They come from another project with its own version line — kubernetes-sigs/scheduler-plugins
v0.30.6 (commit d250c4b9), built against kube-scheduler v1.30 — and no kube default profile enables
them, so they live apart from kube's in-tree plugins: nothing in ``kschedlib.plugins`` outside this
package imports it, except the registration in :func:`kschedlib.plugins.in_tree_registry`.
:func:`batch_scheduling_config` gives the configuration scheduler-plugins recommends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedlib._lazy import lazy_exports
from kschedlib.framework.registry import Registry
from kschedlib.plugins._deferred import Deferred

if TYPE_CHECKING:
    from kschedlib.plugins.batch.config import batch_scheduling_config

__all__ = ["batch_scheduling_config", "register"]

__getattr__, __dir__ = lazy_exports(globals(), {"kschedlib.plugins.batch.config": ["batch_scheduling_config"]})

_COSCHEDULING = "kschedlib.plugins.batch.coscheduling"
_CAPACITY_SCHEDULING = "kschedlib.plugins.batch.capacity_scheduling"


def register(registry: Registry) -> None:
    """Register Coscheduling and CapacityScheduling (with their args decoders) in ``registry``; their modules
    are imported when a profile first builds or configures one of them."""
    registry.register("Coscheduling", Deferred(_COSCHEDULING, "Coscheduling"),
                      args=Deferred(_COSCHEDULING, "decode_args"))
    registry.register("CapacityScheduling", Deferred(_CAPACITY_SCHEDULING, "CapacityScheduling"),
                      args=Deferred(_CAPACITY_SCHEDULING, "decode_args"))
