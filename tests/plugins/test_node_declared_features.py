"""NodeDeclaredFeatures (switch ``node_declared_features``: v1.36, gate NodeDeclaredFeatures).

Tables from kube's ``nodedeclaredfeatures_test.go`` (PreFilter, Filter, the two queueing hints,
EventsToRegister) and from the v1.36 feature registry's inference tests
(``restartallcontainers``, ``usernamespaceshostnetwork``), written against the real registry.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedlib import Scheduler, explain
from kschedlib.clock import FakeClock
from kschedlib.errors import ManifestError
from kschedlib.framework import CycleState
from kschedlib.framework.events import NODE, POD, ActionType, QueueingHint
from kschedlib.framework.status import Code, Status
from kschedlib.model import Container, Node, Pod
from kschedlib.model.convert import node_from_dict, pod_from_dict
from kschedlib.model.objects import ContainerRestartRule
from kschedlib.plugins.node_declared_features import (
    ERR_REASON,
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    NodeDeclaredFeatures,
    after_node_change,
    after_pod_update,
    declared_features,
    required_features,
)
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, node_info

RESTART_ALL = ContainerRestartRule("RestartAllContainers", "In", (42,))
RESTART = ContainerRestartRule("Restart", "In", (1,))


def plugin(kube_version: str = "1.36", **gates: bool) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(None, FakeHandle(kube_version=kube_version, feature_gates=gates or None))


def restart_all_pod(name: str = "p", *, init: bool = False, uid: str = "") -> Pod:
    container = Container("c", restart_policy_rules=(RESTART_ALL,))
    if init:
        return Pod(name, uid=uid, init_containers=(attrs.evolve(container, restart_policy="Always"),))
    return Pod(name, uid=uid, containers=(container,))


def declaring(name: str, *features: str) -> Node:
    return attrs.evolve(make_node(name), declared_features=features)


# --- inference (the v1.36 registry) ---------------------------------------------------------------


@pytest.mark.parametrize(("pod", "expected"), [
    pytest.param(Pod("p", containers=(Container("c"),)), set(), id="no-rules"),
    pytest.param(Pod("p", containers=(Container("c", restart_policy_rules=(RESTART,)),)), set(),
                 id="restart-rule-only"),
    pytest.param(restart_all_pod(), {RESTART_ALL_CONTAINERS}, id="restart-all-in-container"),
    pytest.param(restart_all_pod(init=True), {RESTART_ALL_CONTAINERS}, id="restart-all-in-init-container"),
    pytest.param(Pod("p", host_network=True, host_users=False), {USER_NAMESPACES_HOST_NETWORK},
                 id="host-network-without-host-users"),
    pytest.param(Pod("p", host_network=True, host_users=True), set(), id="host-network-with-host-users"),
    pytest.param(Pod("p", host_network=True), set(), id="host-network-host-users-unset"),
    pytest.param(Pod("p", host_users=False), set(), id="user-namespace-pod-network"),
    pytest.param(attrs.evolve(restart_all_pod(), host_network=True, host_users=False),
                 {RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK}, id="both"),
])
def test_required_features(pod: Pod, expected: set[str]) -> None:
    assert required_features(pod) == expected


@pytest.mark.parametrize(("declared", "expected"), [
    pytest.param((), set(), id="none"),
    pytest.param((RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK),
                 {RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK}, id="sorted"),
    pytest.param(("AUnknown", RESTART_ALL_CONTAINERS, "Zzz"), {RESTART_ALL_CONTAINERS}, id="unknown-ignored"),
    # merged in order against the sorted registry: an entry out of order is passed over
    pytest.param((USER_NAMESPACES_HOST_NETWORK, RESTART_ALL_CONTAINERS), {USER_NAMESPACES_HOST_NETWORK},
                 id="unsorted-loses-entries"),
])
def test_declared_features(declared: tuple[str, ...], expected: set[str]) -> None:
    assert declared_features(declared) == expected


# --- PreFilter ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("pod", "kube_version", "gates", "code", "stored"), [
    pytest.param(restart_all_pod(), "1.36", {"NodeDeclaredFeatures": False}, Code.SKIP, None, id="plugin-disabled"),
    pytest.param(restart_all_pod(), "1.35", {}, Code.SKIP, None, id="v1.35-gate-off"),
    pytest.param(restart_all_pod(), "1.36", {}, Code.SUCCESS, {RESTART_ALL_CONTAINERS}, id="pod-with-requirement"),
    pytest.param(attrs.evolve(restart_all_pod(), host_network=True, host_users=False), "1.36", {}, Code.SUCCESS,
                 {RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK}, id="pod-with-multiple-requirements"),
    pytest.param(Pod("p"), "1.36", {}, Code.SKIP, None, id="pod-with-no-requirements"),
])
def test_pre_filter(pod: Pod, kube_version: str, gates: dict[str, bool], code: Code,
                    stored: set[str] | None) -> None:
    state = CycleState()
    status = plugin(kube_version, **gates).pre_filter(state, pod)
    assert isinstance(status, Status)
    assert status.code is code
    # Filter reads what PreFilter stored: with nothing stored it is an Error
    enabled = plugin()
    if stored is None:
        assert enabled.filter(state, pod, node_info(make_node("n"))).code is Code.ERROR
        return
    assert enabled.filter(state, pod, node_info(declaring("n", *sorted(stored)))).is_success
    for missing in stored:
        partial = sorted(stored - {missing})
        verdict = enabled.filter(state, pod, node_info(declaring("n", *partial)))
        assert verdict.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


# --- Filter ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("pod", "declared", "code"), [
    pytest.param(restart_all_pod(), (RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK), Code.SUCCESS,
                 id="node-matches"),
    pytest.param(restart_all_pod(), (USER_NAMESPACES_HOST_NETWORK,), Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                 id="node-does-not-match"),
    pytest.param(attrs.evolve(restart_all_pod(), host_network=True, host_users=False),
                 ("ExtendWebSocketsToKubelet", RESTART_ALL_CONTAINERS, USER_NAMESPACES_HOST_NETWORK), Code.SUCCESS,
                 id="node-declares-a-superset"),
    pytest.param(restart_all_pod(), (), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="node-declares-nothing"),
    pytest.param(attrs.evolve(restart_all_pod(), host_network=True, host_users=False), (RESTART_ALL_CONTAINERS,),
                 Code.UNSCHEDULABLE_AND_UNRESOLVABLE, id="node-with-some-but-not-all"),
])
def test_filter(pod: Pod, declared: tuple[str, ...], code: Code) -> None:
    pl = plugin()
    state = CycleState()
    pl.pre_filter(state, pod)
    status = pl.filter(state, pod, node_info(declaring("n", *declared)))
    assert status.code is code
    if code is not Code.SUCCESS:
        assert status.reasons == (ERR_REASON,)


def test_filter_without_pre_filter_state_is_an_error() -> None:
    status = plugin().filter(CycleState(), restart_all_pod(), node_info(make_node("n")))
    assert status.code is Code.ERROR
    assert status.reasons == ('error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found',)


def test_filter_of_a_disabled_plugin_passes() -> None:
    disabled = plugin("1.36", NodeDeclaredFeatures=False)
    assert disabled.filter(CycleState(), restart_all_pod(), node_info(make_node("n"))).is_success


# --- queueing hints and events --------------------------------------------------------------------


@pytest.mark.parametrize(("old", "new", "hint"), [
    pytest.param(None, declaring("n", "FeatureA"), QueueingHint.QUEUE, id="node-add-with-feature"),
    pytest.param(make_node("n"), declaring("n", "FeatureA"), QueueingHint.QUEUE, id="node-update-features-added"),
    pytest.param(declaring("n", "FeatureA"), declaring("n", "FeatureA"), QueueingHint.QUEUE_SKIP,
                 id="node-update-features-unchanged"),
    pytest.param(declaring("n", "FeatureA"), attrs.evolve(declaring("n", "FeatureA"), labels={"a": "b"}),
                 QueueingHint.QUEUE_SKIP, id="node-update-other-field"),
    pytest.param("not a node", make_node("n"), QueueingHint.QUEUE, id="unexpected-object"),
])
def test_after_node_change(old: object, new: object, hint: QueueingHint) -> None:
    assert after_node_change(restart_all_pod(), old, new) is hint


TARGET = restart_all_pod(uid="123")


@pytest.mark.parametrize(("old", "new", "hint"), [
    pytest.param(Pod("p", uid="123", containers=(Container("c"),)), TARGET, QueueingHint.QUEUE,
                 id="pod-update-adds-requirement"),
    pytest.param(TARGET, Pod("p", uid="123", containers=(Container("c"),)), QueueingHint.QUEUE,
                 id="pod-update-removes-requirement"),
    pytest.param(TARGET, attrs.evolve(TARGET, labels={"foo": "bar"}), QueueingHint.QUEUE_SKIP,
                 id="pod-update-no-change-in-requirements"),
    pytest.param(restart_all_pod("other", uid="456"), Pod("other", uid="456"), QueueingHint.QUEUE_SKIP,
                 id="update-of-another-pod"),
    pytest.param(None, TARGET, QueueingHint.QUEUE, id="unexpected-object"),
])
def test_after_pod_update(old: object, new: object, hint: QueueingHint) -> None:
    assert after_pod_update(TARGET, old, new) is hint


@pytest.mark.parametrize(("gates", "expected"), [
    pytest.param({"NodeDeclaredFeatures": False}, [], id="plugin-disabled"),
    pytest.param({}, [(NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE), (POD, ActionType.UPDATE)],
                 id="plugin-enabled"),
])
def test_events_to_register(gates: dict[str, bool], expected: list[tuple[str, ActionType]]) -> None:
    events = plugin("1.36", **gates).events_to_register()
    assert [(r.event.resource, r.event.action) for r in events] == expected
    assert all(r.hint is not None for r in events)


# --- through the public API -----------------------------------------------------------------------


def _node(name: str, *features: str) -> dict[str, Any]:
    status: dict[str, Any] = {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    if features:
        status["declaredFeatures"] = list(features)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


POD_NEEDING = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "needs"},
               "spec": {"containers": [{"name": "c", "restartPolicyRules": [
                   {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}]}]}}


def test_node_declared_features() -> None:
    cluster = [_node("old"), _node("new", RESTART_ALL_CONTAINERS)]
    v136 = explain(cluster, POD_NEEDING, kube_version="1.36").to_dict()
    assert v136["selected"] == "new"
    assert v136["filtered"] == {"old": {"plugin": "NodeDeclaredFeatures", "code": "UnschedulableAndUnresolvable",
                                        "reasons": [ERR_REASON]}}
    for version, gates in (("1.35", None), ("1.36", {"NodeDeclaredFeatures": False})):
        off = explain(cluster, POD_NEEDING, kube_version=version, feature_gates=gates).to_dict()
        assert off["filtered"] == {}, version


def test_no_declaring_node_is_unschedulable_and_preemption_does_not_help() -> None:
    result = explain([_node("old")], POD_NEEDING, kube_version="1.36").to_dict()
    assert result["selected"] is None
    assert result["message"] == f"0/1 nodes are available: 1 {ERR_REASON}."
    assert result["postfilter"]["message"].endswith(
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


def test_a_node_declaring_the_feature_requeues_the_pod() -> None:
    scheduler = Scheduler(seed=0, clock=FakeClock(1000.0), kube_version="1.36")
    scheduler.add_objects([node_from_dict(_node("n")), pod_from_dict(POD_NEEDING)])
    first = scheduler.schedule_one()
    assert first is not None
    assert not first.scheduled
    n = scheduler.snapshot().find("n")
    assert n is not None
    assert n.node is not None
    scheduler.update_node(attrs.evolve(n.node, labels={"x": "y"}))
    assert scheduler.pending()["default/needs"][0] == "unschedulable"
    scheduler.update_node(attrs.evolve(n.node, declared_features=(RESTART_ALL_CONTAINERS,)))
    assert scheduler.pending()["default/needs"][0] != "unschedulable"
    scheduler.clock.set(scheduler.clock.now() + 10)  # type: ignore[attr-defined]
    assert [r.node_name for r in scheduler.run_until_idle() if r.scheduled] == ["n"]


@pytest.mark.parametrize(("spec", "field"), [
    pytest.param({"containers": [{"name": "c", "restartPolicyRules": [{"action": "RestartAllContainers",
                                                                       "exitCodes": {"values": ["1"]}}]}]},
                 "spec.containers[0].restartPolicyRules[0].exitCodes.values[0]", id="exit-code-not-int"),
    pytest.param({"containers": [{"name": "c"}], "hostUsers": "false"}, "spec.hostUsers", id="host-users-not-bool"),
])
def test_bad_fields_are_refused_by_name(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(ManifestError) as info:
        pod_from_dict({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    assert info.value.field == field


def test_a_cloned_cycle_state_keeps_what_the_pod_needs() -> None:
    pl = plugin()
    state = CycleState()
    pl.pre_filter(state, restart_all_pod())
    copy = state.clone()
    assert pl.filter(copy, restart_all_pod(), node_info(declaring("n", RESTART_ALL_CONTAINERS))).is_success
    assert pl.filter(copy, restart_all_pod(), node_info(make_node("n"))).code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
