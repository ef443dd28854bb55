"""InterPodAffinity keeps tallies across cycles: they must always equal a fresh plugin's counts.

A long-lived plugin sees a history of snapshots (pods added and removed,
nodes relabelled, added, dropped and reordered, namespace labels changed,
older snapshots revisited); after every step its PreFilter and PreScore
results must be exactly those of a plugin that has never seen a snapshot.
"""

from __future__ import annotations

from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedlib.framework import CycleState, Handle, NodeInfo, PodInfo, Snapshot, Status
from kschedlib.framework.pod_info import AffinityTerm
from kschedlib.framework.snapshot import NodeChangeLog
from kschedlib.model import LabelSelector, Namespace, Node, Pod
from kschedlib.plugins.inter_pod_affinity import PRE_FILTER_KEY, InterPodAffinity, InterPodAffinityArgs
from kschedlib.plugins.inter_pod_affinity.scoring import PRE_SCORE_KEY, PreScoreState
from kschedlib.plugins.inter_pod_affinity.tally import PodTallies, PodTally
from tests.helpers import make_node
from tests.plugins.test_inter_pod_affinity import HOST, NAMESPACES, NODE_LABELS, ZONE, pod, pods, sel, term, weighted

SWAPPED_NAMESPACES = (
    Namespace("default", {"kubernetes.io/metadata.name": "default"}),
    Namespace("other", {"team": "b", "env": "dev"}),
    Namespace("third", {"team": "a", "env": "prod"}),
)


class _Handle:
    """A handle whose snapshot the test replaces between cycles."""

    def __init__(self) -> None:
        self.snapshot = Snapshot([])


Sums = dict[str, dict[str, int]]
Outcome = tuple[object, Any, Status, Sums | None]


def _sums(state: PreScoreState) -> Sums:
    """Weight per topology pair, every pair a matched term placed listed (even at 0)."""
    sums: Sums = {}
    for key, amounts, factor in state.parts:
        per_value = sums.setdefault(key, {})
        for value, amount in amounts.items():
            per_value[value] = per_value.get(value, 0) + factor * amount
    return sums


class _Scheduler:
    """One plugin instance, fed one snapshot after another."""

    def __init__(self, args: InterPodAffinityArgs | None = None) -> None:
        self.handle = _Handle()
        self.plugin = InterPodAffinity(args, cast(Handle, self.handle))

    def cycle(self, snapshot: Snapshot, incoming: Pod) -> Outcome:
        """PreFilter's status and counts, PreScore's status and topology sums."""
        self.handle.snapshot = snapshot
        state = CycleState()
        filtered = self.plugin.pre_filter(state, incoming)
        counts = state.get(PRE_FILTER_KEY)
        seen = None if counts is None else (counts.existing_anti_affinity, counts.affinity, counts.anti_affinity)
        scored = self.plugin.pre_score(state, incoming, list(snapshot))
        prescored = state.get(PRE_SCORE_KEY)
        return filtered, seen, scored, None if prescored is None else _sums(prescored)

    def sums(self, snapshot: Snapshot, incoming: Pod) -> Sums | None:
        return self.cycle(snapshot, incoming)[3]


def _fresh(snapshot: Snapshot, args: InterPodAffinityArgs | None, incoming: Pod) -> Outcome:
    return _Scheduler(args).cycle(snapshot, incoming)


# --- histories ------------------------------------------------------------------------------

Cluster = tuple[list[NodeInfo], tuple[Namespace, ...]]
STEPS = ("add", "add", "add", "remove", "relabel", "drop", "new", "order", "ns", "revisit")
"""Binding pods is the common change, hence drawn most."""


def _node(draw: st.DrawFn, name: str) -> Node:
    labels = draw(st.one_of(st.just({}), NODE_LABELS.map(lambda extra: {HOST: name, **extra})))
    return make_node(name, labels=labels) if labels else Node(name, allocatable=make_node(name).allocatable)


@st.composite
def histories(draw: st.DrawFn) -> list[Cluster]:
    """Successive clusters, each one step away from the one before (or an earlier one revisited)."""
    infos = [NodeInfo.of(_node(draw, f"n{i}")) for i in range(draw(st.integers(1, 4)))]
    namespaces: tuple[Namespace, ...] = NAMESPACES
    history: list[Cluster] = [(list(infos), namespaces)]
    made = 0
    for _ in range(draw(st.integers(1, 12))):
        step = draw(st.sampled_from(STEPS))
        if step == "revisit":
            infos, namespaces = draw(st.sampled_from(history))
            infos = list(infos)
        elif step == "add" and infos:
            at = draw(st.integers(0, len(infos) - 1))
            made += 1
            infos[at] = infos[at].with_pod(PodInfo.of(draw(pods(f"e{made}", infos[at].name))))
        elif step == "remove" and any(info.pods for info in infos):
            at = draw(st.sampled_from([i for i, info in enumerate(infos) if info.pods]))
            victim = draw(st.sampled_from(infos[at].pods))
            infos[at] = infos[at].without_pod(victim.pod)
        elif step == "relabel" and infos:
            at = draw(st.integers(0, len(infos) - 1))
            infos[at] = infos[at].with_node(_node(draw, infos[at].name))
        elif step == "drop" and infos:
            del infos[draw(st.integers(0, len(infos) - 1))]
        elif step == "new":
            infos.append(NodeInfo.of(_node(draw, f"m{len(history)}")))
        elif step == "order":
            infos = draw(st.permutations(infos))
        elif step == "ns":
            namespaces = SWAPPED_NAMESPACES if namespaces is NAMESPACES else NAMESPACES
        history.append((list(infos), namespaces))
    return history


def _snapshot(cluster: Cluster) -> Snapshot:
    infos, namespaces = cluster
    return Snapshot(infos, namespaces={ns.name: ns for ns in namespaces})


def _logged(history: list[Cluster]) -> list[Snapshot]:
    """The history as a scheduler's cache would hand it out: snapshots of one node order share a
    change log naming the positions replaced between them; another order starts a new log."""
    out: list[Snapshot] = []
    log = NodeChangeLog()
    previous: list[NodeInfo] | None = None
    for infos, namespaces in history:
        if previous is not None and [i.name for i in previous] == [i.name for i in infos]:
            log.positions.extend(p for p, (a, b) in enumerate(zip(previous, infos, strict=True)) if a is not b)
        elif previous is not None:
            log = NodeChangeLog()
        out.append(Snapshot(infos, namespaces={ns.name: ns for ns in namespaces}, changes=log))
        previous = infos
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), st.lists(pods("incoming"), min_size=1, max_size=2), st.lists(st.integers(0, 12), max_size=4))
def test_long_lived_plugin_follows_change_logs_like_a_fresh_one(
    history: list[Cluster], incoming: list[Pod], revisits: list[int]
) -> None:
    """Logged snapshots, in order and with earlier snapshot objects asked about again."""
    snapshots = _logged(history)
    order = list(snapshots)
    for index in revisits:  # earlier snapshots come back: their revisions lie behind the tallies'
        order.insert(min(index, len(order)), snapshots[index % len(snapshots)])
    long_lived = _Scheduler()
    for snapshot in order:
        for candidate in incoming:
            assert long_lived.cycle(snapshot, candidate) == _fresh(snapshot, None, candidate)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(histories(), st.lists(pods("incoming"), min_size=1, max_size=3), st.integers(0, 3))
def test_long_lived_plugin_matches_a_fresh_one(history: list[Cluster], incoming: list[Pod], hard: int) -> None:
    args = InterPodAffinityArgs(hard_pod_affinity_weight=hard)
    long_lived = _Scheduler(args)
    for cluster in history:
        snapshot = _snapshot(cluster)
        for candidate in incoming:
            assert long_lived.cycle(snapshot, candidate) == _fresh(snapshot, args, candidate)


# --- examples -------------------------------------------------------------------------------

WEB = {"app": "web"}
AVOID_WEB_HOSTS = weighted(10, term(HOST, sel(app="web")))
AVOID_WEB = pod("p", labels=WEB, preferred_anti=[AVOID_WEB_HOSTS])


def _zones() -> list[NodeInfo]:
    return [
        NodeInfo.of(make_node(name, labels={HOST: name, ZONE: zone}))
        for name, zone in (("n1", "a"), ("n2", "a"), ("n3", "b"))
    ]


def test_scores_follow_pods_bound_and_removed_between_cycles() -> None:
    infos = _zones()
    scheduler = _Scheduler()
    web = [PodInfo.of(pod(f"w{i}", f"n{i}", labels=WEB, preferred_anti=[AVOID_WEB_HOSTS])) for i in (1, 2)]
    assert scheduler.sums(Snapshot(infos), AVOID_WEB) is None
    infos[0] = infos[0].with_pod(web[0])
    assert scheduler.sums(Snapshot(infos), AVOID_WEB) == {HOST: {"n1": -20}}
    infos[1] = infos[1].with_pod(web[1])
    assert scheduler.sums(Snapshot(infos), AVOID_WEB) == {HOST: {"n1": -20, "n2": -20}}
    infos[0] = infos[0].without_pod(web[0].pod)
    assert scheduler.sums(Snapshot(infos), AVOID_WEB) == {HOST: {"n2": -20}}


def test_relabelled_node_moves_its_pods_share() -> None:
    infos = _zones()
    infos[0] = infos[0].with_pod(PodInfo.of(pod("w", "n1", labels=WEB, preferred_anti=[AVOID_WEB_HOSTS])))
    scheduler = _Scheduler()
    assert scheduler.sums(Snapshot(infos), AVOID_WEB) == {HOST: {"n1": -20}}
    infos[0] = infos[0].with_node(make_node("n1", labels={HOST: "renamed", ZONE: "a"}))
    assert scheduler.sums(Snapshot(infos), AVOID_WEB) == {HOST: {"renamed": -20}}


def test_two_snapshots_in_turn_give_each_its_own_counts() -> None:
    """One plugin serving schedulers with different clusters: the tallies resync on every switch."""
    empty = Snapshot(_zones())
    busy_infos = _zones()
    busy_infos[2] = busy_infos[2].with_pod(PodInfo.of(pod("w", "n3", labels=WEB)))
    busy = Snapshot(busy_infos)
    scheduler = _Scheduler()
    for snapshot in (busy, empty, busy, empty):
        assert scheduler.cycle(snapshot, AVOID_WEB) == _fresh(snapshot, None, AVOID_WEB)


def test_score_state_outlives_later_cycles() -> None:
    """A PreScore state kept while the plugin serves a newer snapshot still scores the old one."""
    infos = _zones()
    infos[0] = infos[0].with_pod(PodInfo.of(pod("w", "n1", labels=WEB)))
    scheduler = _Scheduler()
    old = Snapshot(infos)
    scheduler.handle.snapshot = old
    state = CycleState()
    assert scheduler.plugin.pre_score(state, AVOID_WEB, list(old)).is_success
    infos[1] = infos[1].with_pod(PodInfo.of(pod("w2", "n2", labels=WEB)))
    scheduler.cycle(Snapshot(infos), AVOID_WEB)
    assert [scheduler.plugin.score(state, AVOID_WEB, info) for info in old] == [-10, 0, 0]


def test_namespace_selector_follows_namespace_labels() -> None:
    """Incoming terms resolve their namespace selector per cycle, so relabelled namespaces count at once."""
    infos = _zones()
    infos[0] = infos[0].with_pod(PodInfo.of(pod("c", "n1", labels=WEB, namespace="other")))
    incoming = pod("p", preferred=[weighted(4, term(ZONE, sel(app="web"), ns_selector=sel(team="a")))])
    scheduler = _Scheduler()
    assert scheduler.sums(Snapshot(infos, namespaces={ns.name: ns for ns in NAMESPACES}), incoming) == {
        ZONE: {"a": 4}
    }
    assert scheduler.sums(Snapshot(infos, namespaces={ns.name: ns for ns in SWAPPED_NAMESPACES}), incoming) is None


def _term(app: str) -> AffinityTerm:
    return AffinityTerm(HOST, LabelSelector({"app": app}), frozenset({"default"}), None)


def test_evicted_tallies_are_rebuilt_exactly() -> None:
    infos = _zones()
    tallies = PodTallies(1)
    web, db = (_term("web"),), (_term("db"),)
    assert tallies.synced(web, Snapshot(infos)).per_term == ({},)
    infos[0] = infos[0].with_pod(PodInfo.of(pod("w", "n1", labels=WEB)))
    infos[1] = infos[1].with_pod(PodInfo.of(pod("d", "n2", labels={"app": "db"})))
    grown = Snapshot(infos)
    assert tallies.synced(db, grown).per_term == ({"n2": 1},)
    assert tallies.synced(web, grown).per_term == ({"n1": 1},)


def test_a_tally_counts_pods_matching_every_term_once_per_term() -> None:
    infos = _zones()
    infos[0] = infos[0].with_pod(PodInfo.of(pod("w", "n1", labels=WEB)))
    zone_web = AffinityTerm(ZONE, LabelSelector(WEB), frozenset({"default"}), None)
    tally = PodTally((_term("web"), zone_web))
    tally.sync(tuple(infos))
    assert tally.per_term == ({"n1": 1}, {"a": 1})
    tally.sync(tuple(infos[1:]))
    assert tally.per_term == ({}, {})
