"""DynamicResources: kube-scheduler's Dynamic Resource Allocation plugin, for pods without claims.

From v1.34 the plugin is in the default profile (before DefaultPreemption; from v1.35 with a Score
of weight 2).  For a pod that claims no devices it does nothing visible but three things that every
user sees in kube-scheduler's output, which this module reproduces:

* PreFilter records its (empty) state and returns Skip, so Filter never runs;
* Score gives every node 0 (the plugin appears with 0 in per-plugin scores);
* PostFilter answers ``no new claims to deallocate`` (Unschedulable), which is why v1.36 preemption
  messages start with that text -- and, when an earlier PreFilter plugin rejected the pod so that
  this plugin's PreFilter never ran, it fails with the Error ``not found`` (its state is missing),
  and preemption is not tried.

Allocating devices for pods with ``spec.resourceClaims`` is not implemented: such pods get an Error
naming the missing support, never a silent wrong answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar, Final, final

from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import PostFilterPlugin, PreFilterPlugin, ScorePlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PostFilterResult, PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["NO_CLAIMS_TO_DEALLOCATE", "DynamicResources"]

NO_CLAIMS_TO_DEALLOCATE: Final = "no new claims to deallocate"
STATE_NOT_FOUND: Final = "not found"



@final
class _NoClaims:
    """PreFilter's state for a pod without claims: immutable, so cloning shares it."""

    __slots__ = ()

    def clone(self) -> _NoClaims:
        return self


_NO_CLAIMS: Final = _NoClaims()
_STATE: Final[StateKey[_NoClaims]] = StateKey("PreFilterDynamicResources")


@final
class DynamicResources(PreFilterPlugin, ScorePlugin, PostFilterPlugin, EnqueueExtensions):
    """Dynamic Resource Allocation as kube-scheduler v1.34+ runs it for pods without resource claims."""

    name: ClassVar[str] = "DynamicResources"
    __slots__ = ()

    def __init__(self, args: None, handle: Handle) -> None:
        """No args are read yet (``filterTimeout`` only matters when devices are allocated)."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Nothing it rejects can be helped by an event: it rejects no pod without claims."""
        return ()

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        state.write(_STATE, _NO_CLAIMS)
        return Status.skip()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def post_filter(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> PostFilterResult:
        if state.get(_STATE) is None:
            return PostFilterResult(Status.from_error(STATE_NOT_FOUND))
        return PostFilterResult(Status.unschedulable(NO_CLAIMS_TO_DEALLOCATE))
