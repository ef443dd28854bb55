"""PodsToActivate: pods a plugin asks the queue to move to activeQ at the end of a successful cycle.

kube-scheduler's ``framework.PodsToActivate``: a plugin (Coscheduling in Permit, for
a gang's first member) adds ``namespace/name`` keys to the value under
:data:`PODS_TO_ACTIVATE`; when the scheduling cycle succeeds (the pod is bound or
waits in Permit) the scheduler moves those pods out of the unschedulable pool or
backoff straight into activeQ.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, final

from kschedlib.framework.cycle_state import CycleState, StateKey

__all__ = ["PODS_TO_ACTIVATE", "PodsToActivate", "request_activation"]


@final
class PodsToActivate:
    """The keys (``namespace/name``) to activate; shared by every clone of the cycle's state."""

    __slots__ = ("keys",)

    def __init__(self) -> None:
        self.keys: dict[str, None] = {}

    def clone(self) -> PodsToActivate:
        return self

    def take(self) -> list[str]:
        """The keys, in the order they were asked for; the request is emptied."""
        keys = list(self.keys)
        self.keys.clear()
        return keys


PODS_TO_ACTIVATE: Final[StateKey[PodsToActivate]] = StateKey("kubernetes.io/pods-to-activate")


def request_activation(state: CycleState, keys: Iterable[str]) -> None:
    """Ask for ``keys`` to be activated when this cycle succeeds."""
    wanted = state.get(PODS_TO_ACTIVATE)
    if wanted is None:
        wanted = PodsToActivate()
        state.write(PODS_TO_ACTIVATE, wanted)
    wanted.keys.update(dict.fromkeys(keys))
