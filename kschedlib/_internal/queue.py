"""The scheduling queue: pods waiting for a scheduling attempt.

Pods enter through PreEnqueue (a gated pod is parked until it is updated),
are popped in QueueSort order, and after a failed attempt wait in the
unschedulable pool until a cluster event may help them.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import final

import attrs

from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["SchedulingQueue"]

Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
PreEnqueue = Callable[[Pod], Status]


@final
class _Entry:
    """A heap entry ordered by the profile's QueueSort ``less``."""

    __slots__ = ("info", "less", "removed")

    def __init__(self, info: QueuedPodInfo, less: Less) -> None:
        self.info = info
        self.less = less
        self.removed = False

    def __lt__(self, other: _Entry) -> bool:
        return self.less(self.info, other.info)


@final
class SchedulingQueue:
    """activeQ (a heap), the unschedulable pool and gated pods, keyed by ``namespace/name``."""

    __slots__ = ("_active", "_entries", "_less", "_pre_enqueue", "_sequence", "_unschedulable", "now", "retry_failed")

    def __init__(self, less: Less, pre_enqueue: PreEnqueue, now: Callable[[], float]) -> None:
        self._less = less
        self._pre_enqueue = pre_enqueue
        self._active: list[_Entry] = []
        self._entries: dict[str, _Entry] = {}
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._sequence = itertools.count()
        self.now = now
        self.retry_failed = True

    def __len__(self) -> int:
        return len(self._entries) + len(self._unschedulable)

    @property
    def active_count(self) -> int:
        return len(self._entries)

    def add(self, pod_info: PodInfo) -> QueuedPodInfo:
        """A new pending pod: to activeQ, or parked as gated when a PreEnqueue plugin says no."""
        info = QueuedPodInfo(pod_info, self.now(), sequence=next(self._sequence))
        self._enqueue(info)
        return info

    def _enqueue(self, info: QueuedPodInfo) -> None:
        status = self._pre_enqueue(info.pod)
        if not status.is_success:
            info.gated = True
            info.unschedulable_plugins = frozenset({status.plugin}) if status.plugin else frozenset()
            self._unschedulable[info.pod.key] = info
            return
        info.gated = False
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.now()
        entry = _Entry(info, self._less)
        self._entries[info.pod.key] = entry
        heapq.heappush(self._active, entry)

    def pop(self) -> QueuedPodInfo | None:
        """The head of activeQ (its attempt counted), or ``None`` when activeQ is empty."""
        while self._active:
            entry = heapq.heappop(self._active)
            if entry.removed:
                continue
            del self._entries[entry.info.pod.key]
            info = entry.info
            info.attempts += 1
            info.unschedulable_plugins = frozenset()
            info.pending_plugins = frozenset()
            return info
        return None

    def add_unschedulable(self, info: QueuedPodInfo, rejectors: frozenset[str]) -> None:
        """Park a pod after a failed attempt until an event moves it."""
        info.timestamp = self.now()
        info.unschedulable_plugins = rejectors
        self._unschedulable[info.pod.key] = info

    def move_all_to_active(self) -> int:
        """Give every parked (non-gated) pod another attempt; returns how many moved."""
        moved = [info for info in self._unschedulable.values()
                 if not info.gated and (self.retry_failed or info.attempts == 0)]
        for info in moved:
            del self._unschedulable[info.pod.key]
            self._enqueue(info)
        return len(moved)

    def delete(self, pod: Pod) -> bool:
        """Forget a pending pod wherever it is; returns whether it was queued."""
        entry = self._entries.pop(pod.key, None)
        if entry is not None:
            entry.removed = True
            return True
        return self._unschedulable.pop(pod.key, None) is not None

    def update(self, pod_info: PodInfo) -> None:
        """A pending pod changed: replace it in place, or give a parked one a new chance."""
        key = pod_info.pod.key
        entry = self._entries.pop(key, None)
        if entry is not None:
            entry.removed = True
            info = attrs.evolve(entry.info, pod_info=pod_info)
            fresh = _Entry(info, self._less)
            self._entries[key] = fresh
            heapq.heappush(self._active, fresh)
            return
        parked = self._unschedulable.pop(key, None)
        if parked is None:
            self.add(pod_info)
            return
        parked.pod_info = pod_info
        self._enqueue(parked)

    def get(self, key: str) -> QueuedPodInfo | None:
        entry = self._entries.get(key)
        return entry.info if entry is not None else self._unschedulable.get(key)

    def pending(self) -> dict[str, tuple[str, QueuedPodInfo]]:
        """Every queued pod with where it is: ``active``, ``gated`` or ``unschedulable``."""
        out = {key: ("active", entry.info) for key, entry in self._entries.items()}
        for key, info in self._unschedulable.items():
            out[key] = ("gated" if info.gated else "unschedulable", info)
        return out
