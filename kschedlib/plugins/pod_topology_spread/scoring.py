"""PodTopologySpread, scoring half: PreScore's counts, Score and NormalizeScore.

Part of the :mod:`kschedlib.plugins.pod_topology_spread` package; only the package itself is public.
Soft constraints prefer domains holding fewer matching pods.  PreScore
registers the domains of the feasible nodes, then gives them the matching
pods of every node of the cluster (from totals carried over from earlier
cycles, see :mod:`kschedlib.plugins.pod_topology_spread.tally`); a hostname
constraint's domain is the node itself, so its pods are counted at Score
instead.  Up to v1.32 domains live in one map for all constraints, as in
kube-scheduler: two constraints on the same key share a domain's counter, and only
the first to register a domain counts it in its topology size.  From v1.33
(``per_constraint``) each constraint keeps its own domains and counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, final

from kschedlib.framework.cycle_state import StateKey
from kschedlib.framework.extension_points import MAX_NODE_SCORE
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.model.objects import Pod
from kschedlib.plugins.pod_topology_spread.common import (
    HOSTNAME_KEY,
    NodeInclusion,
    SpreadConstraint,
    has_all_keys,
)
from kschedlib.plugins.pod_topology_spread.counting import CountCache, NodeCounter
from kschedlib.plugins.pod_topology_spread.tally import TallyStore, count_domains

__all__ = [
    "PRE_SCORE_KEY",
    "PreScoreState",
    "build_pre_score_state",
    "normalized_spread_scores",
    "round_half_away",
    "score_node",
]

_INVALID_SCORE: Final = -1

_Term = tuple[str, dict[str, int] | None, NodeCounter, float, float]
"""Per constraint: topology key, domain counts (``None``: hostname), hostname counter, weight, maxSkew - 1."""


@final
class PreScoreState:
    """What Score and NormalizeScore read; never mutated after PreScore, so clones are itself."""

    __slots__ = ("ignored", "terms")

    def __init__(self, ignored: frozenset[str], terms: tuple[_Term, ...]) -> None:
        self.ignored = ignored
        self.terms = terms

    def clone(self) -> PreScoreState:
        return self


PRE_SCORE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScorePodTopologySpread")


def build_pre_score_state(
    pod: Pod,
    constraints: tuple[SpreadConstraint, ...],
    require_all: bool,
    feasible: Sequence[NodeInfo],
    snapshot: Snapshot,
    cache: CountCache,
    tallies: TallyStore,
    *,
    per_constraint: bool = False,
) -> PreScoreState:
    """Register the feasible nodes' domains, weigh each constraint, count matching pods per domain.

    With ``require_all`` a feasible node lacking a constraint key is ignored (scores 0)
    and a node lacking one is not counted; otherwise a missing label reads as ``""``.
    ``per_constraint`` (v1.33+) gives every constraint domains of its own.
    """
    if per_constraint and len({c.topology_key for c in constraints}) < len(constraints):
        return _per_constraint_state(pod, constraints, require_all, feasible, snapshot, cache, tallies)
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    domains: dict[str, dict[str, int]] = {key: {} for key in keys if key != HOSTNAME_KEY}
    sizes, ignored = _register(constraints, keys if require_all else (), feasible, domains)
    _count(pod, constraints, keys if require_all else (), domains, snapshot, tallies)
    hosts = len(feasible) - len(ignored)
    terms = tuple(
        _term(pod, c, domains, hosts if c.topology_key == HOSTNAME_KEY else sizes[i], cache, snapshot.num_nodes)
        for i, c in enumerate(constraints)
    )
    return PreScoreState(frozenset(ignored), terms)


def _per_constraint_state(
    pod: Pod,
    constraints: tuple[SpreadConstraint, ...],
    require_all: bool,
    feasible: Sequence[NodeInfo],
    snapshot: Snapshot,
    cache: CountCache,
    tallies: TallyStore,
) -> PreScoreState:
    """Constraints sharing a key counted apart: each one is scored as if it were alone on its key."""
    keys = tuple(dict.fromkeys(c.topology_key for c in constraints))
    required = keys if require_all else ()
    ignored: set[str] | None = None
    terms: list[_Term] = []
    for c in constraints:
        domains: dict[str, dict[str, int]] = {} if c.topology_key == HOSTNAME_KEY else {c.topology_key: {}}
        sizes, skipped = _register((c,), required, feasible, domains)
        ignored = skipped if ignored is None else ignored
        _count(pod, (c,), required, domains, snapshot, tallies)
        size = len(feasible) - len(skipped) if c.topology_key == HOSTNAME_KEY else sizes[0]
        terms.append(_term(pod, c, domains, size, cache, snapshot.num_nodes))
    return PreScoreState(frozenset(ignored or ()), tuple(terms))


def _register(
    constraints: tuple[SpreadConstraint, ...],
    required_keys: tuple[str, ...],
    feasible: Sequence[NodeInfo],
    domains: dict[str, dict[str, int]],
) -> tuple[list[int], set[str]]:
    """Create the feasible nodes' domains; per constraint, how many it created first; the ignored nodes."""
    registrants = [(i, c.topology_key, domains[c.topology_key])
                   for i, c in enumerate(constraints) if c.topology_key in domains]
    sizes = [0] * len(constraints)
    ignored: set[str] = set()
    for info in feasible:
        node = info.node
        assert node is not None
        labels = node.labels
        if required_keys and not has_all_keys(labels, required_keys):
            ignored.add(node.name)
            continue
        for i, key, by_value in registrants:
            value = labels.get(key, "")
            if value not in by_value:
                by_value[value] = 0
                sizes[i] += 1
    return sizes, ignored


def _term(
    pod: Pod, c: SpreadConstraint, domains: dict[str, dict[str, int]], size: int, cache: CountCache,
    num_nodes: int,
) -> _Term:
    counter = cache.node_counter((c.selector,), pod.namespace, num_nodes)
    weight = math.log(size + 2)
    return (c.topology_key, domains.get(c.topology_key), counter, weight, float(c.max_skew - 1))


def _count(
    pod: Pod,
    constraints: tuple[SpreadConstraint, ...],
    required: tuple[str, ...],
    domains: dict[str, dict[str, int]],
    snapshot: Snapshot,
    tallies: TallyStore,
) -> None:
    """Each registered domain takes the matching pods of every node of the cluster in it (hostname aside)."""
    chosen = [c for c in constraints if c.topology_key != HOSTNAME_KEY]
    if not chosen:
        return
    inclusion = NodeInclusion(pod, constraints)
    totals = count_domains(tallies, snapshot, pod.namespace, chosen, inclusion, required, last_per_key=False)
    for key, by_value in domains.items():
        tally = totals[key]
        for value in by_value:
            by_value[value] = tally.get(value, 0)


def round_half_away(value: float) -> int:
    """Go's ``math.Round``: halves round away from zero (Python's ``round`` goes to even)."""
    if value < 0:
        return -round_half_away(-value)
    whole = math.floor(value)
    return int(whole) + (1 if value - whole >= 0.5 else 0)


def score_node(state: PreScoreState, node_info: NodeInfo) -> int:
    """Sum over constraints whose key the node has of count * weight + (maxSkew - 1), rounded.

    The count is the node's domain's (hostname: the node's own matching pods); an
    ignored node scores 0.
    """
    node = node_info.node
    assert node is not None
    if node.name in state.ignored:
        return 0
    labels = node.labels
    total = 0.0
    for key, by_value, counter, weight, bonus in state.terms:
        value = labels.get(key)
        if value is None:
            continue
        count = counter(node.name, node_info.pods)[0] if by_value is None else by_value[value]
        total += count * weight + bonus
    whole = int(total)  # total >= 0: the inlined round_half_away
    return whole + 1 if total - whole >= 0.5 else whole


def normalized_spread_scores(state: PreScoreState, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
    """Fewer matching pods score higher: ``100 * (max + min - s) // max``; ignored nodes 0.

    ``min``/``max`` range over non-ignored nodes (``max`` starting at 0); when
    ``max`` is 0 every non-ignored node gets 100.
    """
    ignored = state.ignored
    kept = [_INVALID_SCORE if node.name in ignored else score for node, score in zip(nodes, scores, strict=True)]
    counted = [score for score in kept if score != _INVALID_SCORE]
    lowest = min(counted, default=2**63 - 1)
    highest = max(max(counted, default=0), 0)
    if highest == 0:
        return [0 if score == _INVALID_SCORE else MAX_NODE_SCORE for score in kept]
    return [0 if score == _INVALID_SCORE else MAX_NODE_SCORE * (highest + lowest - score) // highest
            for score in kept]
