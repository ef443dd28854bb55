"""PodTopologySpread's queueing hints: which pod and node events may even out a spread.

:class:`SpreadHints` are kube v1.36's; :class:`SpreadHintsV130` are v1.30's (used with its
``SchedulerQueueingHints`` gate on), which neither single out the pod's own update nor look at
taints, and ask only whether a node carries the keys, not whether their values changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kschedlib.framework.events import QueueingHint, hint_of
from kschedlib.model.objects import Node, Pod
from kschedlib.plugins.pod_topology_spread.common import SpreadConstraint, has_all_keys

__all__ = ["SpreadHints", "SpreadHintsV130"]

Constraints = Callable[[Pod], Sequence[SpreadConstraint]]


def _objects(old: object, new: object, kind: type[Pod] | type[Node]) -> bool:
    """Whether the event carries objects of ``kind`` (else the hint cannot judge it: Queue)."""
    return isinstance(old, kind | None) and isinstance(new, kind | None) and (old is not None or new is not None)


def _involved(other: Pod, pod: Pod) -> bool:
    """The pod itself, or a placed pod of its namespace."""
    return other.uid == pod.uid or (bool(other.node_name) and other.namespace == pod.namespace)


class SpreadHints:
    """Hint functions over the hard constraints a pod is judged by (its own, else the defaults)."""

    __slots__ = ("_constraints",)

    def __init__(self, constraints: Constraints) -> None:
        self._constraints = constraints

    def after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """A matching placed pod was added or deleted, a label change flipped a match, or the pod got
        a toleration while a constraint honours taints."""
        if not isinstance(old, Pod | None) or not isinstance(new, Pod | None) or (old is None and new is None):
            return QueueingHint.QUEUE
        if (new is not None and not _involved(new, pod)) or (old is not None and not _involved(old, pod)):
            return QueueingHint.QUEUE_SKIP
        constraints = self._constraints(pod)
        if old is not None and new is not None:
            if (pod.uid == new.uid and new.tolerations != old.tolerations
                    and any(c.honor_node_taints for c in constraints)):
                return QueueingHint.QUEUE
            if new.labels == old.labels:
                return QueueingHint.QUEUE_SKIP
            return hint_of(any(c.selects(old.labels) != c.selects(new.labels) for c in constraints))
        changed = new if new is not None else old
        assert changed is not None
        return hint_of(any(c.selects(changed.labels) for c in constraints))

    def after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """A node carrying every topology key came or went, or one changed its keys' values or taints."""
        if not isinstance(old, Node | None) or not isinstance(new, Node | None) or (old is None and new is None):
            return QueueingHint.QUEUE
        constraints = self._constraints(pod)
        keys = [c.topology_key for c in constraints]
        old_matching = old is not None and has_all_keys(old.labels, keys)
        new_matching = new is not None and has_all_keys(new.labels, keys)
        if old is not None and new is not None:
            if old_matching != new_matching:
                return QueueingHint.QUEUE
            changed = any(old.labels.get(k) != new.labels.get(k) for k in keys) or old.taints != new.taints
            return hint_of(new_matching and changed)
        return hint_of(new_matching if new is not None else old_matching)


class SpreadHintsV130:
    """kube v1.30's hint functions over the same hard constraints."""

    __slots__ = ("_constraints",)

    def __init__(self, constraints: Constraints) -> None:
        self._constraints = constraints

    def after_pod_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """A placed pod of the namespace that a constraint selects came or went, or a label change
        flipped a selection."""
        if not _objects(old, new, Pod):
            return QueueingHint.QUEUE
        for changed in (new, old):
            if isinstance(changed, Pod) and not (changed.node_name and changed.namespace == pod.namespace):
                return QueueingHint.QUEUE_SKIP
        constraints = self._constraints(pod)
        if isinstance(old, Pod) and isinstance(new, Pod):
            if new.labels == old.labels:
                return QueueingHint.QUEUE_SKIP
            return hint_of(any(c.selects(old.labels) != c.selects(new.labels) for c in constraints))
        changed = new if isinstance(new, Pod) else old
        assert isinstance(changed, Pod)
        return hint_of(any(c.selects(changed.labels) for c in constraints))

    def after_node_change(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """The added, updated or deleted node carries every topology key of the constraints."""
        if not _objects(old, new, Node):
            return QueueingHint.QUEUE
        node = new if isinstance(new, Node) else old
        assert isinstance(node, Node)
        return hint_of(has_all_keys(node.labels, [c.topology_key for c in self._constraints(pod)]))
