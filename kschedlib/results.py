"""What a scheduling attempt produced, and how an embedder is told about it."""

from __future__ import annotations

from typing import Protocol, final

import attrs

from kschedlib._internal.cycle import CycleOutcome
from kschedlib.framework.diagnosis import Diagnosis
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["ScheduleResult", "SchedulerListener"]


@final
@attrs.frozen(slots=True)
class ScheduleResult:
    """The outcome of one scheduling attempt.

    ``status`` is SUCCESS when the pod was bound to ``node_name``, WAIT when a
    Permit plugin parked it on ``node_name`` (its resources stay reserved),
    and otherwise says why it failed (``UNSCHEDULABLE`` with kube-scheduler's
    ``message``, or ``ERROR``).  A successful preemption sets
    ``nominated_node_name`` and lists the ``victims`` (``namespace/name``)
    that the embedder should evict.
    """

    pod: Pod
    node_name: str | None
    status: Status
    message: str | None = None
    nominated_node_name: str | None = None
    victims: tuple[str, ...] = ()
    attempts: int = 1
    outcome: CycleOutcome | None = attrs.field(default=None, repr=False, eq=False)

    @property
    def scheduled(self) -> bool:
        """Whether the pod was bound."""
        return self.status.code is Code.SUCCESS and self.node_name is not None

    @property
    def waiting(self) -> bool:
        """Whether the pod waits in Permit."""
        return self.status.code is Code.WAIT

    @property
    def diagnosis(self) -> Diagnosis | None:
        """Per-node statuses when no node fitted."""
        return self.outcome.diagnosis if self.outcome is not None else None


class SchedulerListener(Protocol):
    """Told of every decision the scheduler makes; implement all four methods (they may do nothing)."""

    def on_bound(self, result: ScheduleResult) -> None:
        """The pod was bound to ``result.node_name``."""

    def on_failed(self, result: ScheduleResult) -> None:
        """The attempt failed; the pod was requeued (see ``result.status``/``message``)."""

    def on_waiting(self, result: ScheduleResult) -> None:
        """A Permit plugin parked the pod on ``result.node_name``."""

    def on_preempting(self, result: ScheduleResult) -> None:
        """The pod was nominated; ``result.victims`` must be evicted to make room."""
