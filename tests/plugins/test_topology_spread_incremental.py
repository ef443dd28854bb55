"""PodTopologySpread across cycles: counts carried over between snapshots equal a fresh count.

A long-lived plugin keeps per-domain tallies from cycle to cycle and recounts
only the nodes the snapshot's change log names; a fresh plugin counts every
node.  Their PreFilter states (domain order included: it breaks critical-path
ties), Filter verdicts, AddPod updates and scores must be identical after any
sequence of pod and node changes, whichever snapshot each cycle reads.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib._internal.cache import Cache
from kschedlib.framework import CycleState, NodeInfo, PodInfo, Snapshot, Status
from kschedlib.model import LabelSelector, Node, OwnerSelector, Pod, Toleration, TopologySpreadConstraint
from kschedlib.plugins.pod_topology_spread import PRE_FILTER_KEY, PodTopologySpread
from kschedlib.plugins.pod_topology_spread.common import NodeInclusion, SpreadConstraint
from kschedlib.plugins.pod_topology_spread.tally import DomainTally, Share, TallyStore, count_domains
from kschedlib.simulation import Cluster
from kschedlib.testing import FakeHandle, strategies
from tests.helpers import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
DISK = "disktype"
KEYS = (ZONE, HOST, DISK)
WEB = LabelSelector({"app": "web"})
OWNERS = (OwnerSelector("Service", "web", selector=WEB),)


def pre_filter_picture(pl: PodTopologySpread, pod: Pod, nodes: Sequence[NodeInfo]) -> object:
    """Everything PreFilter decides, in order, plus the verdicts before and after an AddPod."""
    state = CycleState()
    status = pl.pre_filter(state, pod)
    if status != Status.success():
        return status
    s = state.read(PRE_FILTER_KEY)
    verdicts = [pl.filter(state, pod, info) for info in nodes]
    clone = state.clone()
    assert pl.add_pod(clone, pod, PodInfo.of(attrs.evolve(pod, name="twin")), nodes[0]).is_success
    after = clone.read(PRE_FILTER_KEY)
    return (
        [(key, list(by_value.items())) for key, by_value in s.counts.items()],
        s.domains,
        [(key, p.first_value, p.first_count, p.second_value, p.second_count) for key, p in s.paths.items()],
        s.checks,
        verdicts,
        [(key, p.first_value, p.first_count, p.second_value, p.second_count) for key, p in after.paths.items()],
        [pl.filter(clone, pod, info) for info in nodes],
    )


def score_picture(pl: PodTopologySpread, pod: Pod, feasible: Sequence[NodeInfo]) -> object:
    """Raw and normalized scores of ``feasible`` (or PreScore's status)."""
    state = CycleState()
    status = pl.pre_score(state, pod, feasible)
    if not status.is_success:
        return status
    raw = [pl.score(state, pod, info) for info in feasible]
    return raw, pl.normalize_score(state, pod, feasible, list(raw))


def assert_same_as_fresh(kept: PodTopologySpread, handle: FakeHandle, pod: Pod, snapshot: Snapshot) -> None:
    handle.set_snapshot(snapshot)
    fresh = PodTopologySpread(None, handle)
    nodes = snapshot.node_infos
    assert pre_filter_picture(kept, pod, nodes) == pre_filter_picture(fresh, pod, nodes)
    feasible = nodes[::2]
    assert score_picture(kept, pod, feasible) == score_picture(fresh, pod, feasible)


# --- a cluster that changes between cycles ------------------------------------------------------

Change = Callable[[Cache, st.DataObject, int], None]
NAMES = itertools.count()


def add_pod(cache: Cache, data: st.DataObject, step: int) -> None:
    pod = data.draw(strategies.pods(features=()))
    node = data.draw(st.sampled_from(cache.node_names()))
    deleting = data.draw(st.sampled_from((None, None, None, 1.0)))
    name = f"bound-{next(NAMES)}"
    cache.add_pod(PodInfo.of(attrs.evolve(pod, name=name, uid="", node_name=node, deletion_timestamp=deleting)))


def remove_pod(cache: Cache, data: st.DataObject, step: int) -> None:
    pods = sorted((state.pod_info.pod for state in cache.pods()), key=lambda p: p.name)
    if pods:
        cache.remove_pod(data.draw(st.sampled_from(pods)))


def relabel_node(cache: Cache, data: st.DataObject, step: int) -> None:
    info = cache.node(data.draw(st.sampled_from(cache.node_names())))
    assert info is not None
    assert info.node is not None
    key = data.draw(st.sampled_from((ZONE, DISK)))
    value = data.draw(st.sampled_from((None, "zone-a", "zone-b", "ssd")))
    labels = {k: v for k, v in info.node.labels.items() if k != key} | ({key: value} if value else {})
    cache.update_node(attrs.evolve(info.node, labels=labels))


def add_node(cache: Cache, data: st.DataObject, step: int) -> None:
    node = data.draw(strategies.nodes(name=f"extra-{step}"))
    cache.add_node(node)


def remove_node(cache: Cache, data: st.DataObject, step: int) -> None:
    names = cache.node_names()
    if len(names) > 1:
        cache.remove_node(data.draw(st.sampled_from(sorted(names))))


CHANGES: tuple[Change, ...] = (add_pod, add_pod, add_pod, remove_pod, relabel_node, add_node, remove_node)


def incoming_pods() -> st.SearchStrategy[Pod]:
    """Pending pods with their own spread constraints over zone, hostname and disktype, or none (defaults)."""
    constraints = st.lists(strategies.topology_spread_constraints(topology_keys=KEYS), max_size=3)
    base = strategies.pods(features=("node_selector", "node_affinity", "tolerations"))
    return st.builds(lambda pod, cs: attrs.evolve(pod, topology_spread_constraints=tuple(cs)), base, constraints)


@settings(max_examples=150, deadline=None)
@given(strategies.clusters(max_nodes=5, max_bound_pods=10, min_pending_pods=1, max_pending_pods=3),
       st.lists(incoming_pods(), min_size=1, max_size=3), st.data())
def test_carried_over_counts_equal_a_fresh_count(cluster: Cluster, pods: list[Pod], data: st.DataObject) -> None:
    cache = Cache()
    for node in cluster.nodes:
        cache.add_node(node)
    for bound in cluster.bound_pods:
        cache.add_pod(PodInfo.of(bound))
    handle = FakeHandle(owners=OWNERS, kube_version="1.30")
    kept = PodTopologySpread(None, handle)
    snapshots = [cache.snapshot()]
    for step in range(data.draw(st.integers(1, 8), label="steps")):
        for change in data.draw(st.lists(st.sampled_from(CHANGES), max_size=3), label="changes"):
            change(cache, data, step)
        snapshots.append(cache.snapshot())
        # Mostly the newest snapshot, sometimes an older one: the tally must follow either way.
        snapshot = data.draw(st.sampled_from((snapshots[-1], snapshots[-1], *snapshots)), label="snapshot")
        for pod in pods:
            assert_same_as_fresh(kept, handle, pod, snapshot)


# --- examples -----------------------------------------------------------------------------------


def zoned_node(name: str, zone: str | None) -> Node:
    return make_node(name, labels={HOST: name} | ({ZONE: zone} if zone else {}))


def web_pod(name: str, node: str, deletion_timestamp: float | None = None) -> PodInfo:
    return PodInfo.of(make_pod(name, labels={"app": "web"}, node_name=node, deletion_timestamp=deletion_timestamp))


INCOMING = make_pod("incoming", labels={"app": "web"}, topology_spread_constraints=(
    TopologySpreadConstraint(1, ZONE, "DoNotSchedule", WEB),
    TopologySpreadConstraint(2, HOST, "DoNotSchedule", WEB),
    TopologySpreadConstraint(1, ZONE, "ScheduleAnyway", WEB),
))


def test_binding_cycle_after_cycle_matches_a_fresh_count() -> None:
    cache = Cache()
    for i, zone in enumerate(("A", "B", "C", "A", None)):
        cache.add_node(zoned_node(f"n{i}", zone))
    handle = FakeHandle(kube_version="1.30")
    kept = PodTopologySpread(None, handle)
    for i in range(12):
        snapshot = cache.snapshot()
        assert_same_as_fresh(kept, handle, INCOMING, snapshot)
        handle.set_snapshot(snapshot)
        state = CycleState()
        assert kept.pre_filter(state, INCOMING) == Status.success()
        fits = [info for info in snapshot.node_infos if kept.filter(state, INCOMING, info).is_success]
        cache.add_pod(web_pod(f"p{i}", fits[i % len(fits)].name))


def test_moving_a_node_between_zones_reorders_domains_as_a_fresh_count() -> None:
    cache = Cache()
    for i, zone in enumerate(("A", "B", "C")):
        cache.add_node(zoned_node(f"n{i}", zone))
    cache.add_pod(web_pod("p0", "n1"))
    handle = FakeHandle(kube_version="1.30")
    kept = PodTopologySpread(None, handle)
    assert_same_as_fresh(kept, handle, INCOMING, cache.snapshot())
    cache.update_node(zoned_node("n0", "C"))  # zone A disappears
    assert_same_as_fresh(kept, handle, INCOMING, cache.snapshot())
    state = CycleState()
    assert kept.pre_filter(state, INCOMING) == Status.success()
    assert state.read(PRE_FILTER_KEY).counts[ZONE] == {"B": 1, "C": 0}
    cache.update_node(zoned_node("n2", None))  # n2 stops counting; C still has n0
    cache.add_pod(web_pod("p1", "n0", deletion_timestamp=1.0))  # terminating: not counted
    assert_same_as_fresh(kept, handle, INCOMING, cache.snapshot())


def test_plain_snapshots_without_a_change_log_are_compared_node_by_node() -> None:
    infos = [NodeInfo.of(zoned_node(f"n{i}", zone)) for i, zone in enumerate(("A", "B", "A"))]
    handle = FakeHandle(kube_version="1.30")
    kept = PodTopologySpread(None, handle)
    assert_same_as_fresh(kept, handle, INCOMING, Snapshot(infos))
    infos[1] = infos[1].with_pod(web_pod("p0", "n1"))
    assert_same_as_fresh(kept, handle, INCOMING, Snapshot(infos))
    assert_same_as_fresh(kept, handle, INCOMING, Snapshot(infos[::-1]))


# --- the tally itself ---------------------------------------------------------------------------


def zone_share(calls: list[str]) -> Share:
    """Web pods per zone, recording which nodes were counted."""
    def share(info: NodeInfo) -> tuple[tuple[str | None, ...], list[int]] | None:
        calls.append(info.name)
        assert info.node is not None
        zone = info.node.labels.get(ZONE)
        return None if zone is None else ((zone,), [sum(p.pod.labels.get("app") == "web" for p in info.pods)])

    return share


def test_tally_recounts_only_replaced_nodes() -> None:
    cache = Cache()
    for i in range(6):
        cache.add_node(zoned_node(f"n{i}", "AB"[i % 2]))
    calls: list[str] = []
    tally = DomainTally((ZONE,), zone_share(calls))
    tally.sync(cache.snapshot())
    assert len(calls) == 6
    cache.add_pod(web_pod("p0", "n3"))
    cache.add_pod(web_pod("p1", "n3"))
    tally.sync(cache.snapshot())
    assert calls[6:] == ["n3"]
    assert tally.counts == {ZONE: {"A": 0, "B": 2}}
    tally.sync(cache.snapshot())
    assert len(calls) == 7


def test_tally_counts_only_the_pods_a_node_gained() -> None:
    """With the share's pod counter given, a node that kept its Node and gained pods has just those
    counted; one that lost a pod or got a new Node is shared afresh."""
    cache = Cache()
    for i in range(4):
        cache.add_node(zoned_node(f"n{i}", "AB"[i % 2]))
    cache.add_node(zoned_node("n9", None))  # counts nowhere
    calls: list[str] = []
    counted: list[list[str]] = []

    def count(pods: Sequence[PodInfo]) -> list[int]:
        counted.append([p.pod.name for p in pods])
        return [sum(p.pod.labels.get("app") == "web" for p in pods)]

    tally = DomainTally((ZONE,), zone_share(calls), count)
    tally.sync(cache.snapshot())
    assert len(calls) == 5
    cache.add_pod(web_pod("p0", "n3"))
    tally.sync(cache.snapshot())
    cache.add_pod(web_pod("p1", "n3"))
    cache.add_pod(web_pod("p2", "n9"))
    tally.sync(cache.snapshot())
    assert len(calls) == 5
    assert counted == [["p0"], ["p1"]]
    assert tally.counts == {ZONE: {"A": 0, "B": 2}}
    cache.remove_pod(web_pod("p0", "n3").pod)
    tally.sync(cache.snapshot())
    assert calls[5:] == ["n3"]
    cache.update_node(make_node("n1", labels={HOST: "n1", ZONE: "B", "disk": "ssd"}))
    cache.add_pod(web_pod("p3", "n1"))
    tally.sync(cache.snapshot())
    assert calls[6:] == ["n1"]
    assert tally.counts == {ZONE: {"A": 0, "B": 2}}


def test_tally_reuses_counts_of_known_nodes_when_the_layout_changes() -> None:
    cache = Cache()
    for i in range(4):
        cache.add_node(zoned_node(f"n{i}", "AB"[i % 2]))
    calls: list[str] = []
    tally = DomainTally((ZONE,), zone_share(calls))
    tally.sync(cache.snapshot())
    cache.add_node(zoned_node("n9", "C"))
    cache.add_pod(web_pod("p0", "n9"))
    tally.sync(cache.snapshot())
    assert calls[4:] == ["n9"]
    assert tally.counts == {ZONE: {"A": 0, "B": 0, "C": 1}}


def test_pods_share_a_tally_only_when_policies_give_nodes_the_same_standing() -> None:
    cache = Cache()
    cache.add_node(zoned_node("n0", "A"))
    cache.add_pod(web_pod("p0", "n0"))
    store = TallyStore()
    hard = (SpreadConstraint(1, ZONE, WEB),)

    def tally_of(pod: Pod) -> object:
        counts = count_domains(store, cache.snapshot(), "default", hard, NodeInclusion(pod, hard), (ZONE,),
                               last_per_key=True)
        assert counts == {ZONE: {"A": 1} if pod.node_selector != {ZONE: "B"} else {}}
        return counts

    plain = tally_of(make_pod("a"))
    assert tally_of(make_pod("b", tolerations=(Toleration(key="x"),))) is plain  # taints are ignored here
    in_a = tally_of(make_pod("c", node_selector={ZONE: "A"}))
    in_b = tally_of(make_pod("d", node_selector={ZONE: "B"}))
    assert len({id(plain), id(in_a), id(in_b)}) == 3
    assert tally_of(make_pod("e", node_selector={ZONE: "A"})) is in_a


def test_constraints_differing_only_by_policy_do_not_share_a_tally() -> None:
    cache = Cache()
    for i, zone in enumerate("AB"):
        cache.add_node(zoned_node(f"n{i}", zone))
        cache.add_pod(web_pod(f"p{i}", f"n{i}"))
    store = TallyStore()
    pod = make_pod("in-a", node_selector={ZONE: "A"})
    for policy, expected in (("Honor", {"A": 1}), ("Ignore", {"A": 1, "B": 1}), ("Honor", {"A": 1})):
        hard = (SpreadConstraint(1, ZONE, WEB, honor_node_affinity=policy == "Honor"),)
        counts = count_domains(store, cache.snapshot(), "default", hard, NodeInclusion(pod, hard), (ZONE,),
                               last_per_key=True)
        assert counts == {ZONE: expected}


def test_a_plugin_with_several_kinds_of_pods_keeps_one_tally_each() -> None:
    nodes = [NodeInfo.of(zoned_node("n0", "A")).with_pod(web_pod("p0", "n0"))]
    handle = FakeHandle(nodes, kube_version="1.30")
    kept = PodTopologySpread(None, handle)
    db = attrs.evolve(INCOMING, labels={"app": "db"}, topology_spread_constraints=(
        TopologySpreadConstraint(1, ZONE, "DoNotSchedule", LabelSelector({"app": "db"})),))
    for pod in (INCOMING, db, INCOMING, attrs.evolve(db, namespace="other")):
        state = CycleState()
        assert kept.pre_filter(state, pod) == Status.success()
        expected = 1 if pod is INCOMING else 0
        assert state.read(PRE_FILTER_KEY).counts[ZONE] == {"A": expected}
