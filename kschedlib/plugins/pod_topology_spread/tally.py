"""PodTopologySpread, incremental half: matching pods per domain, carried from cycle to cycle.

Part of the :mod:`kschedlib.plugins.pod_topology_spread` package; only the package itself is public.
The per-domain counts of PreFilter and PreScore depend only on the
constraints (selectors, keys, node inclusion policies), the pod's namespace,
what the policies read of the pod (:attr:`NodeInclusion.key`) and the
snapshot's NodeInfos.  A :class:`DomainTally` keeps them between cycles:
NodeInfo is immutable and an unchanged node is the very same object in the
next snapshot, so a cycle recounts only the positions the snapshot's change
log names (or, without a usable log, the NodeInfos the tally has not seen yet)
instead of every pod of every node.

Domains stay in the order in which the node list first reaches them, as in a
fresh count: kube-scheduler's critical paths break ties in that order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from operator import add
from typing import Final, final

from kschedlib.framework._bounded import BoundedLRU
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import NodeCursor, Snapshot
from kschedlib.plugins._helpers.appended import appended
from kschedlib.plugins.pod_topology_spread.common import NodeInclusion, SpreadConstraint, Standing, counts_on
from kschedlib.plugins.pod_topology_spread.counting import PodCounter, pod_counter, selector_signature

__all__ = ["DomainTally", "Share", "TallyStore", "count_domains"]

_Part = tuple[tuple[str | None, ...], list[int]] | None
"""A node's share: per slot its domain (``None``: not counted there) and matching pods; ``None``: counts nowhere."""
Share = Callable[[NodeInfo], _Part]
"""Computes a node's share; must depend on nothing but the NodeInfo."""

_MAX_TALLIES: Final = 64
_STANDINGS: Final[tuple[Standing, ...]] = ((True, True), (True, False), (False, True), (False, False))


@final
class DomainTally:
    """Per topology key, matching pods per domain, summed over the slots (one selector each) on that key.

    A domain exists while some node counts in it, even with 0 pods.  Callers
    read ``counts`` right after :meth:`sync` and must not mutate it.
    """

    __slots__ = ("_count", "_cursor", "_infos", "_keys", "_parts", "_share", "counts")

    def __init__(self, keys: tuple[str, ...], share: Share, count: PodCounter | None = None) -> None:
        """``keys``: the topology key of each slot; ``share`` gives a node's share in the slots.

        ``count``, when given, is what ``share`` counts a node's pods with: a node that kept its
        Node and only gained pods then has just those counted (a share being the node's domains,
        read from the Node, and its pods' counts)."""
        self._keys = tuple(enumerate(keys))
        self._share = share
        self._count = count
        self._infos: list[NodeInfo] = []
        self._parts: list[_Part] = []
        self._cursor = NodeCursor()
        self.counts: dict[str, dict[str, int]] = {key: {} for key in keys}

    def sync(self, snapshot: Snapshot) -> None:
        """Bring the counts to ``snapshot``, recounting only the nodes replaced since the last sync."""
        nodes = snapshot._nodes  # read within this call only
        changed = self._cursor.changes(snapshot, len(self._infos))
        if changed is None:
            self._rebuild(nodes)
        elif changed:
            self._refresh(nodes, changed)

    def _rebuild(self, nodes: Sequence[NodeInfo]) -> None:
        """Recount the nodes not seen before (at any position), then total every domain in node order."""
        known = {id(info): (info, part) for info, part in zip(self._infos, self._parts, strict=True)}
        parts: list[_Part] = []
        for info in nodes:
            hit = known.get(id(info))
            parts.append(hit[1] if hit is not None and hit[0] is info else self._share(info))
        self._infos = list(nodes)
        self._parts = parts
        self._total()

    def _refresh(self, nodes: Sequence[NodeInfo], positions: Sequence[int]) -> None:
        """Recount the replaced ``positions``; a node that changed domains makes every domain re-totaled."""
        infos, parts, counts = self._infos, self._parts, self.counts
        moved = False
        for position in positions:
            info = nodes[position]
            was = infos[position]
            if info is was:
                continue
            old = parts[position]
            if info.node is was.node and self._count is not None:  # the same domains: count what was added
                if old is None:
                    infos[position] = info
                    continue
                added = appended(was.pods, info.pods)
                new = self._share(info) if added is None else (old[0], list(map(add, old[1], self._count(added))))
            else:
                new = self._share(info)
            infos[position], parts[position] = info, new
            if old is None and new is None:
                continue
            if old is None or new is None or old[0] != new[0]:
                moved = True
                continue
            values, found, before = new[0], new[1], old[1]
            for slot, key in self._keys:
                value = values[slot]
                if value is not None and found[slot] != before[slot]:
                    counts[key][value] += found[slot] - before[slot]
        if moved:
            self._total()

    def _total(self) -> None:
        """Sum every node's share afresh, so that domains appear in node order."""
        counts: dict[str, dict[str, int]] = {key: {} for _, key in self._keys}
        slots = self._keys
        for part in self._parts:
            if part is None:
                continue
            values, found = part
            for slot, key in slots:
                value = values[slot]
                if value is not None:
                    by_value = counts[key]
                    by_value[value] = by_value.get(value, 0) + found[slot]
        self.counts = counts


@final
class TallyStore:
    """The tallies of the :data:`_MAX_TALLIES` most recently used signatures.

    Each tally holds one entry per node of the last snapshot it saw.
    """

    __slots__ = ("_tallies",)

    def __init__(self) -> None:
        self._tallies: BoundedLRU[Hashable, DomainTally] = BoundedLRU(_MAX_TALLIES)

    def synced(
        self, signature: Hashable, keys: tuple[str, ...], share: Callable[[], tuple[Share, PodCounter | None]],
        snapshot: Snapshot,
    ) -> DomainTally:
        """The tally of ``signature`` (made with ``share()`` if new: the share and its pod counter),
        brought up to ``snapshot``.

        Equal signatures must mean equal shares for every NodeInfo.
        """
        tally = self._tallies.get(signature)
        if tally is None:
            tally = DomainTally(keys, *share())
            self._tallies.put(signature, tally)
        tally.sync(snapshot)
        return tally


def count_domains(
    store: TallyStore,
    snapshot: Snapshot,
    namespace: str,
    constraints: Sequence[SpreadConstraint],
    inclusion: NodeInclusion,
    required: tuple[str, ...],
    *,
    last_per_key: bool,
) -> Mapping[str, Mapping[str, int]]:
    """Matching pods (in ``namespace``) per domain, over the nodes carrying every ``required`` key.

    A node counts for the constraints its standing lets it count for; with
    ``last_per_key`` only for the last of those on each key (PreFilter), else
    for all of them, added up (PreScore).  A missing key label reads ``""``.
    The result is the tally's own: read it, never mutate it.
    """
    signature = (
        selector_signature([c.selector for c in constraints], namespace),
        tuple((c.topology_key, c.honor_node_affinity, c.honor_node_taints) for c in constraints),
        required,
        last_per_key,
        inclusion.key,
    )
    keys = tuple(c.topology_key for c in constraints)

    def share() -> tuple[Share, PodCounter]:
        count_pods = pod_counter([c.selector for c in constraints], namespace)
        return _share(keys, required, count_pods, inclusion, _masks(constraints, last_per_key)), count_pods

    return store.synced(signature, keys, share, snapshot).counts


def _masks(constraints: Sequence[SpreadConstraint], last_per_key: bool) -> dict[Standing, tuple[bool, ...]]:
    """Per standing, which slots a node counts in."""
    masks: dict[Standing, tuple[bool, ...]] = {}
    for standing in _STANDINGS:
        eligible = [i for i, c in enumerate(constraints) if counts_on(c, standing)]
        if last_per_key:
            eligible = list({constraints[i].topology_key: i for i in eligible}.values())
        masks[standing] = tuple(i in eligible for i in range(len(constraints)))
    return masks


def _share(
    keys: tuple[str, ...], required: tuple[str, ...], count_pods: PodCounter, inclusion: NodeInclusion,
    masks: dict[Standing, tuple[bool, ...]],
) -> Share:
    """A node's share; standings are evaluated only when some node may not count somewhere."""
    everywhere = masks[(True, True)] if inclusion.uniform else None

    def share(info: NodeInfo) -> _Part:
        node = info.node
        assert node is not None
        labels = node.labels
        for key in required:
            if key not in labels:
                return None
        mask = everywhere if everywhere is not None else masks[inclusion.standing(node)]
        if True not in mask:
            return None
        values = tuple(labels.get(key, "") if counted else None for key, counted in zip(keys, mask, strict=True))
        return values, count_pods(info.pods)

    return share
