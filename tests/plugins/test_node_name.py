"""NodeName: a pod naming a node fits only that node."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import Code, CycleState, FilterPlugin, NodeInfo
from kschedlib.plugins.node_name import ERR_REASON, NodeName, fits
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

PLUGIN = NodeName(None, FakeHandle(kube_version="1.30"))


@pytest.mark.parametrize(
    ("pod_node_name", "node", "code"),
    [
        ("", "n1", Code.SUCCESS),
        ("n1", "n1", Code.SUCCESS),
        ("n2", "n1", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
        ("N1", "n1", Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
    ],
    ids=["no-node-name-fits-any", "same-node", "other-node", "case-sensitive"],
)
def test_filter(pod_node_name: str, node: str, code: Code) -> None:
    status = PLUGIN.filter(CycleState(), make_pod("p", node_name=pod_node_name), node_info(make_node(node)))
    assert status.code is code
    assert status.reasons == (
        () if code is Code.SUCCESS else ("node(s) didn't match the requested node name",)
    )


def test_reason_constant() -> None:
    assert ERR_REASON == "node(s) didn't match the requested node name"


def test_ghost_node_fits_only_pods_without_node_name() -> None:
    ghost = NodeInfo.of(None)
    assert fits(make_pod("p"), ghost)
    assert not fits(make_pod("p", node_name="n1"), ghost)


def test_plugin_identity() -> None:
    assert NodeName.name == "NodeName"
    assert isinstance(PLUGIN, FilterPlugin)


@given(st.sampled_from(["", "a", "b"]), st.sampled_from(["a", "b"]))
def test_filter_matches_restatement(wanted: str, node: str) -> None:
    status = PLUGIN.filter(CycleState(), make_pod("p", node_name=wanted), node_info(make_node(node)))
    assert status.is_success is (wanted in ("", node))
