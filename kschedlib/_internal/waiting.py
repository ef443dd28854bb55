"""Pods that a Permit plugin made wait: parked, resources still assumed, until allowed, rejected or timed out."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["WaitingPod", "WaitingPods", "go_duration"]


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration`` text: ``10s``, ``1m30s``, ``250ms``, ``1h0m0s``."""
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("\u00b5s", 1_000), ("ns", 1)):
            if nanos >= size or unit == "ns":
                return sign + _trim(nanos / size) + unit
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _trim(rest / 1e9) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{text}"
    if minutes:
        return f"{sign}{minutes}m{text}"
    return sign + text


def _trim(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return text or "0"


@final
class WaitingPod:
    """A pod waiting in Permit; plugins allow or reject it through the handle."""

    __slots__ = ("_deadlines", "_outcome", "node_name", "pod", "started", "state")

    def __init__(self, pod: Pod, node_name: str, state: CycleState, timeouts: Mapping[str, float],
                 now: float) -> None:
        self.pod = pod
        self.node_name = node_name
        self.state = state
        self.started = now
        self._deadlines = {plugin: now + timeout for plugin, timeout in timeouts.items()}
        self._outcome: Status | None = None

    @property
    def pending_plugins(self) -> list[str]:
        """Plugins that asked to wait and have not allowed the pod yet."""
        return sorted(self._deadlines)

    def allow(self, plugin: str) -> None:
        """``plugin`` lets the pod go; it is bound once every waiting plugin allowed it."""
        self._deadlines.pop(plugin, None)
        if not self._deadlines and self._outcome is None:
            self._outcome = Status.success()

    def copy(self) -> WaitingPod:
        """The same wait, allowed or rejected apart from this one."""
        other = object.__new__(WaitingPod)
        other.pod, other.node_name, other.state, other.started = self.pod, self.node_name, self.state, self.started
        other._deadlines = dict(self._deadlines)
        other._outcome = self._outcome
        return other

    def reject(self, plugin: str, message: str) -> None:
        """Reject the pod (the first signal wins: a pod already allowed stays allowed)."""
        if self._outcome is None:
            self._outcome = Status(Code.UNSCHEDULABLE, (message,), plugin)
            self._deadlines.clear()

    def outcome(self, now: float) -> Status | None:
        """Success once allowed, a rejection (also on timeout), or ``None`` while still waiting."""
        if self._outcome is None and self._deadlines:
            plugin, deadline = min(self._deadlines.items(), key=lambda item: item[1])
            if now >= deadline:
                waited = go_duration(deadline - self.started)
                self.reject(plugin, f"rejected due to timeout after waiting {waited} at plugin {plugin}")
        return self._outcome

    def next_deadline(self) -> float | None:
        return min(self._deadlines.values()) if self._deadlines and self._outcome is None else None


@final
class WaitingPods:
    """Waiting pods by uid."""

    __slots__ = ("_pods",)

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, waiting: WaitingPod) -> None:
        self._pods[waiting.pod.uid] = waiting

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def pop(self, uid: str) -> WaitingPod | None:
        return self._pods.pop(uid, None)

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)

    def copy(self) -> WaitingPods:
        """Independent waits: allowing or rejecting one of the copy's pods leaves this one's alone."""
        other = WaitingPods()
        other._pods = {uid: waiting.copy() for uid, waiting in self._pods.items()}
        return other

    def exchange(self, other: WaitingPods) -> None:
        """Swap contents with ``other`` (the handles holding this one then see what ``other`` held)."""
        self._pods, other._pods = other._pods, self._pods

    def next_deadline(self) -> float | None:
        deadlines = [d for w in self._pods.values() if (d := w.next_deadline()) is not None]
        return min(deadlines) if deadlines else None
