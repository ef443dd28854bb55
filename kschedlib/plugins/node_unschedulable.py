"""NodeUnschedulable: cordoned nodes (``spec.unschedulable``) take only pods that tolerate it.

A pod tolerates a cordon exactly when it tolerates the taint
``node.kubernetes.io/unschedulable:NoSchedule`` (the taint the node lifecycle
controller adds to cordoned nodes), so both are expressed with one toleration.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import ClassVar, Final, final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import (
    ActionType,
    ClusterEventWithHint,
    EnqueueExtensions,
    QueueingHint,
    hint_of,
    node_events,
    pod_events,
)
from kschedlib.framework.extension_points import FilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalFilter
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.status import Status
from kschedlib.model.objects import NO_SCHEDULE, Node, Pod, Taint

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable", "fits"]

ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT: Final = Taint(key="node.kubernetes.io/unschedulable", effect=NO_SCHEDULE)
"""The taint a cordon stands for; no value."""

_REJECTED: Final = Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
_NO_NODE: Final = Status.from_error("node not found")


def tolerates_unschedulable(pod: Pod) -> bool:
    """Whether any of the pod's tolerations tolerates :data:`UNSCHEDULABLE_TAINT`."""
    return any(toleration.tolerates(UNSCHEDULABLE_TAINT) for toleration in pod.tolerations)


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when a schedulable node was added or a node became schedulable."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    if isinstance(old, Node):
        return hint_of(old.unschedulable and not new.unschedulable)
    return hint_of(not new.unschedulable)


def after_node_change_v130(pod: Pod, old: object, new: object) -> QueueingHint:
    """kube v1.30: Queue when the added or updated node is not cordoned (whatever it was before)."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    return hint_of(not new.unschedulable)


def after_toleration_added(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the waiting pod itself now tolerates the unschedulable taint."""
    return hint_of(isinstance(new, Pod) and new.uid == pod.uid and tolerates_unschedulable(new))


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """The node is not cordoned, or the pod tolerates the cordon. A ghost node (no Node) never fits."""
    node = node_info.node
    return node is not None and (not node.unschedulable or tolerates_unschedulable(pod))


@final
class NodeUnschedulable(FilterPlugin, NodeLocalFilter, EnqueueExtensions):
    """Rejects cordoned nodes (UnschedulableAndUnresolvable) unless the pod tolerates the cordon."""

    name: ClassVar[str] = "NodeUnschedulable"
    __slots__ = ("_narrow_hints",)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (v1.30's or v1.36's)."""
        if not self._narrow_hints:
            return (node_events(ActionType.ADD | ActionType.UPDATE, after_node_change_v130),)
        return (node_events(ActionType.ADD | ActionType.UPDATE_NODE_TAINT, after_node_change),
                pod_events(ActionType.UPDATE_POD_TOLERATION, after_toleration_added))

    def __init__(self, args: None, handle: Handle) -> None:
        self._narrow_hints = handle.switches.narrow_queueing_hints
        """Nothing to configure: kube's NodeUnschedulable has no args."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.node is None:
            return _NO_NODE
        return Status.SUCCESS if fits(pod, node_info) else _REJECTED

    def filter_key(self, state: CycleState, pod: Pod) -> Hashable:
        """The verdict depends only on the tolerations."""
        return pod.tolerations
