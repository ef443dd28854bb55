"""InterPodAffinity: place pods relative to other pods by topology (kube-scheduler v1.30).

PreFilter counts, per topology pair ``(key, value)``, the existing pods that
(1) forbid the incoming pod by their required anti-affinity, (2) match all of
the incoming pod's required affinity terms, (3) match one of its required
anti-affinity terms.  Filter then needs only the node's labels and a few dict
lookups.  The counts come from tallies the plugin keeps across cycles
(:mod:`kschedlib.plugins.inter_pod_affinity.tally`), so a cycle re-reads only
the nodes that changed.  AddPod/RemovePod keep the counts right when nominated
pods are added or preemption victims removed.  Scoring (preferred terms, and
existing pods' required affinity weighted by ``hardPodAffinityWeight``) lives
in :mod:`kschedlib.plugins.inter_pod_affinity.scoring`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError, KschedError
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ActionType, ClusterEventWithHint, EnqueueExtensions, node_events, pod_events
from kschedlib.framework.extension_points import (
    FilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import BatchScore
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import AffinityTerm, PodInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from kschedlib.plugins.inter_pod_affinity import hints as _affinity_hints
from kschedlib.plugins.inter_pod_affinity import scoring
from kschedlib.plugins.inter_pod_affinity.scoring import NO_LABELS, PRE_SCORE_KEY
from kschedlib.plugins.inter_pod_affinity.tally import (
    PodTallies,
    PodTally,
    TermGroup,
    TermTally,
    pods_with_affinity,
    pods_with_required_anti_affinity,
    required_anti_affinity_terms,
    scored_terms,
)

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "decode_args",
    "satisfies_existing_pods_anti_affinity",
    "satisfies_pod_affinity",
    "satisfies_pod_anti_affinity",
]

ERR_REASON_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH: Final = (
    "node(s) didn't satisfy existing pods anti-affinity rules"
)

_AFFINITY_FAILED: Final = Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
_ANTI_AFFINITY_FAILED: Final = Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
_EXISTING_ANTI_FAILED: Final = Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)

_WEIGHT_FIELD: Final = "hardPodAffinityWeight"
_IGNORE_FIELD: Final = "ignorePreferredTermsOfExistingPods"
_MAX_HARD_WEIGHT: Final = 100
_POD_TALLIES: Final = 64
"""How many incoming-term tallies a plugin keeps (each holds one entry per node)."""


# --- args -----------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class InterPodAffinityArgs(FieldsRepr):
    """``InterPodAffinityArgs`` with kube's defaults.

    ``hard_pod_affinity_weight`` (0..100) is the score an existing pod's
    *required* affinity term gives when the incoming pod matches it.
    ``ignore_preferred_terms_of_existing_pods`` only skips scoring for pods
    that have no preferred terms of their own.
    """

    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


def _validate(args: InterPodAffinityArgs) -> None:
    weight = args.hard_pod_affinity_weight
    if not 0 <= weight <= _MAX_HARD_WEIGHT:
        raise ConfigError("not in valid range [0, 100]", field=_WEIGHT_FIELD, value=weight)


def decode_args(raw: Mapping[str, Any] | None) -> InterPodAffinityArgs:
    """Decode ``pluginConfig[].args`` (JSON names), defaulting absent or null fields, and validate."""
    if raw is None:
        return InterPodAffinityArgs()
    weight = raw.get(_WEIGHT_FIELD)
    if weight is None:
        weight = 1
    elif not isinstance(weight, int) or isinstance(weight, bool):
        raise ConfigError("must be an integer", field=_WEIGHT_FIELD, value=weight)
    ignore = raw.get(_IGNORE_FIELD)
    if ignore is None:
        ignore = False
    elif not isinstance(ignore, bool):
        raise ConfigError("must be a boolean", field=_IGNORE_FIELD, value=ignore)
    args = InterPodAffinityArgs(weight, ignore)
    _validate(args)
    return args


# --- PreFilter state ------------------------------------------------------------------------

TopologyCounts = dict[tuple[str, str], int]
"""(topology key, topology value) -> number of matching pods; zero entries are removed."""


def _bump(counts: TopologyCounts, labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    pair = (key, value)
    total = counts.get(pair, 0) + delta
    if total:
        counts[pair] = total
    else:
        del counts[pair]


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """Whether ``pod`` matches every (namespace-merged) incoming term; never for no terms."""
    if not terms:
        return False
    return all(term.matches(pod, NO_LABELS) for term in terms)


@final
@attrs.define(slots=True, eq=False, repr=False)
class PreFilterState(FieldsRepr):
    """The three topology counts plus the incoming pod's merged required terms.

    Mutated by AddPod/RemovePod, hence ``clone`` copies the counts.
    """

    pod: Pod
    namespace_labels: Mapping[str, str]
    affinity_terms: tuple[AffinityTerm, ...]
    anti_affinity_terms: tuple[AffinityTerm, ...]
    matches_own_affinity: bool
    existing_anti_affinity: TopologyCounts = attrs.field(factory=dict)
    affinity: TopologyCounts = attrs.field(factory=dict)
    anti_affinity: TopologyCounts = attrs.field(factory=dict)

    def clone(self) -> PreFilterState:
        return attrs.evolve(
            self,
            existing_anti_affinity=dict(self.existing_anti_affinity),
            affinity=dict(self.affinity),
            anti_affinity=dict(self.anti_affinity),
        )

    def count_existing_anti_affinity(self, existing: PodInfo, labels: Mapping[str, str], delta: int) -> None:
        """Count the topology pairs where ``existing``'s required anti-affinity forbids the pod."""
        for term in existing.required_anti_affinity_terms:
            if term.matches(self.pod, self.namespace_labels):
                _bump(self.existing_anti_affinity, labels, term.topology_key, delta)

    def count_incoming(self, existing: Pod, labels: Mapping[str, str], delta: int) -> None:
        """Count ``existing`` against the incoming pod's required affinity and anti-affinity."""
        terms = self.affinity_terms
        if terms:
            for term in terms:
                if not term.matches(existing, NO_LABELS):
                    break
            else:
                for term in terms:
                    _bump(self.affinity, labels, term.topology_key, delta)
        for term in self.anti_affinity_terms:
            if term.matches(existing, NO_LABELS):
                _bump(self.anti_affinity, labels, term.topology_key, delta)

    def update_with_pod(self, pod_info: PodInfo, node_info: NodeInfo, delta: int) -> None:
        """Account for ``pod_info`` appearing (+1) on or leaving (-1) ``node_info``'s node."""
        labels = _labels(node_info)
        self.count_existing_anti_affinity(pod_info, labels, delta)
        self.count_incoming(pod_info.pod, labels, delta)


PRE_FILTER_KEY: Final[StateKey[PreFilterState]] = StateKey("PreFilterInterPodAffinity")


def _labels(node_info: NodeInfo) -> Mapping[str, str]:
    node = node_info.node
    return node.labels if node is not None else NO_LABELS


def _add_group_counts(counts: TopologyCounts, group: TermGroup) -> None:
    key = group.term.topology_key
    for value, n in group.counts.items():
        pair = (key, value)
        counts[pair] = counts.get(pair, 0) + n


def _add_tally_counts(counts: TopologyCounts, tally: PodTally) -> None:
    """Each matching pod counts once per term, at the term's key where its node has one."""
    for term, per_value in zip(tally.terms, tally.per_term, strict=True):
        key = term.topology_key
        for value, n in per_value.items():
            pair = (key, value)
            counts[pair] = counts.get(pair, 0) + n


def _fill_counts(
    state: PreFilterState, existing_anti: TermTally, tally_of: Callable[[tuple[AffinityTerm, ...]], PodTally]
) -> None:
    """PreFilter's counts from synced tallies: existing pods' anti-affinity, then the incoming terms'."""
    for group in existing_anti.groups.values():
        if group.term.matches(state.pod, state.namespace_labels):
            _add_group_counts(state.existing_anti_affinity, group)
    if state.affinity_terms:
        _add_tally_counts(state.affinity, tally_of(state.affinity_terms))
    for term in state.anti_affinity_terms:
        _add_tally_counts(state.anti_affinity, tally_of((term,)))


# --- Filter predicates ----------------------------------------------------------------------


def satisfies_pod_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """The node carries every term's topology key and a matching pod sits in each domain.

    Exception for the first pod of a self-affine group: when no pod anywhere
    matches all terms but the incoming pod matches them itself, any node
    carrying all the keys is accepted.
    """
    counts = state.affinity
    pods_exist = True
    for term in state.affinity_terms:
        value = labels.get(term.topology_key)
        if value is None:
            return False
        if counts.get((term.topology_key, value), 0) <= 0:
            pods_exist = False
    return pods_exist or (not counts and state.matches_own_affinity)


def satisfies_pod_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No domain of the node holds a pod the incoming pod's required anti-affinity selects."""
    counts = state.anti_affinity
    if not counts:
        return True
    for term in state.anti_affinity_terms:
        value = labels.get(term.topology_key)
        if value is not None and counts.get((term.topology_key, value), 0) > 0:
            return False
    return True


def satisfies_existing_pods_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No existing pod's required anti-affinity forbids the incoming pod in the node's domains."""
    counts = state.existing_anti_affinity
    if not counts:
        return True
    return not any(counts.get(pair, 0) > 0 for pair in labels.items())


# --- the plugin -----------------------------------------------------------------------------


def _missing(verb: str, key: StateKey[Any]) -> str:
    return f'{verb} "{key.name}" from cycleState: not found'


@final
class InterPodAffinity(
    PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, BatchScore,
    EnqueueExtensions,
):
    """Required pod (anti-)affinity as a filter, preferred terms as a score."""

    name: ClassVar[str] = "InterPodAffinity"
    __slots__ = ("_args", "_existing_anti", "_handle", "_parsed", "_pod_tallies", "_scored_terms")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (narrower with hints)."""
        if not self._handle.switches.narrow_queueing_hints:
            return (
                pod_events(ActionType.ALL),
                node_events(ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT),
            )
        switches = self._handle.switches
        pod_actions = ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE
        pod_hint = _affinity_hints.after_pod_change if switches.affinity_pod_hint_fixes \
            else _affinity_hints.after_pod_change_v132
        node_hint = _affinity_hints.after_node_change if switches.affinity_node_hint_by_domain \
            else _affinity_hints.after_node_change_v132
        return (
            pod_events(pod_actions, pod_hint),
            node_events(ActionType.ADD | ActionType.UPDATE_NODE_LABEL, node_hint),
        )

    def __init__(self, args: InterPodAffinityArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else InterPodAffinityArgs()
        _validate(self._args)
        self._handle = handle
        # Sums over existing pods, kept across cycles and synced with each snapshot read.
        self._existing_anti = TermTally(pods_with_required_anti_affinity, required_anti_affinity_terms)
        self._scored_terms = TermTally(pods_with_affinity, scored_terms(self._args.hard_pod_affinity_weight))
        self._pod_tallies = PodTallies(_POD_TALLIES)
        self._parsed: tuple[Pod, scoring.IncomingTerms] | None = None

    def _parse(self, pod: Pod) -> scoring.IncomingTerms:
        """The pod's terms, parsed once for PreFilter and PreScore of the same (immutable) pod object."""
        parsed = self._parsed
        if parsed is not None and parsed[0] is pod:
            return parsed[1]
        terms = scoring.parse_incoming_terms(pod)
        self._parsed = (pod, terms)
        return terms

    @property
    def args(self) -> InterPodAffinityArgs:
        return self._args

    # PreFilter ---------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Count matching pods per topology pair; Skip when nothing can constrain the pod."""
        snapshot = self._handle.snapshot
        anti_nodes = snapshot.have_pods_with_required_anti_affinity
        affinity = pod.affinity
        if not anti_nodes and (
            affinity is None or (affinity.pod_affinity is None and affinity.pod_anti_affinity is None)
        ):
            return Status.skip()
        try:
            terms = self._parse(pod)
        except KschedError as err:
            return Status.unresolvable(f"parsing pod: {err}")
        if not anti_nodes and not terms.required_affinity and not terms.required_anti_affinity:
            return Status.skip()
        namespaces = snapshot.namespaces
        affinity_terms = tuple(scoring.merge_namespaces(t, namespaces) for t in terms.required_affinity)
        s = PreFilterState(
            pod,
            snapshot.namespace_labels(pod.namespace),
            affinity_terms,
            tuple(scoring.merge_namespaces(t, namespaces) for t in terms.required_anti_affinity),
            _matches_all(affinity_terms, pod),
        )
        self._existing_anti.sync(snapshot.node_infos, snapshot)
        _fill_counts(s, self._existing_anti, lambda terms: self._pod_tallies.synced(terms, snapshot))
        if not s.existing_anti_affinity and not s.affinity_terms and not s.anti_affinity_terms:
            return Status.skip()
        state.write(PRE_FILTER_KEY, s)
        return Status.success()

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        return self._update(state, pod_info_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        return self._update(state, pod_info_to_remove, node_info, -1)

    def _update(self, state: CycleState, pod_info: PodInfo, node_info: NodeInfo, delta: int) -> Status:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.from_error(_missing("error reading", PRE_FILTER_KEY))
        s.update_with_pod(pod_info, node_info, delta)
        return Status.success()

    # Filter ------------------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Affinity (U&U), then the pod's anti-affinity, then existing pods' anti-affinity."""
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.from_error(_missing("error reading", PRE_FILTER_KEY))
        labels = _labels(node_info)
        if not satisfies_pod_affinity(s, labels):
            return _AFFINITY_FAILED
        if not satisfies_pod_anti_affinity(s, labels):
            return _ANTI_AFFINITY_FAILED
        if not satisfies_existing_pods_anti_affinity(s, labels):
            return _EXISTING_ANTI_FAILED
        return Status.success()

    # PreScore / Score / NormalizeScore ---------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Gather the weighted tables Score reads; Skip when no term matched anywhere."""
        if not nodes:
            return Status.skip()
        affinity = pod.affinity
        has_constraints = affinity is not None and bool(
            (affinity.pod_affinity is not None and affinity.pod_affinity.preferred)
            or (affinity.pod_anti_affinity is not None and affinity.pod_anti_affinity.preferred)
        )
        if self._args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status.skip()
        snapshot = self._handle.snapshot
        candidates = snapshot.node_infos if has_constraints else snapshot.have_pods_with_affinity
        try:
            terms = self._parse(pod)
        except KschedError as err:
            return Status.from_error(f"failed to parse pod: {err}")
        if not candidates:
            return Status.skip()
        self._scored_terms.sync(snapshot.node_infos, snapshot)
        parts = scoring.collect_parts(
            pod,
            scoring.merge_preferred(terms, snapshot.namespaces),
            snapshot.namespace_labels(pod.namespace),
            self._scored_terms,
            lambda term: self._pod_tallies.synced((term,), snapshot),
        )
        if not parts:
            return Status.skip()
        state.write(PRE_SCORE_KEY, scoring.PreScoreState(parts))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The node's weights summed over the tables; may be negative until normalized."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            raise LookupError(_missing("failed to read", PRE_SCORE_KEY))
        return scoring.score_node(s, _labels(node_info))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """:meth:`score` of every node in one call (the runtime's path: see :class:`BatchScore`)."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            raise LookupError(_missing("failed to read", PRE_SCORE_KEY))
        return scoring.score_nodes(s, [NO_LABELS if (node := info.node) is None else node.labels for info in nodes])

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        """Min-max scale the raw scores to [0, 100]."""
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            raise LookupError(_missing("failed to read", PRE_SCORE_KEY))
        return scoring.normalized_values(scores) if s.parts else scores
