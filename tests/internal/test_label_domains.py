"""Label-keyed Filter plugins judged once per domain: the same search and decisions as node by node."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib._internal.cache import Cache
from kschedlib._internal.reuse import domains as domains_module
from kschedlib._internal.reuse.columns import FilterColumn, search_column, search_nodes
from kschedlib._internal.reuse.domains import DomainStore, LabelDomains
from kschedlib.framework import CycleState, LabelKeyedFilter, NodeInfo, Snapshot, Status
from kschedlib.model import LabelSelector, Pod, TopologySpreadConstraint
from tests.helpers import make_node, make_pod

RACK = "rack"
ZONE = "topology.kubernetes.io/zone"
OK = Status.success()
NO = Status.unschedulable("no")
GONE = Status.unresolvable("no label")
BAD = Status.from_error("kaput")
VERDICTS = {"ok": OK, "no": NO, "gone": GONE, "bad": BAD}
RACKS = ("r0", "r1", "r2", None)


def rack_nodes(racks: Sequence[str | None]) -> list[NodeInfo]:
    return [NodeInfo.of(make_node(f"n{i:03d}", labels={} if rack is None else {RACK: rack}))
            for i, rack in enumerate(racks)]


def rack_of(info: NodeInfo) -> str | None:
    assert info.node is not None
    return info.node.labels.get(RACK)


@settings(max_examples=300)
@given(st.data())
def test_search_by_domain_matches_the_node_by_node_search(data: st.DataObject) -> None:
    count = data.draw(st.integers(1, 24), label="nodes")
    racks = data.draw(st.lists(st.sampled_from(RACKS), min_size=count, max_size=count), label="racks")
    by_rack = data.draw(st.fixed_dictionaries({rack: st.sampled_from(sorted(VERDICTS)) for rack in RACKS}),
                        label="verdict per rack")
    prefix = data.draw(st.lists(st.sampled_from(["ok", "no"]), min_size=count, max_size=count), label="prefix")
    special = data.draw(st.dictionaries(st.integers(0, count - 1), st.sampled_from(sorted(VERDICTS))),
                        label="nominated")
    start = data.draw(st.integers(0, count - 1), label="start")
    to_find = data.draw(st.integers(1, count + 2), label="to_find")
    nodes = rack_nodes(racks)
    position = {info.name: i for i, info in enumerate(nodes)}

    def rest(info: NodeInfo) -> Status:
        return VERDICTS[by_rack[rack_of(info)]]

    def own(info: NodeInfo) -> Status:
        return VERDICTS[special[position[info.name]]]

    def whole(info: NodeInfo) -> Status:
        if position[info.name] in special:
            return own(info)
        first = VERDICTS[prefix[position[info.name]]]
        return first if first is not OK else rest(info)

    expected = search_nodes(nodes, start, to_find, whole)
    snapshot = Snapshot(nodes)
    column = FilterColumn()
    column.sync(snapshot, lambda info: VERDICTS[prefix[position[info.name]]])
    domains = LabelDomains((RACK,))
    assert domains.sync(snapshot)
    grouped = domains.verdicts(nodes, rest)
    got = search_column(column, nodes, start, to_find, rest, dict.fromkeys(special, own), grouped)

    assert got.feasible == expected.feasible
    assert got.statuses == expected.statuses
    assert list(got.statuses) == list(expected.statuses)  # visiting order
    assert got.stopped_at == expected.stopped_at
    assert got.error == expected.error


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(RACKS), st.booleans()), max_size=20))
def test_domains_follow_label_changes_and_pods(steps: list[tuple[int, str | None, bool]]) -> None:
    """After any sequence of relabelled nodes and placed pods, two positions share a domain index
    exactly when their nodes share the rack label, and each index names its own nodes' rack."""
    cache = Cache()
    for i in range(6):
        cache.add_node(make_node(f"n{i:03d}", labels={RACK: f"r{i % 3}"}))
    domains = LabelDomains((RACK,))
    assert domains.sync(cache.snapshot())
    for number, (i, rack, with_pod) in enumerate(steps):
        if with_pod:
            cache.add_pod(kschedlib.framework.PodInfo.of(make_pod(f"p{number}", node_name=f"n{i:03d}")))
        else:
            cache.update_node(make_node(f"n{i:03d}", labels={} if rack is None else {RACK: rack}))
        snapshot = cache.snapshot()
        assert domains.sync(snapshot)
        nodes = snapshot.node_infos
        seen: dict[int, str | None] = {}
        for position, info in enumerate(nodes):
            assert seen.setdefault(domains.index[position], rack_of(info)) == rack_of(info)
        assert len(set(seen.values())) == len(seen)
        assert sum(domains.sizes) == len(nodes)
        assert all(domains.sizes[d] == list(domains.index).count(d) for d in range(len(domains.sizes)))


class ByRack(LabelKeyedFilter):
    """Rejects every node of rack r1; a stand-in for a label-keyed plugin."""

    keys: object = (RACK,)

    def filter_label_keys(self, state: CycleState, pod: Pod) -> tuple[str, ...] | None:
        return self.keys  # type: ignore[return-value]


def store_verdicts(keys: object, racks: Sequence[str | None]) -> object:
    plugin = ByRack()
    plugin.keys = keys
    return DomainStore({"ByRack": plugin}).verdicts(
        ["ByRack"], CycleState(), make_pod("p"), Snapshot(rack_nodes(racks)), lambda info: OK)


def test_keys_that_are_not_a_tuple_of_strings_mean_node_by_node() -> None:
    assert store_verdicts((RACK,), ["r0"]) is not None
    assert store_verdicts([RACK], ["r0"]) is None
    assert store_verdicts((RACK, 3), ["r0"]) is None
    assert store_verdicts(None, ["r0"]) is None


def test_more_than_256_domains_mean_node_by_node() -> None:
    assert store_verdicts((RACK,), [f"r{i}" for i in range(256)]) is not None
    assert store_verdicts((RACK,), [f"r{i}" for i in range(257)]) is None


def test_a_plugin_that_is_not_label_keyed_means_node_by_node() -> None:
    store = DomainStore({})
    assert store.verdicts(["Other"], CycleState(), make_pod("p"), Snapshot(rack_nodes(["r0"])),
                          lambda info: OK) is None


# --- whole runs: PodTopologySpread decides alike with and without domains -----------------------

def spread_pods(count: int) -> Iterator[Pod]:
    for i in range(count):
        app = f"app{i % 3}"
        constraints = [TopologySpreadConstraint(1, ZONE, "DoNotSchedule", LabelSelector({"app": app}))]
        if i % 2:
            constraints.append(TopologySpreadConstraint(2, RACK, "DoNotSchedule", LabelSelector({"app": app})))
        yield make_pod(f"p{i:03d}", labels={"app": app}, requests={"cpu": "500m"},
                       topology_spread_constraints=tuple(constraints))


def run_cluster(*, grouped: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str | None, object]]:
    with monkeypatch.context() as patch:
        if not grouped:
            patch.setattr(domains_module.DomainStore, "verdicts", lambda *args: None)
        sched = kschedlib.Scheduler(seed=3, clock=kschedlib.FakeClock())
        for i in range(40):
            labels = {ZONE: f"z{i % 4}", "kubernetes.io/hostname": f"n{i:03d}"}
            if i % 7:
                labels[RACK] = f"r{i % 5}"
            sched.add_node(make_node(f"n{i:03d}", labels=labels))
        got: list[tuple[str, str | None, object]] = []
        for number, pod in enumerate(spread_pods(120)):
            sched.add_pod(pod)
            if number % 30 == 29:  # move a node to another rack between cycles
                sched.update_node(make_node(f"n{number % 40:03d}", labels={
                    ZONE: f"z{number % 4}", "kubernetes.io/hostname": f"n{number % 40:03d}", RACK: "r9"}))
            result = sched.schedule_one()
            assert result is not None
            outcome = result.outcome
            statuses = dict(outcome.node_statuses) if outcome is not None else None
            got.append((result.pod.key, result.node_name, statuses))
    return got


def test_spread_decides_alike_with_and_without_domains(monkeypatch: pytest.MonkeyPatch) -> None:
    with_domains = run_cluster(grouped=True, monkeypatch=monkeypatch)
    assert with_domains == run_cluster(grouped=False, monkeypatch=monkeypatch)
    assert any(node is None for _, node, _ in with_domains)  # some pods found no room: statuses compared
