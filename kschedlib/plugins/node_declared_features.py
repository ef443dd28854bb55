"""NodeDeclaredFeatures (kube-scheduler v1.35 alpha, v1.36 beta on): nodes must declare what a pod needs.

In v1.36 only pods with a container restart rule ``RestartAllContainers`` or with ``hostNetwork``
and ``hostUsers: false`` need a declared node feature; for every other pod PreFilter returns Skip
and the plugin takes no part in the cycle.  kschedlib's model reads neither field yet, so every pod
is one of the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final, final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import FilterPlugin, PreFilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["ERR_REASON", "NodeDeclaredFeatures"]

ERR_REASON: Final = "node(s) didn't match Pod's required features"


@final
class NodeDeclaredFeatures(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    """Skips every pod the model can describe (none of them needs a declared node feature)."""

    name: ClassVar[str] = "NodeDeclaredFeatures"
    __slots__ = ()

    def __init__(self, args: None, handle: Handle) -> None:
        """No args."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """It rejects no pod the model can describe."""
        return ()

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        return Status.skip()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.SUCCESS
