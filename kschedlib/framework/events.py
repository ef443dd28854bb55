"""Cluster events, and how a plugin says which ones can make a pod it rejected schedulable.

After a failed attempt a pod waits in the unschedulable pool.  A cluster event
(a node added, a pod deleted, ...) moves it back only if one of the plugins
that rejected it registered a matching event through
:class:`EnqueueExtensions`.  A plugin that does not implement it is assumed
to care about every event.

With queueing hints on (the ``queueing_hints`` switch: v1.32 and later, or the
``SchedulerQueueingHints`` gate), a registration's hint function then decides
whether this particular event may help this particular pod; a registration
without one always says :attr:`QueueingHint.QUEUE`.  With hints off (v1.30) hint
functions are recorded but not consulted.  A plugin whose events or hints differ
between kube versions reads the switches in ``events_to_register`` (through its
handle) and returns the set of the version in force: v1.30's events and hint
functions, or v1.36's narrower ones (the ``narrow_queueing_hints`` switch).
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable, Sequence
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.extension_points import Plugin
from kschedlib.model.objects import Pod
from kschedlib.model.resources import pod_requests

__all__ = [
    "ALL_EVENTS",
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "DEVICE_CLASS",
    "EnqueueExtensions",
    "NODE",
    "POD",
    "QueueingHint",
    "QueueingHintFn",
    "RESOURCE_CLAIM",
    "RESOURCE_SLICE",
    "WILDCARD",
    "hint_of",
    "object_change",
    "pod_changes",
    "same_pod_updated",
]

NODE: Final = "Node"
POD: Final = "Pod"
PERSISTENT_VOLUME: Final = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM: Final = "PersistentVolumeClaim"
STORAGE_CLASS: Final = "storage.k8s.io/StorageClass"
CSI_NODE: Final = "storage.k8s.io/CSINode"
CSI_DRIVER: Final = "storage.k8s.io/CSIDriver"
CSI_STORAGE_CAPACITY: Final = "storage.k8s.io/CSIStorageCapacity"
VOLUME_ATTACHMENT: Final = "storage.k8s.io/VolumeAttachment"
RESOURCE_CLAIM: Final = "resource.k8s.io/ResourceClaim"
RESOURCE_SLICE: Final = "resource.k8s.io/ResourceSlice"
DEVICE_CLASS: Final = "resource.k8s.io/DeviceClass"
WILDCARD: Final = "*"


@final
class ActionType(enum.IntFlag):
    """What happened to the object (bits, so a registration can name several)."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATION = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE_POD_OTHER = 2048
    UPDATE_NODE_DECLARED_FEATURE = 4096
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 8192
    UPDATE = 16380
    ALL = 16383


@final
class QueueingHint(enum.IntEnum):
    """A hint function's verdict on whether an event may make the pod schedulable."""

    QUEUE_SKIP = 0
    QUEUE = 1


@final
@attrs.frozen(slots=True, repr=False)
class ClusterEvent(FieldsRepr):
    """A change to a kind of object; ``label`` names it in metrics and reports."""

    resource: str
    action: ActionType
    label: str = ""

    @property
    def is_wildcard(self) -> bool:
        return self.resource == WILDCARD and self.action == ActionType.ALL

    def matches(self, incoming: ClusterEvent) -> bool:
        """Whether this registration covers ``incoming`` (a wildcard registration covers everything)."""
        if self.is_wildcard:
            return True
        if incoming.is_wildcard:
            return False
        return self.resource in (WILDCARD, incoming.resource) and bool(self.action & incoming.action)


QueueingHintFn = Callable[[Pod, object, object], QueueingHint]
"""``hint(pod, old_object, new_object)``: may the event make ``pod`` schedulable?"""


@final
@attrs.frozen(slots=True, repr=False)
class ClusterEventWithHint(FieldsRepr):
    """A registered event, with an optional hint function (not consulted while hints are off)."""

    event: ClusterEvent
    hint: QueueingHintFn | None = None


ALL_EVENTS: Final = ClusterEvent(WILDCARD, ActionType.ALL, "WildCardEvent")
UNSCHEDULABLE_TIMEOUT: Final = ClusterEvent(WILDCARD, ActionType.ALL, "UnschedulableTimeout")
NODE_ADD: Final = ClusterEvent(NODE, ActionType.ADD, "NodeAdd")
NODE_SPEC_UNSCHEDULABLE_CHANGE: Final = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT, "NodeSpecUnschedulableChange")
NODE_ALLOCATABLE_CHANGE: Final = ClusterEvent(NODE, ActionType.UPDATE_NODE_ALLOCATABLE, "NodeAllocatableChange")
NODE_LABEL_CHANGE: Final = ClusterEvent(NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
NODE_TAINT_CHANGE: Final = ClusterEvent(NODE, ActionType.UPDATE_NODE_TAINT, "NodeTaintChange")
NODE_CONDITION_CHANGE: Final = ClusterEvent(NODE, ActionType.UPDATE_NODE_CONDITION, "NodeConditionChange")
NODE_ANNOTATION_CHANGE: Final = ClusterEvent(NODE, ActionType.UPDATE_NODE_ANNOTATION, "NodeAnnotationChange")
ASSIGNED_POD_ADD: Final = ClusterEvent(POD, ActionType.ADD, "AssignedPodAdd")
ASSIGNED_POD_UPDATE: Final = ClusterEvent(POD, ActionType.UPDATE, "AssignedPodUpdate")
ASSIGNED_POD_DELETE: Final = ClusterEvent(POD, ActionType.DELETE, "AssignedPodDelete")
NODE_DELETE: Final = ClusterEvent(NODE, ActionType.DELETE, "NodeDelete")
NODE_DECLARED_FEATURE_CHANGE: Final = ClusterEvent(NODE, ActionType.UPDATE_NODE_DECLARED_FEATURE,
                                                   "NodeDeclaredFeatureChange")


def pod_changes(old: Pod, new: Pod, *, generated_claims: bool = False) -> list[ClusterEvent]:
    """The scheduling-relevant changes between two versions of a pod (kube's narrow pod update events).

    ``generated_claims``: whether a change of ``status.resourceClaimStatuses`` is its own kind
    (``UPDATE_POD_GENERATED_RESOURCE_CLAIM``, with Dynamic Resource Allocation on).  Changes that none
    of the narrow kinds describe are one ``UPDATE_POD_OTHER`` event.
    """
    label = "AssignedPod" if new.node_name else "UnschedulablePod"
    actions = []
    if old.labels != new.labels:
        actions.append((ActionType.UPDATE_POD_LABEL, "UpdatePodLabel"))
    if _scaled_down(old, new):
        actions.append((ActionType.UPDATE_POD_SCALE_DOWN, "UpdatePodScaleDown"))
    if old.scheduling_gates and not new.scheduling_gates:
        actions.append((ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, "UpdatePodSchedulingGatesEliminated"))
    if any(toleration not in old.tolerations for toleration in new.tolerations):
        actions.append((ActionType.UPDATE_POD_TOLERATION, "UpdatePodToleration"))
    if generated_claims and old.resource_claim_statuses != new.resource_claim_statuses:
        actions.append((ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM, "UpdatePodGeneratedResourceClaim"))
    if not actions:
        actions.append((ActionType.UPDATE_POD_OTHER, "UpdatePodOther"))
    return [ClusterEvent(POD, action, f"{label}{name.removeprefix('UpdatePod')}Update") for action, name in actions]


def object_change(resource: str, old: object, new: object) -> ClusterEvent:
    """The event for an object of ``resource`` added (``old`` None), deleted (``new`` None) or updated,
    labelled by kind and verb (``PersistentVolumeClaimAdd``, ``ResourceClaimUpdate``)."""
    if old is None:
        action, verb = ActionType.ADD, "Add"
    elif new is None:
        action, verb = ActionType.DELETE, "Delete"
    else:
        action, verb = ActionType.UPDATE, "Update"
    return ClusterEvent(resource, action, f"{resource.rpartition('/')[2]}{verb}")


def _scaled_down(old: Pod, new: Pod) -> bool:
    """Whether a request of any resource went down (kube's ``UpdatePodScaleDown``)."""
    before, after = pod_requests(old).to_dict(), pod_requests(new).to_dict()
    return any(after.get(name, 0) < amount for name, amount in before.items())


class EnqueueExtensions(Plugin):
    """Declares the cluster events that may make a pod this plugin rejected schedulable."""

    @abc.abstractmethod
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The events to watch; an empty list means no event can help (only a pod update)."""


def node_events(action: ActionType, hint: QueueingHintFn | None = None) -> ClusterEventWithHint:
    """A registration for node events with ``action`` (and a hint function; a convenience for plugins)."""
    return ClusterEventWithHint(ClusterEvent(NODE, action), hint)


def pod_events(action: ActionType, hint: QueueingHintFn | None = None) -> ClusterEventWithHint:
    """A registration for pod events with ``action`` (and a hint function)."""
    return ClusterEventWithHint(ClusterEvent(POD, action), hint)


def hint_of(verdict: bool) -> QueueingHint:
    """``QUEUE`` for true, ``QUEUE_SKIP`` for false (hint functions read better with it)."""
    return QueueingHint.QUEUE if verdict else QueueingHint.QUEUE_SKIP


def same_pod_updated(pod: Pod, old: object, new: object) -> QueueingHint:
    """A hint: only an update of the waiting pod itself may help (tolerations, scheduling gates)."""
    return hint_of(isinstance(new, Pod) and new.uid == pod.uid)
