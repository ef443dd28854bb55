"""DefaultBinder: the Bind plugin of the default profile.

kube-scheduler's DefaultBinder POSTs a ``v1.Binding`` (``metadata: {namespace,
name, uid}`` of the pod, ``target: {kind: Node, name: <node>}``) to the API
server and turns any API error into an ``Error`` status.  kschedlib has no API
server: the :class:`~kschedlib.scheduler.Scheduler` facade records the binding
in its own cache and reports it, so this binder only has to say "bound".

Embedders that must perform the binding themselves (call an API, update a
database, start a job) replace it with their own :class:`BindPlugin` in the
profile's ``bind`` set: return ``Status.success()`` once bound, an error status
(``Status.from_error(...)``) when binding failed (the pod is un-reserved and
retried with backoff), or ``Status.skip()`` to hand the pod to the next binder.
"""

from __future__ import annotations

from typing import ClassVar, final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import BindPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["DefaultBinder"]


@final
class DefaultBinder(BindPlugin):
    """Accepts every binding; the scheduler facade applies it to its cache."""

    name: ClassVar[str] = "DefaultBinder"
    __slots__ = ()

    def __init__(self, args: None, handle: Handle) -> None:
        """Nothing to configure: kube's DefaultBinder has no args (it only keeps the API client)."""

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Always ``Success``: there is no API call that could fail."""
        return Status.success()
