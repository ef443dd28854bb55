"""InterPodAffinity, second half: the incoming pod's terms and preferred-term scoring.

Part of the :mod:`kschedlib.plugins.inter_pod_affinity` package; only the package itself is public.
Both halves read the incoming pod's terms the same way: parsed fresh from the
pod and with a non-empty ``namespaceSelector`` resolved, once per cycle, into
the namespaces it currently selects.  After that an incoming term matches an
existing pod by namespace name alone (or by ``{}``, which selects every
namespace), so no existing pod's namespace labels are ever looked up, and the
pods it matches can be tallied across cycles
(:mod:`kschedlib.plugins.inter_pod_affinity.tally`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from operator import add
from typing import Final, TypeVar, cast, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import KschedError, SelectorError
from kschedlib.framework.cycle_state import StateKey
from kschedlib.framework.extension_points import MAX_NODE_SCORE
from kschedlib.framework.pod_info import AffinityTerm, WeightedAffinityTerm
from kschedlib.model.objects import Namespace, Pod, PodAffinity, PodAffinityTerm
from kschedlib.plugins._helpers.validation import selector_error
from kschedlib.plugins.inter_pod_affinity.tally import NO_LABELS, PodTally, TermTally

__all__ = [
    "NO_LABELS",
    "PRE_SCORE_KEY",
    "IncomingTerms",
    "PreScoreState",
    "ScorePart",
    "TallyOf",
    "collect_parts",
    "merge_namespaces",
    "merge_preferred",
    "normalized_values",
    "parse_incoming_terms",
    "score_node",
    "score_nodes",
]

T = TypeVar("T")

TallyOf = Callable[[AffinityTerm], PodTally]
"""The (synced) tally of existing pods matching one namespace-merged incoming term."""


@final
@attrs.frozen(slots=True, repr=False)
class IncomingTerms(FieldsRepr):
    """The four term lists of the pod being scheduled, as written (namespaces not yet merged)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()


def _parse_term(term: PodAffinityTerm, namespace: str) -> AffinityTerm:
    """kube's ``newAffinityTerm``: both selectors must parse (label keys and values are checked)."""
    error = selector_error(term.label_selector) or selector_error(term.namespace_selector)
    if error is not None:
        raise SelectorError(error)
    return AffinityTerm.parse(term, namespace)


def _required(affinity: PodAffinity | None, namespace: str) -> tuple[AffinityTerm, ...]:
    return tuple(_parse_term(t, namespace) for t in affinity.required) if affinity else ()


def _preferred(affinity: PodAffinity | None, namespace: str) -> tuple[WeightedAffinityTerm, ...]:
    if affinity is None:
        return ()
    return tuple(WeightedAffinityTerm(w.weight, _parse_term(w.term, namespace)) for w in affinity.preferred)


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


ScorePart = tuple[str, Mapping[str, int], int]
"""(topology key, topology value -> amount, factor): a node with value ``v`` gets factor x amount[v]."""


@final
@attrs.frozen(slots=True, repr=False)
class PreScoreState(FieldsRepr):
    """The weighted per-value tables Score reads; a node's raw score sums its entries in each.

    Kept as separate tables rather than summed per topology pair: a table
    is a C-level copy of a tally, while summing would touch every value.
    """

    parts: tuple[ScorePart, ...]

    def clone(self) -> PreScoreState:
        return self


PRE_SCORE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScoreInterPodAffinity")


def _preferred_parts(terms: Sequence[WeightedAffinityTerm], sign: int, tally_of: TallyOf) -> Iterator[ScorePart]:
    """The incoming pod's preferences: its weight for each existing pod a term matches."""
    for weighted in terms:
        counts = tally_of(weighted.term).per_term[0]
        if counts:
            yield weighted.term.topology_key, dict(counts), sign * weighted.weight


def collect_parts(
    pod: Pod,
    terms: IncomingTerms,
    ns_labels: Mapping[str, str],
    existing: TermTally,
    tally_of: TallyOf,
) -> tuple[ScorePart, ...]:
    """The score tables: the incoming pod's preferences, then existing pods' terms it matches.

    ``terms`` carries the incoming pod's preferred terms with namespaces
    merged; ``tally_of`` gives, synced with the snapshot, the existing pods
    matching one of them.  ``existing`` holds, grouped, the terms of existing
    pods (required affinity weighted by ``hardPodAffinityWeight``); each group
    is tested against the incoming pod once.  Tables are copied, as tallies
    change with later snapshots.  No tables means no term matched.
    """
    parts = [
        *_preferred_parts(terms.preferred_affinity, 1, tally_of),
        *_preferred_parts(terms.preferred_anti_affinity, -1, tally_of),
    ]
    for group in existing.groups.values():
        if group.term.matches(pod, ns_labels):
            parts.append((group.term.topology_key, dict(group.weights), 1))
    return tuple(parts)


def score_node(state: PreScoreState, labels: Mapping[str, str]) -> int:
    """The raw score: the node's entry in every table, by its topology value (may be negative)."""
    total = 0
    for key, amounts, factor in state.parts:
        value = labels.get(key)
        if value is not None:
            total += factor * amounts.get(value, 0)
    return total


def score_nodes(state: PreScoreState, labels: Sequence[Mapping[str, str]]) -> list[int]:
    """:func:`score_node` of every node (by its labels), a table at a time.

    A node without the table's key reads no entry (``None`` is never a topology value), so each
    table is one pass of look-ups over the nodes' values instead of a call per node.
    """
    totals: list[int] | None = None
    values: dict[str, list[str | None]] = {}  # per topology key, the nodes' values (tables often share a key)
    for key, amounts, factor in state.parts:
        at = values.get(key)
        if at is None:
            at = values[key] = [node.get(key) for node in labels]
        amount_of = cast(Callable[[str | None, int], int], amounts.get)  # ``None`` (no label) is never a key
        found = list(map(amount_of, at, repeat(0)))
        if factor != 1:
            found = [factor * amount for amount in found]
        totals = found if totals is None else list(map(add, totals, found))
    return totals if totals is not None else [0] * len(labels)


def normalized_values(raw: list[int]) -> list[int]:
    """Min-max scale to [0, 100] as kube does: float64 ratio first, then x100, then truncation.

    Dividing first matters: 29/50 * 100 is 57.99... and truncates to 57.
    When every node has the same score all become 0.
    """
    if not raw:
        return raw
    lowest = min(raw)
    spread = max(raw) - lowest
    if spread <= 0:
        return [0] * len(raw)
    top, span = float(MAX_NODE_SCORE), float(spread)
    scaled = {score: int(top * (float(score - lowest) / span)) for score in set(raw)}  # raw scores repeat a lot
    return list(map(scaled.__getitem__, raw))

