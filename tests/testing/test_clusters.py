"""Generated clusters are valid (every bound pod fits its node) and survive a YAML round trip."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import given, settings

from kschedlib import load_cluster
from kschedlib.framework import NodeInfo, PodInfo
from kschedlib.plugins.node_resources_fit import fits_request
from kschedlib.simulation import Cluster
from kschedlib.testing import Scenario, to_yaml
from kschedlib.testing import strategies as ks


def _pods_by_node(cluster: Cluster) -> dict[str, list[PodInfo]]:
    placed: dict[str, list[PodInfo]] = {node.name: [] for node in cluster.nodes}
    for pod in cluster.bound_pods:
        placed[pod.node_name].append(PodInfo.of(pod))
    return placed


@settings(max_examples=200)
@given(ks.clusters())
def test_every_bound_pod_fits_its_node(cluster: Cluster) -> None:
    nodes = {node.name: node for node in cluster.nodes}
    for name, infos in _pods_by_node(cluster).items():
        node_info = NodeInfo.of(nodes[name], tuple(infos))
        alloc, used = node_info.allocatable, node_info.requested
        assert len(infos) <= alloc.allowed_pod_number
        for resource in ("cpu", "memory", "ephemeral-storage", *used.scalar):
            assert used.get(resource) <= alloc.get(resource), (name, resource)
        for info in infos:  # and each pod passes the node-local filters with the others in place
            others = NodeInfo.of(nodes[name], tuple(i for i in infos if i is not info))
            assert ks.fits_node(info.pod, others), info.pod.key
            assert not fits_request(info.requests, others)
        host_ports = [port for info in infos for port in info.host_ports]
        assert len(host_ports) == len(set(host_ports))


@settings(max_examples=50)
@given(ks.clusters(min_nodes=2, max_nodes=3, min_pending_pods=1))
def test_cluster_shape(cluster: Cluster) -> None:
    assert 2 <= len(cluster.nodes) <= 3
    assert 1 <= len(cluster.pending_pods) <= 2
    assert [n.name for n in cluster.nodes] == [f"node-{i}" for i in range(len(cluster.nodes))]
    assert all(n.labels["kubernetes.io/hostname"] == n.name for n in cluster.nodes)
    assert all(n.labels["topology.kubernetes.io/zone"] in ks.DEFAULT_ZONES for n in cluster.nodes)
    assert not [key for key, count in Counter(p.key for p in cluster.pods).items() if count > 1]
    assert all(p.phase == "Running" and not p.scheduling_gates for p in cluster.bound_pods)
    assert all(p.phase == "Pending" for p in cluster.pending_pods)
    namespaces = {ns.name for ns in cluster.namespaces}
    assert namespaces == set(ks.DEFAULT_NAMESPACES)
    assert all(p.namespace in namespaces for p in cluster.pods)
    kinds = [type(o).__name__ for o in cluster.objects]
    assert kinds == sorted(kinds, key=["Namespace", "Node", "Pod"].index)


@settings(max_examples=100)
@given(ks.clusters())
def test_load_cluster_reads_back_the_yaml_of_a_generated_cluster(cluster: Cluster) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "cluster.yaml"
        path.write_text(to_yaml(cluster), encoding="utf-8")
        assert load_cluster(path) == cluster


@settings(max_examples=30)
@given(ks.scenarios())
def test_scenarios_schedule_the_first_pending_pod(scenario: Scenario) -> None:
    assert scenario.pod == scenario.cluster.pending_pods[0]
    assert scenario.pod not in scenario.other_pods
    assert len(scenario.other_pods) == len(scenario.cluster.pending_pods) - 1
    assert scenario.to_yaml().startswith(f"# the pod to schedule: {scenario.pod.key}\n---\n")
    assert repr(scenario).startswith(f"Scenario(pod={scenario.pod.key!r}, nodes=")


@settings(max_examples=20)
@given(ks.scenarios(clusters=ks.clusters(max_nodes=2, max_pending_pods=0), pods=ks.pods(name="extra")))
def test_a_scenario_pod_from_outside_the_cluster_is_appended_to_its_yaml(scenario: Scenario) -> None:
    assert not scenario.cluster.pending_pods
    assert not scenario.other_pods
    assert "name: extra" in scenario.to_yaml()


@settings(max_examples=20)
@given(ks.scenarios(clusters=ks.clusters(max_nodes=2, max_pending_pods=0)))
def test_a_cluster_without_pending_pods_gets_an_incoming_pod(scenario: Scenario) -> None:
    assert scenario.pod.name == "incoming"
    assert scenario.pod.uid == f"{scenario.pod.namespace}/incoming"
