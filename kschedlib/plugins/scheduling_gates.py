"""SchedulingGates: keeps a pod out of the active queue while ``spec.schedulingGates`` is non-empty.

The plugin registers no cluster events: only an update of the pod itself
(removing gates) can release it, which the queue's update path handles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, final

from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
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
    __slots__ = ()

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (kube-scheduler v1.30)."""
        return ()

    def __init__(self, args: None, handle: Handle) -> None:
        """Nothing to configure: kube's SchedulingGates has no args."""

    def pre_enqueue(self, pod: Pod) -> Status:
        message = gates_message(pod)
        if message is None:
            return Status.success()
        return Status.unresolvable(message)
