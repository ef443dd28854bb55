"""State a plugin keeps of its own across scheduling cycles, and how a what-if cycle leaves it untouched.

:meth:`kschedlib.Scheduler.explain` (and ``feasible_nodes``) runs a what-if scheduling cycle against
the live scheduler and must change nothing.  The engine makes that its own rule for everything it
holds: the cycle works on copies of the object store (pods, device state, PodGroups and quotas,
storage), the pods waiting in Permit, the nominations and the random generator, and the live ones
are put back afterwards.  What a plugin keeps in its own attributes the engine cannot copy without
being told how: a plugin whose PreEnqueue, PreFilter, Filter, PostFilter, PreScore or Score change
such state (Coscheduling's backed-off gangs, CapacityScheduling's quotas) implements
:class:`KeepsState`, and the engine saves that state before every what-if cycle and gives it back
after.  Caches that only remember answers need not: a what-if cycle may fill them.
"""

from __future__ import annotations

import abc

from kschedlib.framework.extension_points import Plugin

__all__ = ["KeepsState"]


class KeepsState(Plugin):
    """A plugin with state of its own that a scheduling cycle may change (see the module docstring)."""

    @abc.abstractmethod
    def save_state(self) -> object:
        """A copy of the state, independent of the plugin's: later changes must not show in it."""

    @abc.abstractmethod
    def restore_state(self, saved: object) -> None:
        """Return to the state :meth:`save_state` copied (``saved`` is what it returned)."""
