"""An optional performance contract: "my verdict depends only on this key and the NodeInfo".

Filter and Score run for every node in every cycle.  When a plugin's result
for a node is a pure function of a hashable key derived from the pod (and the
plugin's own configuration) and of the immutable NodeInfo, the runtime can
reuse earlier results: pods of one workload share keys, and NodeInfos that did
not change since the previous cycle are the very same objects.  Implement
these only when that is strictly true — a wrong key gives wrong decisions
(:func:`kschedlib.testing.check_memo_keys` checks a plugin's keys).

Only the *leading* run of Filter plugins that implement :class:`NodeLocalFilter` (and return a
key) is reused: a Filter without a key ends the reusable prefix, and every Filter after it runs
on each node.  Put node-local Filters first in a profile to keep them reusable.

A NormalizeScore that depends on nothing but the raw scores (kube's DefaultNormalizeScore) can say
so with :class:`PureNormalize`: when a :class:`NodeLocalScore` plugin scored every node alike, the
runtime then normalizes that column once and reuses the result for as long as it stays alike.

A Filter whose verdict also reads per-node state kept outside NodeInfo (DynamicResources reads
which devices are in use) can still be reused when it can say which nodes' outside state
changed: it implements :class:`ExternalNodeState` as well, and the runtime then keeps its
verdicts per node position only, re-asking it on the nodes it names.
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Hashable, Sequence

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import Plugin
from kschedlib.framework.node_info import NodeInfo
from kschedlib.model.objects import Pod

__all__ = ["BatchScore", "ExternalNodeState", "LabelKeyedFilter", "NodeLocalFilter", "NodeLocalScore", "PureNormalize"]


class NodeLocalFilter(Plugin):
    """A Filter whose verdict is a function of :meth:`filter_key` and the NodeInfo only."""

    @abc.abstractmethod
    def filter_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """Called after PreFilter; equal keys must give equal verdicts on the same NodeInfo. ``None``: don't reuse."""


class NodeLocalScore(Plugin):
    """A Score whose raw score is a function of :meth:`score_key` and the NodeInfo only."""

    @abc.abstractmethod
    def score_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """Called after PreScore; equal keys must give equal raw scores on the same NodeInfo. ``None``: don't reuse."""



class ExternalNodeState(Plugin):
    """A :class:`NodeLocalFilter` whose verdict also depends on state outside NodeInfo, per node.

    Equal keys must give equal verdicts on the same NodeInfo *while that node's outside state is
    unchanged*; :meth:`node_state_changes` names the nodes whose outside state changed.
    """

    @abc.abstractmethod
    def node_state_changes(self, since: object) -> tuple[object, Collection[str] | None]:
        """The position in the outside state now, and the names of the nodes whose outside state
        changed since ``since`` (a position returned before, or ``None``); ``None`` instead of
        names means any node may have changed (an unknown or too old ``since``)."""


class LabelKeyedFilter(Plugin):
    """A Filter whose verdict in one cycle depends only on the node's values of a few label keys.

    Within a cycle's state, two nodes whose labels agree on every key of :meth:`filter_label_keys`
    (a missing label being one more value, and a NodeInfo without a Node yet another) must get equal
    verdicts.  The node search then asks Filter once per such domain and gives every node of the
    domain that verdict.
    """

    @abc.abstractmethod
    def filter_label_keys(self, state: CycleState, pod: Pod) -> tuple[str, ...] | None:
        """Called after PreFilter; the label keys the verdict reads. ``None``: ask Filter on every node."""


class BatchScore(Plugin):
    """A Score plugin that scores a list of nodes in one call, exactly as Score would one by one."""

    @abc.abstractmethod
    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        """Called after PreScore instead of Score on each node: ``[score(state, pod, n) for n in nodes]``.

        Raising fails the cycle as a raising Score does."""


class PureNormalize(Plugin):
    """A :class:`~kschedlib.framework.ScoreExtensions` plugin whose normalized scores are a function of
    :meth:`normalize_key` and the raw scores alone: not of the nodes, nor of anything else in the
    state or the pod."""

    @abc.abstractmethod
    def normalize_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """Called after PreScore; with equal keys, equal lists of raw scores must normalize to equal
        lists. ``None``: don't reuse."""
