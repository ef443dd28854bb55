"""QueuedPodInfo: a pod in the scheduling queue, with the queue's bookkeeping."""

from __future__ import annotations

from typing import final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.pod_info import PodInfo
from kschedlib.model.objects import Pod

__all__ = ["QueuedPodInfo"]


@final
@attrs.define(slots=True, eq=False, repr=False)
class QueuedPodInfo(FieldsRepr):
    """A queued pod: when it (re-)entered the queue, how often it was tried, who rejected it."""

    pod_info: PodInfo
    timestamp: float
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: frozenset[str] = frozenset()
    pending_plugins: frozenset[str] = frozenset()
    gated: bool = False
    sequence: int = 0
    """Arrival order, breaking ties between equal timestamps deterministically."""

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod
