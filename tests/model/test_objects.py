"""Model constructors convert unambiguous values and refuse wrong types with a ModelError (issue 11, defect 5)."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from types import MappingProxyType

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.errors import KschedError, ManifestError, ModelError, QuantityError
from kschedlib.model import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    Namespace,
    Node,
    Pod,
    PodCondition,
    PreferredSchedulingTerm,
    Quantity,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    parse_quantity,
)
from kschedlib.model._placed import placed
from kschedlib.model.labels import NodeSelectorTerm
from kschedlib.model.objects import PodAffinityTerm

REFUSED: list[tuple[str, Callable[[], object], str, object]] = [
    ("pod priority as text", lambda: Pod("p", priority="high"), "priority", "high"),  # type: ignore[arg-type]
    ("pod priority as bool", lambda: Pod("p", priority=True), "priority", True),
    ("pod name None", lambda: Pod(None), "name", None),  # type: ignore[arg-type]
    ("pod namespace int", lambda: Pod("p", namespace=3), "namespace", 3),  # type: ignore[arg-type]
    ("pod node_name None", lambda: Pod("p", node_name=None), "node_name", None),  # type: ignore[arg-type]
    ("pod label value int", lambda: Pod("p", labels={"a": 1}), "labels['a']", 1),  # type: ignore[dict-item]
    ("pod label key int", lambda: Pod("p", labels={1: "a"}), "labels", 1),  # type: ignore[dict-item]
    ("pod labels a list", lambda: Pod("p", labels=["a"]), "labels", ["a"]),  # type: ignore[arg-type]
    ("pod container a dict", lambda: Pod("p", containers=({"name": "c"},)), "containers[0]",  # type: ignore[arg-type]
     {"name": "c"}),
    ("pod containers a string", lambda: Pod("p", containers="c"), "containers", "c"),  # type: ignore[arg-type]
    ("pod host_network text", lambda: Pod("p", host_network="yes"), "host_network", "yes"),  # type: ignore[arg-type]
    ("pod gate int", lambda: Pod("p", scheduling_gates=(1,)), "scheduling_gates[0]", 1),  # type: ignore[arg-type]
    ("pod affinity dict", lambda: Pod("p", affinity={}), "affinity", {}),  # type: ignore[arg-type]
    ("pod start_time text", lambda: Pod("p", start_time="now"), "start_time", "now"),  # type: ignore[arg-type]
    ("node name None", lambda: Node(None), "name", None),  # type: ignore[arg-type]
    ("node resource key int", lambda: Node("n", allocatable={1: "1"}), "allocatable", 1),  # type: ignore[dict-item]
    ("pod with affinity, priority text", lambda: Pod("p", affinity=Affinity(), priority="1"),  # type: ignore[arg-type]
     "priority", "1"),
    ("node unschedulable int", lambda: Node("n", unschedulable=1), "unschedulable", 1),  # type: ignore[arg-type]
    ("node taint a tuple", lambda: Node("n", taints=(("k", "NoSchedule"),)), "taints[0]",  # type: ignore[arg-type]
     ("k", "NoSchedule")),
    ("node condition None", lambda: Node("n", conditions={"Ready": None}), "conditions['Ready']",  # type: ignore[dict-item]
     None),
    ("container name None", lambda: Container(None), "name", None),  # type: ignore[arg-type]
    ("container port text", lambda: Container("c", ports=(80,)), "ports[0]", 80),  # type: ignore[arg-type]
    ("container requests list", lambda: Container("c", requests=["cpu"]), "requests", ["cpu"]),  # type: ignore[arg-type]
    ("port number text", lambda: ContainerPort("80"), "container_port", "80"),  # type: ignore[arg-type]
    ("taint key None", lambda: Taint(None, "NoSchedule"), "key", None),  # type: ignore[arg-type]
    ("toleration seconds text", lambda: Toleration("k", toleration_seconds="5"), "toleration_seconds",  # type: ignore[arg-type]
     "5"),
    ("image size text", lambda: ContainerImage(("i",), size_bytes="1"), "size_bytes", "1"),  # type: ignore[arg-type]
    ("namespace labels int", lambda: Namespace("ns", labels={"a": 2}), "labels['a']", 2),  # type: ignore[dict-item]
    ("spread skew text", lambda: TopologySpreadConstraint("1", "zone", "DoNotSchedule"), "max_skew",  # type: ignore[arg-type]
     "1"),
    ("condition status bool", lambda: PodCondition("Ready", True), "status", True),  # type: ignore[arg-type]
    ("preferred weight float", lambda: PreferredSchedulingTerm(1.5, NodeSelectorTerm()), "weight",  # type: ignore[arg-type]
     1.5),
    ("weighted term weight None", lambda: WeightedPodAffinityTerm(None, PodAffinityTerm("zone")), "weight",  # type: ignore[arg-type]
     None),
]


@pytest.mark.parametrize(("build", "field", "value"), [case[1:] for case in REFUSED], ids=[c[0] for c in REFUSED])
def test_a_wrong_type_is_refused_naming_the_field_and_value(build: Callable[[], object], field: str,
                                                             value: object) -> None:
    with pytest.raises(ModelError) as caught:
        build()
    assert caught.value.field == field
    assert caught.value.value == value
    assert f"field {field}" in str(caught.value)
    assert repr(value) in str(caught.value)


def test_the_error_names_the_object_and_is_every_natural_kind() -> None:
    with pytest.raises(ModelError) as caught:
        Pod("web-1", namespace="shop", priority="high")  # type: ignore[arg-type]
    err = caught.value
    assert str(err) == "Pod shop/web-1, field priority: must be an int or None (got 'high')"
    assert err.obj == "Pod shop/web-1"
    assert isinstance(err, TypeError)
    assert isinstance(err, ValueError)
    assert isinstance(err, ManifestError)
    assert isinstance(err, KschedError)


def test_none_as_a_value_is_shown() -> None:
    with pytest.raises(ModelError, match=r"Node, field name: must be a string \(got None\)"):
        Node(None)  # type: ignore[arg-type]


QUANTITIES = [("text", "4", 4000), ("int", 4, 4000), ("float", 0.5, 500), ("milli text", "250m", 250)]


@pytest.mark.parametrize(("given", "milli"), [c[1:] for c in QUANTITIES], ids=[c[0] for c in QUANTITIES])
def test_a_quantity_given_as_text_or_number_is_converted(given: object, milli: int) -> None:
    container = Container("c", requests={"cpu": given})  # type: ignore[dict-item]
    assert isinstance(container.requests["cpu"], Quantity)
    assert container.requests["cpu"].milli_value() == milli
    node = Node("n", allocatable={"cpu": given}, capacity={"cpu": given})  # type: ignore[dict-item]
    assert node.allocatable["cpu"] == parse_quantity(given)  # type: ignore[arg-type]
    pod = Pod("p", overhead={"cpu": given})  # type: ignore[dict-item]
    assert pod.overhead == {"cpu": parse_quantity(given)}  # type: ignore[arg-type]


def test_a_malformed_quantity_is_a_quantity_error_naming_the_field() -> None:
    with pytest.raises(QuantityError) as caught:
        Container("c", limits={"memory": "lots"})  # type: ignore[dict-item]
    assert caught.value.obj == "Container c"
    assert caught.value.field == "limits['memory']"
    assert caught.value.value == "lots"
    with pytest.raises(QuantityError):
        Node("n", allocatable={"cpu": True})  # type: ignore[dict-item]


def test_none_maps_become_empty_and_lists_become_tuples() -> None:
    node = Node("n", labels=None, annotations=None, conditions=None, allocatable=None,  # type: ignore[arg-type]
                taints=[Taint("k", "NoSchedule")])  # type: ignore[arg-type]
    assert (node.labels, node.annotations, node.conditions, node.allocatable) == ({}, {}, {}, {})
    assert node.taints == (Taint("k", "NoSchedule"),)
    pod = Pod("p", labels=None, containers=[Container("c")], scheduling_gates=["g"])  # type: ignore[arg-type]
    assert pod.labels == {}
    assert pod.containers == (Container("c"),)
    assert pod.scheduling_gates == ("g",)
    assert ContainerImage(["a", "b"]).names == ("a", "b")  # type: ignore[arg-type]


def test_optional_fields_keep_none_and_other_mappings_are_accepted() -> None:
    pod = Pod("p", node_selector=None, overhead=None, affinity=Affinity(), start_time=3)
    assert pod.node_selector is None
    assert pod.overhead is None
    labels = MappingProxyType({"a": "b"})
    assert Pod("p", labels=labels).labels is labels
    assert Node("n", labels=labels).labels is labels


def test_a_well_typed_object_is_kept_as_given() -> None:
    requests = {"cpu": parse_quantity("1")}
    labels = {"app": "web"}
    container = Container("c", requests=requests)
    pod = Pod("p", labels=labels, containers=(container,))
    assert container.requests is requests
    assert pod.labels is labels


def test_evolve_checks_the_new_value_too() -> None:
    pod = Pod("p")
    with pytest.raises(ModelError, match="priority"):
        attrs.evolve(pod, priority="high")  # type: ignore[arg-type]  # a str priority is the refusal checked
    assert attrs.evolve(pod, priority=7).priority == 7


_NAMES = st.text(st.characters(codec="ascii", exclude_characters="/"), min_size=1, max_size=8)


@given(_NAMES, _NAMES, _NAMES, st.booleans())
def test_a_pods_key_is_its_namespace_and_name_however_it_was_made(
        name: str, namespace: str, renamed: str, with_uid: bool) -> None:
    """The key is built once per pod; copies (evolve, placed, pickling) keep or rebuild it correctly."""
    pod = Pod(name, namespace=namespace, uid="u" if with_uid else "")
    assert pod.key == f"{namespace}/{name}"
    assert pod.uid == ("u" if with_uid else pod.key)
    assert placed(pod, "node_name", "n").key == pod.key
    assert attrs.evolve(pod, name=renamed).key == f"{namespace}/{renamed}"
    assert attrs.evolve(pod, namespace=renamed).key == f"{renamed}/{name}"
    assert pickle.loads(pickle.dumps(pod)).key == pod.key
    assert pod == Pod(name, namespace=namespace, uid=pod.uid)
    assert "_key" not in repr(pod)
