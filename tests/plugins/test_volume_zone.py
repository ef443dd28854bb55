"""VolumeZone: bound volumes' zone/region labels against node labels, and PreFilter's reasons."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.framework import CycleState, Status
from kschedlib.framework.status import Code
from kschedlib.model.objects import Pod, Volume
from kschedlib.plugins._helpers.volume_topology import BETA_REGION, BETA_ZONE, GA_REGION, GA_ZONE, label_zones_to_set
from kschedlib.plugins.volume_zone import ERR_REASON_CONFLICT, VolumeZone, fits, pv_topologies
from kschedlib.testing import FakeHandle
from tests.helpers import (
    claim_volume,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_storage_class,
    node_info,
)


def _pod(*volumes: Volume) -> Pod:
    return make_pod("p", volumes=tuple(volumes))


def _plugin(*storage: object) -> VolumeZone:
    return VolumeZone(None, FakeHandle(kube_version="1.30", storage=storage))


BOUND = make_pvc("data", volume_name="pv-1")

PRE_FILTER_FAILURES = [
    pytest.param((claim_volume(""),), (), "PersistentVolumeClaim had no name", id="claim-without-name"),
    pytest.param((claim_volume("nope"),), (), 'persistentvolumeclaim "nope" not found', id="claim-missing"),
    pytest.param((claim_volume("c"),), (make_pvc("c"),), "PersistentVolumeClaim had no pv name and storageClass name",
                 id="unbound-without-class"),
    pytest.param((claim_volume("c"),), (make_pvc("c", class_name="gone"),),
                 'storageclass.storage.k8s.io "gone" not found', id="class-missing"),
    pytest.param((claim_volume("c"),), (make_pvc("c", class_name="s"), make_storage_class("s", mode=None)),
                 'VolumeBindingMode not set for StorageClass "s"', id="class-without-mode"),
    pytest.param((claim_volume("c"),), (make_pvc("c", class_name="s"), make_storage_class("s", mode="Immediate")),
                 "PersistentVolume had no name", id="unbound-immediate"),
    pytest.param((claim_volume("data"),), (BOUND,), 'persistentvolume "pv-1" not found', id="pv-missing"),
]


@pytest.mark.parametrize(("volumes", "storage", "reason"), PRE_FILTER_FAILURES)
def test_pre_filter_failures(volumes: tuple[Volume, ...], storage: tuple[object, ...], reason: str) -> None:
    status = _plugin(*storage).pre_filter(CycleState(), _pod(*volumes))
    assert status == Status.unresolvable(reason)


PRE_FILTER_SKIPS = [
    pytest.param((), (), id="no-volumes"),
    pytest.param((Volume("e", ephemeral=True, source_kind="ephemeral"),), (), id="ephemeral-ignored"),
    pytest.param((claim_volume("c"),), (make_pvc("c", class_name="s"), make_storage_class("s")),
                 id="wait-for-first-consumer-ignored"),
    pytest.param((claim_volume("data"),), (BOUND, make_pv("pv-1")), id="pv-without-zone-labels"),
    pytest.param((claim_volume("data"),), (BOUND, make_pv("pv-1", labels={GA_ZONE: ""})), id="blank-label-ignored"),
    pytest.param((claim_volume("data"),), (BOUND, make_pv("pv-1", labels={GA_ZONE: "a__ "})),
                 id="blank-part-ignores-the-label"),
]


@pytest.mark.parametrize(("volumes", "storage"), PRE_FILTER_SKIPS)
def test_pre_filter_skips(volumes: tuple[Volume, ...], storage: tuple[object, ...]) -> None:
    assert _plugin(*storage).pre_filter(CycleState(), _pod(*volumes)) == Status.skip()


def test_label_zones_to_set() -> None:
    assert label_zones_to_set("a") == frozenset({"a"})
    assert label_zones_to_set(" a__b \t") == frozenset({"a", "b"})
    assert label_zones_to_set("a____b") is None
    assert label_zones_to_set("") is None


def test_topologies_are_recorded_in_kube_key_order() -> None:
    pv = make_pv("pv-1", labels={GA_REGION: "r", GA_ZONE: "z1__z2", BETA_ZONE: "z1", "other": "x"})
    found = pv_topologies(_pod(claim_volume("data")), FakeHandle(kube_version="1.30", storage=(BOUND, pv)).storage)
    assert not isinstance(found, str)
    assert [(t.key, t.ga_key, set(t.values)) for t in found] == [
        (BETA_ZONE, GA_ZONE, {"z1"}), (GA_ZONE, GA_ZONE, {"z1", "z2"}), (GA_REGION, GA_REGION, {"r"})]


FILTER = [
    pytest.param({GA_ZONE: "a"}, {GA_ZONE: "a"}, True, id="ga-zone-match"),
    pytest.param({GA_ZONE: "a"}, {GA_ZONE: "b"}, False, id="ga-zone-mismatch"),
    pytest.param({GA_ZONE: "a__b"}, {GA_ZONE: "b"}, True, id="multi-zone-value"),
    pytest.param({GA_ZONE: "a"}, {"rack": "r1"}, True, id="node-without-topology-labels-passes"),
    pytest.param({GA_ZONE: "a"}, {GA_REGION: "r"}, False, id="node-region-only-fails-zone"),
    pytest.param({BETA_ZONE: "a"}, {GA_ZONE: "a"}, True, id="beta-pv-matches-ga-node"),
    pytest.param({BETA_ZONE: "a"}, {GA_ZONE: "b", BETA_ZONE: "a"}, True, id="beta-pv-prefers-beta-node-label"),
    pytest.param({GA_ZONE: "a"}, {BETA_ZONE: "a"}, False, id="ga-pv-never-matches-beta-node"),
    pytest.param({BETA_REGION: "r"}, {GA_REGION: "r"}, True, id="beta-region-to-ga"),
    pytest.param({GA_ZONE: "a", GA_REGION: "r"}, {GA_ZONE: "a", GA_REGION: "s"}, False, id="every-label-must-match"),
]


@pytest.mark.parametrize(("pv_labels", "node_labels", "passes"), FILTER)
def test_filter(pv_labels: dict[str, str], node_labels: dict[str, str], passes: bool) -> None:
    plugin = _plugin(BOUND, make_pv("pv-1", labels=pv_labels))
    pod = _pod(claim_volume("data"))
    state = CycleState()
    assert plugin.pre_filter(state, pod) == Status.success()
    status = plugin.filter(state, pod, node_info(make_node("n", labels=node_labels)))
    if passes:
        assert status == Status.success()
    else:
        assert (status.code, status.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)


def test_filter_without_pre_filter_state_recomputes() -> None:
    plugin = _plugin(BOUND, make_pv("pv-1", labels={GA_ZONE: "a"}))
    pod = _pod(claim_volume("data"))
    assert plugin.filter(CycleState(), pod, node_info(make_node("n", labels={GA_ZONE: "b"}))).message() == (
        ERR_REASON_CONFLICT)
    missing = _plugin().filter(CycleState(), pod, node_info(make_node("n")))
    assert missing == Status.unresolvable('persistentvolumeclaim "data" not found')


_zones = st.sampled_from(["a", "b", "c"])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from([BETA_ZONE, GA_ZONE, GA_REGION]), st.sets(_zones, min_size=1), max_size=3),
       st.dictionaries(st.sampled_from([BETA_ZONE, GA_ZONE, GA_REGION, "rack"]), _zones, max_size=4))
def test_fits_matches_a_brute_force_statement(pv: dict[str, set[str]], node: dict[str, str]) -> None:
    pv_obj = make_pv("pv-1", labels={key: "__".join(sorted(values)) for key, values in pv.items()})
    found = pv_topologies(_pod(claim_volume("data")), FakeHandle(kube_version="1.30", storage=(BOUND, pv_obj)).storage)
    assert not isinstance(found, str)
    twin = {BETA_ZONE: GA_ZONE, GA_ZONE: GA_ZONE, GA_REGION: GA_REGION}
    has_topology = any(key in node for key in (BETA_ZONE, GA_ZONE, GA_REGION))
    expected = not has_topology or all(
        node.get(key, node.get(twin[key])) in values for key, values in pv.items())
    assert fits(found, node) is expected
