"""NodeResourcesBalancedAllocation: the std-dev score (§9.9), its args and validation."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.errors import ConfigError
from kschedlib.framework import CycleState, NodeInfo
from kschedlib.model import Container, Pod, Resources, parse_quantity
from kschedlib.plugins.node_resources_balanced_allocation import (
    PRE_SCORE_KEY,
    NodeResourcesBalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
    _node_balance,
    _node_balances,
    _two_balances,
    balanced_score,
    decode_args,
)
from kschedlib.plugins.node_resources_fit import DEFAULT_RESOURCES, ResourceSpec
from kschedlib.plugins.node_resources_fit.scoring import pod_resource_entries
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

GPU = "nvidia.com/gpu"


def plugin(*resources: str) -> NodeResourcesBalancedAllocation:
    args = (
        NodeResourcesBalancedAllocationArgs(tuple(ResourceSpec(r) for r in resources)) if resources else None
    )
    return NodeResourcesBalancedAllocation(args, FakeHandle(kube_version="1.30"))


def run_score(pl: NodeResourcesBalancedAllocation, pod: Pod, info: NodeInfo) -> int:
    state = CycleState()
    assert pl.pre_score(state, pod, [info]).is_success
    return pl.score(state, pod, info)


def node(alloc: Mapping[str, str], *pods: Pod) -> NodeInfo:
    return node_info(make_node("n", allocatable=alloc), *pods)


def existing(**requests: str) -> Pod:
    return make_pod("e", uid="e", requests={k.replace("_", "-"): v for k, v in requests.items()})


CASES: list[tuple[str, Sequence[str], Pod, NodeInfo, int]] = [
    (
        "worked-87",
        (),
        make_pod("p", requests={"cpu": "500m", "memory": "1Gi"}),
        node({"cpu": "4", "memory": "8Gi"}, existing(cpu="1", memory="4Gi")),
        87,
    ),
    (
        "worked-75-three-resources",
        ("cpu", "memory", GPU),
        make_pod("p", requests={"cpu": "800m", GPU: "1"}),
        node({"cpu": "4", "memory": "8Gi", GPU: "5"}, existing(memory="4Gi", **{"nvidia.com/gpu": "3"})),
        75,
    ),
    (
        "worked-equal-100",
        (),
        make_pod("p", requests={"cpu": "1", "memory": "2Gi"}),
        node({"cpu": "4", "memory": "8Gi"}),
        100,
    ),
    (
        "no-defaulting-for-missing-requests",
        (),
        make_pod("p", requests={"memory": "4Gi"}),
        node({"cpu": "4", "memory": "8Gi"}, existing()),
        75,
    ),
    (
        "fraction-capped-at-1",
        (),
        make_pod("p", requests={"cpu": "8", "memory": "4Gi"}),
        node({"cpu": "4", "memory": "8Gi"}),
        75,
    ),
    ("single-resource-is-100", (), make_pod("p", requests={"cpu": "1"}), node({"cpu": "4"}), 100),
    (
        "scalar-not-requested-skipped",
        ("cpu", "memory", GPU),
        make_pod("p", requests={"cpu": "1", "memory": "2Gi"}),
        node({"cpu": "4", "memory": "8Gi", GPU: "4"}),
        100,
    ),
    (
        "scalar-missing-on-node-skipped",
        ("cpu", GPU),
        make_pod("p", requests={"cpu": "1", GPU: "1"}),
        node({"cpu": "4"}),
        100,
    ),
    (
        "ephemeral-storage",
        ("cpu", "ephemeral-storage"),
        make_pod("p", requests={"cpu": "1", "ephemeral-storage": "1Gi"}),
        node({"cpu": "4", "ephemeral-storage": "2Gi"}, existing(ephemeral_storage="1Gi")),
        62,
    ),
    ("nothing-allocatable-is-100", (), make_pod("p", requests={"cpu": "1"}), node({}), 100),
]


@pytest.mark.parametrize(
    ("resources", "pod", "info", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_score(resources: Sequence[str], pod: Pod, info: NodeInfo, expected: int) -> None:
    assert run_score(plugin(*resources), pod, info) == expected


@pytest.mark.parametrize(
    ("fractions", "expected"),
    [
        ([], 100),
        ([0.3], 100),
        ([0.375, 0.625], 87),
        ([0.625, 0.375], 87),
        ([0.2, 0.5, 0.8], 75),
        ([0.5, 0.5, 0.5, 0.5], 100),
        ([0.0, 1.0], 50),
        ([0.0, 0.0, 1.0], 52),
    ],
    ids=["none", "one", "two", "two-reversed", "three", "four-equal", "extremes", "three-extremes"],
)
def test_balanced_score(fractions: list[float], expected: int) -> None:
    assert balanced_score(fractions) == expected


def test_score_without_pre_score_computes_requests() -> None:
    pod = make_pod("p", requests={"cpu": "500m", "memory": "1Gi"})
    info = node({"cpu": "4", "memory": "8Gi"}, existing(cpu="1", memory="4Gi"))
    assert plugin().score(CycleState(), pod, info) == 87


def test_pre_score_state_holds_plain_requests() -> None:
    state = CycleState()
    pod = Pod("p", containers=(Container("c", requests={"memory": parse_quantity("1Gi")}),))
    plugin().pre_score(state, pod, [])
    value = state.read(PRE_SCORE_KEY)
    assert value.clone() is value
    assert [(name, amount) for _, name, _, amount in value.entries] == [("cpu", 0), ("memory", 1 << 30)]


def test_score_with_no_resources_raises() -> None:
    pl = NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs(()), FakeHandle(kube_version="1.30"))
    with pytest.raises(RuntimeError, match="resources not found"):
        run_score(pl, make_pod("p"), node({"cpu": "1"}))


# --- args -------------------------------------------------------------------------------------


def test_default_args() -> None:
    expected = NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 1), ResourceSpec("memory", 1)))
    assert decode_args(None) == expected
    assert decode_args({}) == expected
    assert decode_args({"resources": []}) == expected
    assert decode_args({"kind": "NodeResourcesBalancedAllocationArgs", "resources": None}) == expected
    assert NodeResourcesBalancedAllocationArgs() == expected


def test_decode_resources_defaults_weight_to_1() -> None:
    args = decode_args(
        {"resources": [{"name": "cpu"}, {"name": GPU, "weight": 0}, {"name": "memory", "weight": 1}]}
    )
    assert args.resources == (("cpu", 1), (GPU, 1), ("memory", 1))


INVALID: list[tuple[str, dict[str, Any], str, str]] = [
    ("weight-2", {"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight", "must be 1"),
    (
        "weight-negative",
        {"resources": [{"name": "cpu"}, {"name": "memory", "weight": -1}]},
        "resources[1].weight",
        "must be 1",
    ),
    (
        "duplicate-name",
        {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "cpu"}]},
        "resources[2].name",
        "Duplicate value",
    ),
    ("not-a-list", {"resources": {"name": "cpu"}}, "resources", "must be of type list"),
    (
        "weight-not-int",
        {"resources": [{"name": "cpu", "weight": 1.5}]},
        "resources[0].weight",
        "must be of type int",
    ),
]


@pytest.mark.parametrize(("raw", "field", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_args(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args(raw)
    assert info.value.field == field
    assert info.value.message == message


def test_constructor_validates_args() -> None:
    with pytest.raises(ConfigError, match="must be 1"):
        NodeResourcesBalancedAllocation(
            NodeResourcesBalancedAllocationArgs((ResourceSpec("cpu", 3),)), FakeHandle(kube_version="1.30")
        )


# --- properties -------------------------------------------------------------------------------

fractions_st = st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=6)


@settings(max_examples=300, deadline=None)
@given(fractions_st)
def test_balanced_score_within_range_and_matches_population_std(fractions: list[float]) -> None:
    score = balanced_score(fractions)
    assert 0 <= score <= 100
    if len(fractions) >= 2:
        mean = math.fsum(fractions) / len(fractions)
        std = math.sqrt(math.fsum((f - mean) ** 2 for f in fractions) / len(fractions))
        assert abs(score - (1 - std) * 100) <= 1 + 1e-9


@settings(max_examples=200, deadline=None)
@given(
    pod_req=st.tuples(st.integers(0, 10_000), st.integers(0, 1 << 34), st.integers(0, 8)),
    alloc=st.tuples(st.integers(0, 8_000), st.integers(0, 1 << 34), st.integers(0, 8)),
    used=st.tuples(st.integers(0, 10_000), st.integers(0, 1 << 34), st.integers(0, 8)),
)
def test_plugin_score_within_range(
    pod_req: tuple[int, int, int], alloc: tuple[int, int, int], used: tuple[int, int, int]
) -> None:
    pod = Pod(
        "p",
        containers=(
            Container(
                "c",
                requests={
                    "cpu": parse_quantity(f"{pod_req[0]}m"),
                    "memory": parse_quantity(str(pod_req[1])),
                    GPU: parse_quantity(str(pod_req[2])),
                },
            ),
        ),
    )
    info = NodeInfo(
        make_node("n"),
        requested=Resources(used[0], used[1], scalar={GPU: used[2]}),
        allocatable=Resources(alloc[0], alloc[1], 0, 10, {GPU: alloc[2]}),
    )
    assert 0 <= run_score(plugin("cpu", "memory", GPU), pod, info) <= 100


@settings(max_examples=200, deadline=None)
@given(
    pod_req=st.tuples(st.integers(0, 10_000), st.integers(0, 1 << 34), st.integers(0, 8)),
    alloc=st.tuples(st.integers(0, 8_000), st.integers(0, 1 << 34), st.integers(0, 8)),
    used=st.tuples(st.integers(0, 10_000), st.integers(0, 1 << 34), st.integers(0, 8)),
)
def test_both_balances_in_one_pass_equal_each_worked_out_alone(
    pod_req: tuple[int, int, int], alloc: tuple[int, int, int], used: tuple[int, int, int]
) -> None:
    entries = pod_resource_entries((*DEFAULT_RESOURCES, ResourceSpec(GPU)),
                                   Resources(pod_req[0], pod_req[1], scalar={GPU: pod_req[2]}))
    base = tuple((kind, name, weight, 0) for kind, name, weight, _ in entries)
    info = NodeInfo(make_node("n"), requested=Resources(used[0], used[1], scalar={GPU: used[2]}),
                    allocatable=Resources(alloc[0], alloc[1], 0, 10, {GPU: alloc[2]}))
    assert _node_balances(entries, base, info) == (_node_balance(entries, info), _node_balance(base, info))


@given(st.tuples(st.integers(1, 10**7), st.integers(0, 2 * 10**7), st.integers(0, 10**7)),
       st.tuples(st.integers(1, 10**12), st.integers(0, 2 * 10**12), st.integers(0, 10**12)))
def test_two_resource_balances_match_the_general_computation(
    cpu: tuple[int, int, int], memory: tuple[int, int, int]
) -> None:
    amounts = [(cpu[0], cpu[1], 1), (memory[0], memory[1], 1)]
    entries = ((0, "cpu", 1, cpu[2]), (1, "memory", 1, memory[2]))

    def fractions(request_of: Sequence[int]) -> list[float]:
        out = []
        for (capacity, requested, _), request in zip(amounts, request_of, strict=True):
            fraction = float(requested - request) / float(capacity)
            out.append(1.0 if fraction > 1 else fraction)
        return out

    plain = (balanced_score(fractions([0, 0])), balanced_score(fractions([cpu[2], memory[2]])))
    assert _two_balances(amounts, entries) == plain
