"""NodeResourcesFit's queueing hints: which pod and node events may give a pod room.

``after_pod_event`` and ``after_node_change`` are kube v1.36's; the ``_v130`` pair are v1.30's (its
``SchedulerQueueingHints`` gate on): a deleted pod helps only if it was placed, an update never
helps (no in-place resize), and an added or updated node helps whenever the pod would fit it empty.
"""

from __future__ import annotations

from kschedlib.framework.events import QueueingHint, hint_of
from kschedlib.framework.node_info import NodeInfo
from kschedlib.model.objects import Node, Pod
from kschedlib.model.resources import Resources, pod_requests
from kschedlib.plugins.node_resources_fit.fit import fits

__all__ = ["after_node_change", "after_node_change_v130", "after_pod_event", "after_pod_event_v130"]


def after_pod_event(pod: Pod, old: object, new: object) -> QueueingHint:
    """A placed (or nominated) pod was deleted, or a pod's requests went down where ``pod`` needs room."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if new is None:
        return hint_of(bool(old.node_name or old.nominated_node_name))
    if not isinstance(new, Pod):
        return QueueingHint.QUEUE
    if new.uid == pod.uid:
        return QueueingHint.QUEUE
    if not new.node_name:
        return QueueingHint.QUEUE_SKIP
    before, after = pod_requests(old), pod_requests(new)
    wanted = pod_requests(pod).to_dict()
    return hint_of(any(before.get(name) > after.get(name) for name in wanted))


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A node was added where the pod's requests fit its allocatable, or grew in something it requests."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    if fits(pod, NodeInfo.of(new)):
        return QueueingHint.QUEUE_SKIP
    if not isinstance(old, Node):
        return QueueingHint.QUEUE
    return hint_of(_requested_grew(pod_requests(pod), NodeInfo.of(old).allocatable, NodeInfo.of(new).allocatable))


def _requested_grew(requests: Resources, before: Resources, after: Resources) -> bool:
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    return any(after.get(name) > before.get(name) for name, amount in requests.to_dict().items() if amount)


def after_pod_event_v130(pod: Pod, old: object, new: object) -> QueueingHint:
    """A placed pod was deleted (an update of another pod never frees room in v1.30)."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    return hint_of(new is None and bool(old.node_name))


def after_node_change_v130(pod: Pod, old: object, new: object) -> QueueingHint:
    """The added or updated node's allocatable holds the pod's requests (as if the node were empty)."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    return hint_of(not fits(pod, NodeInfo.of(new)))
