"""NodeUnschedulable: cordoned nodes take only pods tolerating node.kubernetes.io/unschedulable:NoSchedule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import Code, CycleState, FilterPlugin, NodeInfo
from kschedlib.model import Taint, Toleration
from kschedlib.plugins.node_unschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    UNSCHEDULABLE_TAINT,
    NodeUnschedulable,
    fits,
)
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

PLUGIN = NodeUnschedulable(None, FakeHandle(kube_version="1.30"))
KEY = "node.kubernetes.io/unschedulable"

CASES = [
    (False, (), True),
    (True, (), False),
    (True, (Toleration(KEY, "Exists", effect="NoSchedule"),), True),
    (True, (Toleration(KEY, "Exists"),), True),
    (True, (Toleration("", "Exists"),), True),
    (True, (Toleration(KEY, effect="NoSchedule"),), True),
    (True, (Toleration(KEY, "", effect="NoSchedule"),), True),
    (True, (Toleration(KEY, "Equal", "true", "NoSchedule"),), False),
    (True, (Toleration(KEY, "Exists", effect="NoExecute"),), False),
    (True, (Toleration(KEY, "Exists", effect="PreferNoSchedule"),), False),
    (True, (Toleration("other", "Exists"),), False),
    (True, (Toleration(KEY, "Gt", effect="NoSchedule"),), False),
    (True, (Toleration("other", "Exists"), Toleration(KEY, "Exists")), True),
]
IDS = [
    "schedulable-node",
    "cordoned-no-toleration",
    "exists-noschedule",
    "exists-any-effect",
    "empty-key-exists-tolerates-all",
    "equal-default-empty-value",
    "empty-operator-means-equal",
    "equal-wrong-value",
    "wrong-effect-noexecute",
    "wrong-effect-prefernoschedule",
    "wrong-key",
    "unknown-operator",
    "any-of-several",
]


@pytest.mark.parametrize(("unschedulable", "tolerations", "fit"), CASES, ids=IDS)
def test_filter(unschedulable: bool, tolerations: tuple[Toleration, ...], fit: bool) -> None:
    pod = make_pod("p", tolerations=tolerations)
    info = node_info(make_node("n1", unschedulable=unschedulable))
    status = PLUGIN.filter(CycleState(), pod, info)
    if fit:
        assert status.is_success
    else:
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == ("node(s) were unschedulable",)
    assert fits(pod, info) is fit


def test_constants() -> None:
    assert ERR_REASON_UNSCHEDULABLE == "node(s) were unschedulable"
    assert Taint(KEY, "NoSchedule") == UNSCHEDULABLE_TAINT


def test_taints_are_not_this_plugins_business() -> None:
    node = make_node("n1", taints=[Taint(KEY, "NoSchedule")])
    assert PLUGIN.filter(CycleState(), make_pod("p"), node_info(node)).is_success


def test_ghost_node_is_an_error() -> None:
    status = PLUGIN.filter(CycleState(), make_pod("p"), NodeInfo.of(None))
    assert status.code is Code.ERROR
    assert not fits(make_pod("p"), NodeInfo.of(None))


def test_plugin_identity() -> None:
    assert NodeUnschedulable.name == "NodeUnschedulable"
    assert isinstance(PLUGIN, FilterPlugin)


tolerations = st.builds(
    Toleration,
    key=st.sampled_from(["", KEY, "other"]),
    operator=st.sampled_from(["", "Equal", "Exists", "Bad"]),
    value=st.sampled_from(["", "x"]),
    effect=st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule"]),
)


@given(st.booleans(), st.lists(tolerations, max_size=3))
def test_filter_matches_restatement(unschedulable: bool, tols: list[Toleration]) -> None:
    def tolerated(t: Toleration) -> bool:
        return (
            t.effect in ("", "NoSchedule")
            and t.key in ("", KEY)
            and (t.operator == "Exists" or (t.operator in ("", "Equal") and t.value == ""))
        )

    status = PLUGIN.filter(
        CycleState(),
        make_pod("p", tolerations=tuple(tols)),
        node_info(make_node("n", unschedulable=unschedulable)),
    )
    assert status.is_success is (not unschedulable or any(tolerated(t) for t in tols))
