"""VolumeRestrictions: inline disk conflicts per node and the cluster-wide ReadWriteOncePod rule."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib._internal.cache import Cache
from kschedlib.framework import CycleState, PodInfo, Snapshot, Status
from kschedlib.framework.status import Code
from kschedlib.model.objects import Pod, Volume
from kschedlib.plugins._helpers.volumes import inline_source
from kschedlib.plugins.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    PRE_FILTER_KEY,
    VolumeRestrictions,
    satisfies_volume_conflicts,
)
from kschedlib.testing import FakeHandle
from tests.helpers import claim_volume, inline_volume, make_node, make_pod, make_pvc, node_info

RWOP = ("ReadWriteOncePod",)


def _pod(name: str, *volumes: Volume, node: str = "", namespace: str = "default") -> Pod:
    return make_pod(name, node_name=node, namespace=namespace, uid=f"{namespace}/{name}", volumes=tuple(volumes))


def _plugin(*node_pods: tuple[str, tuple[Pod, ...]], storage: tuple[object, ...] = ()) -> VolumeRestrictions:
    infos = [node_info(make_node(name), *pods) for name, pods in node_pods]
    return VolumeRestrictions(None, FakeHandle(infos, kube_version="1.30", storage=storage))


def _gce(name: str, pd: str, read_only: bool = False) -> Volume:
    return inline_volume(name, "gcePersistentDisk", pdName=pd, readOnly=read_only)


# --- PreFilter ------------------------------------------------------------------------------

PRE_FILTER = [
    pytest.param((), (), Code.SKIP, "", id="no-volumes-skip"),
    pytest.param((inline_volume("tmp", "emptyDir"),), (), Code.SKIP, "", id="empty-dir-skip"),
    pytest.param((claim_volume("a"),), (make_pvc("a"),), Code.SKIP, "", id="rwo-claim-skip"),
    pytest.param((claim_volume("a"),), (make_pvc("a", modes=RWOP),), Code.SKIP, "", id="rwop-unused-skip"),
    pytest.param((claim_volume("a"), claim_volume("nope"), claim_volume("gone")), (make_pvc("a"),),
                 Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "nope" not found',
                 id="first-missing-claim-unresolvable"),
    pytest.param((_gce("d", "disk-1"),), (), Code.SUCCESS, "", id="inline-disk-runs-filter"),
    pytest.param((inline_volume("r", "rbd", monitors=["m"], image="i"),), (), Code.SUCCESS, "", id="inline-rbd"),
    pytest.param((inline_volume("i", "iscsi", targetPortal="p", iqn="q", lun=0),), (), Code.SUCCESS, "",
                 id="inline-iscsi"),
]


@pytest.mark.parametrize(("volumes", "storage", "code", "reason"), PRE_FILTER)
def test_pre_filter(volumes: tuple[Volume, ...], storage: tuple[object, ...], code: Code, reason: str) -> None:
    plugin = _plugin(("n1", ()), storage=storage)
    status = plugin.pre_filter(CycleState(), _pod("p", *volumes))
    assert isinstance(status, Status)
    assert status.code is code
    assert status.message() == reason


def test_missing_claim_fails_even_without_anything_to_check() -> None:
    plugin = _plugin(("n1", ()))
    status = plugin.pre_filter(CycleState(), _pod("p", claim_volume("x")))
    assert isinstance(status, Status)
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_ephemeral_volumes_are_not_looked_up() -> None:
    ephemeral = Volume("scratch", ephemeral=True, source_kind="ephemeral")
    status = _plugin(("n1", ())).pre_filter(CycleState(), _pod("p", ephemeral))
    assert status == Status.skip()


# --- the ReadWriteOncePod rule --------------------------------------------------------------


def test_rwop_claim_in_use_rejects_every_node() -> None:
    holder = _pod("holder", claim_volume("data"), node="n1")
    plugin = _plugin(("n1", (holder,)), ("n2", ()), storage=(make_pvc("data", modes=RWOP),))
    state = CycleState()
    assert plugin.pre_filter(state, _pod("p", claim_volume("data"))) == Status.success()
    for info in (node_info(make_node("n1"), holder), node_info(make_node("n2"))):
        status = plugin.filter(state, _pod("p", claim_volume("data")), info)
        assert (status.code, status.message()) == (Code.UNSCHEDULABLE, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


def test_rwop_access_mode_is_read_from_the_claim_and_namespaces_are_separate() -> None:
    other_ns = _pod("holder", claim_volume("data"), node="n1", namespace="other")
    plugin = _plugin(("n1", (other_ns,)), storage=(make_pvc("data", modes=RWOP),))
    assert plugin.pre_filter(CycleState(), _pod("p", claim_volume("data"))) == Status.skip()


def test_add_and_remove_pod_move_the_conflict_count() -> None:
    holder = _pod("holder", claim_volume("data"), node="n1")
    plugin = _plugin(("n1", (holder,)), storage=(make_pvc("data", modes=RWOP), make_pvc("other")))
    state = CycleState()
    pod = _pod("p", claim_volume("data"), claim_volume("other"))
    plugin.pre_filter(state, pod)
    info = node_info(make_node("n1"), holder)
    assert state.read(PRE_FILTER_KEY).conflicts == 1
    cloned = state.clone()
    assert plugin.remove_pod(cloned, pod, PodInfo.of(holder), info) == Status.success()
    assert cloned.read(PRE_FILTER_KEY).conflicts == 0
    assert plugin.filter(cloned, pod, info) == Status.success()
    assert state.read(PRE_FILTER_KEY).conflicts == 1, "clone must not share the count"
    other_ns = _pod("x", claim_volume("data"), namespace="elsewhere")
    plugin.add_pod(cloned, pod, PodInfo.of(other_ns), info)
    assert cloned.read(PRE_FILTER_KEY).conflicts == 1, "claim names only, namespaces not compared"
    plugin.add_pod(cloned, pod, PodInfo.of(_pod("y", claim_volume("other"))), info)
    assert cloned.read(PRE_FILTER_KEY).conflicts == 1


def test_extensions_without_state_are_errors() -> None:
    plugin = _plugin(("n1", ()))
    pod = _pod("p")
    status = plugin.add_pod(CycleState(), pod, PodInfo.of(pod), node_info(make_node("n1")))
    assert status.code is Code.ERROR
    assert "PreFilterVolumeRestrictions" in status.message()


# --- disk conflicts -------------------------------------------------------------------------


def _rbd(name: str, monitors: list[str], pool: str | None = "rbd", image: str = "img",
         read_only: bool = False) -> Volume:
    fields: dict[str, Any] = {"monitors": monitors, "image": image, "readOnly": read_only}
    if pool is not None:
        fields["pool"] = pool
    return inline_volume(name, "rbd", **fields)


DISKS = [
    pytest.param(_gce("a", "d1"), _gce("b", "d1"), True, id="gce-same-disk"),
    pytest.param(_gce("a", "d1", True), _gce("b", "d1", True), False, id="gce-both-read-only"),
    pytest.param(_gce("a", "d1", True), _gce("b", "d1"), True, id="gce-one-read-only"),
    pytest.param(_gce("a", "d1"), _gce("b", "d2"), False, id="gce-other-disk"),
    pytest.param(inline_volume("a", "awsElasticBlockStore", volumeID="v", readOnly=True),
                 inline_volume("b", "awsElasticBlockStore", volumeID="v", readOnly=True), True,
                 id="ebs-read-only-still-conflicts"),
    pytest.param(inline_volume("a", "awsElasticBlockStore", volumeID="v"),
                 inline_volume("b", "awsElasticBlockStore", volumeID="w"), False, id="ebs-other-volume"),
    pytest.param(inline_volume("a", "iscsi", targetPortal="p1", iqn="q", lun=1),
                 inline_volume("b", "iscsi", targetPortal="p2", iqn="q", lun=2), True, id="iscsi-same-iqn"),
    pytest.param(inline_volume("a", "iscsi", targetPortal="p", iqn="q", lun=1, readOnly=True),
                 inline_volume("b", "iscsi", targetPortal="p", iqn="q", lun=1, readOnly=True), False,
                 id="iscsi-both-read-only"),
    pytest.param(_rbd("a", ["m1", "m2"]), _rbd("b", ["m2", "m3"]), True, id="rbd-shared-monitor"),
    pytest.param(_rbd("a", ["m1"], pool=None), _rbd("b", ["m1"], pool="rbd"), True, id="rbd-default-pool"),
    pytest.param(_rbd("a", ["m1"]), _rbd("b", ["m2"]), False, id="rbd-no-shared-monitor"),
    pytest.param(_rbd("a", ["m1"], pool="x"), _rbd("b", ["m1"]), False, id="rbd-other-pool"),
    pytest.param(_rbd("a", ["m1"], image="i"), _rbd("b", ["m1"], image="j"), False, id="rbd-other-image"),
    pytest.param(_rbd("a", ["m1"], read_only=True), _rbd("b", ["m1"], read_only=True), False,
                 id="rbd-both-read-only"),
    pytest.param(_gce("a", "v"), inline_volume("b", "awsElasticBlockStore", volumeID="v"), False,
                 id="different-kinds"),
]


@pytest.mark.parametrize(("mine", "theirs", "conflict"), DISKS)
def test_disk_conflicts(mine: Volume, theirs: Volume, conflict: bool) -> None:
    existing = _pod("old", theirs, node="n1")
    plugin = _plugin(("n1", (existing,)))
    pod = _pod("p", mine)
    state = CycleState()
    assert plugin.pre_filter(state, pod) == Status.success()
    status = plugin.filter(state, pod, node_info(make_node("n1"), existing))
    if conflict:
        assert (status.code, status.message()) == (Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT)
    else:
        assert status == Status.success()
    assert plugin.filter(state, pod, node_info(make_node("n2"))) == Status.success()


def test_disk_conflict_is_reported_before_the_rwop_conflict() -> None:
    holder = _pod("holder", claim_volume("data"), _gce("d", "disk"), node="n1")
    plugin = _plugin(("n1", (holder,)), storage=(make_pvc("data", modes=RWOP),))
    pod = _pod("p", claim_volume("data"), _gce("d", "disk"))
    state = CycleState()
    plugin.pre_filter(state, pod)
    assert plugin.filter(state, pod, node_info(make_node("n1"), holder)).message() == ERR_REASON_DISK_CONFLICT


def test_a_disk_behind_a_claim_never_conflicts_here() -> None:
    holder = _pod("holder", claim_volume("data"), node="n1")
    plugin = _plugin(("n1", (holder,)), storage=(make_pvc("data"),))
    pod = _pod("p", _gce("d", "disk"), claim_volume("data"))
    state = CycleState()
    plugin.pre_filter(state, pod)
    assert plugin.filter(state, pod, node_info(make_node("n1"), holder)) == Status.success()


_pds = st.sampled_from(["d1", "d2", "d3"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_pds, st.booleans()), min_size=1, max_size=3),
       st.lists(st.lists(st.tuples(_pds, st.booleans()), max_size=3), max_size=4))
def test_gce_conflicts_match_a_brute_force_statement(
    mine: list[tuple[str, bool]], others: list[list[tuple[str, bool]]]
) -> None:
    pods = [_pod(f"o{i}", *(_gce(f"v{j}", pd, ro) for j, (pd, ro) in enumerate(vols)), node="n")
            for i, vols in enumerate(others)]
    info = node_info(make_node("n"), *pods)
    disks = [inline_source(_gce(f"m{i}", pd, ro)) for i, (pd, ro) in enumerate(mine)]
    expected_conflict = any(pd == opd and not (ro and oro) for pd, ro in mine for vols in others for opd, oro in vols)
    assert satisfies_volume_conflicts([d for d in disks if d is not None], info) is not expected_conflict


# --- the used-claim bookkeeping it reads (NodeInfo, Snapshot, cache) -------------------------


def test_node_info_counts_claim_volumes_per_namespace() -> None:
    a = _pod("a", claim_volume("data"), claim_volume("logs"), node="n")
    b = _pod("b", claim_volume("data"), Volume("e", ephemeral=True, source_kind="ephemeral"), node="n")
    c = _pod("c", claim_volume("data"), node="n", namespace="other")
    info = node_info(make_node("n"), a, b, c)
    assert info.pvc_ref_counts == {"default/data": 2, "default/logs": 1, "other/data": 1}
    assert info.without_pod(a).pvc_ref_counts == {"default/data": 1, "other/data": 1}
    assert info.without_pod(a).without_pod(b).without_pod(c).pvc_ref_counts == {}
    plain = node_info(make_node("n"), _pod("x", node="n"))
    assert plain.with_pod(PodInfo.of(_pod("y", node="n"))).pvc_ref_counts is plain.pvc_ref_counts


def test_snapshot_used_claims_come_from_listed_nodes_only() -> None:
    cache = Cache()
    cache.add_node(make_node("n1"))
    cache.add_node(make_node("n2"))
    cache.add_pod(PodInfo.of(_pod("a", claim_volume("data"), node="n1")))
    cache.add_pod(PodInfo.of(_pod("g", claim_volume("ghost"), node="gone")))
    snapshot = cache.snapshot()
    assert snapshot.used_pvcs == {"default/data"}
    assert snapshot.is_pvc_used_by_pods("default/data")
    assert not snapshot.is_pvc_used_by_pods("default/ghost")
    cache.add_pod(PodInfo.of(_pod("b", claim_volume("logs"), node="n2")))
    cache.remove_pod(_pod("a", claim_volume("data"), node="n1"))
    assert cache.snapshot().used_pvcs == {"default/logs"}
    cache.remove_node("n2")
    assert cache.snapshot().used_pvcs == frozenset()
    assert Snapshot([node_info(make_node("n"), _pod("z", claim_volume("x"), node="n"))]).used_pvcs == {"default/x"}
