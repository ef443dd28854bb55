"""PrioritySort: the default QueueSort plugin (higher priority first, then first come, first served).

kube-scheduler compares ``spec.priority`` (absent reads as 0) and then the time
the pod entered the queue.  Go's heap breaks exact timestamp ties arbitrarily;
here the queue's arrival ``sequence`` breaks them, so equal pods leave the
queue in the order they arrived and every run is reproducible.
"""

from __future__ import annotations

from typing import ClassVar, final

from kschedlib.framework.extension_points import QueueSortPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.queued_pod import QueuedPodInfo

__all__ = ["PrioritySort", "less", "sort_key"]


def less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """Whether ``a`` is popped before ``b``: priority, then queue timestamp, then arrival sequence."""
    pa = a.pod_info.pod.effective_priority
    pb = b.pod_info.pod.effective_priority
    if pa != pb:
        return pa > pb
    if a.timestamp != b.timestamp:
        return a.timestamp < b.timestamp
    return a.sequence < b.sequence


def sort_key(info: QueuedPodInfo) -> tuple[int, float, int]:
    """:func:`less` as a key: ``less(a, b)`` exactly when ``sort_key(a) < sort_key(b)``.

    The queue compares keys computed once per entry instead of calling :func:`less` at every step
    of its heap (the key must not change while the entry is queued, as the heap's order must not).
    """
    return -info.pod_info.pod.effective_priority, info.timestamp, info.sequence


@final
class PrioritySort(QueueSortPlugin):
    """Orders the active queue by :func:`less`. No args, no cluster events."""

    name: ClassVar[str] = "PrioritySort"
    __slots__ = ()

    def __init__(self, args: None, handle: Handle) -> None:
        """Nothing to configure: kube's PrioritySort has no args."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return less(a, b)
