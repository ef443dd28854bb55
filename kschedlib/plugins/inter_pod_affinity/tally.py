"""Incremental sums behind InterPodAffinity's PreFilter and PreScore.

Both extension points add up, over every existing pod, amounts at the topology
values of the pod's node.  A tally keeps each node's share and re-derives it
only for nodes whose NodeInfo object changed since the tally last looked
(NodeInfos are immutable: the same object means the same pods and labels).
When the new NodeInfo only appended pods to the old one (a pod was bound),
only those pods are looked at.  Whatever snapshot is passed, a synced tally
holds exactly that snapshot's sums.

Terms are grouped by a signature of everything matching and placement read,
so a cycle tests each distinct term once.  Integer addition commutes: the
grouped totals equal a pod-by-pod scan's, zero sums of matched terms included.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from itertools import compress
from operator import is_not
from typing import Final, Generic, TypeVar, final

from kschedlib.framework._bounded import BoundedLRU
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import AffinityTerm, PodInfo
from kschedlib.framework.snapshot import NodeCursor, Snapshot
from kschedlib.model.labels import LabelSelector, Requirement
from kschedlib.model.objects import Pod
from kschedlib.plugins._helpers.appended import appended

__all__ = [
    "NO_LABELS",
    "PodTallies",
    "PodTally",
    "TermGroup",
    "TermTally",
    "pods_with_affinity",
    "pods_with_required_anti_affinity",
    "required_anti_affinity_terms",
    "scored_terms",
    "signature",
]

NO_LABELS: Final[Mapping[str, str]] = {}
"""Namespace labels passed when matching incoming terms: their selectors are Nothing or ``{}``."""

Signature = tuple[Hashable, ...]
PodsOf = Callable[[NodeInfo], tuple[PodInfo, ...]]
WeightedTerms = Callable[[PodInfo], Iterator[tuple[AffinityTerm, int]]]
C = TypeVar("C")


def _selector_key(selector: LabelSelector | None) -> tuple[Requirement, ...] | None:
    return None if selector is None else selector.requirements


def signature(term: AffinityTerm) -> Signature:
    """Equal signatures select the same pods and place them under the same topology key."""
    return (
        term.topology_key,
        _selector_key(term.selector),
        term.namespaces,
        _selector_key(term.namespace_selector),
    )


def _labels(info: NodeInfo) -> Mapping[str, str]:
    node = info.node
    return node.labels if node is not None else NO_LABELS


class _Tally(ABC, Generic[C]):
    """Per node, the NodeInfo last seen and its pods' share of the totals.

    A share depends on the pods alone; the node's labels place it when applied.
    """

    __slots__ = ("_cursor", "_last", "_pods_of", "_seen")

    def __init__(self, pods_of: PodsOf) -> None:
        self._pods_of = pods_of
        self._last: tuple[NodeInfo, ...] = ()
        self._cursor = NodeCursor()
        self._seen: dict[str, tuple[NodeInfo, C]] = {}

    def sync(self, infos: tuple[NodeInfo, ...], snapshot: Snapshot | None = None) -> None:
        """Make the totals those of ``infos`` (unique names), redoing only the nodes that changed.

        ``infos`` may be ``snapshot``'s node list: then the positions its change log names since
        the last sync are all that is looked at.  Otherwise, when the list is as long as last time,
        the entries that are the same objects are skipped position by position without leaving C.
        """
        last = self._last
        if snapshot is None:
            self._cursor.forget()
        logged = self._cursor.changes(snapshot, len(last)) if snapshot is not None else None
        if logged is not None:
            changed: Iterable[NodeInfo] = [infos[p] for p in logged if infos[p] is not last[p]]
        else:
            changed = compress(infos, map(is_not, last, infos)) if len(last) == len(infos) else infos
        seen = self._seen
        for info in changed:
            entry = seen.get(info.name)
            if entry is None:
                share = self._share(self._pods_of(info))
                self._apply(info, share, 1)
                seen[info.name] = (info, share)
            elif entry[0] is not info:
                seen[info.name] = (info, self._moved(entry[0], entry[1], info))
        if len(seen) > len(infos):
            for name in seen.keys() - {info.name for info in infos}:
                before, share = seen.pop(name)
                self._apply(before, share, -1)
        self._last = infos

    def _moved(self, before: NodeInfo, share: C, after: NodeInfo) -> C:
        """Replace ``before``'s share by ``after``'s; only appended pods are matched when that is all."""
        added = appended(self._pods_of(before), self._pods_of(after))
        if added is None:
            new = self._share(self._pods_of(after))
        else:
            delta = self._share(added)
            new = self._combine(share, delta)
            if after.node is before.node:
                self._apply(after, delta, 1)
                return new
        self._apply(before, share, -1)
        self._apply(after, new, 1)
        return new

    @abstractmethod
    def _share(self, pods: tuple[PodInfo, ...]) -> C:
        """What ``pods`` hold, wherever they run."""

    @abstractmethod
    def _combine(self, share: C, delta: C) -> C:
        """The share of two groups of pods together."""

    @abstractmethod
    def _apply(self, info: NodeInfo, share: C, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) ``share`` at ``info``'s topology values."""


# --- existing pods' terms -------------------------------------------------------------------


@final
class TermGroup:
    """Existing pods' terms of one signature: per topology value, the summed weight and the term count.

    A value is listed while at least one term sits there, even when its weights cancel out.
    """

    __slots__ = ("counts", "term", "weights")

    def __init__(self, term: AffinityTerm) -> None:
        self.term = term
        self.weights: dict[str, int] = {}
        self.counts: dict[str, int] = {}

    def add(self, value: str, weight: int, count: int) -> None:
        total = self.counts.get(value, 0) + count
        if total:
            self.counts[value] = total
            self.weights[value] = self.weights.get(value, 0) + weight
        else:
            del self.counts[value]
            del self.weights[value]


TermShare = Mapping[Signature, tuple[AffinityTerm, int, int]]
"""signature -> (one of its terms, summed weight, term count) over some pods."""


@final
class TermTally(_Tally[TermShare]):
    """Existing pods' weighted terms grouped by signature, over the nodes it is synced with."""

    __slots__ = ("_terms_of", "groups")

    def __init__(self, pods_of: PodsOf, terms_of: WeightedTerms) -> None:
        super().__init__(pods_of)
        self._terms_of = terms_of
        self.groups: dict[Signature, TermGroup] = {}

    def _share(self, pods: tuple[PodInfo, ...]) -> TermShare:
        share: dict[Signature, tuple[AffinityTerm, int, int]] = {}
        for pod_info in pods:
            for term, weight in self._terms_of(pod_info):
                key = signature(term)
                held = share.get(key)
                share[key] = (term, weight, 1) if held is None else (held[0], held[1] + weight, held[2] + 1)
        return share

    def _combine(self, share: TermShare, delta: TermShare) -> TermShare:
        if not delta:
            return share
        combined = dict(share)
        for key, (term, weight, count) in delta.items():
            held = combined.get(key)
            combined[key] = (term, weight, count) if held is None else (held[0], held[1] + weight, held[2] + count)
        return combined

    def _apply(self, info: NodeInfo, share: TermShare, sign: int) -> None:
        labels = _labels(info)
        if not labels:
            return
        groups = self.groups
        for key, (term, weight, count) in share.items():
            value = labels.get(term.topology_key)
            if value is None:
                continue
            group = groups.get(key)
            if group is None:
                group = groups[key] = TermGroup(term)
            group.add(value, sign * weight, sign * count)
            if not group.counts:
                del groups[key]


def pods_with_affinity(info: NodeInfo) -> tuple[PodInfo, ...]:
    return info.pods_with_affinity


def pods_with_required_anti_affinity(info: NodeInfo) -> tuple[PodInfo, ...]:
    return info.pods_with_required_anti_affinity


def scored_terms(hard_weight: int) -> WeightedTerms:
    """What PreScore weighs of an existing pod: required affinity (if ``hard_weight``), then preferences."""

    def terms(pod_info: PodInfo) -> Iterator[tuple[AffinityTerm, int]]:
        if hard_weight > 0:
            for term in pod_info.required_affinity_terms:
                yield term, hard_weight
        for weighted in pod_info.preferred_affinity_terms:
            yield weighted.term, weighted.weight
        for weighted in pod_info.preferred_anti_affinity_terms:
            yield weighted.term, -weighted.weight

    return terms


def required_anti_affinity_terms(pod_info: PodInfo) -> Iterator[tuple[AffinityTerm, int]]:
    """What PreFilter counts of an existing pod: each required anti-affinity term once."""
    for term in pod_info.required_anti_affinity_terms:
        yield term, 1


# --- pods matching incoming terms -----------------------------------------------------------


def _all_pods(info: NodeInfo) -> tuple[PodInfo, ...]:
    return info.pods


@final
class PodTally(_Tally[int]):
    """How many pods match all of some namespace-merged incoming terms.

    ``per_term[i]`` counts them by the node's value of ``terms[i]``'s
    topology key (pods on nodes without it are not counted there).
    """

    __slots__ = ("per_term", "terms")

    def __init__(self, terms: tuple[AffinityTerm, ...]) -> None:
        super().__init__(_all_pods)
        self.terms = terms
        self.per_term: tuple[dict[str, int], ...] = tuple({} for _ in terms)

    def _selects(self, pod: Pod) -> bool:
        for term in self.terms:
            if not term.matches(pod, NO_LABELS):
                return False
        return True

    def _share(self, pods: tuple[PodInfo, ...]) -> int:
        return sum(1 for pod_info in pods if self._selects(pod_info.pod))

    def _combine(self, share: int, delta: int) -> int:
        return share + delta

    def _apply(self, info: NodeInfo, share: int, sign: int) -> None:
        if not share:
            return
        labels = _labels(info)
        for term, counts in zip(self.terms, self.per_term, strict=True):
            value = labels.get(term.topology_key)
            if value is not None:
                total = counts.get(value, 0) + sign * share
                if total:
                    counts[value] = total
                else:
                    del counts[value]


@final
class PodTallies:
    """The PodTally of each of the ``limit`` term tuples asked for most recently."""

    __slots__ = ("_tallies",)

    def __init__(self, limit: int) -> None:
        self._tallies: BoundedLRU[tuple[Signature, ...], PodTally] = BoundedLRU(limit)

    def synced(self, terms: tuple[AffinityTerm, ...], snapshot: Snapshot) -> PodTally:
        """The tally for ``terms``, synced with ``snapshot``'s nodes."""
        key = tuple(signature(term) for term in terms)
        tally = self._tallies.get(key)
        if tally is None:
            tally = PodTally(terms)
            self._tallies.put(key, tally)
        tally.sync(snapshot.node_infos, snapshot)
        return tally
