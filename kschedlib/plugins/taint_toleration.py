"""TaintToleration: hard taints filter nodes, soft (``PreferNoSchedule``) taints lower their score.

Filter rejects a node carrying a ``NoSchedule`` or ``NoExecute`` taint that no
toleration of the pod tolerates (the first such taint, in ``spec.taints``
order, is named in the reason).  Score counts the node's ``PreferNoSchedule``
taints the pod does not tolerate; normalization reverses the counts so the
node with the fewest untolerated soft taints gets 100.

Toleration matching is :meth:`kschedlib.model.objects.Toleration.tolerates`
(kube's ``ToleratesTaint``): empty effect matches every effect, empty key
matches every key, ``Exists`` ignores the value, empty operator means ``Equal``.
"""

from __future__ import annotations

from collections.abc import Container, Hashable, Iterable, Sequence
from typing import ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import (
    ActionType,
    ClusterEventWithHint,
    EnqueueExtensions,
    QueueingHint,
    hint_of,
    node_events,
    pod_events,
    same_pod_updated,
)
from kschedlib.framework.extension_points import FilterPlugin, PreScorePlugin, ScoreExtensions, ScorePlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalFilter, NodeLocalScore, PureNormalize
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.status import Status
from kschedlib.model.objects import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE, Node, Pod, Taint, Toleration
from kschedlib.plugins._helpers.normalize import normalized_values

__all__ = ["REASON_UNTOLERATED_TAINTS", "TaintToleration", "find_untolerated_taint", "tolerations_tolerate_taint"]

DO_NOT_SCHEDULE_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})
"""The effects that keep pods off a node (kube's ``DoNotScheduleTaintsFilterFunc``)."""

_NO_NODE: Final = "node not found"


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """Whether any toleration tolerates ``taint``."""
    for toleration in tolerations:
        if toleration.tolerates(taint):
            return True
    return False


def find_untolerated_taint(
    taints: Iterable[Taint], tolerations: Sequence[Toleration], effects: Container[str] | None
) -> Taint | None:
    """The first taint (in order) whose effect is in ``effects`` and that no toleration tolerates.

    ``effects`` of ``None`` considers every taint.  This is kube's
    ``FindMatchingUntoleratedTaint``; TaintToleration, the queue's node
    pre-check, PodTopologySpread's ``nodeTaintsPolicy`` and preemption share it.
    """
    for taint in taints:
        if effects is not None and taint.effect not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


REASON_UNTOLERATED_TAINTS: Final = "node(s) had untolerated taint(s)"
"""The reason from v1.35 (and the 1.34 patch kschedlib models) on: no taint named (``generic_taint_reason``)."""
_UNTOLERATED: Final = Status.unresolvable(REASON_UNTOLERATED_TAINTS)


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the node went from having an untolerated hard taint (or not existing) to none."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    was_untolerated = True
    if isinstance(old, Node):
        was_untolerated = find_untolerated_taint(old.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
    is_untolerated = find_untolerated_taint(new.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None
    return hint_of(was_untolerated and not is_untolerated)


def untolerated_taint_reason(taint: Taint) -> str:
    """``node(s) had untolerated taint {<key>: <value>}`` (an empty value leaves ``{key: }``)."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


def prefer_no_schedule_tolerations(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    """The tolerations that can tolerate a ``PreferNoSchedule`` taint: empty effect or that effect."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_untolerated_prefer_no_schedule(taints: Iterable[Taint], tolerations: Sequence[Toleration]) -> int:
    """How many ``PreferNoSchedule`` taints no toleration tolerates (the raw score)."""
    count = 0
    for taint in taints:
        if taint.effect == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, taint):
            count += 1
    return count


@final
@attrs.frozen(slots=True, repr=False)
class _PreScoreState(FieldsRepr):
    """The pod's tolerations that matter for scoring, filtered once per pod."""

    tolerations: tuple[Toleration, ...]

    def clone(self) -> _PreScoreState:
        return self


_PRE_SCORE_KEY: Final[StateKey[_PreScoreState]] = StateKey("PreScoreTaintToleration")


@final
class TaintToleration(
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    NodeLocalFilter,
    NodeLocalScore,
    PureNormalize,
    EnqueueExtensions,
):
    """Filter on hard taints (UnschedulableAndUnresolvable); score by untolerated soft taints (reversed)."""

    name: ClassVar[str] = "TaintToleration"
    __slots__ = ("_generic_reason", "_narrow_hints")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (narrower with hints)."""
        if not self._narrow_hints:
            return (node_events(ActionType.ADD | ActionType.UPDATE),)
        return (node_events(ActionType.ADD | ActionType.UPDATE_NODE_TAINT, after_node_change),
                pod_events(ActionType.UPDATE_POD_TOLERATION, same_pod_updated))

    def __init__(self, args: None, handle: Handle) -> None:
        """No args; the version decides whether the reason names the taint and which events requeue."""
        self._generic_reason = _UNTOLERATED if handle.switches.generic_taint_reason else None
        self._narrow_hints = handle.switches.narrow_queueing_hints

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status.from_error(_NO_NODE)
        if not node.taints:
            return Status.SUCCESS
        taint = find_untolerated_taint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
        if taint is None:
            return Status.SUCCESS
        return self._generic_reason or Status.unresolvable(untolerated_taint_reason(taint))

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Keep the tolerations with an empty or ``PreferNoSchedule`` effect (never skips, as in kube)."""
        if not nodes:
            return Status.SUCCESS
        state.write(_PRE_SCORE_KEY, _PreScoreState(prefer_no_schedule_tolerations(pod.tolerations)))
        return Status.SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The number of untolerated ``PreferNoSchedule`` taints; needs PreScore's state, like kube."""
        node = node_info.node
        if node is None:
            raise LookupError(_NO_NODE)
        prescored = state.get(_PRE_SCORE_KEY)
        if prescored is None:
            raise LookupError(f'failed to read "{_PRE_SCORE_KEY.name}" from cycleState: not found')
        if not node.taints:
            return 0
        return count_untolerated_prefer_no_schedule(node.taints, prescored.tolerations)

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        """Fewer untolerated soft taints is better: ``100 - 100 * count // max`` (all 100 when max is 0)."""
        return normalized_values(scores, reverse=True)

    def normalize_key(self, state: CycleState, pod: Pod) -> Hashable:
        """Normalizing reads nothing but the scores."""
        return ()

    def filter_key(self, state: CycleState, pod: Pod) -> Hashable:
        """The verdict depends only on the tolerations."""
        return pod.tolerations

    def score_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """The score depends only on the soft tolerations PreScore kept."""
        prescored = state.get(_PRE_SCORE_KEY)
        return prescored.tolerations if prescored is not None else None
