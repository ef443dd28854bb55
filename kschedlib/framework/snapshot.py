"""Snapshot: the immutable view of the cluster that one scheduling cycle reads.

Nodes are listed in kube-scheduler's order (zones interleaved round-robin,
nodes of a zone in arrival order); filtering walks that order from a rotating
start index.  Plugins must not mutate anything they reach through it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import final

from kschedlib.framework.node_info import NodeInfo
from kschedlib.model.objects import Namespace

__all__ = ["NodeCursor", "Snapshot"]


@final
class NodeChangeLog:
    """Positions whose NodeInfo was replaced, in the order of replacement, for one node layout.

    The cache appends to it as it refreshes snapshots and starts a new log whenever the node order
    changes.  Consumers that keep per-position results (the runtime's memo columns) remember a
    snapshot's :attr:`Snapshot.revision` and later re-check only the positions logged in between.
    """

    __slots__ = ("positions",)

    def __init__(self) -> None:
        self.positions: list[int] = []


@final
class NodeCursor:
    """One consumer's place in the snapshots' change log: which node positions to look at again.

    Anything that keeps results per node position across cycles (memo columns, topology tallies)
    asks :meth:`changes` each time it sees a snapshot, and never reads the log itself.
    """

    __slots__ = ("_revision",)

    def __init__(self) -> None:
        self._revision: tuple[NodeChangeLog, int] | None = None

    def changes(self, snapshot: Snapshot, held: int) -> list[int] | None:
        """Positions whose NodeInfo may have been replaced since the last call, and move to ``snapshot``.

        ``None`` means "look at every position": on the first call, on another node layout, for an
        untracked snapshot, or when the ``held`` positions the consumer keeps are not the
        snapshot's node count.
        """
        changed = snapshot.changed_between(self._revision) if held == snapshot.num_nodes else None
        self._revision = snapshot.revision
        return changed

    def forget(self) -> None:
        """The next :meth:`changes` says "look at every position"."""
        self._revision = None


@final
class Snapshot:
    """Ordered, immutable NodeInfos plus the namespace labels affinity terms read."""

    __slots__ = ("__weakref__", "_affinity", "_affinity_holders", "_anti_affinity", "_anti_affinity_holders",
                 "_changes", "_list", "_mark", "_names", "_namespaces", "_positions", "_pvc_holders", "_used_pvcs",
                 "generation")

    def __init__(
        self,
        node_infos: Sequence[NodeInfo],
        *,
        namespaces: Mapping[str, Namespace] | None = None,
        generation: int = 0,
        positions: Mapping[str, int] | None = None,
        pvc_holders: Collection[str] | None = None,
        affinity_holders: Collection[str] | None = None,
        anti_affinity_holders: Collection[str] | None = None,
        changes: NodeChangeLog | None = None,
        names: tuple[str, ...] | None = None,
    ) -> None:
        """``positions`` (name -> index in ``node_infos``) may be passed when already known, and so may
        the names of the nodes whose pods use PersistentVolumeClaims (``pvc_holders``), have pod
        (anti-)affinity (``affinity_holders``) or required anti-affinity (``anti_affinity_holders``):
        the cache tracks them incrementally so that no cycle scans every node for them.  ``changes`` is
        the cache's log of replaced positions for this node order (see :meth:`changed_between`), and
        ``names`` the nodes' names in order (see :attr:`node_names`)."""
        self._list: Sequence[NodeInfo] = tuple(node_infos)
        """A tuple, or the cache's live list until the cache freezes this snapshot (see :meth:`_over`)."""
        self._positions: Mapping[str, int] = (
            positions if positions is not None else {info.name: i for i, info in enumerate(self._list)}
        )
        self._namespaces: Mapping[str, Namespace] = namespaces if namespaces is not None else {}
        self._affinity: tuple[NodeInfo, ...] | None = None
        self._anti_affinity: tuple[NodeInfo, ...] | None = None
        self._pvc_holders = pvc_holders
        self._affinity_holders = affinity_holders
        self._anti_affinity_holders = anti_affinity_holders
        self._used_pvcs: frozenset[str] | None = None
        self._changes = changes
        self._names = names
        self._mark = len(changes.positions) if changes is not None else 0
        self.generation = generation

    @classmethod
    def _over(
        cls, live: list[NodeInfo], *, namespaces: Mapping[str, Namespace] | None, positions: Mapping[str, int],
        pvc_holders: Collection[str], affinity_holders: Collection[str], anti_affinity_holders: Collection[str],
        changes: NodeChangeLog, names: tuple[str, ...],
    ) -> Snapshot:
        """A snapshot reading the cache's ``live`` list instead of a copy of it.

        The cache calls :meth:`_freeze` before it next writes into ``live`` if this snapshot is
        still referenced, so nobody ever sees it change; when nothing holds it any more (the usual
        case between two cycles), no copy of the node list is ever made.  Whatever may outlive the
        snapshot (:attr:`node_infos`, iteration, :attr:`have_pods_with_affinity`) is a tuple.
        """
        snapshot = cls((), namespaces=namespaces, positions=positions, pvc_holders=pvc_holders,
                       affinity_holders=affinity_holders, anti_affinity_holders=anti_affinity_holders, changes=changes,
                       names=names)
        snapshot._list = live
        return snapshot

    def _freeze(self) -> None:
        """Hold a tuple of the nodes instead of the cache's live list (called before the list changes)."""
        if type(self._list) is not tuple:
            self._list = tuple(self._list)

    @property
    def _nodes(self) -> Sequence[NodeInfo]:
        """The nodes, for one cycle's own use: may be the cache's live list, never to be kept."""
        return self._list

    @property
    def revision(self) -> tuple[NodeChangeLog, int] | None:
        """Where this snapshot stands in its node layout's change log (``None`` when not tracked)."""
        return (self._changes, self._mark) if self._changes is not None else None

    def changed_between(self, revision: tuple[NodeChangeLog, int] | None) -> list[int] | None:
        """Positions whose NodeInfo may differ between ``revision`` and this snapshot, or ``None``
        when that is unknown (another layout, or an untracked snapshot): then compare them all."""
        if revision is None or self._changes is None or revision[0] is not self._changes:
            return None
        low, high = sorted((revision[1], self._mark))
        return self._changes.positions[low:high]

    @property
    def node_infos(self) -> tuple[NodeInfo, ...]:
        """Every node, in scheduling order."""
        self._freeze()
        return self._list  # type: ignore[return-value]  # a tuple once frozen

    @property
    def node_names(self) -> tuple[str, ...]:
        """Every node's name, in scheduling order.

        The cache hands over the one tuple it keeps per node order, so that a cycle takes the names
        of its feasible nodes as slices of it instead of reading them node by node.
        """
        if self._names is None:
            self._names = tuple([info.name for info in self._list])
        return self._names

    def __len__(self) -> int:
        return len(self._list)

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.node_infos)  # an iterator may outlive the snapshot: never over the live list

    @property
    def num_nodes(self) -> int:
        """How many nodes the snapshot lists."""
        return len(self._list)

    def get(self, name: str) -> NodeInfo:
        """The NodeInfo of ``name``; ``KeyError`` with kube-scheduler's text when absent."""
        try:
            return self._list[self._positions[name]]
        except KeyError:
            raise KeyError(f'nodeinfo not found for node name "{name}"') from None

    def position_of(self, name: str) -> int | None:
        """Where ``name`` is in :attr:`node_infos`, or ``None``."""
        return self._positions.get(name)

    def find(self, name: str) -> NodeInfo | None:
        """The NodeInfo of ``name``, or ``None``."""
        position = self._positions.get(name)
        return self._list[position] if position is not None else None

    @property
    def have_pods_with_affinity(self) -> tuple[NodeInfo, ...]:
        """Nodes hosting at least one pod with pod (anti-)affinity."""
        if self._affinity is None:
            self._affinity = self._holding(self._affinity_holders, lambda info: bool(info.pods_with_affinity))
        return self._affinity

    @property
    def have_pods_with_required_anti_affinity(self) -> tuple[NodeInfo, ...]:
        """Nodes hosting at least one pod with required pod anti-affinity."""
        if self._anti_affinity is None:
            self._anti_affinity = self._holding(self._anti_affinity_holders,
                                                lambda info: bool(info.pods_with_required_anti_affinity))
        return self._anti_affinity

    def _holding(self, names: Collection[str] | None, test: Callable[[NodeInfo], bool]) -> tuple[NodeInfo, ...]:
        """The listed nodes passing ``test``, in snapshot order (only ``names`` are looked at when known)."""
        if names is None:
            return tuple(info for info in self._list if test(info))
        if len(names) == len(self._list) and all(map(self._positions.__contains__, names)):
            return self.node_infos  # every listed node holds some
        positions = sorted(p for name in names if (p := self._positions.get(name)) is not None)
        return tuple(self._list[p] for p in positions)

    @property
    def used_pvcs(self) -> frozenset[str]:
        """``namespace/claim`` of every claim a pod on a listed node uses (kube's used-PVC set).

        Computed on first use: only pods with ReadWriteOncePod claims ask.
        """
        if self._used_pvcs is None:
            if self._pvc_holders is None:
                infos: Iterator[NodeInfo] | tuple[NodeInfo, ...] = self.node_infos
            else:
                infos = (info for name in self._pvc_holders if (info := self.find(name)) is not None)
            self._used_pvcs = frozenset(key for info in infos for key in info.pvc_ref_counts)
        return self._used_pvcs

    def is_pvc_used_by_pods(self, key: str) -> bool:
        """Whether a pod on some node uses the claim ``namespace/name``."""
        return key in self.used_pvcs

    @property
    def namespaces(self) -> Mapping[str, Namespace]:
        """Known namespaces by name."""
        return self._namespaces

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """Labels of ``namespace`` (empty when unknown)."""
        ns = self._namespaces.get(namespace)
        return ns.labels if ns is not None else {}
