"""InterPodAffinity's queueing hints: which pod and node events may satisfy a pod's terms.

``after_pod_change`` and ``after_node_change`` are kube v1.36's.  The pod hint of v1.32-v1.35
(``after_pod_change_v132``) skips every event of a pod without a node, the pod's own label updates
included, and requeues after a deletion only when the deleted pod matched the pod's anti-affinity; the
node hint of v1.32 (``after_node_change_v132``) requeues for any node carrying a topology key of the
pod's terms, where v1.33 on asks whether the event gave, took away or changed that key.
"""

from __future__ import annotations

from collections.abc import Sequence

from kschedlib.framework.events import QueueingHint, hint_of
from kschedlib.framework.pod_info import AffinityTerm, PodInfo
from kschedlib.model.objects import Node, Pod

__all__ = ["after_node_change", "after_node_change_v132", "after_pod_change", "after_pod_change_v132"]

_NO_NAMESPACE_LABELS: dict[str, str] = {}


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """Whether ``pod`` satisfies every term (one pod must satisfy all of an incoming pod's terms)."""
    return bool(terms) and all(term.matches(pod, _NO_NAMESPACE_LABELS) for term in terms)


def _placed(pod: Pod) -> bool:
    """Whether v1.36 reads ``pod`` as taking a place: bound, or nominated to a node."""
    return bool(pod.node_name or pod.nominated_node_name)


def after_pod_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """The pod's own labels changed; a placed or nominated pod now matches the pod's affinity, or no longer
    matches (or left) its anti-affinity; or a pod whose anti-affinity the pod matches left."""
    if not isinstance(old, Pod | None) or not isinstance(new, Pod | None) or (old is None and new is None):
        return QueueingHint.QUEUE
    if old is not None and new is not None and new.uid == pod.uid:
        return QueueingHint.QUEUE  # only label updates are registered: another pod's anti-affinity may let go
    if (new is not None and not _placed(new)) or (old is not None and not _placed(old)):
        return QueueingHint.QUEUE_SKIP
    info = PodInfo.of(pod)
    if new is not None:
        return _changed_or_added(info, old, new)
    assert old is not None
    if _matches_all(info.required_anti_affinity_terms, old):
        return QueueingHint.QUEUE
    return hint_of(_matches_all(PodInfo.of(old).required_anti_affinity_terms, pod))


def after_pod_change_v132(pod: Pod, old: object, new: object) -> QueueingHint:
    """A placed pod now matches the pod's affinity, or no longer matches (or left) its anti-affinity."""
    if not isinstance(old, Pod | None) or not isinstance(new, Pod | None) or (old is None and new is None):
        return QueueingHint.QUEUE
    if (new is not None and not new.node_name) or (old is not None and not old.node_name):
        return QueueingHint.QUEUE_SKIP
    info = PodInfo.of(pod)
    if new is not None:
        return _changed_or_added(info, old, new)
    assert old is not None
    return hint_of(_matches_all(info.required_anti_affinity_terms, old))


def _changed_or_added(info: PodInfo, old: Pod | None, new: Pod) -> QueueingHint:
    terms, anti_terms = info.required_affinity_terms, info.required_anti_affinity_terms
    if old is not None:
        if not _matches_all(terms, old) and _matches_all(terms, new):
            return QueueingHint.QUEUE
        return hint_of(_matches_all(anti_terms, old) and not _matches_all(anti_terms, new))
    return hint_of(_matches_all(terms, new))


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A node was added with a topology key of the pod's affinity (any node, with anti-affinity), or an
    update gave the node such a key (affinity), took it away (anti-affinity) or changed its value."""
    if not isinstance(new, Node) or not isinstance(old, Node | None):
        return QueueingHint.QUEUE
    info = PodInfo.of(pod)
    for term in info.required_affinity_terms:
        key = term.topology_key
        if old is None:
            if key in new.labels:
                return QueueingHint.QUEUE
            continue
        if key in new.labels and (key not in old.labels or old.labels[key] != new.labels[key]):
            return QueueingHint.QUEUE
    for term in info.required_anti_affinity_terms:
        key = term.topology_key
        if old is None or (key in old.labels and old.labels.get(key) != new.labels.get(key)):
            return QueueingHint.QUEUE
    return QueueingHint.QUEUE_SKIP


def after_node_change_v132(pod: Pod, old: object, new: object) -> QueueingHint:
    """A node carrying one of the topology keys of the pod's (anti-)affinity terms was added or updated."""
    if not isinstance(new, Node):
        return QueueingHint.QUEUE
    info = PodInfo.of(pod)
    keys = [term.topology_key for term in (*info.required_affinity_terms, *info.required_anti_affinity_terms)]
    return hint_of(any(key in new.labels for key in keys))
