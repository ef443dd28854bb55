"""Nominated pods: pods that preemption promised a node, counted there by later filtering."""

from __future__ import annotations

from collections.abc import Sequence
from typing import final

from kschedlib.framework.pod_info import PodInfo

__all__ = ["Nominator"]


@final
class Nominator:
    """node name -> pods nominated to it (in nomination order), and pod uid -> node name.

    Each node's pods are a tuple, replaced when a nomination comes or goes: filtering reads them for
    every node it visits in a cycle, nominations change once per preemption, so readers get the
    stored tuple itself rather than a copy.
    """

    __slots__ = ("_at_least", "_by_node", "_node_of")

    def __init__(self) -> None:
        self._by_node: dict[str, tuple[PodInfo, ...]] = {}
        self._node_of: dict[str, str] = {}
        self._at_least: dict[str, tuple[tuple[PodInfo, ...], int, tuple[PodInfo, ...], frozenset[str]]] = {}
        """Per node, for :meth:`counted`: its pods, a priority, those of at least it, and their uids."""

    def __bool__(self) -> bool:
        return bool(self._node_of)

    def add(self, pod_info: PodInfo, node_name: str) -> None:
        """Nominate the pod to ``node_name`` (replacing an earlier nomination); "" only removes."""
        self.remove(pod_info.pod.uid)
        if not node_name:
            return
        self._by_node[node_name] = (*self._by_node.get(node_name, ()), pod_info)
        self._node_of[pod_info.pod.uid] = node_name

    def remove(self, uid: str) -> None:
        """Drop the pod's nomination, if any."""
        node = self._node_of.pop(uid, None)
        if node is None:
            return
        pods = tuple(info for info in self._by_node[node] if info.pod.uid != uid)
        if pods:
            self._by_node[node] = pods
        else:
            del self._by_node[node]
            self._at_least.pop(node, None)

    def exchange(self, other: Nominator) -> None:
        """Swap contents with ``other`` (holders of this nominator then see what ``other`` held)."""
        self._by_node, other._by_node = other._by_node, self._by_node
        self._at_least, other._at_least = other._at_least, self._at_least
        self._node_of, other._node_of = other._node_of, self._node_of

    def copy(self) -> Nominator:
        other = Nominator()
        other._by_node = dict(self._by_node)
        other._node_of = dict(self._node_of)
        return other

    def node_of(self, uid: str) -> str | None:
        return self._node_of.get(uid)

    def pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        """Pods nominated to ``node_name``, in nomination order."""
        return self._by_node.get(node_name, ())

    def counted(self, priority: int, uid: str) -> list[tuple[str, tuple[PodInfo, ...]]]:
        """(node name, its nominated pods of at least ``priority`` but the pod ``uid``) for every node
        with any: those the two-pass rule counts for a pod.

        The node search asks for them in every cycle, for every nominated node, while nominations
        change once per preemption: each node's pods of at least a priority are kept with the tuple
        they were sorted out of and reused while that tuple stands.
        """
        out: list[tuple[str, tuple[PodInfo, ...]]] = []
        kept = self._at_least
        for name, pods in self._by_node.items():
            entry = kept.get(name)
            if entry is None or entry[0] is not pods or entry[1] != priority:
                enough = tuple([info for info in pods if info.pod.effective_priority >= priority])
                entry = kept[name] = (pods, priority, enough, frozenset([info.pod.uid for info in enough]))
            counted = entry[2]
            if uid in entry[3]:
                counted = tuple([info for info in counted if info.pod.uid != uid])
            if counted:
                out.append((name, counted))
        return out

    def node_names(self) -> list[str]:
        """The nodes with at least one nominated pod."""
        return list(self._by_node)

    def nominations(self) -> dict[str, str]:
        """pod uid -> node name."""
        return dict(self._node_of)
