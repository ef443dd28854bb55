"""The node tree (reference §12.4): zone keys, round-robin order over zones, zone moves."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib._internal.node_tree import NodeTree, zone_key

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def zone(name: str) -> dict[str, str]:
    return {ZONE: name}


def tree_of(*nodes: tuple[str, str]) -> NodeTree:
    tree = NodeTree()
    for name, z in nodes:
        tree.add(name, zone(z))
    return tree


ZONE_KEYS = [
    ("no-labels", {}, ""),
    ("zone-only", {ZONE: "a"}, ":\x00:a"),
    ("region-only", {REGION: "r"}, "r:\x00:"),
    ("both", {REGION: "r", ZONE: "a"}, "r:\x00:a"),
    ("beta-zone-wins", {BETA_ZONE: "old", ZONE: "new"}, ":\x00:old"),
    ("beta-region-wins", {BETA_REGION: "old", REGION: "new", ZONE: "a"}, "old:\x00:a"),
    ("empty-beta-zone-still-wins", {BETA_ZONE: "", ZONE: "a", REGION: "r"}, "r:\x00:"),
    ("empty-values", {ZONE: "", REGION: ""}, ""),
    ("other-labels-ignored", {"kubernetes.io/hostname": "n1"}, ""),
]


@pytest.mark.parametrize(("labels", "key"), [z[1:] for z in ZONE_KEYS], ids=[z[0] for z in ZONE_KEYS])
def test_zone_key(labels: Mapping[str, str], key: str) -> None:
    assert zone_key(labels) == key


def test_reference_example() -> None:
    # zones A=[a1,a2,a3], B=[b1], C=[c1,c2] in order of first appearance
    tree = tree_of(("a1", "A"), ("b1", "B"), ("a2", "A"), ("c1", "C"), ("a3", "A"), ("c2", "C"))
    assert tree.ordered() == ["a1", "b1", "c1", "a2", "c2", "a3"]
    assert len(tree) == 6


def test_unlabelled_nodes_share_one_zone() -> None:
    tree = NodeTree()
    for name in ("x", "y"):
        tree.add(name, {})
    tree.add("a1", zone("A"))
    assert tree.ordered() == ["x", "a1", "y"]


def test_add_reports_whether_the_order_changed() -> None:
    tree = NodeTree()
    assert tree.add("a1", zone("A")) is True
    assert tree.add("a1", zone("A")) is False
    assert tree.add("a1", {**zone("A"), "other": "label"}) is False
    assert tree.add("a1", zone("B")) is True
    assert tree.ordered() == ["a1"]


def test_zone_move_appends_to_the_new_zone() -> None:
    tree = tree_of(("a1", "A"), ("b1", "B"), ("a2", "A"), ("b2", "B"))
    tree.add("a1", zone("B"))
    # A=[a2], B=[b1, b2, a1]
    assert tree.ordered() == ["a2", "b1", "b2", "a1"]


def test_moving_the_last_node_of_a_zone_removes_the_zone() -> None:
    tree = tree_of(("a1", "A"), ("b1", "B"), ("c1", "C"))
    tree.add("a1", zone("D"))
    # A disappears; D is appended after C
    assert tree.ordered() == ["b1", "c1", "a1"]
    tree.add("x", zone("A"))
    assert tree.ordered() == ["b1", "c1", "a1", "x"]


def test_remove() -> None:
    tree = tree_of(("a1", "A"), ("b1", "B"), ("a2", "A"))
    tree.remove("a1")
    assert tree.ordered() == ["a2", "b1"]
    assert "a1" not in tree
    assert "a2" in tree
    tree.remove("a1")  # unknown: no-op
    assert len(tree) == 2


def test_removed_zone_is_re_added_at_the_end() -> None:
    tree = tree_of(("a1", "A"), ("b1", "B"))
    tree.remove("a1")
    tree.add("a1", zone("A"))
    assert tree.ordered() == ["b1", "a1"]


def test_empty_tree() -> None:
    assert NodeTree().ordered() == []


# --- property: the round-robin order against a simple model ---------------------------------


@given(st.lists(st.tuples(st.sampled_from(["add", "add", "remove"]), st.sampled_from("abcdefg"),
                          st.sampled_from(["", "A", "B", "C"])), max_size=30))
def test_matches_a_model_of_zones(ops: list[tuple[str, str, str]]) -> None:
    tree = NodeTree()
    zones: dict[str, list[str]] = {}
    zone_of: dict[str, str] = {}

    def model_remove(name: str) -> None:
        z = zone_of.pop(name)
        zones[z].remove(name)
        if not zones[z]:
            del zones[z]

    for op, name, z in ops:
        labels = zone(z) if z else {}
        if op == "add":
            tree.add(name, labels)
            if zone_of.get(name) != z:
                if name in zone_of:
                    model_remove(name)
                zones.setdefault(z, []).append(name)
                zone_of[name] = z
        else:
            tree.remove(name)
            if name in zone_of:
                model_remove(name)
        expected: list[str] = []
        depth = 0
        while len(expected) < len(zone_of):
            expected.extend(members[depth] for members in zones.values() if depth < len(members))
            depth += 1
        assert tree.ordered() == expected
        assert len(tree) == len(zone_of)
