"""kube-scheduler's in-tree plugins and its default profile of each version; scheduler-plugins' batch
plugins (Coscheduling, CapacityScheduling), which no default profile enables, live apart in
:mod:`kschedlib.plugins.batch` and are registered here too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kschedlib.framework.config import PluginRef, PluginSet, SchedulerConfig
from kschedlib.framework.registry import Registry
from kschedlib.plugins import (
    batch,
    default_binder,
    default_preemption,
    dynamic_resources,
    image_locality,
    inter_pod_affinity,
    node_affinity,
    node_declared_features,
    node_name,
    node_ports,
    node_resources_balanced_allocation,
    node_resources_fit,
    node_unschedulable,
    node_volume_limits,
    non_csi_limits,
    pod_topology_spread,
    priority_sort,
    scheduling_gates,
    taint_toleration,
    volume_binding,
    volume_restrictions,
    volume_zone,
)
from kschedlib.versions import Switches

__all__ = [
    "DEFAULT_MULTI_POINT",
    "LEGACY_VOLUME_LIMITS",
    "default_multi_point",
    "default_plugin_sets",
    "default_registry",
    "in_tree_registry",
]

DEFAULT_MULTI_POINT: Final = (
    PluginRef("SchedulingGates"),
    PluginRef("PrioritySort"),
    PluginRef("NodeUnschedulable"),
    PluginRef("NodeName"),
    PluginRef("TaintToleration", 3),
    PluginRef("NodeAffinity", 2),
    PluginRef("NodePorts"),
    PluginRef("NodeResourcesFit", 1),
    PluginRef("VolumeRestrictions"),
    PluginRef("EBSLimits"),
    PluginRef("GCEPDLimits"),
    PluginRef("NodeVolumeLimits"),
    PluginRef("AzureDiskLimits"),
    PluginRef("VolumeBinding"),
    PluginRef("VolumeZone"),
    PluginRef("PodTopologySpread", 2),
    PluginRef("InterPodAffinity", 2),
    PluginRef("DefaultPreemption"),
    PluginRef("NodeResourcesBalancedAllocation", 1),
    PluginRef("ImageLocality", 1),
    PluginRef("DefaultBinder"),
)
"""kube-scheduler v1.30's default ``multiPoint`` list, in order."""


def in_tree_registry() -> Registry:
    """A fresh registry with every plugin kschedlib ships: kube's in-tree plugins and scheduler-plugins'
    batch plugins (:func:`kschedlib.plugins.batch.register`)."""
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
    registry.register(volume_restrictions.VolumeRestrictions.name, volume_restrictions.VolumeRestrictions)
    for limits in (non_csi_limits.EBSLimits, non_csi_limits.GCEPDLimits, non_csi_limits.AzureDiskLimits,
                   non_csi_limits.CinderLimits):
        registry.register(limits.name, limits)
    registry.register(node_volume_limits.NodeVolumeLimits.name, node_volume_limits.NodeVolumeLimits)
    registry.register(volume_binding.VolumeBinding.name, volume_binding.VolumeBinding,
                      args=volume_binding.decode_args)
    registry.register(volume_zone.VolumeZone.name, volume_zone.VolumeZone)
    registry.register(default_preemption.DefaultPreemption.name, default_preemption.DefaultPreemption,
                      args=default_preemption.decode_args)
    registry.register(dynamic_resources.DynamicResources.name, dynamic_resources.new,
                      args=dynamic_resources.decode_args)
    registry.register(node_declared_features.NodeDeclaredFeatures.name, node_declared_features.NodeDeclaredFeatures)
    batch.register(registry)  # registered, in no default profile
    return registry


def default_registry(config: SchedulerConfig) -> Registry:
    """The registry of a Scheduler built without one: :func:`in_tree_registry`, plus the plugins installed
    packages publish (:meth:`~kschedlib.framework.Registry.with_entry_points`) when ``config`` names a plugin
    that is not in-tree.  Looking entry points up reads every installed package's metadata, which costs a
    one-cycle command more than its cycle, and only a config that names such a plugin needs them."""
    registry = in_tree_registry()
    named = {name for profile in config.profiles for name in profile.plugin_config}
    for profile in config.profiles:
        for plugin_set in (profile.plugins or {}).values():
            named.update(ref.name for ref in plugin_set.enabled)
    if all(name in registry for name in named):
        return registry
    return registry.with_entry_points()


LEGACY_VOLUME_LIMITS: Final = frozenset({"EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits"})
"""The in-tree volume-limit plugins kube-scheduler dropped in v1.31 (and refuses in configurations)."""


def default_multi_point(switches: Switches | None = None) -> tuple[PluginRef, ...]:
    """The default ``multiPoint`` list of the kube-scheduler version whose ``switches`` are given."""
    if switches is None:
        return DEFAULT_MULTI_POINT
    refs = [ref for ref in DEFAULT_MULTI_POINT
            if not (switches.legacy_volume_limits_removed and ref.name in LEGACY_VOLUME_LIMITS)]
    if switches.dynamic_resources:
        weight = 2 if switches.dynamic_resources_score else None
        at = next(i for i, ref in enumerate(refs) if ref.name == "DefaultPreemption")
        refs.insert(at, PluginRef("DynamicResources", weight))
    if switches.node_declared_features:
        refs.append(PluginRef("NodeDeclaredFeatures"))
    return tuple(refs)


def default_plugin_sets(switches: Switches | None = None) -> Mapping[str, PluginSet]:
    """The default profile's plugin sets: everything through ``multiPoint`` (v1.30's without ``switches``)."""
    return {"multiPoint": PluginSet(default_multi_point(switches))}
