"""kschedlib.capacity through the public API: max_replicas, drain, nodes_needed, compare, utilisation."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib import Snapshot, capacity, load_cluster
from kschedlib.errors import ManifestError
from kschedlib.model.resources import pod_requests
from tests.whatif.manifests import node, pdb, pod

FULL = "0/2 nodes are available: 2 Insufficient cpu."


def _cluster() -> list[dict[str, Any]]:
    return [node("a", zone="z1"), node("b", zone="z2"),
            pod("web-1", node_name="a", owner="ReplicaSet/web", labels={"app": "web"}),
            pod("logs-a", node_name="a", owner="DaemonSet/logs")]


# --- max_replicas -----------------------------------------------------------------------------


def test_max_replicas_counts_copies_one_by_one_and_names_what_stopped_them() -> None:
    report = capacity.max_replicas(_cluster(), pod("x", cpu="1"))
    assert report.replicas == 6  # a has 2 of 4 cpu left, b 4
    assert report.placements == {"a": 2, "b": 4}
    assert report.stopped_pod == "default/x"
    assert report.stopped_by is not None
    assert report.stopped_by.startswith(FULL)
    data = report.to_dict()
    assert data["replicas"] == 6
    assert data["templates"]["default/x"] == {"replicas": 6, "placements": {"a": 2, "b": 4}}


def test_max_replicas_stops_at_the_limit() -> None:
    report = capacity.max_replicas(_cluster(), pod("x", cpu="1"), limit=3)
    assert (report.replicas, report.stopped_by) == (3, None)
    assert "stopped at the limit" in report.text()


def test_several_templates_take_turns() -> None:
    report = capacity.max_replicas(_cluster(), [pod("x", cpu="1"), pod("y", cpu="500m")])
    counts = {key: entry["replicas"] for key, entry in report.templates.items()}
    assert counts == {"default/x": 4, "default/y": 4}  # x, y, x, y ... until an x finds 500m left nowhere
    assert report.stopped_pod == "default/x"
    assert report.rows()[0].keys() == {"template", "node", "replicas"}


def test_pending_pods_go_first_when_asked() -> None:
    objects = [*_cluster(), pod("big", cpu="3")]
    assert capacity.max_replicas(objects, pod("x", cpu="1")).replicas == 6
    report = capacity.max_replicas(objects, pod("x", cpu="1"), include_pending=True)
    assert report.pending == {"default/big": "b"}
    assert report.replicas == 3


def _other_scheduler() -> dict[str, Any]:
    template = pod("x")
    template["spec"]["schedulerName"] = "other"
    return template


@pytest.mark.parametrize(("template", "limit", "message"), [
    pytest.param(pod("x"), -1, "limit", id="negative-limit"),
    pytest.param([], None, "at least one pod", id="no-template"),
    pytest.param(_other_scheduler(), None, "profile not found", id="no-profile"),
])
def test_max_replicas_refuses_bad_input(template: Any, limit: int | None, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        capacity.max_replicas(_cluster(), template, limit=limit)


_node_specs = st.lists(st.tuples(st.integers(1, 8), st.integers(1, 8), st.integers(1, 6)), min_size=1, max_size=5)
_pod_specs = st.lists(st.tuples(st.integers(1, 3000), st.integers(1, 2048)), min_size=1, max_size=3)


@settings(max_examples=20)
@given(nodes=_node_specs, templates=_pod_specs, bound=st.integers(0, 4))
def test_max_replicas_never_overcommits_a_node(nodes: list[tuple[int, int, int]], templates: list[tuple[int, int]],
                                               bound: int) -> None:
    """A node that got copies holds no more than it has (the bound pods may overcommit it on their own)."""
    objects = [node(f"n{i}", cpu=str(cpu), memory=f"{mem}Gi", pods=str(slots))
               for i, (cpu, mem, slots) in enumerate(nodes)]
    objects += [pod(f"b{i}", cpu="300m", memory="256Mi", node_name=f"n{i % len(nodes)}") for i in range(bound)]
    shapes = [pod(f"t{i}", cpu=f"{cpu}m", memory=f"{mem}Mi") for i, (cpu, mem) in enumerate(templates)]
    report = capacity.max_replicas(objects, shapes, limit=60)
    cluster = load_cluster(objects)
    for n in cluster.nodes:
        used_cpu = sum(pod_requests(p).milli_cpu for p in cluster.bound_pods if p.node_name == n.name)
        used_mem = sum(pod_requests(p).memory for p in cluster.bound_pods if p.node_name == n.name)
        used_pods = sum(1 for p in cluster.bound_pods if p.node_name == n.name)
        placed = 0
        for i, (cpu, mem) in enumerate(templates):
            copies = report.templates[f"default/t{i}"]["placements"].get(n.name, 0)
            used_cpu += copies * cpu
            used_mem += copies * mem * 2**20
            used_pods += copies
            placed += copies
        if not placed:
            continue
        assert used_cpu <= n.allocatable["cpu"].milli_value()
        assert used_mem <= n.allocatable["memory"].value()
        assert used_pods <= int(n.allocatable["pods"].value())
    assert report.replicas == sum(entry["replicas"] for entry in report.templates.values())


# --- drain ------------------------------------------------------------------------------------


def test_drain_moves_what_cluster_autoscaler_moves_and_flags_the_rest() -> None:
    objects = [*_cluster(),
               pod("static", node_name="a", annotations={"kubernetes.io/config.mirror": "x"}),
               pod("bare", cpu="500m", node_name="a",
                   volumes=[{"name": "scratch", "emptyDir": {}}])]
    report = capacity.drain(objects, ["a"])
    assert report.nodes[0]["left"] == {"default/logs-a": "DaemonSet pod", "default/static": "mirror pod"}
    assert report.pods == {
        "default/web-1": {"from": "a", "to": "b", "message": None, "flags": []},
        "default/bare": {"from": "a", "to": "b", "message": None, "flags": ["local storage", "no controller"]},
    }
    assert report.blocked == {}
    assert report.unschedulable == {}
    assert "default/bare: a -> b [local storage, no controller]" in report.text()


def test_a_pod_disruption_budget_blocks_the_drain_unless_ignored() -> None:
    objects = [*_cluster(), pdb("web", "web", 0)]
    blocked = capacity.drain(objects, ["a"])
    assert blocked.blocked == {"a": "not enough pod disruption budget to move default/web-1 (default/web)"}
    assert blocked.pods == {}
    violation = {"pod": "default/web-1", "pdb": "default/web", "disruptions_allowed": 0}
    assert blocked.to_dict()["pdb_violations"] == [violation]
    forced = capacity.drain(objects, ["a"], respect_pdbs=False)
    assert forced.blocked == {}
    assert forced.pods["default/web-1"]["to"] == "b"
    assert forced.to_dict()["pdb_violations"] == [violation]


def test_a_budget_is_used_up_across_the_drained_nodes() -> None:
    objects = [node("a"), node("b"), node("c"),
               pod("w1", node_name="a", owner="ReplicaSet/web", labels={"app": "web"}),
               pod("w2", node_name="b", owner="ReplicaSet/web", labels={"app": "web"}), pdb("web", "web", 1)]
    report = capacity.drain(objects, ["a", "b"])
    assert report.blocked == {"b": "not enough pod disruption budget to move default/w2 (default/web)"}
    assert report.pods["default/w1"]["to"] == "c"


def test_pods_that_fit_nowhere_after_a_drain_get_the_fit_error() -> None:
    objects = [node("a"), node("b", cpu="1"), pod("w", cpu="2", node_name="a", owner="ReplicaSet/web")]
    report = capacity.drain(objects, ["a"])
    assert report.unschedulable["default/w"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert report.rows() == [{"pod": "default/w", "from": "a", "to": "", "message": report.unschedulable["default/w"],
                              "flags": ""}]


def test_a_node_named_twice_is_drained_once() -> None:
    assert capacity.drain(_cluster(), ["a", "a"]).to_dict() == capacity.drain(_cluster(), ["a"]).to_dict()


@pytest.mark.parametrize("nodes", [pytest.param([], id="none"), pytest.param(["zz"], id="unknown")])
def test_drain_refuses_unknown_nodes(nodes: list[str]) -> None:
    with pytest.raises(ManifestError, match="node"):
        capacity.drain(_cluster(), nodes)


_kinds = st.sampled_from(["ReplicaSet", "DaemonSet", "mirror", "none", "StatefulSet"])


@settings(max_examples=25)
@given(pods=st.lists(st.tuples(_kinds, st.integers(0, 2)), max_size=8), drained=st.sets(st.integers(0, 2), min_size=1))
def test_drain_never_moves_daemon_set_or_mirror_pods(pods: list[tuple[str, int]], drained: set[int]) -> None:
    objects: list[dict[str, Any]] = [node(f"n{i}") for i in range(3)]
    for index, (kind, where) in enumerate(pods):
        owner = f"{kind}/o{index}" if kind in ("ReplicaSet", "DaemonSet", "StatefulSet") else None
        notes = {"kubernetes.io/config.mirror": "m"} if kind == "mirror" else None
        objects.append(pod(f"p{index}", cpu="100m", node_name=f"n{where}", owner=owner, annotations=notes))
    report = capacity.drain(objects, [f"n{i}" for i in sorted(drained)])
    stayed = {key for entry in report.nodes for key in entry["left"]}
    for index, (kind, where) in enumerate(pods):
        key = f"default/p{index}"
        if kind in ("DaemonSet", "mirror"):
            assert key not in report.pods
            assert (key in stayed) == (where in drained)
        else:
            assert (key in report.pods) == (where in drained)


# --- nodes_needed -----------------------------------------------------------------------------


def test_nodes_needed_finds_the_smallest_count_and_the_pods_no_count_helps() -> None:
    objects = [node("a", cpu="1"), *(pod(f"p{i}", cpu="3") for i in range(5)), pod("huge", cpu="64"),
               pod("gpu", cpu="1", extended={"nvidia.com/gpu": "1"})]
    report = capacity.nodes_needed(objects, node("pool", cpu="4"), limit=10)
    assert report.nodes_needed == 5
    assert report.new_nodes == ("pool-1", "pool-2", "pool-3", "pool-4", "pool-5")
    assert sorted(report.placements) == [f"default/p{i}" for i in range(5)]
    assert set(report.not_helped) == {"default/gpu", "default/huge"}
    assert report.not_helped["default/huge"].startswith("0/11 nodes are available: 11 Insufficient cpu.")
    assert "Insufficient nvidia.com/gpu" in report.not_helped["default/gpu"]
    assert report.to_dict()["max"] == 10


def test_nodes_needed_is_zero_when_everything_fits_already() -> None:
    report = capacity.nodes_needed([node("a"), pod("p", cpu="1")], node("pool"))
    assert (report.nodes_needed, report.placements, report.not_helped) == (0, {"default/p": "a"}, {})


def test_nodes_needed_refuses_a_template_named_like_existing_nodes() -> None:
    with pytest.raises(ManifestError, match="named like"):
        capacity.nodes_needed([node("pool-1")], node("pool"))


# --- compare ----------------------------------------------------------------------------------

MOST = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [
    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}


def test_compare_puts_two_configs_side_by_side() -> None:
    objects = [node("a"), node("b"), pod("w", node_name="a"), pod("p", cpu="500m")]
    result = capacity.compare(objects, [None, MOST], labels=["least", "most"])
    assert result.differences == {"default/p": ("b", "a")}
    assert result.runs["least"]["summary"]["scheduled"] == 1
    assert set(result.runs["most"]) >= {"utilisation", "fragmentation", "placements", "unschedulable"}
    assert result.rows() == [{"pod": "default/p", "least": "b", "most": "a"}]


@pytest.mark.parametrize(("configs", "labels"), [
    pytest.param([None], None, id="one-config"), pytest.param([None, MOST], ["x", "x"], id="same-label"),
])
def test_compare_refuses_bad_input(configs: list[Any], labels: list[str] | None) -> None:
    with pytest.raises(ManifestError):
        capacity.compare([node("a")], configs, labels=labels)


# --- utilisation and fragmentation ------------------------------------------------------------


def test_utilisation_per_node_zone_and_extended_resource() -> None:
    objects = [node("a", zone="z1", **{"nvidia.com/gpu": "4"}), node("b", zone="z1"), node("c", zone="z2"),
               pod("g", cpu="2", node_name="a", extended={"nvidia.com/gpu": "3"})]
    snapshot_of = capacity.max_replicas(objects, pod("x"), limit=0).to_dict()["utilisation"]["before"]
    assert snapshot_of["nodes"]["a"]["nvidia.com/gpu"] == {"requested": 3, "allocatable": 4, "ratio": 0.75}
    assert snapshot_of["nodes"]["a"]["cpu"] == {"requested": 2000, "allocatable": 4000, "ratio": 0.5}
    assert snapshot_of["zones"]["z1"]["cpu"] == {"requested": 2000, "allocatable": 8000, "ratio": 0.25}
    assert snapshot_of["zones"]["z1"]["pods"]["requested"] == 1
    assert snapshot_of["total"]["cpu"]["allocatable"] == 12000


def test_fragmentation_counts_free_capacity_no_shape_can_use() -> None:
    objects = [node("a", cpu="4"), node("b", cpu="4"), pod("w", cpu="3500m", node_name="a")]
    report = capacity.max_replicas(objects, pod("x", cpu="1"), limit=0).to_dict()
    cpu = report["fragmentation"]["before"]["resources"]["cpu"]
    assert cpu == {"free": 4500, "stranded": 500, "ratio": round(500 / 4500, 4)}
    assert report["fragmentation"]["before"]["nodes_without_room"] == 1
    assert capacity.fragmentation(Snapshot(()), []) is None


def test_new_nodes_get_the_daemon_sets_pods_as_cluster_autoscaler_assumes() -> None:
    daemon = pod("logs-a", cpu="2", node_name="a", owner="DaemonSet/logs")
    daemon["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}
    objects = [node("a", cpu="2"), daemon, pod("p", cpu="1500m"), pod("q", cpu="1500m")]
    report = capacity.nodes_needed(objects, node("pool", cpu="4"))
    assert report.nodes_needed == 2  # 2 cpu of each new node go to the DaemonSet's pod
    assert sorted(report.placements.values()) == ["pool-1", "pool-2"]
    assert report.not_helped == {}
    daemon["spec"]["nodeSelector"] = {"role": "logging"}
    objects[0]["metadata"]["labels"]["role"] = "logging"
    assert capacity.nodes_needed(objects, node("pool", cpu="4")).nodes_needed == 1  # not for the new nodes
