"""One abstract base class per extension point: what a plugin author implements.

A plugin is a class with a unique ``name`` that subclasses the base class of
every extension point it implements.  Methods receive ``(state, pod,
node_info)`` in that order and return a :class:`Status`; "does not fit" is a
status with a reason, never an exception.  An exception escaping a plugin
becomes an ``ERROR`` status for that pod and the scheduler carries on.

Points run in this order for each pod::

    PreEnqueue -> (queue, ordered by QueueSort) -> PreFilter -> Filter (per node)
      -> [no node fits: PostFilter] -> PreScore -> Score (per node) -> NormalizeScore
      -> Reserve -> Permit -> PreBind -> Bind -> PostBind
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar, Final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.results import PostFilterResult, PreFilterResult, Wait
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

if TYPE_CHECKING:
    from kschedlib.framework.queued_pod import QueuedPodInfo

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "POINT_BASES",
    "BindPlugin",
    "FilterPlugin",
    "Plugin",
    "PermitPlugin",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScoreExtensions",
    "ScorePlugin",
]


MAX_NODE_SCORE: Final = 100
"""The highest score a Score plugin gives after normalization (kube's ``framework.MaxNodeScore``)."""
MIN_NODE_SCORE: Final = 0
"""The lowest normalized score (kube's ``framework.MinNodeScore``)."""

class Plugin(abc.ABC):
    """Common base: every plugin has a unique ``name`` (its registry key)."""

    name: ClassVar[str]


class PreEnqueuePlugin(Plugin):
    """Decides whether a pod may enter the active queue at all (e.g. scheduling gates)."""

    @abc.abstractmethod
    def pre_enqueue(self, pod: Pod) -> Status:
        """Success lets the pod in; anything else parks it as gated until it is updated. Must be cheap."""


class QueueSortPlugin(Plugin):
    """Orders the active queue; exactly one per scheduler."""

    @abc.abstractmethod
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Whether ``a`` should be scheduled before ``b``."""


class PreFilterPlugin(Plugin):
    """Runs once per pod before filtering: computes per-pod state, may narrow or reject."""

    @abc.abstractmethod
    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Return a status, or a :class:`PreFilterResult` (success) naming the only nodes worth filtering.

        ``Status.skip()`` skips this plugin's Filter (and its AddPod/RemovePod) for the pod.
        An ``UnschedulableAndUnresolvable`` status stops the remaining PreFilters.
        """


class PreFilterExtensions(Plugin):
    """Lets a PreFilter plugin update its state when a pod is hypothetically added or removed.

    Used when evaluating a node with nominated pods, and in the preemption dry run.
    """

    @abc.abstractmethod
    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        """Account for ``pod_info_to_add`` being on ``node_info``'s node."""

    @abc.abstractmethod
    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        """Account for ``pod_info_to_remove`` leaving ``node_info``'s node."""


class FilterPlugin(Plugin):
    """Decides whether the pod fits one node."""

    @abc.abstractmethod
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Success, or a rejection with the exact reason. Use ``node_info``, never a snapshot lookup."""


class PostFilterPlugin(Plugin):
    """Runs when no node fits (preemption)."""

    @abc.abstractmethod
    def post_filter(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> PostFilterResult:
        """Try to make the pod schedulable; ``node_statuses`` holds each rejected node's status."""


class PreScorePlugin(Plugin):
    """Runs once per pod before scoring with the feasible nodes."""

    @abc.abstractmethod
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Prepare scoring state; ``Status.skip()`` leaves this plugin out of scoring for the pod."""


class ScorePlugin(Plugin):
    """Ranks feasible nodes; raw scores are normalized (optionally) then weighted."""

    @abc.abstractmethod
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The node's raw score; must be in [0, 100] unless the plugin also normalizes."""


class ScoreExtensions(Plugin):
    """Normalizes a Score plugin's scores across all feasible nodes."""

    @abc.abstractmethod
    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        """The raw ``scores`` of ``nodes`` (same order) mapped into [0, 100], one per node, in that order.

        Values in, values out (kube-scheduler rewrites a ``NodeScoreList`` in place); an exception
        becomes an ``ERROR`` status naming the plugin.
        """


class ReservePlugin(Plugin):
    """Claims resources for the pod on the chosen node before binding."""

    @abc.abstractmethod
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Claim; a failure un-reserves every Reserve plugin in reverse order."""

    @abc.abstractmethod
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Release what ``reserve`` claimed; must be idempotent (it may run without ``reserve``)."""


class PermitPlugin(Plugin):
    """Approves, rejects or delays binding."""

    @abc.abstractmethod
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        """Success, a rejection, or :class:`Wait` to hold the pod until allowed, rejected or timed out."""


class PreBindPlugin(Plugin):
    """Work that must happen before binding (e.g. provisioning volumes)."""

    @abc.abstractmethod
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success lets binding proceed; anything else fails the binding cycle."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Whether PreBind will do work for this pod: Success yes, Skip no, Error fails the binding.

        Read from v1.35 (NominatedNodeNameForExpectation): when some PreBind plugin will work, the pod
        is nominated to its node before PreBind runs.  By default a plugin is assumed to work.
        """
        return Status.success()


class BindPlugin(Plugin):
    """Binds the pod to the node."""

    @abc.abstractmethod
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success once bound; ``Status.skip()`` hands the pod to the next Bind plugin."""


class PostBindPlugin(Plugin):
    """Informational: called after a successful bind."""

    @abc.abstractmethod
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """React to the pod being bound."""


POINT_BASES: Final[Mapping[str, type[Plugin]]] = MappingProxyType({
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
})
"""Each extension point's configuration name and the base class a plugin enabled there must extend,
in the order the points run: the one table the config parser, profiles and the runtime read."""
