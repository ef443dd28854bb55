"""Memo node tables are keyed by node name: same verdicts as running the filter, one entry per node."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kschedlib._internal.reuse.memo import MemoizedFilter
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from tests.helpers import make_node, make_pod

_POD = make_pod("p")


def _fits(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
    """A filter whose verdict depends on the NodeInfo object (how many pods it holds)."""
    return Status.success() if len(node_info.pods) < 2 else Status.unschedulable("full")


@given(st.lists(st.tuples(st.integers(0, 3), st.booleans()), max_size=40))
def test_verdicts_equal_the_filters_as_nodes_change(steps: list[tuple[int, bool]]) -> None:
    """Nodes gain pods (a new NodeInfo each time) and are asked again, old NodeInfos too."""
    infos = {i: [NodeInfo.of(make_node(f"n{i}"))] for i in range(4)}
    memo = MemoizedFilter(_fits, {})
    state = CycleState()
    for n, grow in steps:
        history = infos[n]
        if grow:
            history.append(history[-1].with_pod(PodInfo.of(make_pod(f"q{len(history)}", node_name=f"n{n}"))))
        for info in (history[-1], history[0]):
            assert memo(state, _POD, info) == _fits(state, _POD, info)
    assert len(memo.table) <= 4
    for name, (info, _) in memo.table.items():
        assert info.name == name
