"""The in-tree plugins of kube-scheduler v1.30 and its default profile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kschedlib.framework.config import PluginRef, PluginSet
from kschedlib.framework.registry import Registry
from kschedlib.plugins import (
    default_binder,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_name,
    node_ports,
    node_resources_balanced_allocation,
    node_resources_fit,
    node_unschedulable,
    pod_topology_spread,
    priority_sort,
    scheduling_gates,
    taint_toleration,
)

__all__ = ["DEFAULT_MULTI_POINT", "default_plugin_sets", "in_tree_registry"]

DEFAULT_MULTI_POINT: Final = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)
"""kube-scheduler v1.30's default ``multiPoint`` list, in order (volume plugins and DefaultPreemption
join as they are implemented)."""


def in_tree_registry() -> Registry:
    """A fresh registry with every in-tree plugin."""
    registry = Registry()
    registry.register(priority_sort.PrioritySort.name, priority_sort.PrioritySort)
    registry.register(scheduling_gates.SchedulingGates.name, scheduling_gates.SchedulingGates)
    registry.register(node_unschedulable.NodeUnschedulable.name, node_unschedulable.NodeUnschedulable)
    registry.register(node_name.NodeName.name, node_name.NodeName)
    registry.register(taint_toleration.TaintToleration.name, taint_toleration.TaintToleration)
    registry.register(node_affinity.NodeAffinity.name, node_affinity.NodeAffinity, args=node_affinity.decode_args)
    registry.register(node_ports.NodePorts.name, node_ports.NodePorts)
    registry.register(node_resources_fit.NodeResourcesFit.name, node_resources_fit.NodeResourcesFit,
                      args=node_resources_fit.decode_args)
    registry.register(pod_topology_spread.PodTopologySpread.name, pod_topology_spread.PodTopologySpread,
                      args=pod_topology_spread.decode_args)
    registry.register(inter_pod_affinity.InterPodAffinity.name, inter_pod_affinity.InterPodAffinity,
                      args=inter_pod_affinity.decode_args)
    registry.register(node_resources_balanced_allocation.NodeResourcesBalancedAllocation.name,
                      node_resources_balanced_allocation.NodeResourcesBalancedAllocation,
                      args=node_resources_balanced_allocation.decode_args)
    registry.register(image_locality.ImageLocality.name, image_locality.ImageLocality)
    registry.register(default_binder.DefaultBinder.name, default_binder.DefaultBinder)
    return registry


def default_plugin_sets() -> Mapping[str, PluginSet]:
    """The default profile's plugin sets: everything through ``multiPoint``."""
    return {"multiPoint": PluginSet(DEFAULT_MULTI_POINT)}
