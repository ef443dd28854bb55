"""What changed, as kube-scheduler's event handlers see it: node updates, pod updates and other objects
as cluster events (``eventhandlers.go``).  Pure functions of the old and new objects."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final, cast

import attrs

from kschedlib._internal.store import ObjectStore
from kschedlib.framework import events as ev
from kschedlib.model._kinds import is_dra_object
from kschedlib.model.objects import Node, Pod

if TYPE_CHECKING:
    from kschedlib.model.dra import DeviceClass, ResourceClaim, ResourceSlice

__all__ = ["node_changes", "object_changes", "spec_changed"]

_DRA_RESOURCES: Final[dict[str, str]] = {"ResourceClaim": ev.RESOURCE_CLAIM, "ResourceSlice": ev.RESOURCE_SLICE,
                                         "DeviceClass": ev.DEVICE_CLASS}
"""The DRA classes whose objects are cluster events, by name, with their event resource (templates are none:
nobody watches them)."""


def _dra_resource(obj: object) -> str | None:
    """The event resource of a DRA object that is a cluster event (asked without importing the DRA model)."""
    return _DRA_RESOURCES.get(type(obj).__name__) if is_dra_object(obj) else None


def node_changes(old: Node, new: Node, *, declared_features: bool = False) -> list[ev.ClusterEvent]:
    """The scheduling-relevant changes between two versions of a node, as cluster events.

    ``declared_features``: whether ``status.declaredFeatures`` is read (NodeDeclaredFeatures gate).
    """
    events: list[ev.ClusterEvent] = []
    if old.unschedulable != new.unschedulable and not new.unschedulable:
        events.append(ev.NODE_SPEC_UNSCHEDULABLE_CHANGE)
    if old.allocatable != new.allocatable:
        events.append(ev.NODE_ALLOCATABLE_CHANGE)
    if old.labels != new.labels:
        events.append(ev.NODE_LABEL_CHANGE)
    if old.taints != new.taints:
        events.append(ev.NODE_TAINT_CHANGE)
    if old.conditions != new.conditions:
        events.append(ev.NODE_CONDITION_CHANGE)
    if old.annotations != new.annotations:
        events.append(ev.NODE_ANNOTATION_CHANGE)
    if declared_features and old.declared_features != new.declared_features:
        events.append(ev.NODE_DECLARED_FEATURE_CHANGE)
    return events


def spec_changed(old: Pod, new: Pod) -> bool:
    """Whether a pending pod changed beyond its status (kube's ``isPodUpdated``)."""
    def strip(pod: Pod) -> Pod:
        return attrs.evolve(pod, phase="", conditions=(), nominated_node_name="", start_time=None)

    return strip(old) != strip(new)


def object_changes(store: ObjectStore, items: Iterable[object], *, storage_events: bool,
                   dra_events: bool) -> list[tuple[ev.ClusterEvent, object, object]]:
    """Each object beyond nodes and pods that ``items`` adds to or changes in ``store``, as an event.

    Storage objects are events with queueing hints on (``storage_events``: the volume plugins' hints read
    them; without hints they watch every event); DRA objects whenever Dynamic Resource Allocation is on
    (``dra_events``: kube's informers deliver them then).
    """
    changes: list[tuple[ev.ClusterEvent, object, object]] = []
    storage, dra = store.storage, store.dra
    for obj in items:
        replaced = storage.replaced(obj) if storage_events else None
        if replaced is None and dra_events and (resource := _dra_resource(obj)) is not None:
            replaced = resource, dra.stored(cast("DeviceClass | ResourceSlice | ResourceClaim", obj))
        if replaced is None or replaced[1] == obj:
            continue
        resource, old = replaced
        changes.append((ev.object_change(resource, old, obj), old, obj))
    return changes


def event_resource(store: ObjectStore, obj: object, *, storage_events: bool, dra_events: bool) -> str | None:
    """The event resource of ``obj``'s kind when its changes are cluster events (as for :func:`object_changes`),
    else ``None``."""
    stored = store.storage.replaced(obj) if storage_events else None
    if stored is not None:
        return stored[0]
    return _dra_resource(obj) if dra_events else None
