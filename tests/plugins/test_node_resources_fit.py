"""NodeResourcesFit: Filter reasons, the scoring strategies, args defaults and validation (§9.8, §13.4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast
from unittest.mock import patch

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kschedlib.errors import ConfigError
from kschedlib.framework import Code, CycleState, NodeInfo, PodInfo, Status
from kschedlib.model import Container, Pod, Resources, parse_quantity
from kschedlib.plugins._helpers.normalize import truncating_div
from kschedlib.plugins.node_resources_fit import (
    PRE_FILTER_KEY,
    PRE_SCORE_KEY,
    InsufficientResource,
    NodeResourcesFit,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    ShapePoint,
    decode_args,
    fits,
    fits_request,
    scoring,
)
from kschedlib.plugins.node_resources_fit.scoring import broken_linear, least_requested_score, most_requested_score
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

GPU = "nvidia.com/gpu"
BIN_PACKING = (ShapePoint(0, 0), ShapePoint(100, 10))
SPREADING = (ShapePoint(0, 10), ShapePoint(100, 0))


def container(name: str = "c", restart_policy: str | None = None, **requests: str) -> Container:
    """A container whose requests use ``_`` for ``-`` and ``__`` for ``/`` in resource names."""
    parsed = {k.replace("__", "/").replace("_", "-"): parse_quantity(v) for k, v in requests.items()}
    return Container(name, requests=parsed, restart_policy=restart_policy)


def pod_of(*containers: Container, init: Sequence[Container] = (), overhead: Mapping[str, str] | None = None,
           uid: str = "") -> Pod:
    return Pod(
        "p",
        uid=uid,
        containers=tuple(containers),
        init_containers=tuple(init),
        overhead={k: parse_quantity(v) for k, v in overhead.items()} if overhead is not None else None,
    )


def plugin(args: NodeResourcesFitArgs | None = None) -> NodeResourcesFit:
    return NodeResourcesFit(args, FakeHandle(kube_version="1.30"))


def run_filter(pl: NodeResourcesFit, pod: Pod, info: NodeInfo) -> Status:
    state = CycleState()
    result = pl.pre_filter(state, pod)
    assert isinstance(result, Status)
    assert result.is_success
    return pl.filter(state, pod, info)


def run_score(pl: NodeResourcesFit, pod: Pod, info: NodeInfo) -> int:
    state = CycleState()
    assert pl.pre_score(state, pod, [info]).is_success
    return pl.score(state, pod, info)


def strategy(kind: str, resources: Sequence[tuple[str, int]] = (("cpu", 1), ("memory", 1)),
             shape: Sequence[ShapePoint] | None = None) -> NodeResourcesFitArgs:
    specs = tuple(ResourceSpec(n, w) for n, w in resources)
    points = tuple(shape) if shape else None
    return NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(kind, specs, points))


# --- Filter -----------------------------------------------------------------------------------

BIG_NODE = {"cpu": "4", "memory": "8Gi", "ephemeral-storage": "10Gi", "pods": "110",
            GPU: "2", "example.com/a": "1", "example.com/b": "1", "hugepages-2Mi": "1Gi"}

FILTER_CASES: list[tuple[str, Pod, Mapping[str, str], Sequence[Pod], tuple[str, ...]]] = [
    ("fits", make_pod("p", requests={"cpu": "1", "memory": "1Gi"}), BIG_NODE, (), ()),
    ("exactly-full-fits", make_pod("p", requests={"cpu": "3", "memory": "7Gi"}), BIG_NODE,
     (make_pod("e", uid="e", requests={"cpu": "1", "memory": "1Gi"}),), ()),
    ("insufficient-cpu", make_pod("p", requests={"cpu": "3500m"}), BIG_NODE,
     (make_pod("e", uid="e", requests={"cpu": "1"}),), ("Insufficient cpu",)),
    ("insufficient-memory", make_pod("p", requests={"memory": "9Gi"}), BIG_NODE, (),
     ("Insufficient memory",)),
    ("insufficient-ephemeral", make_pod("p", requests={"ephemeral-storage": "11Gi"}), BIG_NODE, (),
     ("Insufficient ephemeral-storage",)),
    ("insufficient-gpu", make_pod("p", requests={GPU: "3"}), BIG_NODE, (), ("Insufficient nvidia.com/gpu",)),
    ("extended-missing-on-node", make_pod("p", requests={"example.com/c": "1"}), BIG_NODE, (),
     ("Insufficient example.com/c",)),
    ("hugepages", make_pod("p", requests={"hugepages-2Mi": "2Gi"}), BIG_NODE, (),
     ("Insufficient hugepages-2Mi",)),
    ("too-many-pods-zero-request", make_pod("p"), {"cpu": "4", "memory": "8Gi", "pods": "1"},
     (make_pod("e", uid="e"),), ("Too many pods",)),
    ("no-pods-allocatable", make_pod("p"), {"cpu": "4", "memory": "8Gi"}, (), ("Too many pods",)),
    ("zero-request-on-full-node", make_pod("p"), {"cpu": "1", "memory": "1Gi", "pods": "10"},
     (make_pod("e", uid="e", requests={"cpu": "1", "memory": "1Gi"}),), ()),
    ("requested-not-non-zero", make_pod("p", requests={"cpu": "4"}), BIG_NODE, (make_pod("e", uid="e"),), ()),
    ("all-reasons-in-order",
     make_pod("p", requests={"cpu": "5", "memory": "9Gi", "ephemeral-storage": "11Gi", GPU: "3",
                             "example.com/b": "2", "example.com/a": "2", "hugepages-2Mi": "2Gi"}),
     {**BIG_NODE, "pods": "0"}, (),
     ("Too many pods", "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
      "Insufficient example.com/a", "Insufficient example.com/b", "Insufficient hugepages-2Mi",
      "Insufficient nvidia.com/gpu")),
]


@pytest.mark.parametrize(("pod", "alloc", "existing", "reasons"), [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(
    pod: Pod, alloc: Mapping[str, str], existing: Sequence[Pod], reasons: tuple[str, ...]
) -> None:
    status = run_filter(plugin(), pod, node_info(make_node("n", allocatable=alloc), *existing))
    if reasons:
        assert status.code is Code.UNSCHEDULABLE
        assert status.reasons == reasons
    else:
        assert status.is_success


EFFECTIVE_CASES = [
    ("init-max-over-sum", pod_of(container(cpu="2", memory="1G"), container(cpu="1", memory="1G"),
                                 init=[container(cpu="2", memory="1G"), container(cpu="2", memory="3G")]),
     Resources(3000, 3_000_000_000)),
    ("sidecar-added", pod_of(container(cpu="500m"), init=[container(restart_policy="Always", cpu="1")]),
     Resources(1500)),
    ("overhead-added", pod_of(container(cpu="500m"), overhead={"cpu": "250m"}), Resources(750)),
]


@pytest.mark.parametrize(("pod", "expected"), [c[1:] for c in EFFECTIVE_CASES],
                         ids=[c[0] for c in EFFECTIVE_CASES])
def test_pre_filter_stores_effective_requests(pod: Pod, expected: Resources) -> None:
    state = CycleState()
    plugin().pre_filter(state, pod)
    assert state.read(PRE_FILTER_KEY).requests == expected


def test_init_container_peak_is_what_filter_checks() -> None:
    pod = pod_of(container(cpu="1"), init=[container(cpu="3")])
    info = node_info(make_node("n", allocatable={"cpu": "2", "memory": "1Gi", "pods": "5"}))
    assert run_filter(plugin(), pod, info).reasons == ("Insufficient cpu",)


IGNORE_CASES = [
    ("other-resource-ignored", (GPU,), (), "example.com/foo", False),
    ("ignored-resource", ("example.com/foo",), (), "example.com/foo", True),
    ("ignored-group", (), ("example.com",), "example.com/foo", True),
    ("other-group", (), ("nvidia.com",), "example.com/foo", False),
    ("hugepages-not-ignorable", ("hugepages-2Mi",), (), "hugepages-2Mi", False),
    ("prefixed-native-not-ignorable", (), ("kubernetes.io",), "kubernetes.io/foo", False),
]


@pytest.mark.parametrize(("ignored", "groups", "resource", "skipped"), [c[1:] for c in IGNORE_CASES],
                         ids=[c[0] for c in IGNORE_CASES])
def test_ignored_resources(
    ignored: tuple[str, ...], groups: tuple[str, ...], resource: str, skipped: bool
) -> None:
    args = NodeResourcesFitArgs(ignored_resources=ignored, ignored_resource_groups=groups)
    pod = make_pod("p", requests={resource: "1"})
    status = run_filter(plugin(args), pod, node_info(make_node("n")))
    if skipped:
        assert status.is_success
    else:
        assert status.reasons == (f"Insufficient {resource}",)


def test_filter_without_pre_filter_is_an_error() -> None:
    status = plugin().filter(CycleState(), make_pod("p"), node_info(make_node("n")))
    assert status.code is Code.ERROR
    assert status.message() == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


def test_fits_request_reports_numbers() -> None:
    info = node_info(make_node("n", allocatable={"cpu": "2", "memory": "1Gi", "pods": "1", GPU: "1"}),
                     make_pod("e", uid="e", requests={"cpu": "1500m", "memory": "512Mi"}))
    request = Resources(1000, 1 << 30, scalar={GPU: 2})
    assert fits_request(request, info) == [
        InsufficientResource("pods", "Too many pods", 1, 1, 1),
        InsufficientResource("cpu", "Insufficient cpu", 1000, 1500, 2000),
        InsufficientResource("memory", "Insufficient memory", 1 << 30, 512 << 20, 1 << 30),
        InsufficientResource(GPU, "Insufficient nvidia.com/gpu", 2, 0, 1),
    ]
    assert fits_request(request, info, {GPU}) == fits_request(request, info)[:3]
    assert fits_request(request, info, (), {"nvidia.com"}) == fits_request(request, info)[:3]


def test_fits_uses_effective_requests_and_ignores_nothing() -> None:
    info = node_info(make_node("n", allocatable={"cpu": "2", "memory": "1Gi", "pods": "3"}))
    assert fits(pod_of(container(cpu="1"), init=[container(cpu="3")]), info) == [
        InsufficientResource("cpu", "Insufficient cpu", 3000, 0, 2000)]
    assert fits(make_pod("p", requests={"cpu": "2"}), info) == []


def test_pre_filter_state_clone_is_itself() -> None:
    state = CycleState()
    plugin().pre_filter(state, make_pod("p"))
    value = state.read(PRE_FILTER_KEY)
    assert value.clone() is value


# --- Score ------------------------------------------------------------------------------------


def worked_node() -> NodeInfo:
    """§9.8: allocatable 4 CPU / 8Gi, an existing pod requesting 1 CPU / 2Gi."""
    return node_info(make_node("n"), make_pod("e", uid="e", requests={"cpu": "1", "memory": "2Gi"}))


WORKED = make_pod("p", requests={"cpu": "500m", "memory": "1Gi"})


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (None, 62),
        (strategy("LeastAllocated"), 62),
        (strategy("MostAllocated"), 37),
        (strategy("RequestedToCapacityRatio", shape=BIN_PACKING), 37),
        (strategy("RequestedToCapacityRatio", shape=SPREADING), 63),
    ],
    ids=["default", "least-allocated", "most-allocated", "rtcr-bin-packing", "rtcr-spreading"],
)
def test_worked_examples(args: NodeResourcesFitArgs | None, expected: int) -> None:
    assert run_score(plugin(args), WORKED, worked_node()) == expected


SMALL = {"cpu": "1", "memory": "100Mi", "pods": "10"}


def empty(alloc: Mapping[str, str] | None = None, *pods: Pod) -> NodeInfo:
    return node_info(make_node("n", allocatable=alloc or SMALL), *pods)


SCORE_CASES: list[tuple[str, NodeResourcesFitArgs, Pod, NodeInfo, int]] = [
    ("least-over-capacity-is-0", strategy("LeastAllocated"),
     make_pod("p", requests={"cpu": "2", "memory": "0"}), empty(), (0 + 100) // 2),
    ("most-over-capacity-is-100", strategy("MostAllocated"),
     make_pod("p", requests={"cpu": "2", "memory": "0"}), empty(), (100 + 0) // 2),
    ("weights", strategy("MostAllocated", [("cpu", 3), ("memory", 1)]),
     make_pod("p", requests={"cpu": "500m", "memory": "10Mi"}), empty(), (50 * 3 + 10) // 4),
    ("missing-requests-default-100m-200Mi", strategy("MostAllocated", [("cpu", 1)]), make_pod("p"),
     empty(), 10),
    ("existing-pod-counts-non-zero", strategy("MostAllocated", [("cpu", 1)]),
     make_pod("p", requests={"cpu": "0"}), empty(None, make_pod("e", uid="e")), 10),
    ("sidecar-defaults-in-scoring", strategy("MostAllocated", [("cpu", 1)]),
     pod_of(container(cpu="500m"), init=[container(restart_policy="Always")]), empty(), 60),
    ("ephemeral-uses-requested", strategy("MostAllocated", [("ephemeral-storage", 1)]),
     make_pod("p", requests={"ephemeral-storage": "1Gi"}),
     empty({"ephemeral-storage": "4Gi", "pods": "5"},
           make_pod("e", uid="e", requests={"ephemeral-storage": "1Gi"})), 50),
    ("scalar-not-requested-skipped", strategy("MostAllocated", [("cpu", 1), (GPU, 5)]),
     make_pod("p", requests={"cpu": "500m"}), empty({"cpu": "1", GPU: "4", "pods": "5"}), 50),
    ("scalar-requested", strategy("MostAllocated", [("cpu", 1), (GPU, 3)]),
     make_pod("p", requests={"cpu": "500m", GPU: "1"}),
     empty({"cpu": "1", GPU: "4", "pods": "5"}, make_pod("e", uid="e", requests={GPU: "2"})),
     (60 + 75 * 3) // 4),  # the existing pod's missing cpu request counts 100m (non-zero)
    ("scalar-missing-on-node-skipped", strategy("MostAllocated", [("cpu", 1), (GPU, 3)]),
     make_pod("p", requests={"cpu": "500m", GPU: "1"}), empty({"cpu": "1", "pods": "5"}), 50),
    ("zero-allocatable-skipped", strategy("LeastAllocated"), make_pod("p", requests={"cpu": "500m"}),
     empty({"cpu": "1", "pods": "5"}), 50),
    ("nothing-scorable-is-0", strategy("LeastAllocated"), make_pod("p"), empty({"pods": "5"}), 0),
    ("pods-resource-never-scored", strategy("LeastAllocated", [("pods", 1), ("cpu", 1)]),
     make_pod("p", requests={"cpu": "500m"}), empty(), 50),
    ("rtcr-over-capacity-is-f100", strategy("RequestedToCapacityRatio", [("cpu", 1)], BIN_PACKING),
     make_pod("p", requests={"cpu": "2"}), empty(), 100),
    ("rtcr-zero-scores-excluded", strategy("RequestedToCapacityRatio", shape=BIN_PACKING),
     make_pod("p", requests={"cpu": "0", "memory": "50Mi"}), empty(), 50),
    ("rtcr-rounds-half-away-from-zero", strategy("RequestedToCapacityRatio", shape=BIN_PACKING),
     make_pod("p", requests={"cpu": "360m", "memory": "37Mi"}), empty(), 37),
    ("rtcr-rounds-down-below-half",
     strategy("RequestedToCapacityRatio", [("cpu", 2), ("memory", 1)], BIN_PACKING),
     make_pod("p", requests={"cpu": "360m", "memory": "37Mi"}), empty(), 36),
    ("rtcr-truncates-negative-slope", strategy("RequestedToCapacityRatio", [("cpu", 1)],
                                               (ShapePoint(0, 10), ShapePoint(100, 3))),
     make_pod("p", requests={"cpu": "370m"}), empty(), 75),
    ("rtcr-below-first-point", strategy("RequestedToCapacityRatio", [("cpu", 1)],
                                        (ShapePoint(50, 4), ShapePoint(80, 9))),
     make_pod("p", requests={"cpu": "100m"}), empty(), 40),
    ("rtcr-above-last-point", strategy("RequestedToCapacityRatio", [("cpu", 1)],
                                       (ShapePoint(10, 4), ShapePoint(50, 9))),
     make_pod("p", requests={"cpu": "900m"}), empty(), 90),
]


@pytest.mark.parametrize(("args", "pod", "info", "expected"), [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_score(args: NodeResourcesFitArgs, pod: Pod, info: NodeInfo, expected: int) -> None:
    assert run_score(plugin(args), pod, info) == expected


def test_score_without_pre_score_computes_requests() -> None:
    pl = plugin(strategy("MostAllocated"))
    assert pl.score(CycleState(), WORKED, worked_node()) == 37


def test_pre_score_state() -> None:
    state = CycleState()
    plugin(strategy("LeastAllocated", [("cpu", 1), ("memory", 2), (GPU, 1)])).pre_score(state, WORKED, [])
    value = state.read(PRE_SCORE_KEY)
    assert value.clone() is value
    assert [(name, weight, amount) for _, name, weight, amount in value.entries] == [
        ("cpu", 1, 500), ("memory", 2, 1 << 30)]


def test_score_with_no_resources_raises() -> None:
    pl = plugin(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(resources=())))
    with pytest.raises(RuntimeError, match="resources not found"):
        run_score(pl, WORKED, worked_node())


@pytest.mark.parametrize(("requested", "capacity", "least", "most"),
                         [(0, 10, 100, 0), (3, 10, 70, 30), (10, 10, 0, 100), (11, 10, 0, 100), (1, 0, 0, 0),
                          (1, 3, 66, 33)])
def test_per_resource_scores(requested: int, capacity: int, least: int, most: int) -> None:
    assert least_requested_score(requested, capacity) == least
    assert most_requested_score(requested, capacity) == most


@pytest.mark.parametrize(
    ("shape", "p", "expected"),
    [(((0, 0), (100, 100)), 37, 37), (((0, 100), (100, 30)), 37, 75), (((0, 100), (100, 0)), 37, 63),
     (((20, 50), (40, 70)), 10, 50), (((20, 50), (40, 70)), 30, 60), (((20, 50), (40, 70)), 60, 70),
     (((0, 100), (30, 0), (100, 100)), 10, 67)],
    ids=["identity", "decreasing-truncates", "spreading", "below", "between", "above", "v-shape"],
)
def test_broken_linear(shape: tuple[tuple[int, int], ...], p: int, expected: int) -> None:
    assert broken_linear([ShapePoint(*pt) for pt in shape], p) == expected


# --- args -------------------------------------------------------------------------------------


def test_default_args() -> None:
    resources = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    expected = NodeResourcesFitArgs((), (), ScoringStrategy("LeastAllocated", resources, None))
    assert decode_args(None) == expected
    assert decode_args({}) == expected
    raw = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs"}
    assert decode_args(raw) == expected
    assert decode_args({"scoringStrategy": None, "ignoredResources": None}) == expected
    assert NodeResourcesFitArgs() == expected


def test_decode_full_args() -> None:
    args = decode_args({
        "ignoredResources": ["example.com/foo"],
        "ignoredResourceGroups": ["example.org"],
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": [{"name": "cpu", "weight": 3}, {"name": GPU}, {"name": "memory", "weight": 0}],
            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}, {"utilization": 100}]},
        },
    })
    assert args == NodeResourcesFitArgs(
        ("example.com/foo",), ("example.org",),
        ScoringStrategy("RequestedToCapacityRatio",
                        (ResourceSpec("cpu", 3), ResourceSpec(GPU, 1), ResourceSpec("memory", 1)),
                        (ShapePoint(0, 10), ShapePoint(100, 0))))


def test_strategy_without_resources_gets_default_resources() -> None:
    args = decode_args({"scoringStrategy": {"type": "MostAllocated", "resources": []}})
    defaults = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))
    assert args.scoring_strategy == ScoringStrategy("MostAllocated", defaults)


_QNAME_HINT = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
               "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
               "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
_DNS_HINT = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
             "and must start and end with an alphanumeric character (e.g. 'example.com', "
             "regex used for validation is "
             r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_SUPPORTED = 'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'
_OUT_OF_RANGE_WEIGHT = "not in valid range (0, 100]"


def _strategy(**fields: Any) -> dict[str, Any]:
    return {"scoringStrategy": fields}

INVALID_ARGS: list[tuple[str, dict[str, Any], str, str]] = [
    ("ignored-bad-name", {"ignoredResources": ["-foo"]}, "ignoredResources[0]", "name part " + _QNAME_HINT),
    ("ignored-empty", {"ignoredResources": ["ok.io/x", ""]}, "ignoredResources[1]",
     "name part must be non-empty"),
    ("ignored-long-name", {"ignoredResources": ["a" * 64]}, "ignoredResources[0]",
     "name part must be no more than 63 characters"),
    ("ignored-long-prefix", {"ignoredResources": ["a" * 254 + "/foo"]}, "ignoredResources[0]",
     "prefix part must be no more than 253 characters"),
    ("ignored-long-in-bytes", {"ignoredResources": ["é" * 32]}, "ignoredResources[0]",
     "name part must be no more than 63 characters"),
    ("ignored-empty-prefix", {"ignoredResources": ["/foo"]}, "ignoredResources[0]",
     "prefix part must be non-empty"),
    ("ignored-bad-prefix", {"ignoredResources": ["Example.com/foo"]}, "ignoredResources[0]",
     "prefix part " + _DNS_HINT),
    ("ignored-two-slashes", {"ignoredResources": ["a/b/c"]}, "ignoredResources[0]",
     "a qualified name " + _QNAME_HINT
     + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
    ("group-with-slash", {"ignoredResourceGroups": ["example.com/foo"]}, "ignoredResourceGroups[0]",
     "resource group name can't contain '/'"),
    ("group-bad-name", {"ignoredResourceGroups": ["foo_"]}, "ignoredResourceGroups[0]",
     "name part " + _QNAME_HINT),
    ("unknown-type", _strategy(type="Spread"), "scoringStrategy.type",
     f'Unsupported value: "Spread": {_SUPPORTED}'),
    ("missing-type", _strategy(resources=[{"name": "cpu"}]), "scoringStrategy.type",
     f'Unsupported value: "": {_SUPPORTED}'),
    ("weight-too-big", _strategy(type="LeastAllocated", resources=[{"name": "cpu", "weight": 101}]),
     "scoringStrategy.resources[0].weight", f"resource weight of cpu {_OUT_OF_RANGE_WEIGHT}"),
    ("weight-negative",
     _strategy(type="MostAllocated", resources=[{"name": "cpu"}, {"name": "memory", "weight": -1}]),
     "scoringStrategy.resources[1].weight", f"resource weight of memory {_OUT_OF_RANGE_WEIGHT}"),
    ("shape-empty", {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {}}},
     "scoringStrategy.shape", "at least one point must be specified"),
    ("shape-unsorted",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
         "shape": [{"utilization": 10, "score": 1}, {"utilization": 10, "score": 2}]}}},
     "scoringStrategy.shape[1].utilization", "utilization values must be sorted in increasing order"),
    ("utilization-out-of-range",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
         "shape": [{"utilization": 10, "score": 1}, {"utilization": 101, "score": 2}]}}},
     "scoringStrategy.shape[1].utilization", "not in valid range [0, 100]"),
    ("score-out-of-range",
     {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
         "shape": [{"utilization": 10, "score": 11}]}}},
     "scoringStrategy.shape[0].score", "not in valid range [0, 10]"),
    ("score-negative",
     {"scoringStrategy": {"type": "MostAllocated", "requestedToCapacityRatio": {
         "shape": [{"utilization": 10, "score": -1}]}}},
     "scoringStrategy.shape[0].score", "not in valid range [0, 10]"),
    ("rtcr-without-shape", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}},
     "scoringStrategy.requestedToCapacityRatio", "Required value"),
    ("weight-not-int", _strategy(type="MostAllocated", resources=[{"name": "cpu", "weight": "2"}]),
     "scoringStrategy.resources[0].weight", "must be of type int"),
    ("ignored-not-list", {"ignoredResources": "example.com/foo"}, "ignoredResources", "must be of type list"),
]


@pytest.mark.parametrize(("raw", "field", "message"), [c[1:] for c in INVALID_ARGS],
                         ids=[c[0] for c in INVALID_ARGS])
def test_invalid_args(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args(raw)
    assert info.value.field == field
    assert info.value.message == message


def test_constructor_validates_args() -> None:
    with pytest.raises(ConfigError, match="resource weight of cpu"):
        plugin(strategy("LeastAllocated", [("cpu", 0)]))


# --- properties -------------------------------------------------------------------------------

SCALARS = (GPU, "example.com/foo", "hugepages-2Mi")
amounts = st.integers(min_value=0, max_value=12)


@st.composite
def fit_cases(draw: st.DrawFn) -> tuple[Pod, NodeInfo, tuple[str, ...], tuple[str, ...]]:
    names = ("cpu", "memory", "ephemeral-storage", *SCALARS)
    pod_req = {n: draw(amounts) for n in names if draw(st.booleans())}
    alloc = {n: draw(amounts) for n in names if draw(st.booleans())}
    used = {n: draw(amounts) for n in names}
    quantities = {n: parse_quantity(f"{v}m" if n == "cpu" else str(v)) for n, v in pod_req.items()}
    pod = Pod("p", containers=(Container("c", requests=quantities),))
    scalar = {n: v for n, v in alloc.items() if n in SCALARS}
    info = NodeInfo(
        make_node("n"),
        pods=tuple(PodInfo.of(make_pod(f"e{i}", uid=f"e{i}")) for i in range(draw(st.integers(0, 3)))),
        requested=Resources(used["cpu"], used["memory"], used["ephemeral-storage"],
                            scalar={n: used[n] for n in SCALARS}),
        allocatable=Resources(alloc.get("cpu", 0), alloc.get("memory", 0), alloc.get("ephemeral-storage", 0),
                              draw(st.integers(0, 4)), scalar),
    )
    ignored = tuple(draw(st.sets(st.sampled_from(SCALARS))))
    groups = tuple(draw(st.sets(st.sampled_from(("nvidia.com", "example.com")))))
    return pod, info, ignored, groups


def brute_force_reasons(
    pod: Pod, info: NodeInfo, ignored: tuple[str, ...], groups: tuple[str, ...]
) -> list[str]:
    """§9.8's rule restated over resource names: pods first, then native, then scalars by name."""
    reasons = ["Too many pods"] if len(info.pods) >= info.allocatable.allowed_pod_number else []
    requests = {n: q for c in pod.containers for n, q in c.requests.items()}
    ordered = ["cpu", "memory", "ephemeral-storage", *sorted(n for n in requests if n in SCALARS)]
    for name in ordered:
        if name not in requests:
            continue
        want = int(requests[name].amount * (1000 if name == "cpu" else 1))
        extended = "/" in name and "kubernetes.io/" not in name
        if extended and (name in ignored or name.split("/")[0] in groups):
            continue
        if want > 0 and want + info.requested.get(name) > info.allocatable.get(name):
            reasons.append(f"Insufficient {name}")
    return reasons


@settings(max_examples=300, deadline=None)
@given(fit_cases())
def test_filter_matches_brute_force(case: tuple[Pod, NodeInfo, tuple[str, ...], tuple[str, ...]]) -> None:
    pod, info, ignored, groups = case
    status = run_filter(plugin(NodeResourcesFitArgs(ignored, groups)), pod, info)
    expected = brute_force_reasons(pod, info, ignored, groups)
    assert list(status.reasons) == expected
    assert status.code is (Code.UNSCHEDULABLE if expected else Code.SUCCESS)


@st.composite
def shapes(draw: st.DrawFn) -> tuple[ShapePoint, ...]:
    utilizations = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=5)))
    return tuple(ShapePoint(u, draw(st.integers(0, 10))) for u in utilizations)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
    shape=shapes(),
    weights=st.tuples(st.integers(1, 100), st.integers(1, 100), st.integers(1, 100)),
    pod_req=st.tuples(st.integers(0, 10_000), st.integers(0, 1 << 34), st.integers(0, 8)),
    alloc=st.tuples(st.integers(0, 8_000), st.integers(0, 1 << 34), st.integers(0, 8)),
    used=st.tuples(st.integers(0, 10_000), st.integers(0, 1 << 34), st.integers(0, 8)),
)
def test_scores_within_range(kind: str, shape: tuple[ShapePoint, ...], weights: tuple[int, int, int],
                             pod_req: tuple[int, int, int], alloc: tuple[int, int, int],
                             used: tuple[int, int, int]) -> None:
    args = strategy(kind, list(zip(("cpu", "memory", GPU), weights, strict=True)), shape)
    pod = Pod("p", containers=(Container("c", requests={
        "cpu": parse_quantity(f"{pod_req[0]}m"), "memory": parse_quantity(str(pod_req[1])),
        GPU: parse_quantity(str(pod_req[2]))}),))
    info = NodeInfo(
        make_node("n"),
        requested=Resources(used[0], used[1], scalar={GPU: used[2]}),
        non_zero_requested=Resources(used[0], used[1]),
        allocatable=Resources(alloc[0], alloc[1], 0, 10, {GPU: alloc[2]}),
    )
    assert 0 <= run_score(plugin(args), pod, info) <= 100


@given(st.integers(-10**12, 10**12), st.integers(-10**12, 10**12))
def test_least_requested_floors_only_where_it_truncates(requested: int, capacity: int) -> None:
    plain = 0 if capacity == 0 or requested > capacity else truncating_div((capacity - requested) * 100, capacity)
    assert least_requested_score(requested, capacity) == plain


@given(st.lists(st.tuples(st.integers(-20, 100), st.integers(-20, 100), st.integers(1, 5)), max_size=4))
@example([(-3, -4, 1), (10, 10, 1)])  # a negative mean: truncated, not floored
def test_weighted_mean_floors_only_where_it_truncates(amounts: list[tuple[int, int, int]]) -> None:
    total = sum(least_requested_score(requested, capacity) * weight for capacity, requested, weight in amounts)
    weights = sum(weight for *_, weight in amounts)
    scorer = scoring._weighted_scorer(least_requested_score)
    with patch.object(scoring, "node_amounts", lambda *_: amounts):
        got = scorer((), cast(NodeInfo, None))
    assert got == (truncating_div(total, weights) if weights else 0)
