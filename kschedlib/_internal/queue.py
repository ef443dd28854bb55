"""The scheduling queue (kube-scheduler v1.30; v1.36's queueing hints and backoffQ pops behind switches).

Three places a pending pod can be, plus "in flight" while it is being scheduled::

    add ──PreEnqueue ok──> activeQ ──pop──> (attempt) ──fails──> backoffQ or unschedulable pool
         └─PreEnqueue no──> unschedulable pool (gated)        │
    backoffQ ──backoff expired (flush)──> activeQ              │ a cluster event of interest to one
    unschedulable pool ──event / 5-minute flush──> backoffQ or activeQ <┘ of its rejector plugins

A failed pod goes straight to backoffQ when it has no rejector plugin (an
error) or when a cluster event arrived while it was in flight.  All time is
read from the injected clock.

With queueing hints on (``hints``), the rejector plugins' hint functions decide per event
whether a pooled pod moves; events that arrive while a pod is in flight are kept and replayed
through the hints when it fails.  With ``narrow`` as well (v1.36) the v1.30 node pre-check is
gone and an update of a pooled pod goes through the hints too (v1.30 with its gate on keeps
both).  With ``pop_from_backoff`` an idle scheduler pops backoffQ's head (pods that failed with
an error wait out their backoff), and backoff ends on whole seconds, ordered by priority within one.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.events import ClusterEvent, QueueingHint, QueueingHintFn, pod_changes
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["EventRegistration", "SchedulingQueue"]

Less = Callable[[QueuedPodInfo, QueuedPodInfo], bool]
SortKey = Callable[[QueuedPodInfo], tuple[int, float, int]]
PreEnqueue = Callable[[Pod], Status]
PreCheck = Callable[[Pod], bool]
SCHEDULING_GATES: Final = "SchedulingGates"
DEFAULT_MAX_IN_UNSCHEDULABLE: Final = 300.0
SKIP: Final = "skip"
"""Requeue strategies (kube's queueSkip / queueAfterBackoff / queueImmediately)."""
AFTER_BACKOFF: Final = "after_backoff"
IMMEDIATELY: Final = "immediately"


@final
@attrs.frozen(slots=True, repr=False)
class EventRegistration(FieldsRepr):
    """A plugin of a profile watches ``event``; ``hint`` (if any) judges each such event."""

    plugin: str
    event: ClusterEvent
    hint: QueueingHintFn | None = None

    def judge(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """The hint for this event; no hint function, or one that fails, means QUEUE (as in kube)."""
        if self.hint is None:
            return QueueingHint.QUEUE
        try:
            return self.hint(pod, old, new)
        except Exception:  # kube treats a hint function's error as Queue
            return QueueingHint.QUEUE


@final
class _ActiveEntry:
    """An activeQ entry ordered by the QueueSort plugin (by its key, computed once, when it has one).

    The heap holds ``(key, entry)`` pairs: with keys, most comparisons end at the keys without calling
    ``__lt__``, and where two keys are equal (or both ``None``) the pair compares as ``__lt__`` does, so the
    heap's order is what a heap of entries would have.
    """

    __slots__ = ("info", "key", "less", "removed")

    def __init__(self, info: QueuedPodInfo, less: Less, sort_key: SortKey | None = None) -> None:
        self.info = info
        self.less = less
        self.key = sort_key(info) if sort_key is not None else None
        self.removed = False

    def __lt__(self, other: _ActiveEntry) -> bool:
        key = self.key
        if key is not None and other.key is not None:
            return key < other.key
        return self.less(self.info, other.info)


@final
class _BackoffEntry:
    """A backoffQ heap entry ordered by backoff expiry (then by ``less`` when given, else by arrival)."""

    __slots__ = ("expiry", "info", "less", "removed")

    def __init__(self, info: QueuedPodInfo, expiry: float, less: Less | None = None) -> None:
        self.info = info
        self.expiry = expiry
        self.less = less
        self.removed = False

    def __lt__(self, other: _BackoffEntry) -> bool:
        if self.less is not None and self.expiry == other.expiry:
            return self.less(self.info, other.info)
        return (self.expiry, self.info.sequence) < (other.expiry, other.info.sequence)


@final
class SchedulingQueue:
    """activeQ, backoffQ and the unschedulable pool, keyed by ``namespace/name``."""

    def __init__(
        self,
        less: Less,
        pre_enqueue: PreEnqueue,
        now: Callable[[], float],
        *,
        registrations: Mapping[str, Sequence[EventRegistration]] | None = None,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE,
        hints: bool = False,
        narrow: bool = False,
        pop_from_backoff: bool = False,
        generated_claims: bool = False,
        sort_key: SortKey | None = None,
    ) -> None:
        """``sort_key`` is ``less`` as a key (see :func:`kschedlib.plugins.priority_sort.sort_key`), if it has one."""
        self._less = less
        self._sort_key = sort_key
        self._pre_enqueue = pre_enqueue
        self.now = now
        self._registrations = dict(registrations or {})
        self._interest: dict[ClusterEvent, bool] = {}
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self._active: list[tuple[Any, _ActiveEntry]] = []
        """``(entry.key, entry)`` pairs (see :class:`_ActiveEntry`)."""
        self._active_by_key: dict[str, _ActiveEntry] = {}
        self._backoff: list[_BackoffEntry] = []
        self._backoff_by_key: dict[str, _BackoffEntry] = {}
        self._unschedulable: dict[str, QueuedPodInfo] = {}
        self._order = itertools.count()
        self.scheduling_cycle = 0
        self.move_request_cycle = -1
        self.retry_failed = True
        self.incoming: dict[tuple[str, str], int] = {}
        self.hints = hints
        self.narrow = hints and narrow
        self.pop_from_backoff = pop_from_backoff
        self.generated_claims = generated_claims
        """Whether a pod's ``resourceClaimStatuses`` changing is its own kind of update (DRA on)."""
        self._backoff_less = less if pop_from_backoff else None
        self._errored: list[_BackoffEntry] = []
        """Pods backing off after an error: never popped before their backoff ends."""
        self._in_flight: dict[str, int] = {}
        """Popped pods (with hints on) -> how many in-flight events had been seen when they left."""
        self._flight_events: list[tuple[ClusterEvent, object, object]] = []
        self._flight_base = 0

    # --- bookkeeping --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._active_by_key) + len(self._backoff_by_key) + len(self._unschedulable)

    def has_active(self) -> bool:
        """Whether activeQ holds a pod ready for a scheduling cycle."""
        return bool(self._active_by_key)

    def _count(self, queue: str, event: str) -> None:
        key = (queue, event)
        self.incoming[key] = self.incoming.get(key, 0) + 1

    def _stamp(self, info: QueuedPodInfo) -> None:
        """Set the pod's timestamp to now; ``sequence`` keeps equal timestamps in stamping order."""
        info.timestamp = self.now()
        info.sequence = next(self._order)

    def backoff_duration(self, attempts: int) -> float:
        """1 s doubling per attempt up to the maximum (``scheduling_queue.go``: ``calculateBackoffDuration``)."""
        duration = self.initial_backoff
        for _ in range(1, attempts):
            if duration > self.max_backoff - duration:
                return self.max_backoff
            duration += duration
        return duration

    def backoff_expiry(self, info: QueuedPodInfo) -> float:
        expiry = info.timestamp + self.backoff_duration(info.attempts)
        return float(math.floor(expiry)) if self.pop_from_backoff else expiry

    def is_backing_off(self, info: QueuedPodInfo) -> bool:
        return not info.gated and self.backoff_expiry(info) > self.now()

    # --- entering -----------------------------------------------------------------------------

    def _to_active(self, info: QueuedPodInfo) -> bool:
        """Run PreEnqueue; into activeQ, or into the pool as gated. Returns whether it is active."""
        status = self._pre_enqueue(info.pod)
        if not status.is_success:
            info.gated = True
            if status.plugin:
                info.unschedulable_plugins = info.unschedulable_plugins | {status.plugin}
            self._unschedulable[info.pod.key] = info
            return False
        info.gated = False
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.now()
        entry = _ActiveEntry(info, self._less, self._sort_key)
        self._active_by_key[info.pod.key] = entry
        heapq.heappush(self._active, (entry.key, entry))
        return True

    def _to_backoff(self, info: QueuedPodInfo) -> None:
        entry = _BackoffEntry(info, self.backoff_expiry(info), self._backoff_less)
        self._backoff_by_key[info.pod.key] = entry
        errored = self.pop_from_backoff and not (info.unschedulable_plugins or info.pending_plugins)
        heapq.heappush(self._errored if errored else self._backoff, entry)

    def add(self, pod_info: PodInfo) -> QueuedPodInfo:
        """A new pending pod."""
        info = QueuedPodInfo(pod_info, 0.0)
        self._stamp(info)
        self._remove(info.pod.key)
        if self._to_active(info):
            self._count("active", "PodAdd")
        return info

    def _remove(self, key: str) -> QueuedPodInfo | None:
        active = self._active_by_key.pop(key, None)
        if active is not None:
            active.removed = True
            return active.info
        backoff = self._backoff_by_key.pop(key, None)
        if backoff is not None:
            backoff.removed = True
            return backoff.info
        return self._unschedulable.pop(key, None)

    # --- leaving ------------------------------------------------------------------------------

    def pop(self) -> QueuedPodInfo | None:
        """The head of activeQ with its attempt counted, or ``None`` when activeQ is empty.

        With ``pop_from_backoff``, an empty activeQ yields backoffQ's head instead (not a pod
        backing off after an error).
        """
        info = self._pop_active()
        if info is None and self.pop_from_backoff:
            info = self._pop_backoff()
        if info is None:
            return None
        info.attempts += 1
        self.scheduling_cycle += 1
        info.unschedulable_plugins = frozenset()
        info.pending_plugins = frozenset()
        if self.hints:
            self._in_flight[info.pod.key] = self._flight_base + len(self._flight_events)
        return info

    def _pop_active(self) -> QueuedPodInfo | None:
        active = self._active
        while active:
            entry = heapq.heappop(active)[1]
            if entry.removed:
                continue
            del self._active_by_key[entry.info.pod.key]
            return entry.info
        return None

    def _pop_backoff(self) -> QueuedPodInfo | None:
        while self._backoff:
            entry = heapq.heappop(self._backoff)
            if entry.removed:
                continue
            del self._backoff_by_key[entry.info.pod.key]
            self._count("active", "PopFromBackoffQ")
            return entry.info
        return None

    def has_poppable_backoff(self) -> bool:
        """Whether ``pop`` would take a pod from backoffQ now (``pop_from_backoff`` on)."""
        return self.pop_from_backoff and any(not entry.removed for entry in self._backoff)

    def done(self, key: str) -> None:
        """The pod's attempt is over (bound, requeued or gone): stop keeping events for it."""
        if self._in_flight.pop(key, None) is not None and not self._in_flight:
            self._flight_base += len(self._flight_events)
            self._flight_events.clear()

    def _events_in_flight(self, key: str) -> list[tuple[ClusterEvent, object, object]]:
        start = self._in_flight.get(key)
        return [] if start is None else self._flight_events[start - self._flight_base:]

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, cycle: int) -> str:
        """Requeue a pod after a failed attempt; returns ``backoff`` or ``unschedulable``."""
        key = info.pod.key
        if key in self._active_by_key or key in self._backoff_by_key or key in self._unschedulable:
            return "present"
        self._stamp(info)
        rejectors = info.unschedulable_plugins | info.pending_plugins
        if self.hints:
            events = self._events_in_flight(key)
            self.done(key)
            if self.retry_failed:
                strategy = self._in_flight_strategy(info, events) if rejectors else AFTER_BACKOFF
                return self._requeue(info, strategy, "ScheduleAttemptFailure")
        elif (self.move_request_cycle >= cycle or not rejectors) and self.retry_failed:
            self._to_backoff(info)
            self._count("backoff", "ScheduleAttemptFailure")
            return "backoff"
        self._unschedulable[key] = info
        self._count("unschedulable", "ScheduleAttemptFailure")
        return "unschedulable"

    def _in_flight_strategy(self, info: QueuedPodInfo, events: Sequence[tuple[ClusterEvent, object, object]]) -> str:
        """The strongest strategy any event seen while the pod was in flight gives it."""
        strategy = SKIP
        for event, old, new in events:
            verdict = self._strategy(info, event, old, new)
            if verdict == IMMEDIATELY:
                return IMMEDIATELY
            if verdict == AFTER_BACKOFF:
                strategy = AFTER_BACKOFF
                if not info.pending_plugins:
                    break
        return strategy

    def _requeue(self, info: QueuedPodInfo, strategy: str, label: str) -> str:
        """Put a pod where ``strategy`` sends it; returns ``active``, ``backoff`` or ``unschedulable``."""
        if strategy == SKIP:
            self._unschedulable[info.pod.key] = info
            self._count("unschedulable", label)
            return "unschedulable"
        if strategy == AFTER_BACKOFF and self.is_backing_off(info):
            self._to_backoff(info)
            self._count("backoff", label)
            return "backoff"
        if self._to_active(info):
            self._count("active", label)
            return "active"
        return "unschedulable"

    def delete(self, pod: Pod) -> bool:
        """Forget a pending pod wherever it is; returns whether it was queued."""
        return self._remove(pod.key) is not None

    def update(self, pod_info: PodInfo, *, changed: bool = True) -> QueuedPodInfo:
        """A pending pod changed (kube-scheduler's ``Update``); ``changed``: beyond its status."""
        key = pod_info.pod.key
        active = self._active_by_key.get(key)
        if active is not None:
            self._remove(key)
            info = attrs.evolve(active.info, pod_info=pod_info)
            entry = _ActiveEntry(info, self._less, self._sort_key)
            self._active_by_key[key] = entry
            heapq.heappush(self._active, (entry.key, entry))
            return info
        backoff = self._backoff_by_key.get(key)
        if backoff is not None:
            backoff.info.pod_info = pod_info
            return backoff.info
        parked = self._unschedulable.get(key)
        if parked is None:
            info = QueuedPodInfo(pod_info, 0.0)
            self._stamp(info)
            if self._to_active(info):
                self._count("active", "PodUpdate")
            return info
        old_pod = parked.pod
        parked.pod_info = pod_info
        if self.narrow:
            self._requeue_updated(parked, old_pod)
        elif changed:
            del self._unschedulable[key]
            if self.is_backing_off(parked):
                self._to_backoff(parked)
                self._count("backoff", "PodUpdate")
            elif self._to_active(parked):
                self._count("active", "PodUpdate")
        return parked

    def _requeue_updated(self, info: QueuedPodInfo, old: Pod) -> None:
        """A pooled pod changed: each kind of change goes through the rejectors' hints (v1.36)."""
        for event in pod_changes(old, info.pod, generated_claims=self.generated_claims):
            strategy = self._strategy(info, event, old, info.pod)
            if strategy == SKIP:
                continue
            del self._unschedulable[info.pod.key]
            if self._requeue(info, strategy, event.label) != "unschedulable":
                return

    # --- time ---------------------------------------------------------------------------------

    def flush_backoff_completed(self) -> int:
        """Move every pod whose backoff has expired to activeQ; returns how many."""
        if not self._backoff and not self._errored:
            return 0
        moved = 0
        now = self.now()
        for heap in (self._backoff, self._errored):
            while heap:
                entry = heap[0]
                if entry.removed:
                    heapq.heappop(heap)
                    continue
                if entry.expiry > now:
                    break
                heapq.heappop(heap)
                del self._backoff_by_key[entry.info.pod.key]
                if self._to_active(entry.info):
                    self._count("active", "BackoffComplete")
                    moved += 1
        return moved

    def next_backoff_expiry(self) -> float | None:
        """When the earliest backoff ends, or ``None`` when backoffQ is empty."""
        heads = []
        for heap in (self._backoff, self._errored):
            while heap and heap[0].removed:
                heapq.heappop(heap)
            if heap:
                heads.append(heap[0].expiry)
        return min(heads) if heads else None

    def flush_unschedulable_leftover(self, event: ClusterEvent) -> int:
        """Move pods that sat in the pool for the maximum (5 minutes) or longer.

        Due at exactly the time :meth:`next_unschedulable_flush` gives, so a host that wakes
        at that time makes progress.
        """
        if not self._unschedulable:
            return 0
        now = self.now()
        stale = [info for info in self._unschedulable.values()
                 if now - info.timestamp >= self.max_in_unschedulable]
        return self.move_pods(stale, event) if stale else 0

    def next_unschedulable_flush(self) -> float | None:
        """When the oldest pooled pod that the flush would move becomes due for it.

        Gated pods, and failed pods when failures are not retried, are never moved by it.
        """
        times = [info.timestamp for info in self._unschedulable.values()
                 if not info.gated and (self.retry_failed or info.attempts == 0)]
        return min(times) + self.max_in_unschedulable if times else None

    # --- events -------------------------------------------------------------------------------

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        if event.is_wildcard:
            return True
        known = self._interest.get(event)
        if known is None:
            known = self._interest[event] = any(
                reg.event.matches(event) for regs in self._registrations.values() for reg in regs)
        return known

    def _worth_requeuing(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        rejectors = info.unschedulable_plugins | info.pending_plugins
        if not rejectors or event.is_wildcard:
            return True
        for reg in self._registrations.get(info.pod.scheduler_name, ()):
            if reg.plugin in rejectors and reg.event.matches(event):
                return True
        return False

    def _strategy(self, info: QueuedPodInfo, event: ClusterEvent, old: object, new: object) -> str:
        """kube's ``isPodWorthRequeuing`` with hints: what ``event`` means for a pod its rejectors hold."""
        rejectors = info.unschedulable_plugins | info.pending_plugins
        if not rejectors or event.is_wildcard:
            return AFTER_BACKOFF
        strategy = SKIP
        for reg in self._registrations.get(info.pod.scheduler_name, ()):
            if reg.plugin not in rejectors or not reg.event.matches(event):
                continue
            if reg.judge(info.pod, old, new) is QueueingHint.QUEUE_SKIP:
                continue
            if reg.plugin in info.pending_plugins:
                return IMMEDIATELY
            strategy = AFTER_BACKOFF
        return strategy

    def move_all(self, event: ClusterEvent, pre_check: PreCheck | None = None, *,
                 old: object = None, new: object = None) -> int:
        """Move every pooled pod that passes ``pre_check`` and that ``event`` may help.

        ``old`` and ``new`` are the changed object before and after (``None`` for an add or a
        delete); hint functions read them.  With v1.36's narrow hints there is no pre-check.
        """
        if not self.is_event_of_interest(event):
            return 0
        if not self._unschedulable:  # nobody to move (every bound pod's event, on a busy cluster)
            self._moved(event, old, new)
            return 0
        if self.narrow:
            pre_check = None
        candidates = [info for info in self._unschedulable.values() if pre_check is None or pre_check(info.pod)]
        return self.move_pods(candidates, event, old=old, new=new)

    def move_pods(self, infos: Iterable[QueuedPodInfo], event: ClusterEvent, *,
                  old: object = None, new: object = None) -> int:
        """Move the given pooled pods that ``event`` may help; returns how many left the pool."""
        if not self.is_event_of_interest(event):
            return 0
        moved = 0
        for info in list(infos):
            if info.gated and SCHEDULING_GATES in info.unschedulable_plugins:
                continue
            if not self.retry_failed and info.attempts > 0:
                continue
            if self.hints:
                strategy = self._strategy(info, event, old, new)
                if strategy == SKIP:
                    continue
                del self._unschedulable[info.pod.key]
                moved += self._requeue(info, strategy, event.label) != "unschedulable"
                continue
            if not self._worth_requeuing(info, event):
                continue
            del self._unschedulable[info.pod.key]
            moved += 1
            if self.is_backing_off(info):
                self._to_backoff(info)
                self._count("backoff", event.label)
            elif self._to_active(info):
                self._count("active", event.label)
        self._moved(event, old, new)
        return moved

    def _moved(self, event: ClusterEvent, old: object, new: object) -> None:
        """What every move request leaves behind, whoever moved: its cycle, and the event for pods in flight."""
        self.move_request_cycle = self.scheduling_cycle
        if self._in_flight:
            self._flight_events.append((event, old, new))

    def unschedulable_pods(self) -> list[QueuedPodInfo]:
        return list(self._unschedulable.values())

    def activate(self, keys: Iterable[str]) -> int:
        """Move pods from the pool or backoffQ straight to activeQ (PodsToActivate)."""
        moved = 0
        for key in keys:
            if key in self._active_by_key:
                continue
            info = self._unschedulable.get(key)
            if info is None and key in self._backoff_by_key:
                info = self._backoff_by_key[key].info
            if info is None:
                continue
            self._remove(key)
            if self._to_active(info):
                self._count("active", "ForceActivate")
                moved += 1
        return moved

    # --- inspection ---------------------------------------------------------------------------

    def get(self, key: str) -> QueuedPodInfo | None:
        for store in (self._active_by_key, self._backoff_by_key):
            entry = store.get(key)
            if entry is not None:
                return entry.info
        return self._unschedulable.get(key)

    def where(self, key: str) -> str | None:
        """``active``, ``backoff``, ``unschedulable``, ``gated`` or ``None``."""
        if key in self._active_by_key:
            return "active"
        if key in self._backoff_by_key:
            return "backoff"
        info = self._unschedulable.get(key)
        if info is None:
            return None
        return "gated" if info.gated else "unschedulable"

    def pending(self) -> dict[str, tuple[str, QueuedPodInfo]]:
        """Every queued pod with where it is."""
        out: dict[str, tuple[str, QueuedPodInfo]] = {}
        for key, entry in self._active_by_key.items():
            out[key] = ("active", entry.info)
        for key, backoff in self._backoff_by_key.items():
            out[key] = ("backoff", backoff.info)
        for key, info in self._unschedulable.items():
            out[key] = ("gated" if info.gated else "unschedulable", info)
        return out

    def counts(self) -> dict[str, int]:
        """Sizes by queue, for the ``scheduler_pending_pods`` gauge."""
        gated = sum(1 for info in self._unschedulable.values() if info.gated) if self._unschedulable else 0
        return {"active": len(self._active_by_key), "backoff": len(self._backoff_by_key),
                "unschedulable": len(self._unschedulable) - gated, "gated": gated}

    def _all_infos(self) -> list[QueuedPodInfo]:
        """Every QueuedPodInfo the queue holds, removed heap entries' included."""
        return [*(entry.info for _, entry in self._active), *(entry.info for entry in self._backoff),
                *(entry.info for entry in self._errored), *self._unschedulable.values()]

    def copy_into(self, other: SchedulingQueue) -> None:
        """Give ``other`` (a new, empty queue of another scheduler) the same queued pods and bookkeeping.

        QueuedPodInfos are changed in place as pods move, so each is copied; heaps keep their layout.
        """
        infos: dict[int, QueuedPodInfo] = {}
        for info in self._all_infos():
            infos[id(info)] = QueuedPodInfo(info.pod_info, info.timestamp, info.attempts,
                                            info.initial_attempt_timestamp, info.unschedulable_plugins,
                                            info.pending_plugins, info.gated, info.sequence)
        less, backoff_less = other._less, other._backoff_less
        twins: dict[int, _ActiveEntry] = {}
        for _, entry in self._active:
            twin = twins[id(entry)] = _ActiveEntry(infos[id(entry.info)], less, other._sort_key)
            twin.removed = entry.removed
            other._active.append((twin.key, twin))
        other._active_by_key = {key: twins[id(entry)] for key, entry in self._active_by_key.items()}
        backoff_twins: dict[int, _BackoffEntry] = {}
        for mine, theirs in ((self._backoff, other._backoff), (self._errored, other._errored)):
            for waiting in mine:
                copied = backoff_twins[id(waiting)] = _BackoffEntry(infos[id(waiting.info)], waiting.expiry,
                                                                    backoff_less)
                copied.removed = waiting.removed
                theirs.append(copied)
        other._backoff_by_key = {key: backoff_twins[id(waiting)] for key, waiting in self._backoff_by_key.items()}
        other._unschedulable = {key: infos[id(info)] for key, info in self._unschedulable.items()}
        following = next(self._order)
        self._order = itertools.count(following)
        other._order = itertools.count(following)
        other.scheduling_cycle = self.scheduling_cycle
        other.move_request_cycle = self.move_request_cycle
        other.retry_failed = self.retry_failed
        other.incoming = dict(self.incoming)
        other._in_flight = dict(self._in_flight)
        other._flight_events = list(self._flight_events)
        other._flight_base = self._flight_base
