"""Which pods a node event may help, and which events each profile's plugins watch."""

from __future__ import annotations

from collections.abc import Mapping

from kschedlib._internal.queue import EventRegistration, PreCheck
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib.framework.events import (
    ALL_EVENTS,
    NODE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
)
from kschedlib.framework.node_info import NodeInfo
from kschedlib.model.objects import NO_SCHEDULE, Pod
from kschedlib.plugins import node_affinity, node_name, node_ports, node_resources_fit, taint_toleration

__all__ = ["event_registrations", "node_pre_check"]

_WATCHING_POINTS = ("preEnqueue", "preFilter", "filter", "reserve", "permit")
_NO_SCHEDULE = frozenset({NO_SCHEDULE})


def node_pre_check(node_info: NodeInfo) -> PreCheck:
    """kube-scheduler v1.30's pre-check before a node event moves a pod (``eventhandlers.go``: ``preCheckForNode``)."""
    node = node_info.node

    def check(pod: Pod) -> bool:
        if node is None:
            return False
        if node_resources_fit.fits(pod, node_info):
            return False
        if not node_affinity.required_node_affinity_matches(pod, node):
            return False
        if not node_name.fits(pod, node_info) or not node_ports.fits(pod, node_info):
            return False
        return taint_toleration.find_untolerated_taint(node.taints, pod.tolerations, _NO_SCHEDULE) is None

    return check


def _plugin_events(plugin: object, narrow: bool) -> list[ClusterEventWithHint]:
    """The plugin's registrations; before v1.36's narrow hints a Node/Add watcher also watches taint
    updates (without a hint function: kube v1.30's fix for pods its node pre-check left behind)."""
    if not isinstance(plugin, EnqueueExtensions):
        return [ClusterEventWithHint(ALL_EVENTS)]
    registrations = list(plugin.events_to_register())
    if narrow:
        return registrations
    events = [registration.event for registration in registrations]
    node_add = any(e.resource == NODE and e.action & ActionType.ADD for e in events)
    node_taint = any(e.resource == NODE and e.action & ActionType.UPDATE_NODE_TAINT for e in events)
    if node_add and not node_taint:
        registrations.append(ClusterEventWithHint(ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT)))
    return registrations


def event_registrations(profiles: Mapping[str, ProfileRuntime], *,
                        narrow: bool = False) -> dict[str, list[EventRegistration]]:
    """Per profile, the events each plugin at PreEnqueue/PreFilter/Filter/Reserve/Permit watches."""
    out: dict[str, list[EventRegistration]] = {}
    for scheduler_name, runtime in profiles.items():
        seen: set[str] = set()
        registrations: list[EventRegistration] = []
        for point in _WATCHING_POINTS:
            for name in runtime.profile.points[point]:
                if name in seen:
                    continue
                seen.add(name)
                plugin = runtime.profile.plugins[name]
                registrations.extend(EventRegistration(name, registration.event, registration.hint)
                                     for registration in _plugin_events(plugin, narrow))
        out[scheduler_name] = registrations
    return out

