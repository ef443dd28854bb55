"""InterPodAffinity's queueing hints (kube v1.36): which pod and node events may satisfy a pod's terms."""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.framework.events import QueueingHint, hint_of
from kschedlib.framework.pod_info import AffinityTerm, PodInfo
from kschedlib.model.objects import Node, Pod

__all__ = ["after_node_change", "after_pod_change"]

_NO_NAMESPACE_LABELS: dict[str, str] = {}


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """Whether ``pod`` satisfies every term (one pod must satisfy all of an incoming pod's terms)."""
    return bool(terms) and all(term.matches(pod, _NO_NAMESPACE_LABELS) for term in terms)


def after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A placed pod now matches the pod's affinity, or no longer matches (or left) its anti-affinity."""
    if not isinstance(old, Pod | None) or not isinstance(new, Pod | None) or (old is None and new is None):
        return QueueingHint.QUEUE
    if (new is not None and not new.node_name) or (old is not None and not old.node_name):
        return QueueingHint.QUEUE_SKIP
    info = PodInfo.of(pod)
    terms, anti_terms = info.required_affinity_terms, info.required_anti_affinity_terms
    if old is not None and new is not None:
        if not _matches_all(terms, old) and _matches_all(terms, new):
            return QueueingHint.QUEUE
        return hint_of(_matches_all(anti_terms, old) and not _matches_all(anti_terms, new))
    if new is not None:
        return hint_of(_matches_all(terms, new))
    assert old is not None
    return hint_of(_matches_all(anti_terms, old))


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A node carrying one of the topology keys of the pod's (anti-)affinity terms was added or updated."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    info = PodInfo.of(pod)
    keys = [term.topology_key for term in (*info.required_affinity_terms, *info.required_anti_affinity_terms)]
    return hint_of(any(key in new.labels for key in keys))
