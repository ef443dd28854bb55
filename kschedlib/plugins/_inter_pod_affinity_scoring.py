"""InterPodAffinity, second half: the incoming pod's terms and preferred-term scoring.

Split from :mod:`kschedlib.plugins.inter_pod_affinity` to keep modules small.
Both halves read the incoming pod's terms the same way: parsed fresh from the
pod and with a non-empty ``namespaceSelector`` resolved, once per cycle, into
the namespaces it currently selects.  After that an incoming term matches an
existing pod by namespace name alone (or by ``{}``, which selects every
namespace), so no existing pod's namespace labels are ever looked up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, TypeVar, final

import attrs

from kschedlib.errors import KschedError, SelectorError
from kschedlib.framework.cycle_state import StateKey
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import AffinityTerm, PodInfo, WeightedAffinityTerm
from kschedlib.framework.results import NodeScore
from kschedlib.model.objects import Namespace, Pod, PodAffinity

__all__ = [
    "NO_LABELS",
    "PRE_SCORE_KEY",
    "IncomingTerms",
    "PreScoreState",
    "TopologyScore",
    "compute_topology_score",
    "merge_namespaces",
    "merge_preferred",
    "normalize_scores",
    "parse_incoming_terms",
    "score_node",
]

NO_LABELS: Final[Mapping[str, str]] = {}
"""Namespace labels passed when matching incoming terms: their selectors are Nothing or ``{}``."""

MAX_NODE_SCORE: Final = 100
T = TypeVar("T")

TopologyScore = dict[str, dict[str, int]]
"""topology key -> topology value -> accumulated weight."""


@final
@attrs.frozen(slots=True)
class IncomingTerms:
    """The four term lists of the pod being scheduled, as written (namespaces not yet merged)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()


def _required(affinity: PodAffinity | None, namespace: str) -> tuple[AffinityTerm, ...]:
    return tuple(AffinityTerm.parse(t, namespace) for t in affinity.required) if affinity else ()


def _preferred(affinity: PodAffinity | None, namespace: str) -> tuple[WeightedAffinityTerm, ...]:
    if affinity is None:
        return ()
    return tuple(
        WeightedAffinityTerm(w.weight, AffinityTerm.parse(w.term, namespace)) for w in affinity.preferred
    )


def _aggregate(messages: list[str]) -> str:
    """Go's aggregate error text: the single message, or ``[a, b]`` without repeats."""
    if len(messages) == 1:
        return messages[0]
    return "[" + ", ".join(dict.fromkeys(messages)) + "]"


def _attempt(errors: list[str], label: str, parse: Callable[[], tuple[T, ...]]) -> tuple[T, ...]:
    try:
        return parse()
    except KschedError as err:
        errors.append(f"{label}: {err}")
        return ()


def parse_incoming_terms(pod: Pod) -> IncomingTerms:
    """Parse every (anti-)affinity term of ``pod``; ``SelectorError`` names each failing list.

    kube-scheduler parses the incoming pod afresh in PreFilter and PreScore and
    refuses it when a selector cannot be parsed (existing pods' bad terms are
    merely dropped when the cache builds their PodInfo).
    """
    affinity = pod.affinity
    if affinity is None or (affinity.pod_affinity is None and affinity.pod_anti_affinity is None):
        return IncomingTerms()
    ns, pod_affinity, anti = pod.namespace, affinity.pod_affinity, affinity.pod_anti_affinity
    errors: list[str] = []
    terms = IncomingTerms(
        _attempt(errors, "requiredAffinityTerms", lambda: _required(pod_affinity, ns)),
        _attempt(errors, "requiredAntiAffinityTerms", lambda: _required(anti, ns)),
        _attempt(errors, "preferredAffinityTerms", lambda: _preferred(pod_affinity, ns)),
        _attempt(errors, "preferredAntiAffinityTerms", lambda: _preferred(anti, ns)),
    )
    if errors:
        raise SelectorError(_aggregate(errors))
    return terms


def merge_namespaces(term: AffinityTerm, namespaces: Mapping[str, Namespace]) -> AffinityTerm:
    """Resolve a non-empty namespace selector into names; the selector then matches nothing.

    A nil selector already matches nothing and ``{}`` keeps matching every
    namespace, so both are returned unchanged.
    """
    selector = term.namespace_selector
    if selector is None or selector.is_empty():
        return term
    selected = {ns.name for ns in namespaces.values() if selector.matches(ns.labels)}
    return AffinityTerm(term.topology_key, term.selector, term.namespaces | selected, None)


def _merge_weighted(
    terms: Iterable[WeightedAffinityTerm], namespaces: Mapping[str, Namespace]
) -> tuple[WeightedAffinityTerm, ...]:
    return tuple(WeightedAffinityTerm(t.weight, merge_namespaces(t.term, namespaces)) for t in terms)


def merge_preferred(terms: IncomingTerms, namespaces: Mapping[str, Namespace]) -> IncomingTerms:
    """The preferred terms (all PreScore reads) with namespace selectors resolved."""
    return IncomingTerms(
        preferred_affinity=_merge_weighted(terms.preferred_affinity, namespaces),
        preferred_anti_affinity=_merge_weighted(terms.preferred_anti_affinity, namespaces),
    )


# --- PreScore / Score / NormalizeScore ------------------------------------------------------


@final
@attrs.frozen(slots=True)
class PreScoreState:
    """Accumulated weights per topology pair; Score sums the pairs a node carries."""

    topology_score: Mapping[str, Mapping[str, int]]

    def clone(self) -> PreScoreState:
        return self


PRE_SCORE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScoreInterPodAffinity")


def _add(scores: TopologyScore, labels: Mapping[str, str], key: str, delta: int) -> None:
    value = labels.get(key)
    if value is not None:
        per_value = scores.setdefault(key, {})
        per_value[value] = per_value.get(value, 0) + delta


def _add_weighted(
    scores: TopologyScore,
    terms: Sequence[WeightedAffinityTerm],
    pod: Pod,
    ns_labels: Mapping[str, str],
    labels: Mapping[str, str],
    sign: int,
) -> None:
    for weighted in terms:
        if weighted.term.matches(pod, ns_labels):
            _add(scores, labels, weighted.term.topology_key, sign * weighted.weight)


@final
@attrs.frozen(slots=True)
class _Scorer:
    """What one PreScore needs to weigh an existing pod against the incoming one."""

    pod: Pod
    ns_labels: Mapping[str, str]
    preferred_affinity: tuple[WeightedAffinityTerm, ...]
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...]
    hard_weight: int

    def add_existing(self, scores: TopologyScore, existing: PodInfo, labels: Mapping[str, str]) -> None:
        """Both directions: the incoming pod's preferences, then the existing pod's terms."""
        other = existing.pod
        _add_weighted(scores, self.preferred_affinity, other, NO_LABELS, labels, 1)
        _add_weighted(scores, self.preferred_anti_affinity, other, NO_LABELS, labels, -1)
        if self.hard_weight > 0:
            for term in existing.required_affinity_terms:
                if term.matches(self.pod, self.ns_labels):
                    _add(scores, labels, term.topology_key, self.hard_weight)
        _add_weighted(scores, existing.preferred_affinity_terms, self.pod, self.ns_labels, labels, 1)
        _add_weighted(scores, existing.preferred_anti_affinity_terms, self.pod, self.ns_labels, labels, -1)


def compute_topology_score(
    pod: Pod,
    terms: IncomingTerms,
    ns_labels: Mapping[str, str],
    nodes: Iterable[NodeInfo],
    *,
    all_pods: bool,
    hard_weight: int,
) -> TopologyScore:
    """Weights per topology pair from the existing pods on ``nodes``.

    ``terms`` carries the incoming pod's preferred terms with namespaces
    merged; ``all_pods`` says whether every pod is weighed (the incoming pod
    has preferences) or only pods with (anti-)affinity of their own.  Nodes
    without labels contribute nothing.  An empty result means no term matched.
    """
    scorer = _Scorer(pod, ns_labels, terms.preferred_affinity, terms.preferred_anti_affinity, hard_weight)
    scores: TopologyScore = {}
    for info in nodes:
        node = info.node
        if node is None or not node.labels:
            continue
        for existing in info.pods if all_pods else info.pods_with_affinity:
            scorer.add_existing(scores, existing, node.labels)
    return scores


def score_node(state: PreScoreState, labels: Mapping[str, str]) -> int:
    """The raw score: the weights of every topology pair the node carries (may be negative)."""
    total = 0
    for key, per_value in state.topology_score.items():
        value = labels.get(key)
        if value is not None:
            total += per_value.get(value, 0)
    return total


def normalize_scores(scores: list[NodeScore]) -> None:
    """Min-max scale to [0, 100] as kube does: float64 ratio first, then x100, then truncation.

    Dividing first matters: 29/50 * 100 is 57.99... and truncates to 57.
    When every node has the same score all become 0.
    """
    if not scores:
        return
    lowest = min(entry.score for entry in scores)
    spread = max(entry.score for entry in scores) - lowest
    for entry in scores:
        ratio = float(entry.score - lowest) / float(spread) if spread > 0 else 0.0
        entry.score = int(float(MAX_NODE_SCORE) * ratio)
