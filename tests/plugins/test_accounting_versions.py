"""Resource accounting and score formulas after v1.30, one switch at a time, each shown on and off.

Switches: ``balanced_allocation_skips_best_effort`` (1.33), ``balanced_allocation_change_score`` (1.36),
``sidecar_nonzero_requests`` (1.32), ``in_place_resize_requests`` (1.33, InPlacePodVerticalScaling),
``pod_level_resources`` (1.34, PodLevelResources) and ``image_volume_locality`` (1.36, ImageVolume).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import pytest

from kschedlib.framework import CycleState, NodeInfo, PodInfo
from kschedlib.framework.node_info import ImageState
from kschedlib.framework.status import Code
from kschedlib.model import Container, ContainerStatus, Pod, parse_quantity
from kschedlib.model.objects import PodCondition, Volume
from kschedlib.model.quantity import Quantity
from kschedlib.model.resources import accounting_for
from kschedlib.plugins.image_locality import ImageLocality
from kschedlib.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balance_change_score,
)
from kschedlib.plugins.node_resources_fit import NodeResourcesFit
from kschedlib.versions import resolve
from tests.helpers import FakeHandle, make_node, make_pod, node_info


def q(text: str) -> Quantity:
    return parse_quantity(text)


def quantities(**amounts: str) -> dict[str, object]:
    return {name.replace("_", "-"): parse_quantity(text) for name, text in amounts.items()}


def container(name: str, restart_policy: str | None = None, **requests: str) -> Container:
    return Container(name, requests=quantities(**requests), restart_policy=restart_policy)  # type: ignore[arg-type]


def accounting(version: str, gates: Mapping[str, bool] | None = None):  # type: ignore[no-untyped-def]
    return accounting_for(resolve(version, gates).switches)


# --- NodeResourcesBalancedAllocation -------------------------------------------------------------


def balanced(version: str) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(None, FakeHandle(kube_version=version))


def balanced_score(version: str, pod: Pod, info: NodeInfo) -> int:
    plugin = balanced(version)
    state = CycleState()
    assert plugin.pre_score(state, pod, [info]).is_success
    return plugin.score(state, pod, info)


def test_balanced_allocation_skips_best_effort() -> None:
    pod = make_pod("p")  # no cpu or memory request
    info = node_info(make_node("n", allocatable={"cpu": "4", "memory": "8Gi"}))
    assert balanced("1.32").pre_score(CycleState(), pod, [info]).code is Code.SUCCESS
    assert balanced("1.33").pre_score(CycleState(), pod, [info]).code is Code.SKIP
    # Score without PreScore (as a caller may run it) gives 0 from v1.33 and the plain balance before.
    assert balanced("1.33").score(CycleState(), pod, info) == 0
    assert balanced("1.32").score(CycleState(), pod, info) == 100


def test_balanced_allocation_does_not_skip_a_pod_requesting_one_resource() -> None:
    pod = make_pod("p", requests={"memory": "1Gi"})
    info = node_info(make_node("n", allocatable={"cpu": "4", "memory": "8Gi"}))
    assert balanced("1.36").pre_score(CycleState(), pod, [info]).code is Code.SUCCESS


@pytest.mark.parametrize(("with_pod", "without_pod", "expected"), [
    pytest.param(87, 87, 75, id="balance-kept-75"),
    pytest.param(100, 50, 100, id="fully-evened-100"),
    pytest.param(87, 100, 68, id="worse-truncated-68"),
    pytest.param(50, 100, 50, id="worst-50"),
    pytest.param(0, 100, 25, id="below-zero-numerator-truncates-toward-zero"),
    pytest.param(1, 100, 26, id="odd-negative-numerator"),
])
def test_balance_change_score(with_pod: int, without_pod: int, expected: int) -> None:
    assert balance_change_score(with_pod, without_pod) == expected


def test_balanced_allocation_change_score() -> None:
    existing = make_pod("e", uid="e", requests={"cpu": "1", "memory": "4Gi"})
    info = node_info(make_node("n", allocatable={"cpu": "4", "memory": "8Gi"}), existing)
    pod = make_pod("p", requests={"cpu": "500m", "memory": "1Gi"})
    assert balanced_score("1.35", pod, info) == 87  # the balance with the pod
    assert balanced_score("1.36", pod, info) == 75  # the pod keeps the node's balance (87 -> 87)
    evening = make_pod("p", requests={"cpu": "1", "memory": "0"})
    assert balanced_score("1.35", evening, info) == 100
    assert balanced_score("1.36", evening, info) == 50 + (50 + 100 - 87) // 2


def test_balanced_allocation_change_score_on_an_empty_node() -> None:
    info = node_info(make_node("n", allocatable={"cpu": "4", "memory": "8Gi"}))
    pod = make_pod("p", requests={"cpu": "1"})
    assert balanced_score("1.35", pod, info) == 87
    assert balanced_score("1.36", pod, info) == 68


# --- requests of bound pods ----------------------------------------------------------------------


SIDECAR_POD = Pod("s", node_name="n", containers=(container("app", cpu="1"),),
                  init_containers=(container("proxy", "Always"), container("init")))


def test_sidecar_nonzero_requests() -> None:
    # v1.30: regular containers' non-zero sum (1000m, 200Mi) vs the init peak (sidecar default + init default).
    assert accounting("1.31").non_zero_requests(SIDECAR_POD) == (1000, 200 * 1024 * 1024)
    # v1.32: per-container defaults, the sidecar summed with the regular container.
    assert accounting("1.32").non_zero_requests(SIDECAR_POD) == (1100, 400 * 1024 * 1024)
    assert accounting("1.31").requests(SIDECAR_POD) == accounting("1.32").requests(SIDECAR_POD)


def test_sidecar_nonzero_requests_reach_the_node_info() -> None:
    node = make_node("n", allocatable={"cpu": "4", "memory": "8Gi"})
    before = NodeInfo.of(node, (PodInfo.of(SIDECAR_POD, accounting("1.31")),))
    after = NodeInfo.of(node, (PodInfo.of(SIDECAR_POD, accounting("1.32")),))
    assert before.non_zero_requested.milli_cpu == 1000
    assert after.non_zero_requested.milli_cpu == 1100
    assert PodInfo.of(SIDECAR_POD).non_zero_cpu == 1000  # default: v1.30's way


RESIZED = Pod(
    "r", node_name="n",
    containers=(container("app", cpu="1", memory="1Gi"), container("other", cpu="100m")),
    init_containers=(container("proxy", "Always", cpu="100m"), container("init", cpu="50m")),
    container_statuses=(ContainerStatus("app", {"cpu": q("2")}, {"memory": q("2Gi")}),
                        ContainerStatus("other", None, {"cpu": q("5")})),
    init_container_statuses=(ContainerStatus("proxy", {"cpu": q("300m")}),
                             ContainerStatus("init", {"cpu": q("9")})),
)


def test_in_place_resize_requests() -> None:
    spec = accounting("1.32").requests(RESIZED)
    assert (spec.milli_cpu, spec.memory) == (1200, 1024**3)
    resized = accounting("1.33").requests(RESIZED)
    # app: max(spec 1, status 2) cpu and max(spec 1Gi, allocated 2Gi) memory; "other" reports no
    # resources (ignored); the sidecar's status counts, the plain init container's never does.
    assert (resized.milli_cpu, resized.memory) == (2000 + 100 + 300, 2 * 1024**3)
    off = accounting("1.33", {"InPlacePodVerticalScaling": False}).requests(RESIZED)
    assert off == spec


def test_in_place_resize_infeasible_uses_status_and_allocated_only() -> None:
    pod = Pod("r", node_name="n", containers=(container("app", cpu="4"),),
              container_statuses=(ContainerStatus("app", {"cpu": q("1")}, {"cpu": q("1500m")}),),
              conditions=(PodCondition("PodResizePending", "True", "Infeasible"),))
    assert accounting("1.33").requests(pod).milli_cpu == 1500
    deferred = attrs.evolve(pod, conditions=(PodCondition("PodResizePending", "True", "Deferred"),))
    assert accounting("1.33").requests(deferred).milli_cpu == 4000


def test_in_place_resize_is_not_used_for_the_pod_being_fitted() -> None:
    assert accounting("1.33").fit_requests(RESIZED).milli_cpu == 1200


LEVEL = Pod("l", containers=(container("a", cpu="100m"), container("b")),
            pod_level_requests={"cpu": q("2"), "ephemeral-storage": q("1Gi")}, overhead={"cpu": q("10m")})


def test_pod_level_resources() -> None:
    assert accounting("1.33").requests(LEVEL).milli_cpu == 110
    assert accounting("1.34").requests(LEVEL).milli_cpu == 2010  # pod level replaces the sum, overhead added
    assert accounting("1.34").requests(LEVEL).ephemeral_storage == 0  # not a pod-level resource
    assert accounting("1.34", {"PodLevelResources": False}).requests(LEVEL).milli_cpu == 110


def test_pod_level_resources_non_zero_defaults_only_what_neither_level_sets() -> None:
    # cpu is set at the pod level, so no container gets the 100m default; memory is set nowhere,
    # so each container gets 200Mi.
    assert accounting("1.34").non_zero_requests(LEVEL) == (2010, 2 * 200 * 1024 * 1024)
    assert accounting("1.33").non_zero_requests(LEVEL) == (210, 2 * 200 * 1024 * 1024)


def test_pod_level_resources_in_node_resources_fit() -> None:
    info = node_info(make_node("n", allocatable={"cpu": "1", "memory": "8Gi", "pods": "110"}))
    for version, fits in (("1.33", True), ("1.34", False)):
        plugin = NodeResourcesFit(None, FakeHandle(kube_version=version))
        state = CycleState()
        plugin.pre_filter(state, LEVEL)
        status = plugin.filter(state, LEVEL, info)
        assert status.is_success is fits, version
    scoring = accounting("1.34").scoring_requests(LEVEL)
    assert (scoring.milli_cpu, scoring.memory) == (2010, 2 * 200 * 1024 * 1024)


# --- ImageLocality -------------------------------------------------------------------------------


def test_image_volume_locality() -> None:
    size = 500 * 1024 * 1024
    node = make_node("n", images=((("registry/model:v1",), size),))
    pod = make_pod("p", image="app:1", volumes=(Volume("model", source_kind="image",
                                                       source={"reference": "registry/model:v1"}),))
    info = node_info(node).with_image_states({"registry/model:v1": ImageState(size, 1)})

    def score(version: str, gates: Mapping[str, bool] | None = None) -> int:
        handle = FakeHandle([info], kube_version=version, feature_gates=gates)
        return ImageLocality(None, handle).score(CycleState(), pod, info)

    assert score("1.35") == 0
    assert score("1.36") == 48  # (500 MiB - 23 MiB) * 100 // (1000 MiB - 23 MiB)
    assert score("1.36", {"ImageVolume": False}) == 0
