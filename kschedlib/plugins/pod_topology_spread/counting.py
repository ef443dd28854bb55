"""PodTopologySpread, counting half: how many pods of a node each constraint selects.

Part of the :mod:`kschedlib.plugins.pod_topology_spread` package; only the package itself is public.
Selectors are compiled into closures (the common one-label selector gets a
loop of its own).  :mod:`kschedlib.plugins.pod_topology_spread.tally` carries
per-domain totals over from cycle to cycle; :class:`CountCache` remembers
counts per node for what Score reads node by node (hostname constraints):
NodeInfo is immutable, so while a node still has the very same ``pods``
tuple its counts cannot have changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final, final

from kschedlib.framework._bounded import BoundedLRU
from kschedlib.framework.pod_info import PodInfo
from kschedlib.model.labels import LabelSelector

__all__ = ["CountCache", "NodeCounter", "PodCounter", "pod_counter", "selector_signature"]

PodCounter = Callable[[Sequence[PodInfo]], list[int]]
"""Counts, for each of several selectors, the pods of a node that it selects."""
NodeCounter = Callable[[str, tuple[PodInfo, ...]], list[int]]
"""The same for a node's name and pods, possibly answered from the cache; callers must not mutate the list."""
_Matcher = Callable[[Mapping[str, str]], bool]
_Signature = tuple[str, tuple[tuple[tuple[str, str, tuple[str, ...]], ...] | None, ...]]
_Table = dict[str, tuple[tuple[PodInfo, ...], list[int]]]

_MAX_SELECTOR_SETS: Final = 128


def _single_label(selector: LabelSelector) -> tuple[str, str] | None:
    reqs = selector.requirements
    if len(reqs) == 1 and reqs[0].operator == "In" and len(reqs[0].values) == 1:
        return (reqs[0].key, reqs[0].values[0])
    return None


def _count_label(key: str, value: str, namespace: str) -> PodCounter:
    def count(pods: Sequence[PodInfo]) -> list[int]:
        n = 0
        for info in pods:
            pod = info.pod
            if pod.labels.get(key) == value and pod.namespace == namespace and pod.deletion_timestamp is None:
                n += 1
        return [n]

    return count


def _count_selectors(matchers: Sequence[_Matcher | None], namespace: str) -> PodCounter:
    live = [(i, m) for i, m in enumerate(matchers) if m is not None]
    size = len(matchers)

    def count(pods: Sequence[PodInfo]) -> list[int]:
        counts = [0] * size
        if not live:
            return counts
        for info in pods:
            pod = info.pod
            if pod.namespace != namespace or pod.deletion_timestamp is not None:
                continue
            labels = pod.labels
            for i, matches in live:
                if matches(labels):
                    counts[i] += 1
        return counts

    return count


def pod_counter(selectors: Sequence[LabelSelector | None], namespace: str) -> PodCounter:
    """A counter of a node's pods in ``namespace``, not being deleted, selected by each selector.

    A selector without requirements (``{}``) counts nothing here, as in kube-scheduler.
    """
    if len(selectors) == 1 and selectors[0] is not None:
        pair = _single_label(selectors[0])
        if pair is not None:
            return _count_label(pair[0], pair[1], namespace)
    matchers = [None if s is None or s.is_empty() else s.matches for s in selectors]
    return _count_selectors(matchers, namespace)


def selector_signature(selectors: Sequence[LabelSelector | None], namespace: str) -> _Signature:
    """A hashable stand-in for ``selectors`` in ``namespace``: equal signatures count the same pods."""
    return (namespace, tuple(
        None if s is None else tuple((r.key, r.operator, r.values) for r in s.requirements) for s in selectors
    ))


@final
class CountCache:
    """Per-node counts for recently used selector lists, valid while a node's ``pods`` tuple is unchanged.

    Keeps the most recently used :data:`_MAX_SELECTOR_SETS` selector lists; a list's table is
    also started afresh when it outgrows twice the cluster (names of deleted nodes), a rule on the
    table's own size that the bounded cache of lists cannot express.
    """

    __slots__ = ("_tables",)

    def __init__(self) -> None:
        self._tables: BoundedLRU[_Signature, _Table] = BoundedLRU(_MAX_SELECTOR_SETS)

    def node_counter(
        self, selectors: Sequence[LabelSelector | None], namespace: str, num_nodes: int
    ) -> NodeCounter:
        """A counter for ``selectors`` that recounts only nodes whose pods changed since last asked."""
        signature = selector_signature(selectors, namespace)
        table = self._tables.get(signature)
        if table is None or len(table) > 2 * num_nodes + 16:
            table = {}
            self._tables.put(signature, table)
        count_pods = pod_counter(selectors, namespace)

        def count(name: str, pods: tuple[PodInfo, ...]) -> list[int]:
            hit = table.get(name)
            if hit is not None and hit[0] is pods:
                return hit[1]
            counts = count_pods(pods)
            table[name] = (pods, counts)
            return counts

        return count
