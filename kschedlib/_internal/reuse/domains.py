"""Filter verdicts per label domain: the node search for :class:`~kschedlib.framework.memo.LabelKeyedFilter`s.

A Filter that judges a node by a few of its labels alone (PodTopologySpread: the node's topology
domains) gives every node of a domain the same verdict, so the node search asks it once per domain.
:class:`LabelDomains` keeps, per node position, the index of the node's domain (one byte), brought
up to date from the snapshot's change log; the column search then takes a run of positions with
C-level passes (:func:`~kschedlib._internal.reuse.columns.take_grouped`) instead of a Filter call per node.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, NamedTuple, final

from kschedlib.framework._bounded import BoundedLRU
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.memo import LabelKeyedFilter
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import NodeCursor, Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["DomainStore", "DomainVerdicts", "LabelDomains"]

_SUCCESS: Final = Code.SUCCESS
_ERROR: Final = Code.ERROR
_SUCCESS_STATUS: Final = Status.success()
_MAX_DOMAINS: Final = 256
"""Domain indexes are bytes; a layout with more domains is searched node by node."""
_KEY_SETS: Final = 16
_GHOST: Final = ("\0ghost",)
"""The domain of a NodeInfo without a Node (it has no labels at all)."""


@final
class LabelDomains:
    """Per node position, the index of the node's domain (its values of ``keys``), as bytes."""

    __slots__ = ("cursor", "ids", "index", "infos", "keys", "overflow", "sizes")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.infos: list[NodeInfo] = []
        self.index = bytearray()
        self.ids: dict[tuple[str | None, ...], int] = {}
        self.sizes: list[int] = []
        """Positions per domain index (an index whose domain emptied stays, with size 0)."""
        self.cursor = NodeCursor()
        self.overflow = False
        """More than 256 domains in this layout: not usable until the layout changes."""

    def _domain(self, info: NodeInfo) -> tuple[str | None, ...]:
        node = info.node
        if node is None:
            return _GHOST
        labels = node.labels
        return tuple([labels.get(key) for key in self.keys])

    def _id(self, domain: tuple[str | None, ...]) -> int:
        found = self.ids.get(domain)
        if found is None:
            found = self.ids[domain] = len(self.sizes)
            self.sizes.append(0)
        return found

    def sync(self, snapshot: Snapshot) -> bool:
        """Bring the indexes to ``snapshot``; False when its nodes hold more than 256 domains."""
        nodes = snapshot._nodes
        changed = self.cursor.changes(snapshot, len(self.infos))
        if changed is None:
            return self._rebuild(nodes)
        if self.overflow:
            return False
        infos, index, sizes = self.infos, self.index, self.sizes
        for position in changed:
            info = nodes[position]
            old = infos[position]
            if info is old:
                continue
            infos[position] = info
            if info.node is old.node:
                continue
            new = self._id(self._domain(info))
            if new >= _MAX_DOMAINS:
                return self._rebuild(nodes)
            sizes[index[position]] -= 1
            sizes[new] += 1
            index[position] = new
        return True

    def _rebuild(self, nodes: Sequence[NodeInfo]) -> bool:
        self.infos = list(nodes)
        self.ids, self.sizes = {}, []
        ids = [self._id(self._domain(info)) for info in nodes]
        self.overflow = len(self.sizes) > _MAX_DOMAINS
        if self.overflow:
            self.index = bytearray()
            return False
        self.index = bytearray(ids)
        for i in ids:
            self.sizes[i] += 1
        return True

    def verdicts(self, nodes: Sequence[NodeInfo], verdict: Callable[[NodeInfo], Status]) -> DomainVerdicts:
        """Each non-empty domain's verdict, asked of its first node, as translation tables."""
        fits, rejects, errs = bytearray(256), bytearray(256), bytearray(256)
        statuses = [_SUCCESS_STATUS] * len(self.sizes)  # an empty domain's is never read
        erring = False
        index = self.index
        for domain, size in enumerate(self.sizes):
            if not size:
                continue
            status = statuses[domain] = verdict(nodes[index.index(domain)])
            code = status.code
            if code is _SUCCESS:
                fits[domain] = 1
            elif code is _ERROR:
                errs[domain] = erring = True
            else:
                rejects[domain] = 1
        return DomainVerdicts(index, bytes(fits), bytes(rejects), bytes(errs) if erring else None, statuses)


class DomainVerdicts(NamedTuple):
    """One cycle's verdicts per domain: the positions' domain indexes and, per index, 1 or 0."""

    domain_of: bytearray
    """Per node position, its domain's index."""
    fits: bytes
    rejects: bytes
    errs: bytes | None
    """``None`` when no domain's verdict is an error."""
    statuses: list[Status]


@final
class DomainStore:
    """The domain indexes of the label-keyed Filter plugins' key sets, most recently used kept."""

    __slots__ = ("_domains", "_plugins")

    def __init__(self, plugins: Mapping[str, LabelKeyedFilter]) -> None:
        self._plugins = dict(plugins)
        self._domains: BoundedLRU[tuple[str, ...], LabelDomains] = BoundedLRU(_KEY_SETS)

    def verdicts(self, names: Sequence[str], state: CycleState, pod: Pod, snapshot: Snapshot,
                 verdict: Callable[[NodeInfo], Status]) -> DomainVerdicts | None:
        """The domain verdicts of the Filter plugins ``names`` (run together by ``verdict``), or
        ``None`` unless each is label-keyed with keys for this cycle and the nodes hold at most 256
        domains."""
        keys: dict[str, None] = {}
        for name in names:
            plugin = self._plugins.get(name)
            if plugin is None:
                return None
            try:
                found: object = plugin.filter_label_keys(state, pod)
            except Exception:
                return None  # the plugin then runs, and fails, node by node
            if type(found) is not tuple or not all(type(key) is str for key in found):
                return None
            keys.update(dict.fromkeys(found))
        key_set = tuple(keys)
        domains = self._domains.get(key_set)
        if domains is None:
            domains = LabelDomains(key_set)
            self._domains.put(key_set, domains)
        if not domains.sync(snapshot):
            return None
        return domains.verdicts(snapshot._nodes, verdict)
