"""VolumeBinding: PreFilter classification and narrowing, Filter's four reasons, Reserve/PreBind/Unreserve,
args; and properties of whole scheduling runs with volumes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Scheduler, simulate
from kschedlib._internal.store import StorageStore
from kschedlib.errors import ConfigError
from kschedlib.framework import CycleState, PreFilterResult, Status
from kschedlib.framework.status import Code
from kschedlib.model import parse_quantity
from kschedlib.model.labels import LabelSelector, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.model.objects import OwnerReference, Pod, Volume
from kschedlib.model.storage import (
    ClaimRef,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    CSIVolumeSource,
    GCEPersistentDiskVolumeSource,
    LocalVolumeSource,
    PersistentVolumeClaim,
    TopologySelectorRequirement,
    TopologySelectorTerm,
)
from kschedlib.plugins.volume_binding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    ERR_UNBOUND_IMMEDIATE,
    STATE_KEY,
    VolumeBinding,
    VolumeBindingArgs,
    decode_args,
)
from kschedlib.testing import FakeHandle
from tests.helpers import (
    claim_volume,
    hostname_affinity,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_storage_class,
    node_info,
)

ZONE = "topology.kubernetes.io/zone"
SELECTED = "volume.kubernetes.io/selected-node"


def _pod(*volumes: Volume, name: str = "p") -> Pod:
    return make_pod(name, uid=f"default/{name}", volumes=tuple(volumes))


def _zone_affinity(*zones: str) -> NodeSelector:
    return NodeSelector((NodeSelectorTerm((NodeSelectorRequirement(ZONE, "In", zones),)),))


def _node(name: str, zone: str = "a", **labels: str) -> Any:
    return make_node(name, labels={"kubernetes.io/hostname": name, ZONE: zone, **labels})


def _plugin(*storage: object) -> tuple[VolumeBinding, FakeHandle]:
    handle = FakeHandle(kube_version="1.30", storage=storage)
    return VolumeBinding(None, handle), handle


# --- PreFilter ------------------------------------------------------------------------------

LOCAL = make_storage_class("local")
IMMEDIATE = make_storage_class("fast", provisioner="ebs.csi.aws.com", mode="Immediate")
NOT_OWNED = make_pvc("p-scratch", owner_references=(OwnerReference("Pod", "p", "other-uid", "v1", True),))

PRE_FILTER_FAILURES = [
    pytest.param((claim_volume("nope"),), (), 'persistentvolumeclaim "nope" not found', id="claim-missing"),
    pytest.param((Volume("scratch", ephemeral=True, source_kind="ephemeral"),), (),
                 'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"',
                 id="ephemeral-claim-missing"),
    pytest.param((claim_volume("c"),), (make_pvc("c", volume_name="pv", phase="Lost"),),
                 'persistentvolumeclaim "c" bound to non-existent persistentvolume "pv"', id="claim-lost"),
    pytest.param((claim_volume("c"),), (make_pvc("c", deletion_timestamp=1.0),),
                 'persistentvolumeclaim "c" is being deleted', id="claim-being-deleted"),
    pytest.param((Volume("scratch", ephemeral=True, source_kind="ephemeral"),), (NOT_OWNED,),
                 "PVC default/p-scratch was not created for pod default/p (pod is not owner)",
                 id="ephemeral-not-owned"),
    pytest.param((claim_volume("c"),), (make_pvc("c"),), ERR_UNBOUND_IMMEDIATE, id="unbound-without-class"),
    pytest.param((claim_volume("c"),), (make_pvc("c", class_name="fast"), IMMEDIATE), ERR_UNBOUND_IMMEDIATE,
                 id="unbound-immediate-class"),
    pytest.param((claim_volume("c"),), (make_pvc("c", class_name="gone"),), ERR_UNBOUND_IMMEDIATE,
                 id="unbound-class-missing"),
    pytest.param((claim_volume("c"),), (PersistentVolumeClaim("c", storage_class_name="local", volume_name="pv"),
                                        LOCAL, make_pv("pv")), ERR_UNBOUND_IMMEDIATE,
                 id="volume-name-without-bind-completed"),
]


@pytest.mark.parametrize(("volumes", "storage", "reason"), PRE_FILTER_FAILURES)
def test_pre_filter_failures(volumes: tuple[Volume, ...], storage: tuple[object, ...], reason: str) -> None:
    plugin, _ = _plugin(*storage)
    assert plugin.pre_filter(CycleState(), _pod(*volumes)) == Status.unresolvable(reason)


def test_class_without_binding_mode_is_an_error() -> None:
    plugin, _ = _plugin(make_pvc("c", class_name="s"), make_storage_class("s", mode=None))
    status = plugin.pre_filter(CycleState(), _pod(claim_volume("c")))
    assert isinstance(status, Status)
    assert (status.code, status.message()) == (Code.ERROR, 'VolumeBindingMode not set for StorageClass "s"')


def test_pods_without_claims_skip_and_still_reserve() -> None:
    plugin, _ = _plugin()
    state = CycleState()
    pod = _pod(Volume("tmp", source_kind="emptyDir"))
    assert plugin.pre_filter(state, pod) == Status.skip()
    assert plugin.pre_score(state, pod, ()) == Status.skip()
    assert plugin.reserve(state, pod, "n") == Status.success()
    assert plugin.pre_bind(state, pod, "n") == Status.success()
    plugin.unreserve(state, pod, "n")
    assert plugin.reserve(CycleState(), pod, "n").code is Code.ERROR


NARROWING = [
    pytest.param((hostname_affinity("n1"),), frozenset({"n1"}), id="one-local-pv"),
    pytest.param((hostname_affinity("n1", "n2"), hostname_affinity("n2", "n3")), frozenset({"n2"}),
                 id="intersection-over-pvs"),
    pytest.param((hostname_affinity("n1"), hostname_affinity("n2")), frozenset(), id="disjoint-pvs-empty"),
    pytest.param((_zone_affinity("a"),), None, id="zone-only-all-nodes"),
    pytest.param((None,), None, id="no-affinity-all-nodes"),
    pytest.param((NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("kubernetes.io/hostname", "In", ("n1",)),)),
                                NodeSelectorTerm((NodeSelectorRequirement(ZONE, "In", ("a",)),)))),),
                 frozenset({"n1"}), id="hostname-term-or-zone-term-narrows-to-hostname"),
    pytest.param((NodeSelector((NodeSelectorTerm((
        NodeSelectorRequirement("kubernetes.io/hostname", "In", ("n1", "n2")),
        NodeSelectorRequirement("kubernetes.io/hostname", "In", ("n2", "n3")))),
        NodeSelectorTerm((NodeSelectorRequirement("kubernetes.io/hostname", "In", ("n4",)),)))),),
        frozenset({"n2", "n4"}), id="intersect-within-term-union-across"),
    pytest.param((NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("kubernetes.io/hostname", "NotIn",
                                                                          ("n1",)),)),)),), None,
                 id="notin-ignored"),
]


@pytest.mark.parametrize(("affinities", "expected"), NARROWING)
def test_pre_filter_result_from_bound_volumes(affinities: tuple[NodeSelector | None, ...],
                                              expected: frozenset[str] | None) -> None:
    storage: list[object] = []
    for i, affinity in enumerate(affinities):
        storage += [make_pvc(f"c{i}", volume_name=f"pv{i}"), make_pv(f"pv{i}", affinity=affinity)]
    plugin, _ = _plugin(*storage)
    result = plugin.pre_filter(CycleState(), _pod(*(claim_volume(f"c{i}") for i in range(len(affinities)))))
    if expected is None:
        assert result == Status.success()
    else:
        assert result == PreFilterResult(expected)


def test_a_missing_bound_volume_means_all_nodes() -> None:
    plugin, _ = _plugin(make_pvc("c0", volume_name="pv0"), make_pv("pv0", affinity=hostname_affinity("n1")),
                        make_pvc("c1", volume_name="gone"))
    assert plugin.pre_filter(CycleState(), _pod(claim_volume("c0"), claim_volume("c1"))) == Status.success()


# --- Filter ---------------------------------------------------------------------------------


def _filter(storage: tuple[object, ...], volumes: tuple[Volume, ...], node: Any) -> Status:
    plugin, _ = _plugin(*storage)
    state = CycleState()
    pre = plugin.pre_filter(state, _pod(*volumes))
    assert not isinstance(pre, Status) or pre.code is Code.SUCCESS, pre
    return plugin.filter(state, _pod(*volumes), node_info(node))


def _delayed(name: str, size: str = "5Gi", **fields: Any) -> Any:
    return make_pvc(name, class_name="local", size=size, **fields)


CSI = make_storage_class("csi", provisioner="example.csi.k8s.io")
TOPO = make_storage_class("topo", provisioner="example.csi.k8s.io", allowed_topologies=(
    TopologySelectorTerm((TopologySelectorRequirement(ZONE, ("a", "b")),)),))

FILTER = [
    pytest.param((make_pvc("c", volume_name="pv"), make_pv("pv", affinity=_zone_affinity("a"))), ("c",), "n1", (),
                 id="bound-affinity-match"),
    pytest.param((make_pvc("c", volume_name="pv"), make_pv("pv", affinity=_zone_affinity("b"))), ("c",), "n1",
                 (ERR_REASON_NODE_CONFLICT,), id="bound-affinity-conflict"),
    pytest.param((make_pvc("c", volume_name="gone"),), ("c",), "n1", (ERR_REASON_PV_NOT_EXIST,),
                 id="bound-pv-missing"),
    pytest.param((make_pvc("c", volume_name="pv"), make_pv("pv", affinity=_zone_affinity("b")),
                  make_pvc("d", volume_name="gone")), ("c", "d"), "n1", (ERR_REASON_NODE_CONFLICT,),
                 id="conflict-stops-before-missing-pv"),
    pytest.param((_delayed("c"), LOCAL, make_pv("pv", class_name="local", affinity=hostname_affinity("n1"))), ("c",),
                 "n1", (), id="static-match"),
    pytest.param((_delayed("c"), LOCAL, make_pv("pv", class_name="local", affinity=hostname_affinity("n2"))), ("c",),
                 "n1", (ERR_REASON_BIND_CONFLICT,), id="static-affinity-elsewhere"),
    pytest.param((_delayed("c", size="20Gi"), LOCAL, make_pv("pv", class_name="local")), ("c",), "n1",
                 (ERR_REASON_BIND_CONFLICT,), id="static-too-small"),
    pytest.param((_delayed("c", volume_mode="Block"), LOCAL, make_pv("pv", class_name="local")), ("c",), "n1",
                 (ERR_REASON_BIND_CONFLICT,), id="static-volume-mode"),
    pytest.param((_delayed("c", modes=("ReadWriteMany",)), LOCAL, make_pv("pv", class_name="local")), ("c",), "n1",
                 (ERR_REASON_BIND_CONFLICT,), id="static-access-modes"),
    pytest.param((_delayed("c", selector=LabelSelector({"tier": "gold"})), LOCAL, make_pv("pv", class_name="local")),
                 ("c",), "n1", (ERR_REASON_BIND_CONFLICT,), id="static-selector"),
    pytest.param((_delayed("c"), LOCAL, make_pv("pv", class_name="local", phase="Released")), ("c",), "n1",
                 (ERR_REASON_BIND_CONFLICT,), id="static-not-available"),
    pytest.param((_delayed("c"), LOCAL, make_pv("pv", class_name="local", deletion_timestamp=1.0)), ("c",), "n1",
                 (ERR_REASON_BIND_CONFLICT,), id="static-being-deleted"),
    pytest.param((_delayed("c"), LOCAL, make_pv("pv", class_name="local", claim=make_pvc("x"))), ("c",), "n1",
                 (ERR_REASON_BIND_CONFLICT,), id="static-claimed-by-another"),
    pytest.param((_delayed("c"), LOCAL, make_pv("pv", class_name="local", claim=_delayed("c"))), ("c",), "n1", (),
                 id="static-pre-bound-even-if-not-available"),
    pytest.param((_delayed("c"), LOCAL, make_pv("pv", class_name="local", claim=_delayed("c"),
                                               affinity=hostname_affinity("n2")),
                  make_pv("pv2", class_name="local")), ("c",), "n1", (ERR_REASON_BIND_CONFLICT,),
                 id="pre-bound-elsewhere-stops-the-search"),
    pytest.param((_delayed("small", size="1Gi"), _delayed("big", size="8Gi"), LOCAL,
                  make_pv("pv-10", class_name="local", size="10Gi"), make_pv("pv-2", class_name="local", size="2Gi")),
                 ("big", "small"), "n1", (), id="two-claims-two-pvs"),
    pytest.param((_delayed("small", size="1Gi"), _delayed("big", size="8Gi"), LOCAL,
                  make_pv("pv-10", class_name="local", size="10Gi")), ("big", "small"), "n1",
                 (ERR_REASON_BIND_CONFLICT,), id="greedy-small-claim-takes-the-only-pv"),
    pytest.param((_delayed("c", annotations={SELECTED: "n2"}), LOCAL), ("c",), "n1", (ERR_REASON_BIND_CONFLICT,),
                 id="selected-for-another-node"),
    pytest.param((make_pvc("c", class_name="csi", annotations={SELECTED: "n1"}), make_storage_class(
        "csi", provisioner="example.csi.k8s.io")), ("c",), "n1", (), id="selected-for-this-node-provisions"),
    pytest.param((make_pvc("c", class_name="csi"), CSI), ("c",), "n1", (), id="dynamic-provisioning"),
    pytest.param((_delayed("c"), LOCAL), ("c",), "n1", (ERR_REASON_BIND_CONFLICT,), id="no-provisioner"),
    pytest.param((make_pvc("c", class_name="topo"), TOPO), ("c",), "n1", (), id="allowed-topology-match"),
    pytest.param((make_pvc("c", class_name="topo"), TOPO), ("c",), "n3", (ERR_REASON_BIND_CONFLICT,),
                 id="allowed-topology-mismatch"),
    pytest.param((make_pvc("c", volume_name="pv"), make_pv("pv", affinity=_zone_affinity("b")),
                  make_pvc("d", class_name="topo"), TOPO), ("c", "d"), "n3",
                 (ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT), id="node-and-bind-conflicts"),
    pytest.param((make_pvc("c", volume_name="gone"), make_pvc("d", class_name="topo"), TOPO), ("c", "d"), "n3",
                 (ERR_REASON_BIND_CONFLICT, ERR_REASON_PV_NOT_EXIST), id="bind-conflict-and-missing-pv"),
]


@pytest.mark.parametrize(("storage", "claims", "node", "reasons"), FILTER)
def test_filter(storage: tuple[object, ...], claims: tuple[str, ...], node: str, reasons: tuple[str, ...]) -> None:
    nodes = {"n1": _node("n1", "a"), "n2": _node("n2", "a"), "n3": _node("n3", "c")}
    status = _filter(storage, tuple(claim_volume(c) for c in claims), nodes[node])
    if reasons:
        assert (status.code, status.all_reasons()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
    else:
        assert status == Status.success()


CAPACITY_DRIVER = CSIDriver("example.csi.k8s.io", storage_capacity=True)


def _capacity(name: str, size: str | None, max_size: str | None = None, zone: str | None = "a",
              class_name: str = "csi") -> CSIStorageCapacity:
    return CSIStorageCapacity(name, "kube-system", class_name, parse_quantity(size) if size else None,
                              parse_quantity(max_size) if max_size else None,
                              LabelSelector({ZONE: zone}) if zone is not None else None)


CAPACITY = [
    pytest.param((), (), id="driver-without-capacity-tracking"),
    pytest.param((CAPACITY_DRIVER, _capacity("c", "10Gi")), (), id="enough-capacity"),
    pytest.param((CAPACITY_DRIVER, _capacity("c", "1Gi")), (ERR_REASON_NOT_ENOUGH_SPACE,), id="too-little"),
    pytest.param((CAPACITY_DRIVER, _capacity("c", "100Gi", max_size="1Gi")), (ERR_REASON_NOT_ENOUGH_SPACE,),
                 id="maximum-volume-size-wins"),
    pytest.param((CAPACITY_DRIVER, _capacity("c", "10Gi", zone="b")), (ERR_REASON_NOT_ENOUGH_SPACE,),
                 id="other-topology"),
    pytest.param((CAPACITY_DRIVER, _capacity("c", "10Gi", zone=None)), (ERR_REASON_NOT_ENOUGH_SPACE,),
                 id="no-topology-is-unreachable"),
    pytest.param((CAPACITY_DRIVER, _capacity("c", "10Gi", class_name="x")), (ERR_REASON_NOT_ENOUGH_SPACE,),
                 id="other-class"),
    pytest.param((CAPACITY_DRIVER,), (ERR_REASON_NOT_ENOUGH_SPACE,), id="no-capacity-objects"),
]


@pytest.mark.parametrize(("extra", "reasons"), CAPACITY)
def test_storage_capacity(extra: tuple[object, ...], reasons: tuple[str, ...]) -> None:
    status = _filter((make_pvc("c", class_name="csi"), CSI, *extra), (claim_volume("c"),), _node("n1", "a"))
    assert status.all_reasons() == reasons


def test_claim_without_storage_request_skips_the_capacity_check() -> None:
    status = _filter((make_pvc("c", class_name="csi", size=None), CSI, CAPACITY_DRIVER), (claim_volume("c"),),
                     _node("n1"))
    assert status == Status.success()


def test_static_match_failure_is_replaced_by_provisioning() -> None:
    storage = (make_pvc("c", class_name="csi"), CSI, make_pv("pv", class_name="csi", affinity=hostname_affinity("n2")),
               CAPACITY_DRIVER, _capacity("cap", "1Gi"))
    status = _filter(storage, (claim_volume("c"),), _node("n1"))
    assert status.all_reasons() == (ERR_REASON_NOT_ENOUGH_SPACE,), "capacity failure alone, bind conflict cleared"


def test_migrated_in_tree_volume_is_checked_against_the_csi_topology() -> None:
    pv = make_pv("pv", source=GCEPersistentDiskVolumeSource("disk"), affinity=_zone_affinity("a"),
                 labels={ZONE: "a"})
    migrated = CSINode("n1", {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"})
    claims = (claim_volume("c"),)
    plain = _filter((make_pvc("c", volume_name="pv"), pv), claims, _node("n1", "a"))
    assert plain == Status.success()
    translated = _filter((make_pvc("c", volume_name="pv"), pv, migrated), claims, _node("n1", "a"))
    assert translated.all_reasons() == (ERR_REASON_NODE_CONFLICT,)
    with_csi_label = _filter((make_pvc("c", volume_name="pv"), pv, migrated), claims,
                             _node("n1", "a", **{"topology.gke.io/zone": "a"}))
    assert with_csi_label == Status.success()
    not_listed = _filter((make_pvc("c", volume_name="pv"), pv, CSINode("n1")), claims, _node("n1", "a"))
    assert not_listed == Status.success()


def test_untranslatable_migrated_volume_is_an_error() -> None:
    pv = make_pv("pv", source=GCEPersistentDiskVolumeSource("disk"), labels={ZONE: "bad__zones"})
    migrated = CSINode("n1", {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"})
    status = _filter((make_pvc("c", volume_name="pv"), pv, migrated), (claim_volume("c"),), _node("n1"))
    assert status.code is Code.ERROR
    assert status.message().startswith("could not translate pv: failed to get region from zones: zone in unexpected")


def test_class_vanishing_before_provisioning_is_an_error() -> None:
    plugin, handle = _plugin(make_pvc("c", class_name="local"), LOCAL)
    state = CycleState()
    assert plugin.pre_filter(state, _pod(claim_volume("c"))) == Status.success()
    del handle.storage.classes["local"]
    status = plugin.filter(state, _pod(claim_volume("c")), node_info(_node("n1")))
    assert (status.code, status.message()) == (Code.ERROR, 'failed to find storage class "local"')


# --- Reserve, PreBind, Unreserve ------------------------------------------------------------


def _reserved(*storage: object, node: str = "n1") -> tuple[VolumeBinding, FakeHandle, CycleState, Pod]:
    plugin, handle = _plugin(*storage)
    pod = _pod(claim_volume("c"))
    state = CycleState()
    plugin.pre_filter(state, pod)
    assert plugin.filter(state, pod, node_info(_node(node))) == Status.success()
    assert plugin.reserve(state, pod, node) == Status.success()
    return plugin, handle, state, pod


def test_reserve_binds_the_chosen_volume_and_unreserve_restores_it() -> None:
    claim = _delayed("c")
    pv = make_pv("pv", class_name="local")
    plugin, handle, state, pod = _reserved(claim, LOCAL, pv)
    bound_pv = handle.storage.get_pv("pv")
    bound_claim = handle.storage.get_pvc("default", "c")
    assert bound_pv is not None
    assert bound_claim is not None
    assert (bound_pv.claim_ref, bound_pv.phase) == (ClaimRef("c", "default", claim.uid), "Bound")
    assert bound_pv.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert (bound_claim.volume_name, bound_claim.phase) == ("pv", "Bound")
    assert "pv.kubernetes.io/bind-completed" in bound_claim.annotations
    plugin.unreserve(state, pod, "n1")
    assert handle.storage.get_pv("pv") == pv
    assert handle.storage.get_pvc("default", "c") == claim
    plugin.unreserve(state, pod, "n1")
    assert handle.storage.get_pv("pv") == pv, "idempotent"


def test_pre_bind_commits_so_unreserve_keeps_the_binding() -> None:
    plugin, handle, state, pod = _reserved(_delayed("c"), LOCAL, make_pv("pv", class_name="local"))
    assert plugin.pre_bind(state, pod, "n1") == Status.success()
    plugin.unreserve(state, pod, "n1")
    claim = handle.storage.get_pvc("default", "c")
    assert claim is not None
    assert claim.volume_name == "pv"


def test_reserve_selects_the_node_for_provisioning() -> None:
    _, handle, _, _ = _reserved(make_pvc("c", class_name="csi"), CSI)
    claim = handle.storage.get_pvc("default", "c")
    assert claim is not None
    assert claim.annotations[SELECTED] == "n1"
    assert claim.volume_name == ""


def test_bound_claims_need_no_binding() -> None:
    storage = (make_pvc("c", volume_name="pv"), make_pv("pv", claim=make_pvc("c")))
    plugin, handle, state, pod = _reserved(*storage)
    assert state.read(STATE_KEY).all_bound
    assert plugin.pre_bind(state, pod, "n1") == Status.success()
    assert handle.storage.get_pv("pv") == storage[1]


def test_pre_bind_without_volumes_for_the_node_is_an_error() -> None:
    plugin, _, state, pod = _reserved(_delayed("c"), LOCAL, make_pv("pv", class_name="local"))
    status = plugin.pre_bind(state, pod, "elsewhere")
    assert (status.code, status.message()) == (Code.ERROR, 'no pod volumes found for node "elsewhere"')


def test_pre_score_always_skips() -> None:
    plugin, _, state, pod = _reserved(_delayed("c"), LOCAL, make_pv("pv", class_name="local"))
    assert state.read(STATE_KEY).has_static_bindings
    assert plugin.pre_score(state, pod, ()) == Status.skip()
    assert plugin.score(state, pod, node_info(_node("n1"))) == 0


# --- args -----------------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert decode_args(None) == VolumeBindingArgs(600)
    assert decode_args({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "VolumeBindingArgs"}) == (
        VolumeBindingArgs(600))
    assert decode_args({"bindTimeoutSeconds": 0}) == VolumeBindingArgs(0)
    assert decode_args({"bindTimeoutSeconds": None, "shape": None}) == VolumeBindingArgs(600)


@pytest.mark.parametrize(("raw", "field", "message"), [
    pytest.param({"bindTimeoutSeconds": -1}, "bindTimeoutSeconds",
                 "invalid BindTimeoutSeconds, should not be a negative value", id="negative-timeout"),
    pytest.param({"bindTimeoutSeconds": "600"}, "bindTimeoutSeconds", "must be an integer", id="timeout-string"),
    pytest.param({"bindTimeoutSeconds": True}, "bindTimeoutSeconds", "must be an integer", id="timeout-bool"),
    pytest.param({"shape": [{"utilization": 0, "score": 0}]}, "shape",
                 "unsupported when VolumeCapacityPriority is disabled", id="shape-without-gate"),
    pytest.param({"shape": []}, "shape", "unsupported when VolumeCapacityPriority is disabled", id="empty-shape"),
])
def test_args_validation(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args(raw)
    assert (info.value.field, info.value.message) == (field, message)


# --- whole runs: properties of placements through the Scheduler -----------------------------

DRIVER = "ebs.csi.aws.com"
_SIZES = ("1Gi", "5Gi", "10Gi")


@st.composite
def _volume_clusters(draw: st.DrawFn) -> tuple[list[object], dict[str, int]]:
    """Nodes with a CSI attach limit, CSI and local volumes, claims (some ReadWriteOncePod), and pending
    pods that share the claims."""
    node_count = draw(st.integers(1, 4))
    names = [f"n{i}" for i in range(node_count)]
    limits = {name: draw(st.integers(0, 3)) for name in names}
    objects: list[object] = [_node(name, zone=draw(st.sampled_from(["a", "b"]))) for name in names]
    objects += [CSINode(name, {}, (CSINodeDriver(DRIVER, name, limit),)) for name, limit in limits.items()]
    objects += [make_storage_class("csi", provisioner=DRIVER), make_storage_class("local")]
    for i in range(draw(st.integers(0, 6))):
        local = draw(st.booleans())
        host = draw(st.sampled_from([None, *names]))
        objects.append(make_pv(
            f"pv{i}", size=draw(st.sampled_from(_SIZES)), class_name="local" if local else "csi",
            modes=("ReadWriteOnce", "ReadWriteOncePod"),
            source=LocalVolumeSource("/mnt") if local else CSIVolumeSource(DRIVER, f"handle-{i}"),
            affinity=hostname_affinity(host or names[0]) if local or host else None,
        ))
    claims = [f"c{i}" for i in range(draw(st.integers(1, 6)))]
    for claim in claims:
        objects.append(make_pvc(claim, class_name=draw(st.sampled_from(["csi", "local"])),
                                size=draw(st.sampled_from(_SIZES)),
                                modes=draw(st.sampled_from([("ReadWriteOnce",), ("ReadWriteOncePod",)]))))
    for i in range(draw(st.integers(1, 7))):
        used = draw(st.lists(st.sampled_from(claims), min_size=1, max_size=2, unique=True))
        objects.append(_pod(*(claim_volume(c) for c in used), name=f"p{i}"))
    return objects, limits


def _counted_volumes(pod: Pod, storage: StorageStore) -> set[str]:
    """Brute force: the CSI volumes of ``pod`` (bound CSI volumes by handle, unbound CSI claims by claim)."""
    found = set()
    for volume in pod.volumes:
        pvc = storage.get_pvc(pod.namespace, volume.claim_name or "")
        assert pvc is not None
        pv = storage.get_pv(pvc.volume_name) if pvc.volume_name else None
        if pv is not None:
            if isinstance(pv.source, CSIVolumeSource):
                found.add(f"{pv.source.driver}/{pv.source.volume_handle}")
        elif pvc.storage_class_name == "csi":
            found.add(f"claim/{pvc.key}")
    return found


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_volume_clusters(), st.integers(0, 3))
def test_placements_respect_volume_invariants(cluster: tuple[list[object], dict[str, int]], seed: int) -> None:
    objects, limits = cluster
    scheduler = Scheduler(seed=seed, clock=FakeClock(), retry_unschedulable=False)
    scheduler.add_objects(objects)
    results = scheduler.run_until_idle()
    placed = {r.pod.key: r.pod for r in results if r.node_name is not None}
    storage = scheduler._engine.store.storage
    bound = sum(1 for c in storage.pvcs.values() if c.volume_name)
    event(f"placed {min(len(placed), 3)}+ pods, bound {min(bound, 2)}+ claims")
    # no ReadWriteOncePod claim is used by two pods
    users: dict[str, int] = {}
    for pod in placed.values():
        for volume in pod.volumes:
            pvc = storage.get_pvc(pod.namespace, volume.claim_name or "")
            assert pvc is not None
            if "ReadWriteOncePod" in pvc.access_modes:
                users[pvc.key] = users.get(pvc.key, 0) + 1
    assert all(count <= 1 for count in users.values()), users
    # no node attaches more volumes of the driver than its CSINode allows
    for node, limit in limits.items():
        attached = set().union(*(_counted_volumes(p, storage) for p in placed.values() if p.node_name == node))
        assert len(attached) <= limit, (node, attached)
    # no volume is bound to two claims, and bindings agree on both sides
    owners: dict[str, str] = {}
    for pvc in storage.pvcs.values():
        if pvc.volume_name:
            assert pvc.volume_name not in owners, (pvc.volume_name, owners)
            owners[pvc.volume_name] = pvc.key
            pv = storage.get_pv(pvc.volume_name)
            assert pv is not None
            assert pv.claim_ref is not None
            assert (pv.claim_ref.namespace, pv.claim_ref.name) == (pvc.namespace, pvc.name)
    for pv in storage.pvs.values():
        if pv.claim_ref is not None:
            assert owners.get(pv.name) == f"{pv.claim_ref.namespace}/{pv.claim_ref.name}"
    # every placed pod's claims are bound to a volume usable on its node, or provisioned for its node
    for pod in placed.values():
        for volume in pod.volumes:
            pvc = storage.get_pvc(pod.namespace, volume.claim_name or "")
            assert pvc is not None
            if pvc.volume_name:
                pv = storage.get_pv(pvc.volume_name)
                assert pv is not None
                labels = {"kubernetes.io/hostname": pod.node_name}
                assert pv.node_affinity is None or pv.node_affinity.matches("", labels) or any(
                    req.key != "kubernetes.io/hostname" for t in pv.node_affinity.terms for req in t.match_expressions)
            else:
                assert pvc.annotations.get(SELECTED) == pod.node_name, (pod.key, pvc)


def test_simulate_never_gives_one_volume_to_two_claims() -> None:
    def claim(name: str) -> dict[str, Any]:
        return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                         "resources": {"requests": {"storage": "1Gi"}}}}

    def pod(name: str, claim_name: str) -> dict[str, Any]:
        return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {"containers": [{"name": "c"}],
                         "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim_name}}]}}

    cluster = [
        {"kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
        {"kind": "StorageClass", "metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner",
         "volumeBindingMode": "WaitForFirstConsumer"},
        {"kind": "PersistentVolume", "metadata": {"name": "pv"},
         "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                  "local": {"path": "/mnt"}},
         "status": {"phase": "Available"}},
        claim("a"), claim("b"), pod("p1", "a"), pod("p2", "b"), pod("p3", "a"),
    ]
    report = simulate(cluster, once=True)
    assert report.placements == {"default/p1": "n1", "default/p2": None, "default/p3": "n1"}
    assert report.unschedulable["default/p2"].startswith(
        "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.")
