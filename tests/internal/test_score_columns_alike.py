"""The Score runtime's shortcuts for columns where every node scored alike decide as the plain arithmetic.

``ProfileRuntime._finish_column`` range-checks a column whose values are all equal by its first value
and weights it by one multiplication, and ``run_score`` adds nothing for a column of zeros; both must
give what checking, weighting and adding every value gives (the range error names the first bad value).
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

import kschedlib
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib.framework import CycleState, Status
from tests.helpers import make_node, make_pod

_RUNTIME: ProfileRuntime = kschedlib.Scheduler()._engine.profiles["default-scheduler"]
_PLAIN = next((name, plugin) for name, plugin in _RUNTIME.score if name == "NodeResourcesFit")


def _plain(raw: list[int], weight: int) -> list[int] | str:
    bad = [v for v in raw if not 0 <= v <= 100]
    return f"invalid score {bad[0]}" if bad else [v * weight for v in raw]


_COLUMNS = st.one_of(
    st.lists(st.integers(-5, 105), max_size=8),
    st.tuples(st.integers(-5, 105), st.integers(1, 8)).map(lambda vn: [vn[0]] * vn[1]),
)


@given(_COLUMNS, st.integers(1, 5))
@example([101, 101, 101], 1)
@example([-1, -1], 3)
@example([100, 100], 3)
@example([0, 0, 0], 2)
@example([100, 101, 100], 1)
def test_alike_columns_weigh_and_check_as_every_value(raw: list[int], weight: int) -> None:
    name, plugin = _PLAIN
    runtime = _RUNTIME
    saved = runtime.weights[name]
    runtime.weights[name] = weight
    try:
        got = runtime._finish_column(CycleState(), make_pod("p"), [], name, plugin, list(raw))
    finally:
        runtime.weights[name] = saved
    expected = _plain(raw, weight)
    if isinstance(expected, str):
        assert isinstance(got, Status)
        assert expected in got.message()
    else:
        assert got == expected


def test_a_zero_column_leaves_the_totals_as_they_are() -> None:
    scheduler = kschedlib.Scheduler(kube_version="1.36")
    for i in range(3):
        scheduler.add_node(make_node(f"n{i}", allocatable={"cpu": str(2 + i), "memory": "8Gi", "pods": "110"}))
    table = scheduler.explain(make_pod("p", requests={"cpu": "500m"})).to_dict()["scores"]
    assert {node: s["plugins"]["DynamicResources"] for node, s in table.items()} == {"n0": 0, "n1": 0, "n2": 0}
    assert all(s["total"] == sum(s["plugins"].values()) for s in table.values())


def test_totals_share_one_object_per_value() -> None:
    scheduler = kschedlib.Scheduler()
    for i in range(4):
        scheduler.add_node(make_node(f"n{i}", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"}))
    scheduler.add_pod(make_pod("p", requests={"cpu": "500m"}))
    result = scheduler.schedule_one()
    assert result is not None
    assert result.outcome is not None
    assert result.outcome.scores is not None
    totals = result.outcome.scores.totals
    assert len(totals) == 4
    assert len(set(totals)) == 1  # four empty nodes score alike
    assert len({id(total) for total in totals}) == 1
    assert totals[0] > 256  # beyond the ints CPython shares anyway
