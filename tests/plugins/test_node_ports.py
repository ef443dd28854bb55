"""NodePorts: wanted host ports against the node's used ports, with kube's 0.0.0.0 rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import Code, CycleState, PodInfo, Status
from kschedlib.model import Container, ContainerPort, Pod
from kschedlib.plugins.node_ports import ERR_REASON, NodePorts, fits, fits_ports, wanted_host_ports
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

PLUGIN = NodePorts(None, FakeHandle(kube_version="1.30"))


def port_pod(name: str, *ports: tuple[str, str, int], init: tuple[tuple[str, str, int], ...] = ()) -> Pod:
    """A pod with one container exposing ``(hostIP, protocol, hostPort)`` ports."""

    def container(cname: str, entries: tuple[tuple[str, str, int], ...]) -> Container:
        return Container(
            cname, ports=tuple(ContainerPort(8080, port, proto, ip) for ip, proto, port in entries)
        )

    return Pod(
        name, containers=(container("c", ports),), init_containers=(container("i", init),) if init else ()
    )


def run(existing: tuple[str, str, int], wanted: tuple[str, str, int]) -> tuple[Code, tuple[str, ...]]:
    pod = port_pod("new", wanted)
    state = CycleState()
    assert PLUGIN.pre_filter(state, pod) == Status.success()
    status = PLUGIN.filter(state, pod, node_info(make_node("n"), port_pod("old", existing)))
    return status.code, status.reasons


CONFLICT = (Code.UNSCHEDULABLE, ("node(s) didn't have free ports for the requested pod ports",))
FREE = (Code.SUCCESS, ())


@pytest.mark.parametrize(
    ("existing", "wanted", "expected"),
    [
        (("", "TCP", 80), ("", "TCP", 80), CONFLICT),
        (("0.0.0.0", "TCP", 80), ("127.0.0.1", "TCP", 80), CONFLICT),
        (("127.0.0.1", "TCP", 80), ("0.0.0.0", "TCP", 80), CONFLICT),
        (("127.0.0.1", "TCP", 80), ("", "TCP", 80), CONFLICT),
        (("127.0.0.1", "TCP", 80), ("127.0.0.1", "TCP", 80), CONFLICT),
        (("127.0.0.1", "TCP", 80), ("127.0.0.2", "TCP", 80), FREE),
        (("127.0.0.1", "TCP", 80), ("127.0.0.1", "UDP", 80), FREE),
        (("0.0.0.0", "UDP", 80), ("0.0.0.0", "TCP", 80), FREE),
        (("0.0.0.0", "TCP", 80), ("0.0.0.0", "TCP", 81), FREE),
        (("127.0.0.1", "", 80), ("127.0.0.1", "TCP", 80), CONFLICT),
        (("10.0.0.1", "SCTP", 9), ("", "SCTP", 9), CONFLICT),
    ],
    ids=[
        "same-any-ip",
        "existing-any-ip-blocks-specific",
        "wanted-any-ip-blocked-by-specific",
        "empty-host-ip-means-any",
        "same-specific-ip",
        "different-ips",
        "different-protocols",
        "udp-vs-tcp-any-ip",
        "different-ports",
        "empty-protocol-means-tcp",
        "sctp",
    ],
)
def test_filter(
    existing: tuple[str, str, int], wanted: tuple[str, str, int], expected: tuple[Code, tuple[str, ...]]
) -> None:
    assert run(existing, wanted) == expected


def test_reason_constant() -> None:
    assert ERR_REASON == "node(s) didn't have free ports for the requested pod ports"


def test_wanted_ports_defaults_and_scope() -> None:
    pod = port_pod("p", ("", "", 80), ("1.2.3.4", "UDP", 53), ("", "TCP", 0), init=(("", "TCP", 90),))
    assert wanted_host_ports(pod) == (("0.0.0.0", "TCP", 80), ("1.2.3.4", "UDP", 53))
    assert wanted_host_ports(pod) == PodInfo.of(pod).host_ports


@pytest.mark.parametrize(
    "pod",
    [make_pod("p"), port_pod("p", ("", "TCP", 0)), port_pod("p", init=(("", "TCP", 80),))],
    ids=["no-ports", "host-port-zero", "init-container-ports-ignored"],
)
def test_pre_filter_skips_pods_without_host_ports(pod: Pod) -> None:
    assert PLUGIN.pre_filter(CycleState(), pod) == Status.skip()


def test_pre_filter_success_without_narrowing() -> None:
    assert PLUGIN.pre_filter(CycleState(), make_pod("p", host_ports=[80])) == Status.success()


def test_filter_without_pre_filter_is_an_error() -> None:
    status = PLUGIN.filter(CycleState(), make_pod("p", host_ports=[80]), node_info(make_node("n")))
    assert status.code is Code.ERROR
    assert status.message() == 'reading "PreFilterNodePorts" from cycleState: not found'


def test_several_pods_and_ports() -> None:
    info = node_info(make_node("n"), make_pod("a", host_ports=[80]), make_pod("b", host_ports=[443]))
    assert not fits(make_pod("p", host_ports=[8080, 443]), info)
    assert fits(make_pod("p", host_ports=[8080]), info)
    assert fits_ports([], info)


def test_plugin_identity() -> None:
    assert NodePorts.name == "NodePorts"


ips = st.sampled_from(["", "0.0.0.0", "10.0.0.1", "10.0.0.2"])
ports = st.tuples(ips, st.sampled_from(["", "TCP", "UDP"]), st.integers(1, 3))


@given(st.lists(st.lists(ports, max_size=3), max_size=3), st.lists(ports, min_size=1, max_size=3))
def test_filter_matches_restatement(
    existing: list[list[tuple[str, str, int]]], wanted: list[tuple[str, str, int]]
) -> None:
    def norm(p: tuple[str, str, int]) -> tuple[str, str, int]:
        return (p[0] or "0.0.0.0", p[1] or "TCP", p[2])

    used = [norm(p) for pod_ports in existing for p in pod_ports]

    def clash(w: tuple[str, str, int]) -> bool:
        ip, proto, port = norm(w)
        return any(
            (proto, port) == (p[1], p[2]) and (ip == "0.0.0.0" or p[0] in (ip, "0.0.0.0")) for p in used
        )

    info = node_info(make_node("n"), *(port_pod(f"e{i}", *pp) for i, pp in enumerate(existing)))
    pod = port_pod("new", *wanted)
    state = CycleState()
    PLUGIN.pre_filter(state, pod)
    assert PLUGIN.filter(state, pod, info).is_success is (not any(clash(w) for w in wanted))


def test_state_survives_cycle_state_clone() -> None:
    pod = make_pod("p", host_ports=[80])
    state = CycleState()
    PLUGIN.pre_filter(state, pod)
    busy = node_info(make_node("n"), make_pod("q", host_ports=[80]))
    assert PLUGIN.filter(state.clone(), pod, busy).reasons == (ERR_REASON,)
