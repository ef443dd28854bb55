"""Resource accounting and score formulas after v1.30, one switch at a time, each shown on and off.

Switches: ``balanced_allocation_skips_best_effort`` (1.33), ``balanced_allocation_change_score`` (1.36),
``sidecar_nonzero_requests`` (1.32), ``in_place_resize_requests`` (1.33, InPlacePodVerticalScaling),
``pod_level_resources`` (1.34, PodLevelResources), ``image_volume_locality`` (1.36, ImageVolume),
``volume_attachments_counted`` (1.32) and ``volume_attributes_class`` (1.34, VolumeAttributesClass).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import pytest

from kschedlib import explain
from kschedlib.framework import CycleState, NodeInfo, PodInfo
from kschedlib.framework.node_info import ImageState
from kschedlib.framework.status import Code
from kschedlib.model import Container, ContainerStatus, Pod, parse_quantity
from kschedlib.model.objects import PodCondition, Volume
from kschedlib.model.quantity import Quantity
from kschedlib.model.resources import accounting_for
from kschedlib.model.storage import CSINode, CSINodeDriver, CSIVolumeSource, VolumeAttachment
from kschedlib.plugins.image_locality import ImageLocality
from kschedlib.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balance_change_score,
)
from kschedlib.plugins.node_resources_fit import NodeResourcesFit
from kschedlib.plugins.node_volume_limits import NodeVolumeLimits
from kschedlib.plugins.volume_binding import VolumeBinding
from kschedlib.plugins.volume_binding.binder import find_matching_volume
from kschedlib.testing import FakeHandle
from kschedlib.versions import resolve
from tests.helpers import (
    claim_volume,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_storage_class,
    node_info,
)


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


# --- NodeVolumeLimits and VolumeAttachments --------------------------------------------------------

EBS = "ebs.csi.aws.com"


def _limits_status(version: str, *attachments: VolumeAttachment) -> Code:
    pvc = make_pvc("data", volume_name="pv-new")
    storage = (pvc, make_pv("pv-new", source=CSIVolumeSource(EBS, "h-new")),
               make_pv("pv-old", source=CSIVolumeSource(EBS, "h-old")),
               make_pv("pv-local"), CSINode("n", {}, (CSINodeDriver(EBS, "id", 1),)), *attachments)
    handle = FakeHandle(kube_version=version, storage=storage)
    plugin = NodeVolumeLimits(None, handle)
    pod = make_pod("p", volumes=(claim_volume("data"),))
    state = CycleState()
    plugin.pre_filter(state, pod)
    return plugin.filter(state, pod, node_info(make_node("n"))).code


def test_volume_attachments_counted() -> None:
    detaching = VolumeAttachment("va-old", EBS, "n", "pv-old")
    assert _limits_status("1.31", detaching) is Code.SUCCESS
    assert _limits_status("1.32", detaching) is Code.UNSCHEDULABLE


@pytest.mark.parametrize("attachment", [
    pytest.param(VolumeAttachment("va", EBS, "other-node", "pv-old"), id="other-node"),
    pytest.param(VolumeAttachment("va", "", "n", "pv-old"), id="no-attacher"),
    pytest.param(VolumeAttachment("va", EBS, "n", None), id="inline-source"),
    pytest.param(VolumeAttachment("va", EBS, "n", "missing"), id="missing-pv"),
    pytest.param(VolumeAttachment("va", EBS, "n", "pv-local"), id="not-csi"),
])
def test_volume_attachments_that_do_not_count(attachment: VolumeAttachment) -> None:
    assert _limits_status("1.32", attachment) is Code.SUCCESS


def test_a_volume_attachment_of_a_pod_on_the_node_counts_once() -> None:
    pvc, pv = make_pvc("old", volume_name="pv-old"), make_pv("pv-old", source=CSIVolumeSource(EBS, "h-old"))
    existing = make_pod("e", uid="e", node_name="n", volumes=(claim_volume("old"),))
    handle = FakeHandle(kube_version="1.32", storage=(
        pvc, pv, make_pvc("data", volume_name="pv-new"), make_pv("pv-new", source=CSIVolumeSource(EBS, "h-new")),
        CSINode("n", {}, (CSINodeDriver(EBS, "id", 2),)), VolumeAttachment("va-old", EBS, "n", "pv-old")))
    plugin = NodeVolumeLimits(None, handle)
    pod = make_pod("p", volumes=(claim_volume("data"),))
    state = CycleState()
    plugin.pre_filter(state, pod)
    assert plugin.filter(state, pod, node_info(make_node("n"), existing)).is_success


# --- VolumeBinding and VolumeAttributesClass -------------------------------------------------------


def test_volume_attributes_class() -> None:
    claim = attrs.evolve(make_pvc("c", class_name="wait"), volume_attributes_class_name="gold")
    silver = make_pv("pv", class_name="wait", volume_attributes_class_name="silver")
    node = make_node("n")
    assert find_matching_volume(claim, [silver], node, set()) is silver
    assert find_matching_volume(claim, [silver], node, set(), match_attributes_class=True) is None
    gold = attrs.evolve(silver, volume_attributes_class_name="gold")
    assert find_matching_volume(claim, [silver, gold], node, set(), match_attributes_class=True) is gold
    switches = [resolve(v, g).switches.volume_attributes_class
                for v, g in (("1.33", None), ("1.34", None), ("1.34", {"VolumeAttributesClass": False}))]
    assert switches == [False, True, False]


def test_volume_binding_reads_the_volume_attributes_class_switch() -> None:
    claim = attrs.evolve(make_pvc("c", class_name="wait"), volume_attributes_class_name="gold")
    storage = (claim, make_pv("pv", class_name="wait"), make_storage_class("wait", mode="WaitForFirstConsumer"))
    pod = make_pod("p", volumes=(claim_volume("c"),))
    results = []
    for version in ("1.33", "1.34"):
        plugin = VolumeBinding(None, FakeHandle(kube_version=version, storage=storage))
        state = CycleState()
        plugin.pre_filter(state, pod)
        results.append(plugin.filter(state, pod, node_info(make_node("n"))).is_success)
    assert results == [True, False]


# --- through the public API: the version's counting reaches the cache ------------------------------


def _sidecar_cluster() -> list[dict[str, object]]:
    node: dict[str, object] = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}
    bound: dict[str, object] = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "b"},
             "spec": {"nodeName": "n", "containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}],
                      "initContainers": [{"name": "proxy", "restartPolicy": "Always"}]}}
    return [node, bound]


def test_sidecar_nonzero_requests_reach_scores_through_explain() -> None:
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}}
    fit = {v: explain(_sidecar_cluster(), pod, kube_version=v).to_dict()["scores"]["n"]["plugins"]["NodeResourcesFit"]
           for v in ("1.31", "1.32")}
    # LeastAllocated over (cpu, memory): v1.31 counts 1000m and 200Mi for the bound pod, v1.32 adds the
    # sidecar's defaults (100m, 200Mi): (25 + 70) / 2 against (20 + 65) / 2.
    assert fit == {"1.31": 47, "1.32": 42}


def test_a_resize_condition_after_others_is_found() -> None:
    pod = attrs.evolve(RESIZED, conditions=(PodCondition("Ready", "True"),
                                            PodCondition("PodResizePending", "True", "Infeasible")))
    assert accounting("1.33").requests(pod).milli_cpu == 100 + 2000 + 300  # app: status and allocated only
