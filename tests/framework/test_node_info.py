"""NodeInfo (reference §1.5): aggregates kept by with_pod/without_pod, ports, generations, removal order."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.errors import CacheError
from kschedlib.framework import ImageState, NodeInfo, PodInfo
from kschedlib.framework.node_info import next_generation, ports_conflict
from kschedlib.model import (
    Affinity,
    Container,
    ContainerPort,
    LabelSelector,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    Resources,
    WeightedPodAffinityTerm,
    parse_quantity,
)
from tests.helpers import make_node, make_pod

MI = 1024 * 1024
DEFAULT_CPU = 100
DEFAULT_MEMORY = 200 * MI


def info_of(*pods: Pod) -> NodeInfo:
    return NodeInfo.of(make_node("n1"), tuple(PodInfo.of(p) for p in pods))


def names(infos: tuple[PodInfo, ...]) -> list[str]:
    return [i.pod.name for i in infos]


def port_pod(name: str, *ports: tuple[int, str, str]) -> Pod:
    """A pod whose container exposes ``(host_port, protocol, host_ip)`` entries."""
    container = Container("c", ports=tuple(ContainerPort(p, host_port=p, protocol=proto, host_ip=ip)
                                           for p, proto, ip in ports))
    return Pod(name, containers=(container,))


def affinity_pod(name: str, *, required_anti: bool = False, preferred: bool = False) -> Pod:
    term = PodAffinityTerm("kubernetes.io/hostname", LabelSelector({"app": "x"}))
    if required_anti:
        affinity = Affinity(pod_anti_affinity=PodAffinity(required=(term,)))
    elif preferred:
        affinity = Affinity(pod_affinity=PodAffinity(preferred=(WeightedPodAffinityTerm(5, term),)))
    else:
        affinity = Affinity(pod_affinity=PodAffinity(required=(term,)))
    return Pod(name, affinity=affinity, containers=(Container("c"),))


def normalized(resources: Resources) -> tuple[int, int, int, dict[str, int]]:
    """Resources without zero scalars (kube keeps a removed scalar at 0, which means the same)."""
    return (resources.milli_cpu, resources.memory, resources.ephemeral_storage,
            {k: v for k, v in resources.scalar.items() if v})


# --- construction -----------------------------------------------------------------------------


def test_of_reads_allocatable_and_starts_empty() -> None:
    info = NodeInfo.of(make_node("n1", allocatable={"cpu": "2500m", "memory": "1Gi", "pods": "7",
                                                    "nvidia.com/gpu": "2"}))
    assert info.name == "n1"
    assert info.pods == ()
    assert info.requested == Resources()
    assert info.non_zero_requested == Resources()
    assert (info.allocatable.milli_cpu, info.allocatable.memory, info.allocatable.allowed_pod_number) == \
        (2500, 1024 * MI, 7)
    assert info.allocatable.scalar == {"nvidia.com/gpu": 2}
    assert info.used_ports == {}


def test_ghost_has_no_name_and_no_allocatable() -> None:
    ghost = NodeInfo.of(None)
    assert ghost.name == ""
    assert ghost.allocatable == Resources()


# --- aggregates -------------------------------------------------------------------------------

REQUESTS = [
    # id, requests, requested (milli_cpu, memory), non-zero (milli_cpu, memory)
    ("none-gets-defaults", {}, (0, 0), (DEFAULT_CPU, DEFAULT_MEMORY)),
    ("cpu-only", {"cpu": "250m"}, (250, 0), (250, DEFAULT_MEMORY)),
    ("memory-only", {"memory": "1Gi"}, (0, 1024 * MI), (DEFAULT_CPU, 1024 * MI)),
    ("explicit-zero-kept", {"cpu": "0", "memory": "0"}, (0, 0), (0, 0)),
    ("both", {"cpu": "2", "memory": "3Mi"}, (2000, 3 * MI), (2000, 3 * MI)),
]


@pytest.mark.parametrize(("requests", "requested", "non_zero"), [r[1:] for r in REQUESTS],
                         ids=[r[0] for r in REQUESTS])
def test_with_pod_adds_requests_and_non_zero_requests(
    requests: dict[str, str], requested: tuple[int, int], non_zero: tuple[int, int]
) -> None:
    info = info_of(make_pod("p", requests=requests))
    assert (info.requested.milli_cpu, info.requested.memory) == requested
    assert (info.non_zero_requested.milli_cpu, info.non_zero_requested.memory) == non_zero


def test_with_pod_sums_over_pods_including_scalars() -> None:
    info = info_of(
        make_pod("a", requests={"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}),
        make_pod("b", requests={"cpu": "500m", "ephemeral-storage": "1Gi", "nvidia.com/gpu": "2"}),
        make_pod("c"),
    )
    assert info.requested.milli_cpu == 1500
    assert info.requested.memory == 1024 * MI
    assert info.requested.ephemeral_storage == 1024 * MI
    assert info.requested.scalar == {"nvidia.com/gpu": 3}
    assert info.non_zero_requested.milli_cpu == 1000 + 500 + DEFAULT_CPU
    assert info.non_zero_requested.memory == 1024 * MI + DEFAULT_MEMORY + DEFAULT_MEMORY
    assert names(info.pods) == ["a", "b", "c"]


def test_with_pod_does_not_change_the_original() -> None:
    empty = info_of()
    full = empty.with_pod(PodInfo.of(make_pod("a", requests={"cpu": "1"}, host_ports=[80])))
    assert empty.pods == ()
    assert empty.requested == Resources()
    assert empty.used_ports == {}
    assert full.requested.milli_cpu == 1000


def test_without_pod_subtracts_exactly() -> None:
    a = make_pod("a", requests={"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"})
    b = make_pod("b", requests={"cpu": "300m"})
    info = info_of(a, b).without_pod(a)
    assert normalized(info.requested) == normalized(info_of(b).requested)
    assert info.non_zero_requested == info_of(b).non_zero_requested
    assert names(info.pods) == ["b"]


def test_without_pod_finds_the_pod_by_uid() -> None:
    a = make_pod("a", uid="uid-1")
    renamed = make_pod("renamed", uid="uid-1")
    assert info_of(a).without_pod(renamed).pods == ()


def test_without_an_unknown_pod_is_a_cache_error() -> None:
    with pytest.raises(CacheError, match="no corresponding pod ghost in pods of node n1"):
        info_of(make_pod("a")).without_pod(make_pod("ghost"))


# --- "the last pod fills the hole" ------------------------------------------------------------

REMOVALS = [
    # id, pods, removed, remaining order
    ("first", "abcd", "a", "dbc"),
    ("middle", "abcd", "b", "adc"),
    ("last", "abcd", "d", "abc"),
    ("only", "a", "a", ""),
    ("two-first", "ab", "a", "b"),
]


@pytest.mark.parametrize(("pods", "removed", "remaining"), [r[1:] for r in REMOVALS], ids=[r[0] for r in REMOVALS])
def test_last_pod_fills_the_hole(pods: str, removed: str, remaining: str) -> None:
    info = info_of(*(make_pod(name) for name in pods)).without_pod(make_pod(removed))
    assert "".join(names(info.pods)) == remaining


def test_affinity_subsets_also_fill_the_hole_with_their_last_entry() -> None:
    pods = [affinity_pod("a"), affinity_pod("b", required_anti=True), make_pod("plain"),
            affinity_pod("c", preferred=True), affinity_pod("d", required_anti=True)]
    info = info_of(*pods)
    assert names(info.pods_with_affinity) == ["a", "b", "c", "d"]
    assert names(info.pods_with_required_anti_affinity) == ["b", "d"]
    info = info.without_pod(pods[0])
    assert names(info.pods) == ["d", "b", "plain", "c"]
    assert names(info.pods_with_affinity) == ["d", "b", "c"]
    info = info.without_pod(pods[1])
    assert names(info.pods_with_required_anti_affinity) == ["d"]
    assert names(info.pods_with_affinity) == ["d", "c"]


AFFINITY = [
    ("required-affinity", affinity_pod("p"), True, False),
    ("required-anti-affinity", affinity_pod("p", required_anti=True), True, True),
    ("preferred-affinity-only", affinity_pod("p", preferred=True), True, False),
    ("none", make_pod("p"), False, False),
    ("empty-affinity", Pod("p", affinity=Affinity()), False, False),
]


@pytest.mark.parametrize(("pod", "with_affinity", "with_anti"), [a[1:] for a in AFFINITY], ids=[a[0] for a in AFFINITY])
def test_affinity_subsets(pod: Pod, with_affinity: bool, with_anti: bool) -> None:
    info = info_of(pod)
    assert bool(info.pods_with_affinity) == with_affinity
    assert bool(info.pods_with_required_anti_affinity) == with_anti


# --- ports ------------------------------------------------------------------------------------


def test_ports_default_ip_and_protocol() -> None:
    info = info_of(port_pod("p", (80, "", ""), (53, "UDP", "10.0.0.1")))
    assert info.used_ports == {"0.0.0.0": frozenset({("TCP", 80)}), "10.0.0.1": frozenset({("UDP", 53)})}


def test_container_ports_without_host_port_are_not_used() -> None:
    pod = Pod("p", containers=(Container("c", ports=(ContainerPort(8080),)),))
    assert info_of(pod).used_ports == {}


def test_init_container_ports_are_not_counted() -> None:
    init = Container("i", ports=(ContainerPort(81, host_port=81),), restart_policy="Always")
    pod = Pod("p", containers=(Container("c"),), init_containers=(init,))
    assert info_of(pod).used_ports == {}


def test_removing_a_pod_releases_its_ports_and_drops_empty_ips() -> None:
    a = port_pod("a", (80, "TCP", "10.0.0.1"))
    b = port_pod("b", (81, "TCP", "0.0.0.0"))
    info = info_of(a, b)
    assert info.without_pod(a).used_ports == {"0.0.0.0": frozenset({("TCP", 81)})}
    assert info.without_pod(a).without_pod(b).used_ports == {}


CONFLICTS = [
    # id, used, wanted (ip, protocol, port), conflict
    ("any-ip-vs-any-ip", {"0.0.0.0": {("TCP", 80)}}, ("0.0.0.0", "TCP", 80), True),
    ("any-ip-wanted-vs-specific-used", {"10.0.0.1": {("TCP", 80)}}, ("0.0.0.0", "TCP", 80), True),
    ("specific-wanted-vs-any-ip-used", {"0.0.0.0": {("TCP", 80)}}, ("10.0.0.1", "TCP", 80), True),
    ("same-specific-ip", {"10.0.0.1": {("TCP", 80)}}, ("10.0.0.1", "TCP", 80), True),
    ("different-specific-ips", {"10.0.0.1": {("TCP", 80)}}, ("10.0.0.2", "TCP", 80), False),
    ("different-protocol", {"0.0.0.0": {("TCP", 80)}}, ("0.0.0.0", "UDP", 80), False),
    ("different-port", {"0.0.0.0": {("TCP", 80)}}, ("0.0.0.0", "TCP", 81), False),
    ("nothing-used", {}, ("0.0.0.0", "TCP", 80), False),
]


@pytest.mark.parametrize(("used", "wanted", "conflict"), [c[1:] for c in CONFLICTS], ids=[c[0] for c in CONFLICTS])
def test_ports_conflict(used: dict[str, set[tuple[str, int]]], wanted: tuple[str, str, int], conflict: bool) -> None:
    frozen = {ip: frozenset(entries) for ip, entries in used.items()}
    assert ports_conflict(frozen, *wanted) is conflict


# --- generations ------------------------------------------------------------------------------


def test_every_mutation_takes_a_fresh_larger_generation() -> None:
    pod = make_pod("a")
    steps = [info_of()]
    steps.append(steps[-1].with_pod(PodInfo.of(pod)))
    steps.append(steps[-1].with_node(make_node("n1", allocatable={"cpu": "8", "memory": "1Gi", "pods": "3"})))
    steps.append(steps[-1].without_pod(pod))
    steps.append(steps[-1].with_node(None))
    generations = [s.generation for s in steps]
    assert generations == sorted(generations)
    assert len(set(generations)) == len(generations)


def test_generations_are_process_wide_and_never_reused() -> None:
    a = NodeInfo.of(make_node("a"))
    b = NodeInfo.of(make_node("b"))
    assert b.generation > a.generation
    assert next_generation() > b.generation


def test_with_image_states_keeps_the_generation() -> None:
    info = info_of(make_pod("a"))
    imaged = info.with_image_states({"img": ImageState(100, 2)})
    assert imaged.generation == info.generation
    assert imaged.image_states == {"img": ImageState(100, 2)}
    assert info.image_states == {}


def test_with_node_keeps_pods_and_updates_allocatable() -> None:
    info = info_of(make_pod("a", requests={"cpu": "1"}))
    bigger = info.with_node(make_node("n1", allocatable={"cpu": "16", "memory": "1Gi", "pods": "5"}))
    assert names(bigger.pods) == ["a"]
    assert bigger.requested == info.requested
    assert bigger.allocatable.milli_cpu == 16000
    ghost = info.with_node(None)
    assert ghost.name == ""
    assert ghost.allocatable == Resources()
    assert names(ghost.pods) == ["a"]


def test_has_pod() -> None:
    info = info_of(make_pod("a", uid="u1"))
    assert info.has_pod("u1")
    assert not info.has_pod("u2")


def test_node_info_is_immutable() -> None:
    info = info_of()
    with pytest.raises(AttributeError):
        info.pods = ()  # type: ignore[misc]


# --- property: any sequence of adds and removes equals a fresh NodeInfo -----------------------

QUANTITIES = st.sampled_from(["0", "100m", "1", "1500m", "3"])
MEMORIES = st.sampled_from(["0", "1Mi", "1Gi", "300Mi"])


@st.composite
def pods(draw: st.DrawFn, index: int) -> Pod:
    requests: dict[str, str] = {}
    if draw(st.booleans()):
        requests["cpu"] = draw(QUANTITIES)
    if draw(st.booleans()):
        requests["memory"] = draw(MEMORIES)
    if draw(st.booleans()):
        requests["example.com/foo"] = draw(st.sampled_from(["1", "2"]))
    ports = [(8000 + index, draw(st.sampled_from(["TCP", "UDP"])), draw(st.sampled_from(["", "10.0.0.1"])))] \
        if draw(st.booleans()) else []
    container = Container("c", requests={k: parse_quantity(v) for k, v in requests.items()},
                          ports=tuple(ContainerPort(p, host_port=p, protocol=proto, host_ip=ip)
                                      for p, proto, ip in ports))
    kind = draw(st.sampled_from(["plain", "affinity", "anti"]))
    affinity = None
    if kind != "plain":
        base = affinity_pod("x", required_anti=kind == "anti")
        affinity = base.affinity
    return Pod(f"p{index}", containers=(container,), affinity=affinity)


@settings(max_examples=60)
@given(st.data())
def test_adds_and_removes_match_a_fresh_node_info(data: st.DataObject) -> None:
    info = info_of()
    model: list[Pod] = []
    for index in range(data.draw(st.integers(0, 12), label="steps")):
        remove: bool = data.draw(st.booleans(), label="remove") if model else False
        if remove:
            victim = data.draw(st.sampled_from(model), label="victim")
            at = model.index(victim)
            model[at] = model[-1]
            model.pop()
            info = info.without_pod(victim)
        else:
            pod = data.draw(pods(index), label="pod")
            model.append(pod)
            info = info.with_pod(PodInfo.of(pod))
    fresh = info_of(*model)
    assert names(info.pods) == [p.name for p in model]
    assert normalized(info.requested) == normalized(fresh.requested)
    assert info.non_zero_requested == fresh.non_zero_requested
    assert info.used_ports == fresh.used_ports
    assert Counter(names(info.pods_with_affinity)) == Counter(names(fresh.pods_with_affinity))
    assert Counter(names(info.pods_with_required_anti_affinity)) == \
        Counter(names(fresh.pods_with_required_anti_affinity))
