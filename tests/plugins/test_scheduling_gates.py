"""SchedulingGates: gated pods wait with kube's exact message."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import Code, PreEnqueuePlugin
from kschedlib.plugins.scheduling_gates import SchedulingGates, gates_message
from kschedlib.testing import FakeHandle
from tests.helpers import make_pod

PLUGIN = SchedulingGates(None, FakeHandle(kube_version="1.30"))


@pytest.mark.parametrize(
    ("gates", "code", "reasons"),
    [
        ((), Code.SUCCESS, ()),
        (
            ("example.com/foo",),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ("waiting for scheduling gates: [example.com/foo]",),
        ),
        (("g2", "g1"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [g2 g1]",)),
        (("a", "b", "c"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [a b c]",)),
    ],
    ids=["ungated", "one-gate", "two-gates-in-spec-order", "three-gates"],
)
def test_pre_enqueue(gates: tuple[str, ...], code: Code, reasons: tuple[str, ...]) -> None:
    status = PLUGIN.pre_enqueue(make_pod("p", scheduling_gates=gates))
    assert status.code is code
    assert status.reasons == reasons


def test_plugin_identity() -> None:
    assert SchedulingGates.name == "SchedulingGates"
    assert isinstance(PLUGIN, PreEnqueuePlugin)


@given(st.lists(st.text(alphabet="abc./-", min_size=1, max_size=6), max_size=4))
def test_message_is_go_slice_format(gates: list[str]) -> None:
    pod = make_pod("p", scheduling_gates=tuple(gates))
    status = PLUGIN.pre_enqueue(pod)
    assert status.is_rejected is bool(gates)
    if gates:
        assert status.message() == "waiting for scheduling gates: [" + " ".join(gates) + "]"
    else:
        assert gates_message(pod) is None
