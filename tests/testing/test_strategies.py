"""kschedlib.testing.strategies: valid objects "as read", eager argument errors, from_type, shrinking."""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from kschedlib.model import (
    Affinity,
    Container,
    LabelSelector,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelector,
    Pod,
    PodAffinity,
    Quantity,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    parse_quantity,
)
from kschedlib.model.convert import (
    label_selector_from_dict,
    label_selector_to_dict,
    namespace_from_dict,
    namespace_to_dict,
    node_from_dict,
    node_to_dict,
    pod_from_dict,
    pod_to_dict,
)
from kschedlib.model.resources import is_extended_resource, is_overcommit_allowed
from kschedlib.simulation import Cluster
from kschedlib.testing import strategies as ks
from kschedlib.testing import to_yaml
from kschedlib.testing._hypothesis_setup import _hypothesis_setup_hook

LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                       r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


# --- quantities and resources ------------------------------------------------------------------


@given(ks.quantities(min_value="100m", max_value="4"))
def test_quantities_stay_in_range_and_print_back(q: Quantity) -> None:
    assert parse_quantity("100m") <= q <= parse_quantity("4")
    assert parse_quantity(str(q)) == q


@given(ks.quantities(min_value=1, max_value="16Gi", allow_fractions=False, formats=("BinarySI",)))
def test_whole_binary_quantities(q: Quantity) -> None:
    assert q.amount.denominator == 1
    assert 1 <= q.amount <= 16 * 2**30


@given(ks.quantity_strings(min_value=0, max_value="2Gi"))
def test_quantity_strings_parse_within_range(text: str) -> None:
    assert 0 <= parse_quantity(text).amount <= 2 * 2**30


def test_a_zero_range_gives_zero() -> None:
    assert find(ks.quantities(max_value=0), lambda q: True).amount == 0


@given(ks.resource_lists(min_size=1, max_size=2))
def test_resource_lists_draw_known_names_within_range(resources: dict[str, Quantity]) -> None:
    assert 1 <= len(resources) <= 2
    assert list(resources) == [name for name in ks.DEFAULT_REQUESTS if name in resources]
    for name, amount in resources.items():
        low, high = (parse_quantity(str(bound)) for bound in ks.DEFAULT_REQUESTS[name])
        assert low <= amount <= high
        if name != "cpu":
            assert amount.amount.denominator == 1


# --- labels, selectors, taints -------------------------------------------------------------------


@given(ks.label_sets(labels=None, max_size=3))
def test_arbitrary_label_sets_are_valid(labels: dict[str, str]) -> None:
    for key, value in labels.items():
        name = key.rpartition("/")[2]
        assert LABEL_KEY.match(key), key
        assert len(name) <= 63, key
        assert LABEL_VALUE.match(value), value
        assert len(value) <= 63, value


@given(ks.label_sets(min_size=1))
def test_label_sets_use_the_vocabulary(labels: dict[str, str]) -> None:
    assert labels
    assert all(value in ks.DEFAULT_POD_LABELS[key] for key, value in labels.items())


@given(ks.label_selectors(operators=("In", "Exists")), ks.label_selectors(labels=None, max_size=3))
def test_label_selectors_round_trip(selector: LabelSelector, arbitrary: LabelSelector) -> None:
    assert {r.operator for r in selector.match_expressions} <= {"In", "Exists"}
    for each in (selector, arbitrary):
        assert label_selector_from_dict(label_selector_to_dict(each)) == each


@given(ks.node_selectors(node_names=("node-0",)))
def test_node_selectors_are_valid(selector: NodeSelector) -> None:
    assert 1 <= len(selector.terms) <= 2
    for term in selector.terms:
        for req in term.match_expressions:
            if req.operator in ("Gt", "Lt"):
                assert req.key == "cpu-generation"
                assert len(req.values) == 1
            assert set(req.values) <= set(ks.DEFAULT_NODE_LABELS[req.key])
        assert all(f.key == "metadata.name" and f.values == ("node-0",) for f in term.match_fields)


@given(ks.tolerations(effects=("NoSchedule", "NoExecute")), ks.taints(effects=("PreferNoSchedule",)))
def test_tolerations_and_taints_are_valid(toleration: Toleration, taint: Taint) -> None:
    assert toleration.operator in ("Equal", "Exists")
    if toleration.operator == "Exists":
        assert toleration.value == ""
    if not toleration.key:
        assert toleration.operator == "Exists"
    assert toleration.effect in ("", "NoSchedule", "NoExecute")
    assert toleration.toleration_seconds is None or toleration.effect == "NoExecute"
    assert taint.effect == "PreferNoSchedule"
    assert taint.key in ks.DEFAULT_TAINTS


@given(ks.topology_spread_constraints(min_skew=2, max_skew=4))
def test_spread_constraints_are_valid(c: TopologySpreadConstraint) -> None:
    assert 2 <= c.max_skew <= 4
    assert c.min_domains is None or c.when_unsatisfiable == "DoNotSchedule"
    if c.match_label_keys:
        assert c.label_selector is not None
        assert not set(c.match_label_keys) & {r.key for r in c.label_selector.requirements}


# --- containers, pods, nodes, namespaces: valid and "as read" -----------------------------------


@given(ks.containers())
def test_container_limits_never_undercut_requests(container: Container) -> None:
    assert set(container.limits) <= set(container.requests)
    for name, limit in container.limits.items():
        if is_extended_resource(name):
            assert limit == container.requests[name]
        assert limit >= container.requests[name]


@settings(max_examples=200)
@given(ks.pods())
def test_pods_round_trip_through_their_manifest(pod: Pod) -> None:
    assert pod_from_dict(pod_to_dict(pod)) == pod
    ports = [(p.host_port, p.protocol) for c in pod.containers for p in c.ports if p.host_port]
    assert len(ports) == len(set(ports))
    assert not pod.scheduling_gates


@given(ks.pods(features=()))
def test_pods_without_features_are_bare(pod: Pod) -> None:
    assert (pod.affinity, pod.node_selector, pod.priority, pod.overhead) == (None, None, None, None)
    assert not (pod.tolerations)
    assert not (pod.topology_spread_constraints)
    assert not (pod.init_containers)
    assert all(not c.image and not any(p.host_port for p in c.ports) for c in pod.containers)
    for container in pod.containers:  # only the limits the API server requires: extended resources, = request
        assert container.limits == {name: amount for name, amount in container.requests.items()
                                    if not is_overcommit_allowed(name)}


@given(ks.pods(features=("scheduling_gates",), node_names=("node-1",), min_containers=2, max_containers=2))
def test_pod_options(pod: Pod) -> None:
    assert pod.node_name == "node-1"
    assert [c.name for c in pod.containers] == ["app-0", "app-1"]


@given(ks.nodes(name="n1", zones=("east",)))
def test_nodes_round_trip_and_carry_name_and_zone(node: Node) -> None:
    assert node_from_dict(node_to_dict(node)) == node
    assert node.labels["kubernetes.io/hostname"] == "n1"
    assert node.labels["topology.kubernetes.io/zone"] == "east"
    assert {"cpu", "memory", "pods"} <= set(node.allocatable)
    assert node.capacity == node.allocatable


@given(ks.namespaces(names=("prod",)))
def test_namespaces_round_trip(namespace: Namespace) -> None:
    assert namespace_from_dict(namespace_to_dict(namespace)) == namespace
    assert namespace.labels["kubernetes.io/metadata.name"] == "prod"


@given(ks.affinities(pod_affinity=False, pod_anti_affinity=False), ks.node_affinities(required=False),
       ks.pod_affinities(preferred=False))
def test_affinity_switches(affinity: Affinity, node: NodeAffinity, pods: PodAffinity) -> None:
    assert affinity.pod_affinity is None
    assert affinity.pod_anti_affinity is None
    assert node.required is None
    assert not pods.preferred


# --- eager errors --------------------------------------------------------------------------------

BAD_ARGUMENTS: list[tuple[str, Callable[[], object]]] = [
    ("quantity-range-reversed", lambda: ks.quantities(min_value="2", max_value="1")),
    ("quantity-negative", lambda: ks.quantities(min_value="-1")),
    ("quantity-malformed", lambda: ks.quantities(max_value="lots")),
    ("quantity-bool", lambda: ks.quantities(max_value=True)),
    ("quantity-format", lambda: ks.quantities(formats=("Roman",))),
    ("quantity-no-format", lambda: ks.quantities(formats=())),
    ("quantity-no-whole-value", lambda: ks.quantities(min_value="100m", max_value="900m", allow_fractions=False)),
    ("resources-min-size", lambda: ks.resource_lists(min_size=5)),
    ("resources-range", lambda: ks.resource_lists(resources={"cpu": ("2", "1")})),
    ("resources-pair", lambda: ks.resource_lists(resources={"cpu": "1"})),  # type: ignore[dict-item]
    ("label-size", lambda: ks.label_sets(min_size=-1)),
    ("label-sizes-reversed", lambda: ks.label_sets(min_size=2, max_size=1)),
    ("label-vocabulary", lambda: ks.label_sets(labels={"app": []})),
    ("label-vocabulary-string", lambda: ks.label_sets(labels={"app": "web"})),
    ("selector-operator", lambda: ks.label_selectors(operators=("Gt",))),
    ("taint-effects", lambda: ks.taints(effects=())),
    ("toleration-operators", lambda: ks.tolerations(operators=())),
    ("node-affinity-terms", lambda: ks.node_affinities(max_terms=0)),
    ("spread-skew", lambda: ks.topology_spread_constraints(min_skew=0)),
    ("spread-when", lambda: ks.topology_spread_constraints(when_unsatisfiable=())),
    ("container-name", lambda: ks.containers(name="")),
    ("pod-feature", lambda: ks.pods(features=("wings",))),
    ("pod-containers", lambda: ks.pods(min_containers=0)),
    ("pod-namespaces", lambda: ks.pods(namespaces=())),
    ("node-zones-string", lambda: ks.nodes(zones="zone-a")),
    ("node-feature", lambda: ks.nodes(features=("gpu",))),
    ("cluster-nodes", lambda: ks.clusters(min_nodes=3, max_nodes=1)),
    ("cluster-namespaces-duplicate", lambda: ks.clusters(namespaces=("a", "a"))),
]


@pytest.mark.parametrize("build", [b for _, b in BAD_ARGUMENTS], ids=[i for i, _ in BAD_ARGUMENTS])
def test_bad_arguments_fail_when_the_strategy_is_built(build: Callable[[], object]) -> None:
    with pytest.raises(InvalidArgument):
        build()


# --- st.from_type, through Hypothesis' entry point ------------------------------------------------

REGISTERED: list[type[Any]] = [Quantity, LabelSelector, NodeSelector, Taint, Toleration, NodeAffinity, PodAffinity,
                               Affinity, TopologySpreadConstraint, Container, Pod, Node, Namespace, Cluster]


@pytest.mark.parametrize("model_type", REGISTERED, ids=[t.__name__ for t in REGISTERED])
def test_from_type_uses_the_registered_strategies(model_type: type[Any]) -> None:
    _hypothesis_setup_hook()  # what the entry point runs (again: registering twice is harmless)

    @settings(max_examples=10)
    @given(st.from_type(model_type))
    def draws(value: object) -> None:
        assert isinstance(value, model_type)
        if isinstance(value, Pod):
            assert pod_from_dict(pod_to_dict(value)) == value

    draws()


# --- shrinking -----------------------------------------------------------------------------------


def test_clusters_shrink_to_a_small_readable_example() -> None:
    small = ks.clusters(max_nodes=2, max_bound_pods=2, max_pending_pods=1)
    cluster = find(small, lambda c: bool(c.bound_pods), settings=settings(database=None))
    assert len(cluster.nodes) == 1
    assert len(cluster.bound_pods) == 1
    assert not cluster.pending_pods
    assert all(not c.requests for p in cluster.pods for c in p.containers)
    assert len(to_yaml(cluster).splitlines()) < 50


def test_pods_shrink_toward_the_feature_asked_for() -> None:
    pod = find(ks.pods(), lambda p: bool(p.tolerations), settings=settings(database=None))
    assert len(pod.tolerations) == 1
    assert pod.tolerations[0].key == "dedicated"
    assert not pod.tolerations[0].effect
    assert pod.tolerations[0].toleration_seconds is None
    assert pod.affinity is None
    assert len(pod.containers) == 1
    assert pod.containers[0].requests == {}


def test_quantities_shrink_to_the_lower_bound_in_the_coarsest_suffix() -> None:
    assert str(find(ks.quantities(min_value="1Gi", max_value="8Gi"), lambda q: True)) == "1Gi"
    assert find(ks.quantities(min_value="250m", max_value="2"), lambda q: q.amount > 1).amount == Fraction(2)


MORE_BAD_ARGUMENTS: list[tuple[str, Callable[[], object]]] = [
    ("bool-flag", lambda: ks.node_affinities(required="yes")),  # type: ignore[arg-type]
    ("int-bound", lambda: ks.pods(max_containers=2.5)),  # type: ignore[arg-type]
    ("vocabulary-not-mapping", lambda: ks.label_sets(labels=["app"])),  # type: ignore[arg-type]
    ("vocabulary-empty-key", lambda: ks.label_sets(labels={"": ("x",)})),
    ("features-string", lambda: ks.pods(features="limits")),
    ("ranges-not-mapping", lambda: ks.resource_lists(resources=[("cpu", "1")])),  # type: ignore[arg-type]
    ("ranges-empty-name", lambda: ks.resource_lists(resources={"": ("0", "1")})),
    ("quantity-float", lambda: ks.quantities(max_value=1.5)),  # type: ignore[arg-type]
    ("names-not-strings", lambda: ks.nodes(zones=(1,))),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("build", [b for _, b in MORE_BAD_ARGUMENTS], ids=[i for i, _ in MORE_BAD_ARGUMENTS])
def test_more_bad_arguments(build: Callable[[], object]) -> None:
    with pytest.raises(InvalidArgument):
        build()
