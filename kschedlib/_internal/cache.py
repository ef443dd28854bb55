"""The scheduler cache: nodes, the pods on them (bound and assumed), and incremental snapshots.

A pod's life in the cache (kube-scheduler's state machine)::

    +-------------------------------------------+  +----+
    |                            Add            |  |    |
    |                                           |  |    | Update
    +      Assume                Add            v  v    |
  Initial +--------> Assumed +------------+---> Added <--+
    ^                +   +               |       +
    |                |   |               |       |
    |                |   |     Add       |       | Remove
    |                |   +---------------+       |
    |                |     (bind observed)       |
    +----------------+---------------------------+
           Forget                 Remove

Every mutation replaces a node's immutable NodeInfo (with a fresh generation);
``snapshot()`` re-copies only the nodes that changed since the last snapshot.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.node_tree import NodeTree
from kschedlib.errors import CacheError
from kschedlib.framework._slots import builder
from kschedlib.framework.node_info import ImageState, NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.snapshot import NodeChangeLog, Snapshot
from kschedlib.model.objects import Namespace, Node, Pod

__all__ = ["Cache", "PodState"]


@final
@attrs.frozen(slots=True, repr=False)
class PodState(FieldsRepr):
    """Where the cache has a pod, and whether it is only assumed.

    Never changed in place (a change stores a new one), so a forked cache shares them.
    """

    pod_info: PodInfo
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None


_state = builder(PodState)
"""``PodState(pod_info, assumed, binding_finished, deadline)``, all four given (made several times per cycle)."""

_MAX_LOGGED = 10_000
"""Change-log entries kept beyond four per node before a fresh log starts (consumers then re-compare)."""

_ISSUED_PRUNED = 16
"""Weak references to issued snapshots kept before the dead ones are dropped (when no node changes)."""


def _track(names: frozenset[str], name: str, member: bool) -> frozenset[str]:
    """``names`` with ``name`` in it exactly when ``member`` (unchanged sets are returned as they are)."""
    if member is (name in names):
        return names
    return names | {name} if member else names - {name}


def _pod_label(pod: Pod) -> str:
    return f"{pod.uid}({pod.namespace}/{pod.name})"


@final
class Cache:
    """Nodes and pod placement; the single source of the scheduling snapshot."""

    __slots__ = (
        "_affinity_holders",
        "_anti_holders",
        "_changes",
        "_dirty",
        "_images",
        "_issued",
        "_nodes",
        "_order",
        "_order_changed",
        "_pods",
        "_positions",
        "_pvc_holders",
        "_snapshot_infos",
        "_snapshot_list",
        "_tree",
        "assumed_ttl",
    )

    def __init__(self, assumed_ttl: float = 0.0) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, PodState] = {}
        self._tree = NodeTree()
        self._images: dict[str, set[str]] = {}
        self._dirty: set[str] = set()
        self._snapshot_infos: dict[str, NodeInfo] = {}
        self._snapshot_list: list[NodeInfo] = []
        self._issued: list[weakref.ref[Snapshot]] = []
        """The snapshots handed out since ``_snapshot_list`` last changed: they read it until frozen
        (``Snapshot._over``)."""
        self._order: tuple[str, ...] = ()
        """The nodes' names in snapshot order (every snapshot of this order shares it)."""
        self._positions: dict[str, int] = {}
        self._order_changed = True
        self._pvc_holders: frozenset[str] = frozenset()
        self._affinity_holders: frozenset[str] = frozenset()
        self._anti_holders: frozenset[str] = frozenset()
        self._changes = NodeChangeLog()
        self.assumed_ttl = assumed_ttl

    # --- nodes ------------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        """Add or replace a node (a re-added node keeps the pods the cache knows on it)."""
        info = self._nodes.get(node.name)
        old = info.node if info is not None else None
        replaced = info.with_node(node) if info is not None else NodeInfo.of(node)
        if self._tree.add(node.name, node.labels):  # the step that reads the labels comes first
            self._order_changed = True
        self._nodes[node.name] = replaced
        self._set_images(node.name, old, node)
        self._dirty.add(node.name)

    update_node = add_node

    def remove_node(self, name: str) -> None:
        """Remove a node; its pods stay known (a "ghost" NodeInfo) until they are removed."""
        info = self._nodes.get(name)
        if info is None or info.node is None:
            raise CacheError(f"node {name} is not in the cache")
        self._set_images(name, info.node, None)
        if info.pods:
            self._nodes[name] = info.with_node(None)
        else:
            del self._nodes[name]
        self._tree.remove(name)
        self._order_changed = True
        self._dirty.add(name)

    def node(self, name: str) -> NodeInfo | None:
        """The current NodeInfo of ``name`` (ghosts included)."""
        return self._nodes.get(name)

    def node_names(self) -> list[str]:
        """Names of the nodes with a Node object, in scheduling order."""
        return self._tree.ordered()

    def _set_images(self, name: str, old: Node | None, new: Node | None) -> None:
        for image in old.images if old is not None else ():
            for image_name in image.names:
                holders = self._images.get(image_name)
                if holders is not None:
                    holders.discard(name)
                    if not holders:
                        del self._images[image_name]
        for image in new.images if new is not None else ():
            for image_name in image.names:
                self._images.setdefault(image_name, set()).add(name)

    # --- pods -------------------------------------------------------------------------------

    def _place(self, pod_info: PodInfo) -> None:
        name = pod_info.pod.node_name
        info = self._nodes.get(name)
        self._nodes[name] = (info if info is not None else NodeInfo.of(None)).with_pod(pod_info)
        self._dirty.add(name)

    def _unplace(self, pod: Pod) -> None:
        name = pod.node_name
        info = self._nodes.get(name)
        if info is None:
            raise CacheError(f"node {name} of pod {pod.namespace}/{pod.name} is not in the cache")
        info = info.without_pod(pod)
        if info.node is None and not info.pods:
            del self._nodes[name]
        else:
            self._nodes[name] = info
        self._dirty.add(name)

    def assume_pod(self, pod_info: PodInfo) -> None:
        """Count a pod on its ``node_name`` before the binding is confirmed."""
        pod = pod_info.pod
        if not pod.node_name:
            raise CacheError(f"pod {_pod_label(pod)} has no node name, so can't be assumed")
        if pod.uid in self._pods:
            raise CacheError(f"pod {_pod_label(pod)} is in the cache, so can't be assumed")
        self._place(pod_info)
        self._pods[pod.uid] = _state(pod_info, True, False, None)

    def finish_binding(self, pod: Pod, now: float) -> None:
        """Mark an assumed pod's binding as finished; it may expire after ``assumed_ttl`` (0 = never)."""
        state = self._pods.get(pod.uid)
        if state is not None and state.assumed:
            deadline = now + self.assumed_ttl if self.assumed_ttl > 0 else None
            self._pods[pod.uid] = _state(state.pod_info, True, True, deadline)

    def forget_pod(self, pod: Pod) -> None:
        """Undo ``assume_pod`` after a failure in the scheduling or binding cycle."""
        state = self._pods.get(pod.uid)
        if state is None or not state.assumed:
            raise CacheError(f"pod {_pod_label(pod)} wasn't assumed so cannot be forgotten")
        placed = state.pod_info.pod.node_name
        if placed != pod.node_name:
            raise CacheError(f"pod {_pod_label(pod)} was assumed on {placed} but assigned to {pod.node_name}")
        self._unplace(state.pod_info.pod)
        del self._pods[pod.uid]

    def add_pod(self, pod_info: PodInfo) -> None:
        """A bound pod observed: confirms an assumed pod (possibly on another node) or adds a new one."""
        pod = pod_info.pod
        state = self._pods.get(pod.uid)
        if state is not None and not state.assumed:
            raise CacheError(f"pod {_pod_label(pod)} is already in the cache, so can't be added")
        if state is not None and state.pod_info is pod_info:
            # the binding of exactly what was assumed: nothing moves
            self._pods[pod.uid] = _state(pod_info, False, False, None)
            return
        if state is not None:
            self._unplace(state.pod_info.pod)
        self._place(pod_info)
        self._pods[pod.uid] = _state(pod_info, False, False, None)

    def update_pod(self, pod_info: PodInfo) -> None:
        """Replace a bound pod with its new version (an assumed pod is confirmed instead)."""
        state = self._pods.get(pod_info.pod.uid)
        if state is None:
            raise CacheError(f"pod {_pod_label(pod_info.pod)} is not in the cache, so can't be updated")
        if state.assumed:
            self.add_pod(pod_info)
            return
        self._unplace(state.pod_info.pod)
        self._place(pod_info)
        self._pods[pod_info.pod.uid] = _state(pod_info, False, False, None)

    def remove_pod(self, pod: Pod) -> None:
        """Remove a bound or assumed pod."""
        state = self._pods.pop(pod.uid, None)
        if state is None:
            raise CacheError(f"pod {_pod_label(pod)} is not in the cache, so can't be removed")
        self._unplace(state.pod_info.pod)

    def pod_state(self, uid: str) -> PodState | None:
        return self._pods.get(uid)

    def is_assumed(self, uid: str) -> bool:
        state = self._pods.get(uid)
        return state is not None and state.assumed

    def expire_assumed(self, now: float) -> list[Pod]:
        """Drop assumed pods whose binding finished before ``now - ttl``; returns them."""
        if self.assumed_ttl <= 0:
            return []
        expired = [s.pod_info.pod for s in self._pods.values()
                   if s.assumed and s.binding_finished and s.deadline is not None and now > s.deadline]
        for pod in expired:
            self.remove_pod(pod)
        return expired

    def pods(self) -> Iterable[PodState]:
        return self._pods.values()

    def copy(self) -> Cache:
        """An independent cache with the same nodes and pods.

        NodeInfos and PodStates are immutable and shared; only the indexes are copied, and the
        copy starts a node order and change log of its own (its consumers start afresh).
        """
        other = Cache(self.assumed_ttl)
        other._nodes = dict(self._nodes)
        other._pods = dict(self._pods)
        other._tree = self._tree.copy()
        other._images = {name: set(holders) for name, holders in self._images.items()}
        other._dirty = set(self._dirty)
        other._snapshot_infos = dict(self._snapshot_infos)
        other._pvc_holders = self._pvc_holders
        other._affinity_holders, other._anti_holders = self._affinity_holders, self._anti_holders
        return other

    # --- snapshots --------------------------------------------------------------------------

    def _snapshot_copy(self, info: NodeInfo) -> NodeInfo:
        node = info.node
        if node is None or not node.images:
            return info
        states = {}
        for image in node.images:
            for image_name in image.names:
                states[image_name] = ImageState(image.size_bytes, len(self._images.get(image_name, ())))
        return info.with_image_states(states)

    def snapshot(self, namespaces: Mapping[str, Namespace] | None = None) -> Snapshot:
        """An immutable snapshot; only nodes changed since the previous one are re-copied."""
        infos = self._snapshot_infos
        positions = self._positions
        listed = self._snapshot_list
        holders = self._pvc_holders
        affinity, anti = self._affinity_holders, self._anti_holders
        issued = self._issued
        for name in self._dirty:
            info = self._nodes.get(name)
            if info is None or info.node is None:
                infos.pop(name, None)
                holders, affinity, anti = holders - {name}, affinity - {name}, anti - {name}
                continue
            holders = _track(holders, name, bool(info.pvc_ref_counts))
            affinity = _track(affinity, name, bool(info.pods_with_affinity))
            anti = _track(anti, name, bool(info.pods_with_required_anti_affinity))
            copy = infos[name] = self._snapshot_copy(info)
            position = positions.get(name)
            if position is not None and not self._order_changed:
                if issued:  # those still held keep a copy of the list as it was
                    _freeze(issued)
                listed[position] = copy
                self._changes.positions.append(position)
        self._dirty.clear()
        self._pvc_holders = holders
        self._affinity_holders, self._anti_holders = affinity, anti
        if self._order_changed or len(self._changes.positions) > _MAX_LOGGED + 4 * len(listed):
            self._changes = NodeChangeLog()
        if self._order_changed:
            self._order = tuple(self._tree.ordered())
            self._positions = positions = {name: i for i, name in enumerate(self._order)}
            self._snapshot_list = listed = [infos[name] for name in self._order]
            issued.clear()  # the list they read is never written again
            self._order_changed = False
        snapshot = Snapshot._over(listed, namespaces=namespaces, positions=positions, pvc_holders=holders,
                                  affinity_holders=affinity, anti_affinity_holders=anti, changes=self._changes,
                                  names=self._order)
        if len(issued) >= _ISSUED_PRUNED:  # many snapshots without a change in between: drop the dead
            issued[:] = [ref for ref in issued if ref() is not None]
        issued.append(weakref.ref(snapshot))
        return snapshot

    def dump(self) -> dict[str, object]:
        """A plain summary for debugging: nodes with their pods, and the assumed pods."""
        return {
            "nodes": {name: [p.pod.key for p in info.pods] for name, info in sorted(self._nodes.items())},
            "assumed": sorted(s.pod_info.pod.key for s in self._pods.values() if s.assumed),
        }


def _freeze(issued: list[weakref.ref[Snapshot]]) -> None:
    """Give every snapshot still held a tuple of its nodes, and forget them all."""
    for ref in issued:
        snapshot = ref()
        if snapshot is not None:
            snapshot._freeze()
    issued.clear()
