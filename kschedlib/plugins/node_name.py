"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node.

Pods that already carry ``spec.nodeName`` are normally treated as bound and
never queued; the filter matters for direct use, ``explain`` and the queue's
node pre-check.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import ClassVar, Final, final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ActionType, ClusterEventWithHint, EnqueueExtensions, node_events
from kschedlib.framework.extension_points import FilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalFilter
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["ERR_REASON", "NodeName", "fits"]

ERR_REASON: Final = "node(s) didn't match the requested node name"
_REJECTED: Final = Status.unresolvable(ERR_REASON)


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """kube's ``nodename.Fits``: no requested node, or the requested node is this one."""
    return not pod.node_name or pod.node_name == node_info.name


@final
class NodeName(FilterPlugin, NodeLocalFilter, EnqueueExtensions):
    """Rejects every node but the requested one (UnschedulableAndUnresolvable)."""

    name: ClassVar[str] = "NodeName"
    __slots__ = ("_narrow_hints",)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (only Node/Add with hints)."""
        if not self._narrow_hints:
            return (node_events(ActionType.ADD | ActionType.UPDATE),)
        return (node_events(ActionType.ADD),)

    def __init__(self, args: None, handle: Handle) -> None:
        self._narrow_hints = handle.switches.narrow_queueing_hints
        """Nothing to configure: kube's NodeName has no args."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.SUCCESS if fits(pod, node_info) else _REJECTED

    def filter_key(self, state: CycleState, pod: Pod) -> Hashable:
        """The verdict depends only on ``spec.nodeName``."""
        return pod.node_name
