"""Strategies for the objects of a cluster: containers, pods, nodes and namespaces.

Every object is valid as the API server would store it and "as read" by
:mod:`kschedlib.model.convert`: a limit always comes with a request (reading fills the request
from the limit), host ports are unique within a pod, taints unique per key and effect, and a
namespace carries its ``kubernetes.io/metadata.name`` label.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from types import MappingProxyType
from typing import Final, TypeVar

import attrs
from hypothesis import strategies as st

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.objects import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    Namespace,
    Node,
    Pod,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from kschedlib.model.quantity import Quantity
from kschedlib.model.resources import is_extended_resource, is_overcommit_allowed
from kschedlib.testing._affinity import (
    DEFAULT_NAMESPACE_LABELS,
    DEFAULT_NAMESPACES,
    DEFAULT_TOPOLOGY_KEYS,
    affinities,
    topology_spread_constraints,
)
from kschedlib.testing._basics import (
    DEFAULT_NODE_LABELS,
    DEFAULT_POD_LABELS,
    DEFAULT_REQUESTS,
    DEFAULT_TAINTS,
    DEFAULT_ZONES,
    HOSTNAME_LABEL,
    ZONE_LABEL,
    optional_parts,
    quantities_for,
    resource_lists,
    subsets,
)
from kschedlib.testing._labels import (
    label_sets,
    taints,
    tolerations,
)
from kschedlib.testing._validation import (
    ResourceRanges,
    Vocabulary,
    check_features,
    check_int_range,
    check_names,
    check_quantity_ranges,
    check_vocabulary,
)

__all__ = [
    "CONTAINER_FEATURES",
    "DEFAULT_ALLOCATABLE",
    "DEFAULT_IMAGES",
    "DEFAULT_NODE_FEATURES",
    "DEFAULT_POD_FEATURES",
    "NODE_FEATURES",
    "POD_FEATURES",
    "containers",
    "namespace_named",
    "namespaces",
    "node_named",
    "NodeParts",
    "node_parts",
    "nodes",
    "pods",
]

T = TypeVar("T")

DEFAULT_IMAGES: Final = ("nginx:1.25", "redis:7.2", "busybox:1.36")
DEFAULT_ALLOCATABLE: Final[ResourceRanges] = MappingProxyType({
    "cpu": ("1", "8"),
    "memory": ("1Gi", "16Gi"),
    "pods": (4, 110),
    "ephemeral-storage": ("10Gi", "100Gi"),
    "example.com/gpu": (1, 4),
})
"""Node allocatable ranges; ``cpu``, ``memory`` and ``pods`` always appear, the others sometimes."""
CONTAINER_FEATURES: Final = ("limits", "images", "ports", "host_ports")
POD_FEATURES: Final = (
    "limits", "images", "host_ports", "init_containers", "sidecars", "overhead", "priority", "node_selector",
    "node_affinity", "pod_affinity", "pod_anti_affinity", "tolerations", "topology_spread", "scheduling_gates",
)
DEFAULT_POD_FEATURES: Final = tuple(f for f in POD_FEATURES if f != "scheduling_gates")
NODE_FEATURES: Final = ("labels", "taints", "unschedulable", "images")
DEFAULT_NODE_FEATURES: Final = NODE_FEATURES
_ALWAYS_ALLOCATABLE: Final = ("cpu", "memory", "pods")
_IMAGE_SIZES: Final = st.sampled_from((50 * 2**20, 300 * 2**20, 800 * 2**20))
_OVERHEAD: Final[ResourceRanges] = MappingProxyType({"cpu": ("0", "250m"), "memory": ("0", "128Mi")})
_PRIORITIES: Final = st.sampled_from((0, 100, 1000))


# --- containers ------------------------------------------------------------------------------


@attrs.frozen(repr=False)
class _ContainerParts(FieldsRepr):
    name: str
    requests: st.SearchStrategy[dict[str, Quantity]]
    extra: dict[str, st.SearchStrategy[Quantity]]
    limited: st.SearchStrategy[tuple[str, ...]]
    images: st.SearchStrategy[str] | None
    present: st.SearchStrategy[frozenset[str]]


_HOST_PORTS: Final = st.sampled_from((8080, 9090))
_PROTOCOLS: Final = st.sampled_from(("TCP", "UDP"))
_CONTAINER_PORTS: Final = st.sampled_from((80, 8080, 443))
_ZERO: Final = Quantity(Fraction(0), "DecimalSI")


def _limits(draw: st.DrawFn, parts: _ContainerParts, requests: dict[str, Quantity]) -> dict[str, Quantity]:
    """Limits for some requested resources: the request plus a bit (exactly the request for extended ones)."""
    out: dict[str, Quantity] = {}
    for name in draw(parts.limited):
        request = requests.get(name)
        if request is not None:
            more = _ZERO if is_extended_resource(name) else draw(parts.extra[name])
            out[name] = request if not more.amount else Quantity(request.amount + more.amount, request.format)
    return out


def _container(draw: st.DrawFn, parts: _ContainerParts) -> Container:
    present = draw(parts.present)
    requests = draw(parts.requests)
    limits = _limits(draw, parts, requests) if "limits" in present else {}
    for name, amount in requests.items():  # the API server requires them (extended resources, hugepages)
        if not is_overcommit_allowed(name):
            limits.setdefault(name, amount)
    ports: tuple[ContainerPort, ...] = ()
    if "ports" in present:
        host_port = draw(_HOST_PORTS) if "host_ports" in present else 0
        ports = (ContainerPort(draw(_CONTAINER_PORTS), host_port, draw(_PROTOCOLS)),)
    image = draw(parts.images) if parts.images is not None else ""
    return Container(parts.name, image=image, requests=requests, limits=limits, ports=ports)


@st.composite
def _containers(draw: st.DrawFn, parts: _ContainerParts) -> Container:
    return _container(draw, parts)


def _container_parts(name: str, requests: ResourceRanges, images: Sequence[str], features: Sequence[str]
                     ) -> _ContainerParts:
    check_names("name", (name,))
    ranges = check_quantity_ranges("requests", requests)
    chosen = check_features("container", features, CONTAINER_FEATURES)
    image_names = check_names("images", images, allow_empty=True)
    optional = [f for f in ("limits", "ports", "host_ports")
                if f in chosen and (f != "host_ports" or "ports" in chosen)]
    return _ContainerParts(
        name=name,
        requests=resource_lists(resources=requests),
        extra=quantities_for({name: (_ZERO, high) for name, (_, high) in ranges.items()}),
        limited=subsets(tuple(ranges)),
        images=st.sampled_from(image_names) if "images" in chosen and image_names else None,
        present=optional_parts(optional, requires={"host_ports": "ports"}),
    )


def containers(
    *, name: str = "app", requests: ResourceRanges = DEFAULT_REQUESTS, images: Sequence[str] = DEFAULT_IMAGES,
    features: Sequence[str] = CONTAINER_FEATURES,
) -> st.SearchStrategy[Container]:
    """Containers named ``name`` with some of the ``requests`` resources (each within its range).

    ``features`` picks what may appear: ``limits`` (never below the request; equal to it for
    extended resources), ``images`` (from ``images``), ``ports`` and ``host_ports``.  An extended
    resource (or hugepages) always has its limit, equal to its request, as the API server requires.
    """
    return _containers(_container_parts(name, requests, images, features))


# --- pods ------------------------------------------------------------------------------------

_POD_PARTS: Final = ("init_containers", "sidecars", "overhead", "priority", "preemption_policy", "node_selector",
                     "affinity", "tolerations", "topology_spread", "scheduling_gates")
_REQUIRES: Final = {"sidecars": "init_containers", "preemption_policy": "priority"}


@attrs.frozen(repr=False)
class _PodParts(FieldsRepr):
    """The sub-strategies of :func:`pods`, built (and so validated) once."""

    name: str
    present: st.SearchStrategy[frozenset[str]]
    containers: _ContainerParts
    count: st.SearchStrategy[int]
    namespace: st.SearchStrategy[str]
    node_name: st.SearchStrategy[str]
    labels: st.SearchStrategy[dict[str, str]]
    node_selector: st.SearchStrategy[dict[str, str]]
    affinity: st.SearchStrategy[Affinity]
    tolerations: st.SearchStrategy[list[Toleration]]
    spread: st.SearchStrategy[list[TopologySpreadConstraint]]
    overhead: st.SearchStrategy[dict[str, Quantity]]


def _unique_host_ports(found: Sequence[Container]) -> tuple[Container, ...]:
    """Drop the host port of a container repeating an earlier (port, protocol): the API server refuses those."""
    seen: set[tuple[int, str]] = set()
    out = []
    for container in found:
        ports = []
        for port in container.ports:
            key = (port.host_port, port.protocol)
            if port.host_port and key in seen:
                port = attrs.evolve(port, host_port=0)
            seen.add(key)
            ports.append(port)
        out.append(attrs.evolve(container, ports=tuple(ports)))
    return tuple(out)


def _init_containers(draw: st.DrawFn, parts: _PodParts, present: frozenset[str]) -> tuple[Container, ...]:
    if "init_containers" not in present:
        return ()
    container = attrs.evolve(_container(draw, parts.containers), name="init", ports=())
    return (attrs.evolve(container, restart_policy="Always") if "sidecars" in present else container,)


@st.composite
def _pods(draw: st.DrawFn, parts: _PodParts) -> Pod:
    present = draw(parts.present)
    count = draw(parts.count)
    found = [attrs.evolve(_container(draw, parts.containers), name="app" if count == 1 else f"app-{i}")
             for i in range(count)]

    def part(name: str, strategy: st.SearchStrategy[T]) -> T | None:
        return draw(strategy) if name in present else None

    return Pod(
        name=parts.name,
        namespace=draw(parts.namespace),
        labels=draw(parts.labels),
        node_name=draw(parts.node_name),
        priority=part("priority", _PRIORITIES),
        preemption_policy="Never" if "priority" in present and "preemption_policy" in present else None,
        containers=_unique_host_ports(found),
        init_containers=_init_containers(draw, parts, present),
        overhead=part("overhead", parts.overhead),
        node_selector=part("node_selector", parts.node_selector),
        affinity=part("affinity", parts.affinity),
        tolerations=tuple(part("tolerations", parts.tolerations) or ()),
        topology_spread_constraints=tuple(part("topology_spread", parts.spread) or ()),
        scheduling_gates=("example.com/gate",) if "scheduling_gates" in present else (),
    )


def pods(
    *, name: str = "pod", namespaces: Sequence[str] = DEFAULT_NAMESPACES, labels: Vocabulary = DEFAULT_POD_LABELS,
    node_labels: Vocabulary = DEFAULT_NODE_LABELS, taints: Vocabulary = DEFAULT_TAINTS,
    topology_keys: Sequence[str] = DEFAULT_TOPOLOGY_KEYS, requests: ResourceRanges = DEFAULT_REQUESTS,
    images: Sequence[str] = DEFAULT_IMAGES, features: Sequence[str] = DEFAULT_POD_FEATURES,
    min_containers: int = 1, max_containers: int = 2, node_names: Sequence[str] = (),
) -> st.SearchStrategy[Pod]:
    """Pods named ``name`` in one of ``namespaces``, pending unless ``node_names`` is given (then bound to
    one of them, without any fit check: use :func:`clusters` for pods that fit their node).

    Each pod has ``min_containers`` to ``max_containers`` containers requesting some of ``requests``
    and labels from ``labels``. ``features`` (a subset of :data:`POD_FEATURES`) picks what may appear;
    each feature shows up in some pods only: ``limits``, ``images``, ``host_ports``, ``init_containers``,
    ``sidecars``, ``overhead``, ``priority`` (and ``preemptionPolicy``), ``node_selector`` and
    ``node_affinity`` (over ``node_labels``), ``pod_affinity`` and ``pod_anti_affinity`` (over
    ``labels``, ``namespaces`` and ``topology_keys``), ``tolerations`` (of ``taints``),
    ``topology_spread`` and ``scheduling_gates``. Shrinks toward one container with no requests and
    no optional feature.
    """
    chosen = check_features("pod", features, POD_FEATURES)
    check_int_range("min_containers", min_containers, "max_containers", max_containers, lowest=1)
    names = check_names("namespaces", namespaces)
    pod_words = check_vocabulary("labels", labels)
    node_words = check_vocabulary("node_labels", node_labels)
    node_name_choices = check_names("node_names", node_names, allow_empty=True)
    affinity_parts = {"node_affinity", "pod_affinity", "pod_anti_affinity"} & chosen
    enabled = {"preemption_policy"} | chosen | ({"affinity"} if affinity_parts else set())
    parts = _PodParts(
        name=check_names("name", (name,))[0],
        present=optional_parts([p for p in _POD_PARTS if p in enabled], requires=_REQUIRES),
        containers=_container_parts("app", requests, images,
                                    [f for f in CONTAINER_FEATURES if f in chosen or f == "ports"]),
        count=st.integers(min_containers, max_containers),
        namespace=st.sampled_from(names),
        node_name=st.sampled_from(node_name_choices) if node_name_choices else st.just(""),
        labels=label_sets(labels=pod_words, max_size=2),
        node_selector=label_sets(labels=node_words, min_size=1, max_size=2),
        affinity=affinities(
            node_affinity="node_affinity" in chosen, pod_affinity="pod_affinity" in chosen,
            pod_anti_affinity="pod_anti_affinity" in chosen, labels=pod_words, node_labels=node_words,
            namespaces=names, topology_keys=topology_keys,
        ).filter(lambda a: any((a.node_affinity, a.pod_affinity, a.pod_anti_affinity))),
        tolerations=st.lists(tolerations(keys=taints), min_size=1, max_size=2),
        spread=st.lists(topology_spread_constraints(labels=pod_words, topology_keys=topology_keys), min_size=1,
                        max_size=2, unique_by=lambda c: (c.topology_key, c.when_unsatisfiable)),
        overhead=resource_lists(resources=_OVERHEAD, min_size=1),
    )
    return _pods(parts)


# --- nodes and namespaces --------------------------------------------------------------------


@attrs.frozen(repr=False)
class NodeParts(FieldsRepr):
    """The validated arguments of :func:`nodes`, as strategies."""

    zone: st.SearchStrategy[str] | None
    present: st.SearchStrategy[frozenset[str]]
    labels: st.SearchStrategy[dict[str, str]] | None
    taints: st.SearchStrategy[list[Taint]]
    allocatable: dict[str, st.SearchStrategy[Quantity]]
    images: st.SearchStrategy[tuple[str, ...]]


def node_named(draw: st.DrawFn, name: str, parts: NodeParts) -> Node:
    """A node called ``name`` (labelled with it as its hostname), drawn from ``parts``."""
    present = draw(parts.present)
    labels = {HOSTNAME_LABEL: name}
    if parts.zone is not None:
        labels[ZONE_LABEL] = draw(parts.zone)
    if parts.labels is not None:
        labels.update(draw(parts.labels))
    allocatable = {resource: draw(strategy) for resource, strategy in parts.allocatable.items()
                   if resource in _ALWAYS_ALLOCATABLE or resource in present}
    images: tuple[ContainerImage, ...] = ()
    if "images" in present:
        images = tuple(ContainerImage((image,), draw(_IMAGE_SIZES)) for image in draw(parts.images))
    return Node(
        name=name,
        labels=labels,
        taints=tuple(draw(parts.taints)) if "taints" in present else (),
        unschedulable="unschedulable" in present,
        allocatable=allocatable,
        capacity=dict(allocatable),
        images=images,
    )


@st.composite
def _nodes(draw: st.DrawFn, name: str, parts: NodeParts) -> Node:
    return node_named(draw, name, parts)


def node_parts(
    *, zones: Sequence[str] = DEFAULT_ZONES, labels: Vocabulary = DEFAULT_NODE_LABELS,
    taint_keys: Vocabulary = DEFAULT_TAINTS, allocatable: ResourceRanges = DEFAULT_ALLOCATABLE,
    images: Sequence[str] = DEFAULT_IMAGES, features: Sequence[str] = DEFAULT_NODE_FEATURES,
) -> NodeParts:
    """Validate the arguments of :func:`nodes` (shared with :func:`~kschedlib.testing.strategies.clusters`)."""
    extra = {key: values for key, values in check_vocabulary("labels", labels).items()
             if key not in (HOSTNAME_LABEL, ZONE_LABEL)}
    ranges = check_quantity_ranges("allocatable", allocatable)
    chosen = check_features("node", features, NODE_FEATURES)
    zone_names = check_names("zones", zones, allow_empty=True)
    image_names = check_names("images", images, allow_empty=True)
    optional: list[str] = [f for f in ("taints", "unschedulable") if f in chosen]
    optional += ["images"] if "images" in chosen and image_names else []
    optional += [name for name in ranges if name not in _ALWAYS_ALLOCATABLE]
    return NodeParts(
        zone=st.sampled_from(zone_names) if zone_names else None,
        present=optional_parts(optional),
        labels=label_sets(labels=extra, max_size=2) if extra and "labels" in chosen else None,
        taints=st.lists(taints(keys=taint_keys), min_size=1, max_size=2, unique_by=lambda t: (t.key, t.effect)),
        allocatable=quantities_for(ranges),
        images=subsets(image_names, min_size=1, max_size=2) if image_names else st.just(()),
    )


def nodes(
    *, name: str = "node-0", zones: Sequence[str] = DEFAULT_ZONES, labels: Vocabulary = DEFAULT_NODE_LABELS,
    taints: Vocabulary = DEFAULT_TAINTS, allocatable: ResourceRanges = DEFAULT_ALLOCATABLE,
    images: Sequence[str] = DEFAULT_IMAGES, features: Sequence[str] = DEFAULT_NODE_FEATURES,
) -> st.SearchStrategy[Node]:
    """Nodes named ``name``, labelled with it as hostname and with one of ``zones`` (none if empty).

    Allocatable (= capacity) holds ``cpu``, ``memory`` and ``pods`` within their ``allocatable`` range,
    and sometimes the other resources listed there. ``features`` picks what may appear: ``labels``
    (from ``labels``, hostname and zone keys aside), ``taints`` (from ``taints``), ``unschedulable``
    and ``images`` (from ``images``).
    """
    check_names("name", (name,))
    parts = node_parts(zones=zones, labels=labels, taint_keys=taints, allocatable=allocatable, images=images,
                       features=features)
    return _nodes(name, parts)


def namespace_named(name: str, labels: dict[str, str]) -> Namespace:
    """The namespace ``name``, labelled as the API server does plus ``labels``."""
    return Namespace(name, {"kubernetes.io/metadata.name": name, **labels})


def namespaces(
    *, names: Sequence[str] = DEFAULT_NAMESPACES, labels: Vocabulary = DEFAULT_NAMESPACE_LABELS
) -> st.SearchStrategy[Namespace]:
    """Namespaces named one of ``names``, with ``kubernetes.io/metadata.name`` and some of ``labels``."""
    chosen = check_names("names", names)
    return st.builds(namespace_named, st.sampled_from(chosen), label_sets(labels=labels, max_size=1))
