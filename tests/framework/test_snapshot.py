"""Snapshot (reference §1.6): order, lookup, affinity sub-lists, namespaces."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import NodeInfo, PodInfo, Snapshot
from kschedlib.model import Affinity, LabelSelector, Namespace, PodAffinity, PodAffinityTerm
from tests.helpers import make_node, make_pod

TERM = PodAffinityTerm("kubernetes.io/hostname", LabelSelector({"app": "x"}))


def infos(*names: str) -> list[NodeInfo]:
    return [NodeInfo.of(make_node(name)) for name in names]


def test_keeps_the_given_order() -> None:
    snapshot = Snapshot(infos("c", "a", "b"))
    assert [i.name for i in snapshot.node_infos] == ["c", "a", "b"]
    assert [i.name for i in snapshot] == ["c", "a", "b"]
    assert len(snapshot) == snapshot.num_nodes == 3


def test_get_and_find() -> None:
    nodes = infos("a", "b")
    snapshot = Snapshot(nodes)
    assert snapshot.get("b") is nodes[1]
    assert snapshot.find("a") is nodes[0]
    assert snapshot.find("zzz") is None


def test_get_missing_uses_kube_schedulers_message() -> None:
    with pytest.raises(KeyError, match='nodeinfo not found for node name "zzz"'):
        Snapshot(infos("a")).get("zzz")


def test_positions_may_be_given() -> None:
    nodes = infos("a", "b")
    snapshot = Snapshot(nodes, positions={"a": 0, "b": 1})
    assert snapshot.get("b") is nodes[1]


def test_empty_snapshot() -> None:
    snapshot = Snapshot(())
    assert snapshot.num_nodes == 0
    assert list(snapshot) == []
    assert snapshot.have_pods_with_affinity == ()
    assert snapshot.namespaces == {}


def test_node_list_is_a_copy_of_the_input() -> None:
    nodes = infos("a", "b")
    snapshot = Snapshot(nodes)
    nodes.append(NodeInfo.of(make_node("c")))
    nodes[0] = NodeInfo.of(make_node("z"))
    assert [i.name for i in snapshot] == ["a", "b"]


def test_affinity_sub_lists_keep_node_order() -> None:
    affinity = make_pod("aff", affinity=Affinity(pod_affinity=PodAffinity(required=(TERM,))))
    anti = make_pod("anti", affinity=Affinity(pod_anti_affinity=PodAffinity(required=(TERM,))))
    plain = make_pod("plain")
    nodes = [
        NodeInfo.of(make_node("n1"), (PodInfo.of(anti),)),
        NodeInfo.of(make_node("n2"), (PodInfo.of(plain),)),
        NodeInfo.of(make_node("n3"), (PodInfo.of(affinity),)),
        NodeInfo.of(make_node("n4")),
    ]
    snapshot = Snapshot(nodes)
    assert [i.name for i in snapshot.have_pods_with_affinity] == ["n1", "n3"]
    assert [i.name for i in snapshot.have_pods_with_required_anti_affinity] == ["n1"]
    assert snapshot.have_pods_with_affinity is snapshot.have_pods_with_affinity  # computed once


def test_namespace_labels() -> None:
    snapshot = Snapshot(infos("a"), namespaces={"team": Namespace("team", {"tier": "gold"})})
    assert snapshot.namespace_labels("team") == {"tier": "gold"}
    assert snapshot.namespace_labels("unknown") == {}
    assert set(snapshot.namespaces) == {"team"}


def test_generation_is_recorded() -> None:
    assert Snapshot((), generation=7).generation == 7


@given(st.lists(st.text("abcdefgh", min_size=1, max_size=3), unique=True, max_size=12))
def test_every_listed_node_can_be_found_at_its_position(names: list[str]) -> None:
    nodes = infos(*names)
    snapshot = Snapshot(nodes)
    assert [i.name for i in snapshot] == names
    for node in nodes:
        assert snapshot.get(node.name) is node
