"""What a plugin sees of a pod waiting in Permit."""

from __future__ import annotations

from typing import Protocol

from kschedlib.model.objects import Pod

__all__ = ["WaitingPodView"]


class WaitingPodView(Protocol):
    """A pod parked by Permit; any plugin may allow or reject it."""

    @property
    def pod(self) -> Pod:
        """The assumed pod (``node_name`` is the node it waits on)."""
        ...

    @property
    def node_name(self) -> str:
        ...

    @property
    def pending_plugins(self) -> list[str]:
        """Plugins that asked to wait and have not allowed it yet."""
        ...

    def allow(self, plugin: str) -> None:
        """``plugin`` allows the pod; it is bound once every waiting plugin allowed it."""
        ...

    def reject(self, plugin: str, message: str) -> None:
        """Reject the pod; it is un-reserved and requeued."""
        ...
