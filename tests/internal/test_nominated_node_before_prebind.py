"""NominatedNodeName written in the binding cycle (switch ``nominated_node_name_before_prebind``:
v1.35, gate NominatedNodeNameForExpectation).

When a Permit wait or PreBind work lies ahead (kube's ``PreBindPreFlight``), the pod's
``status.nominatedNodeName`` becomes the chosen node before that work starts, so the pod shows where
it is going while it waits; a pod with nothing to wait for is bound without the extra write.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

import kschedlib
from kschedlib import Code
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib.framework import CycleState, PermitPlugin, Plugin, PreBindPlugin, Status
from kschedlib.model import Pod
from tests.helpers import claim_volume, make_node, make_pod, make_pv, make_pvc, make_storage_class


class Provisioner(PreBindPlugin):
    """Has PreBind work only for pods labelled ``work: "yes"``; its pre-flight says so."""

    name: ClassVar[str] = "Provisioner"
    flight: ClassVar[Any] = None
    """What the pre-flight returns for pods with work (``None``: Success)."""

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if pod.labels.get("work") != "yes":
            return Status.skip()
        if isinstance(Provisioner.flight, Exception):
            raise Provisioner.flight
        return Status.success() if Provisioner.flight is None else Provisioner.flight

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        if pod.labels.get("prebind") == "fail":
            return Status.from_error("provisioning failed")
        return Status.success()


class Lazy(PreBindPlugin):
    """A PreBind plugin that does not say whether it has work (the default pre-flight: it may)."""

    name: ClassVar[str] = "Lazy"

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status.success()


class Waiting(PermitPlugin):
    name: ClassVar[str] = "Waiting"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        return kschedlib.framework.Wait(30.0)


@pytest.fixture(autouse=True)
def _reset() -> None:
    Provisioner.flight = None


def _scheduler(kube_version: str, *plugins: type[Plugin], point: str = "preBind",
               gates: dict[str, bool] | None = None) -> kschedlib.Scheduler:
    registry = kschedlib.in_tree_registry()
    for plugin in plugins:
        def factory(args: object, handle: object, plugin: type[Plugin] = plugin) -> Plugin:
            return plugin()
        registry.register(plugin.name, factory)
    config = {"profiles": [{"plugins": {point: {"enabled": [{"name": p.name} for p in plugins]}}}]}
    sched = kschedlib.Scheduler(config, registry=registry, clock=kschedlib.FakeClock(), kube_version=kube_version,
                                feature_gates=gates or None)
    sched.add_node(make_node("n1"))
    return sched


def _bind(sched: kschedlib.Scheduler, pod: Pod) -> kschedlib.ScheduleResult:
    sched.add_pod(pod)
    result = sched.schedule_one()
    assert result is not None
    return result


@pytest.mark.parametrize(("kube_version", "gates", "labels", "nominated"), [
    pytest.param("1.36", {}, {"work": "yes"}, "n1", id="v1.36-prebind-work"),
    pytest.param("1.36", {}, {}, "", id="v1.36-no-prebind-work"),
    pytest.param("1.34", {}, {"work": "yes"}, "", id="v1.34"),
    pytest.param("1.36", {"NominatedNodeNameForExpectation": False}, {"work": "yes"}, "", id="v1.36-gate-off"),
    pytest.param("1.30", {}, {"work": "yes"}, "", id="v1.30"),
])
def test_nominated_node_name_before_prebind(kube_version: str, gates: dict[str, bool], labels: dict[str, str],
                                            nominated: str) -> None:
    sched = _scheduler(kube_version, Provisioner, gates=gates)
    result = _bind(sched, make_pod("p", requests={"cpu": "1"}, labels=labels))
    assert result.scheduled
    assert result.pod.nominated_node_name == nominated


def test_a_prebind_plugin_without_a_pre_flight_is_assumed_to_work() -> None:
    result = _bind(_scheduler("1.36", Lazy), make_pod("p"))
    assert result.scheduled
    assert result.pod.nominated_node_name == "n1"


@pytest.mark.parametrize(("kube_version", "nominated"), [("1.36", "n1"), ("1.34", "")])
def test_a_pod_waiting_in_permit_shows_its_node(kube_version: str, nominated: str) -> None:
    sched = _scheduler(kube_version, Waiting, point="permit")
    result = _bind(sched, make_pod("p", requests={"cpu": "1"}))
    assert result.waiting
    assert result.pod.nominated_node_name == nominated


@pytest.mark.parametrize(("flight", "message"), [
    pytest.param(Status.from_error("quota service down"), 'running PreBindPreFlight "Provisioner": quota service down',
                 id="error"),
    pytest.param(RuntimeError("boom"), 'running PreBindPreFlight "Provisioner": boom', id="exception"),
    pytest.param("yes", "running PreBindPreFlight \"Provisioner\": returned 'yes' (str), not a Status",
                 id="not-a-status"),
    pytest.param(Status.unschedulable("no"), 'PreBindPreFlight Provisioner returned "Unschedulable", which is '
                 "unsupported. It is supposed to return Success, Skip, or Error status", id="rejection"),
])
def test_a_failing_pre_flight_fails_the_binding(flight: object, message: str) -> None:
    Provisioner.flight = flight
    sched = _scheduler("1.36", Provisioner)
    result = _bind(sched, make_pod("p", labels={"work": "yes"}))
    assert result.status.code is Code.ERROR
    assert result.message == message
    assert sched.bound_pods() == {}
    assert "default/p" in sched.pending()


def test_a_failing_pre_flight_before_a_permit_wait_fails_the_binding() -> None:
    Provisioner.flight = Status.from_error("down")
    registry = kschedlib.in_tree_registry()
    registry.register(Provisioner.name, lambda args, handle: Provisioner())
    registry.register(Waiting.name, lambda args, handle: Waiting())
    config = {"profiles": [{"plugins": {"permit": {"enabled": [{"name": "Waiting"}]},
                                        "preBind": {"enabled": [{"name": "Provisioner"}]}}}]}
    sched = kschedlib.Scheduler(config, registry=registry, clock=kschedlib.FakeClock(), kube_version="1.36")
    sched.add_node(make_node("n1"))
    result = _bind(sched, make_pod("p", labels={"work": "yes"}))
    assert result.status.code is Code.ERROR
    assert sched.waiting_pods() == []


def test_no_prebind_plugins_means_no_work() -> None:
    config = {"profiles": [{"plugins": {"preBind": {"disabled": [{"name": "*"}]}}}]}
    sched = kschedlib.Scheduler(config, kube_version="1.36")
    runtime: ProfileRuntime = sched._engine.profiles["default-scheduler"]
    assert runtime.run_pre_bind_pre_flights(CycleState(), make_pod("p"), "n1").code is Code.SKIP


def test_volume_binding_pre_flight_without_its_state_is_an_error() -> None:
    runtime: ProfileRuntime = kschedlib.Scheduler(kube_version="1.36")._engine.profiles["default-scheduler"]
    status = runtime.run_pre_bind_pre_flights(CycleState(), make_pod("p"), "n1")
    assert status.code is Code.ERROR
    assert status.plugin == "VolumeBinding"


@pytest.mark.parametrize(("kube_version", "nominated"), [("1.36", "n1"), ("1.34", "")])
def test_volume_binding_has_work_for_a_claim_to_bind(kube_version: str, nominated: str) -> None:
    sched = kschedlib.Scheduler(clock=kschedlib.FakeClock(), kube_version=kube_version)
    claim = make_pvc("data", class_name="local")
    sched.add_objects([make_node("n1"), make_storage_class("local"), make_pv("pv-1", class_name="local"), claim])
    result = _bind(sched, make_pod("p", volumes=[claim_volume("data")]))
    assert result.scheduled
    assert result.pod.nominated_node_name == nominated
    bound = make_pvc("ready", class_name="local", volume_name="pv-2")
    sched.add_objects([make_pv("pv-2", class_name="local", claim=bound), bound])
    second = _bind(sched, make_pod("q", volumes=[claim_volume("ready")]))
    assert second.scheduled
    assert second.pod.nominated_node_name == ""  # already bound: no PreBind work


@pytest.mark.parametrize(("kube_version", "nominations"), [("1.36", {"default/p": "n1"}), ("1.34", {})])
def test_a_pod_whose_prebind_failed_stays_nominated_to_its_node(kube_version: str,
                                                                  nominations: dict[str, str]) -> None:
    sched = _scheduler(kube_version, Provisioner)
    result = _bind(sched, make_pod("p", labels={"work": "yes", "prebind": "fail"}))
    assert result.status.code is Code.ERROR
    assert sched.nominations() == nominations
