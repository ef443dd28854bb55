"""Whole clusters (nodes in zones, bound pods that fit their node, pending pods) and scheduling scenarios."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, final

import attrs
from hypothesis import strategies as st

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.model.objects import NO_EXECUTE, NO_SCHEDULE, Node, Pod
from kschedlib.plugins import node_ports, node_resources_fit
from kschedlib.plugins.node_affinity import required_node_affinity_matches
from kschedlib.plugins.taint_toleration import find_untolerated_taint
from kschedlib.simulation.cluster import Cluster
from kschedlib.testing._affinity import DEFAULT_NAMESPACE_LABELS, DEFAULT_NAMESPACES
from kschedlib.testing._basics import HOSTNAME_LABEL, sometimes
from kschedlib.testing._labels import label_sets
from kschedlib.testing._manifests import to_yaml
from kschedlib.testing._validation import Vocabulary, check_int_range, check_names
from kschedlib.testing._workloads import namespace_named
from kschedlib.testing._workloads import nodes as default_nodes
from kschedlib.testing._workloads import pods as default_pods

__all__ = ["Scenario", "clusters", "fits_node", "scenarios"]

_HARD_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})


def fits_node(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether ``pod`` passes the node-local filters on ``node_info`` (which must not hold it yet).

    Those are NodeResourcesFit, NodePorts, TaintToleration (``NoSchedule``/``NoExecute`` taints) and
    NodeAffinity (``nodeSelector`` and required node affinity): what a pod bound by the scheduler
    passed. Unschedulable nodes may hold pods (bound before the node was cordoned).
    """
    node = node_info.node
    return (
        node is not None
        and not node_resources_fit.fits(pod, node_info)
        and node_ports.fits(pod, node_info)
        and find_untolerated_taint(node.taints, pod.tolerations, _HARD_EFFECTS) is None
        and required_node_affinity_matches(pod, node)
    )


def _renamed_node(node: Node, name: str) -> Node:
    labels = dict(node.labels)
    if labels.get(HOSTNAME_LABEL) == node.name:
        labels[HOSTNAME_LABEL] = name
    return attrs.evolve(node, name=name, labels=labels)


def _renamed_pod(pod: Pod, name: str, node_name: str) -> Pod:
    bound = bool(node_name)
    return attrs.evolve(
        pod, name=name, uid="", node_name=node_name, phase="Running" if bound else "Pending",
        scheduling_gates=() if bound else pod.scheduling_gates, nominated_node_name="",
    )


@attrs.frozen(repr=False)
class _ClusterParts(FieldsRepr):
    nodes: st.SearchStrategy[list[Node]]
    pods: st.SearchStrategy[list[Pod]]
    pending_pods: st.SearchStrategy[list[Pod]]
    namespaces: tuple[str, ...]
    namespace_labels: st.SearchStrategy[dict[str, str]]


def _bind(draw: st.DrawFn, candidates: list[Pod], infos: dict[str, NodeInfo]) -> list[Pod]:
    """Bind each candidate to a node it fits, in order (pods that fit no node are dropped)."""
    bound: list[Pod] = []
    for pod in candidates:
        fitting = [name for name, info in infos.items() if fits_node(pod, info)]
        if not fitting:
            continue
        node_name = fitting[0] if len(fitting) == 1 else draw(st.sampled_from(fitting))
        placed = _renamed_pod(pod, f"running-{len(bound)}", node_name)
        infos[node_name] = infos[node_name].with_pod(PodInfo.of(placed))
        bound.append(placed)
    return bound


def _replicas(draw: st.DrawFn, pods: list[Pod]) -> list[Pod]:
    """About half the pods become replicas of the pod before them (its namespace and labels), as a
    ReplicaSet's pods are: selectors, spread constraints and affinities find the pods they are about.

    Copying from the previous pod (not from any earlier one) keeps shrinking easy: deleting an
    unrelated pod never changes which pod another one copies.
    """
    out: list[Pod] = []
    for pod in pods:
        if out and sometimes(draw, 2):
            source = out[-1]
            pod = attrs.evolve(pod, namespace=source.namespace, uid="", labels=dict(source.labels))
        out.append(pod)
    return out


@st.composite
def _clusters(draw: st.DrawFn, parts: _ClusterParts) -> Cluster:
    namespaces = [namespace_named(name, draw(parts.namespace_labels)) for name in parts.namespaces]
    nodes = [_renamed_node(node, f"node-{i}") for i, node in enumerate(draw(parts.nodes))]
    candidates = draw(parts.pods)
    pods = _replicas(draw, [*candidates, *draw(parts.pending_pods)])
    bound = _bind(draw, pods[:len(candidates)], {node.name: NodeInfo.of(node) for node in nodes})
    pending = [_renamed_pod(pod, f"pending-{i}", "") for i, pod in enumerate(pods[len(candidates):])]
    return Cluster((*namespaces, *nodes, *bound, *pending))


def clusters(
    *, nodes: st.SearchStrategy[Node] | None = None, pods: st.SearchStrategy[Pod] | None = None,
    pending_pods: st.SearchStrategy[Pod] | None = None, min_nodes: int = 1, max_nodes: int = 4,
    max_bound_pods: int = 6, min_pending_pods: int = 0, max_pending_pods: int = 2,
    namespaces: Sequence[str] = DEFAULT_NAMESPACES, namespace_labels: Vocabulary = DEFAULT_NAMESPACE_LABELS,
) -> st.SearchStrategy[Cluster]:
    """Clusters of ``min_nodes`` to ``max_nodes`` nodes with up to ``max_bound_pods`` bound pods and
    ``min_pending_pods`` to ``max_pending_pods`` pending ones.

    Nodes come from ``nodes`` (default :func:`nodes`, each in one of the default zones) and are
    renamed ``node-0``, ``node-1``, ... (hostname label included). Bound pods come from ``pods``
    (default :func:`pods`), are renamed ``running-0``, ... and bound to a node they fit (see
    :func:`fits_node`), in order, so every bound pod fits its node with the pods bound before it;
    a pod that fits nowhere is left out. Pending pods come from ``pending_pods`` (default: ``pods``)
    and are renamed ``pending-0``, .... About half the pods are replicas of the pod drawn before them
    (its namespace and labels), as a ReplicaSet's pods are. The cluster holds ``namespaces`` as Namespace
    objects first, then the nodes, the bound pods and the pending pods. Shrinks toward one bare node.
    """
    check_int_range("min_nodes", min_nodes, "max_nodes", max_nodes)
    check_int_range("min_bound_pods", 0, "max_bound_pods", max_bound_pods)
    check_int_range("min_pending_pods", min_pending_pods, "max_pending_pods", max_pending_pods)
    names = check_names("namespaces", namespaces)
    pod_strategy = pods if pods is not None else default_pods(namespaces=names)
    parts = _ClusterParts(
        nodes=st.lists(nodes if nodes is not None else default_nodes(), min_size=min_nodes, max_size=max_nodes),
        pods=st.lists(pod_strategy, max_size=max_bound_pods),
        pending_pods=st.lists(pending_pods if pending_pods is not None else pod_strategy, min_size=min_pending_pods,
                              max_size=max_pending_pods),
        namespaces=names,
        namespace_labels=label_sets(labels=namespace_labels, max_size=1),
    )
    return _clusters(parts)


@final
@attrs.frozen(slots=True, repr=False)
class Scenario:
    """A scheduling question: a cluster and the pod to place in it.

    ``pod`` is usually one of the cluster's pending pods; the others (:attr:`other_pods`) are
    what the contract checks add to nodes to exercise AddPod/RemovePod.
    """

    cluster: Cluster
    pod: Pod

    @property
    def other_pods(self) -> tuple[Pod, ...]:
        """The cluster's pending pods other than :attr:`pod`."""
        return tuple(p for p in self.cluster.pending_pods if p.key != self.pod.key)

    def to_yaml(self) -> str:
        """The cluster as Kubernetes YAML, the pod to schedule named in a leading comment (and appended
        when it is not one of the cluster's pods)."""
        objects = list(self.cluster.objects)
        if all(not isinstance(o, Pod) or o.key != self.pod.key for o in objects):
            objects.append(self.pod)
        return f"# the pod to schedule: {self.pod.key}\n" + to_yaml(objects)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        c = self.cluster
        return (f"Scenario(pod={self.pod.key!r}, nodes={len(c.nodes)}, bound_pods={len(c.bound_pods)}, "
                f"pending_pods={len(c.pending_pods)})")


@st.composite
def _scenarios(draw: st.DrawFn, cluster_strategy: st.SearchStrategy[Cluster],
               pod_strategy: st.SearchStrategy[Pod] | None) -> Scenario:
    cluster = draw(cluster_strategy)
    if pod_strategy is not None:
        return Scenario(cluster, draw(pod_strategy))
    pending = cluster.pending_pods
    if pending:
        return Scenario(cluster, pending[0])
    return Scenario(cluster, _renamed_pod(draw(default_pods()), "incoming", ""))


def scenarios(
    *, clusters: st.SearchStrategy[Cluster] | None = None, pods: st.SearchStrategy[Pod] | None = None
) -> st.SearchStrategy[Scenario]:
    """Scenarios: a cluster from ``clusters`` (default: :func:`clusters` of up to 3 nodes, 4 bound pods and 1 to
    3 pending pods)
    and the pod to schedule, drawn from ``pods`` when given, else the cluster's first pending pod
    (else a pod named ``incoming`` from :func:`pods`)."""
    cluster_strategy = clusters if clusters is not None else _default_scenario_clusters()
    return _scenarios(cluster_strategy, pods)


def _default_scenario_clusters() -> st.SearchStrategy[Cluster]:
    return clusters(max_nodes=3, max_bound_pods=4, min_pending_pods=1, max_pending_pods=3)
