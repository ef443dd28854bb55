"""SchedulingGates: keeps a pod out of the active queue while ``spec.schedulingGates`` is non-empty.

Only an update of the pod itself (removing gates) can release it: without queueing hints
(v1.30) the queue's update path handles that and the plugin registers nothing; with hints it
registers the removal of the last gate, for the pod itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, final

from kschedlib.framework.events import ActionType, ClusterEventWithHint, EnqueueExtensions, pod_events, same_pod_updated
from kschedlib.framework.extension_points import PreEnqueuePlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["SchedulingGates", "gates_message"]


def gates_message(pod: Pod) -> str | None:
    """``waiting for scheduling gates: [g1 g2]`` (Go's ``%v`` of a string slice), or None when ungated."""
    gates = pod.scheduling_gates
    if not gates:
        return None
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


@final
class SchedulingGates(PreEnqueuePlugin, EnqueueExtensions):
    """Gated pods are UnschedulableAndUnresolvable until their gates are removed."""

    name: ClassVar[str] = "SchedulingGates"
    __slots__ = ("_narrow_hints",)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable."""
        if not self._narrow_hints:
            return ()
        return (pod_events(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED, same_pod_updated),)

    def __init__(self, args: None, handle: Handle) -> None:
        self._narrow_hints = handle.switches.narrow_queueing_hints
        """Nothing to configure: kube's SchedulingGates has no args."""

    def pre_enqueue(self, pod: Pod) -> Status:
        message = gates_message(pod)
        if message is None:
            return Status.success()
        return Status.unresolvable(message)
