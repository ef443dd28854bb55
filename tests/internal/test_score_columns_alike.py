"""The Score runtime's shortcuts for columns where every node scored alike decide as the plain arithmetic.

``ProfileRuntime._finish_column`` range-checks a column whose values are all equal by its first value
and weights it by one multiplication, and ``run_score`` adds nothing for a column of zeros; both must
give what checking, weighting and adding every value gives (the range error names the first bad value).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib._internal import runtime as runtime_module
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib.framework import CycleState, Status
from kschedlib.model.labels import NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.model.objects import Affinity, NodeAffinity, PreferredSchedulingTerm, Taint, Toleration
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


# --- purely normalizing plugins whose column is uniform ---------------------------------------

def _cluster(draw: st.DrawFn) -> list[object]:
    nodes = []
    tainted = draw(st.sampled_from(["none", "some", "all"]))
    for i in range(draw(st.integers(2, 7))):
        soft = tainted == "all" or (tainted == "some" and draw(st.booleans()))
        taints = (Taint("soft", "PreferNoSchedule", "x"),) if soft else ()
        nodes.append(make_node(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}", "zone": f"z{i % 2}"},
                               taints=taints, allocatable={"cpu": "8", "memory": "16Gi", "pods": "110"}))
    pods = []
    for i in range(draw(st.integers(10, 40))):
        shape = draw(st.integers(0, 3))
        tolerations = (Toleration("soft", "Equal", "x", "PreferNoSchedule"),) if shape == 3 else ()
        preferred = (PreferredSchedulingTerm(5, NodeSelectorTerm((NodeSelectorRequirement("zone", "In", ("z1",)),))),) \
            if shape == 2 else ()
        affinity = Affinity(node_affinity=NodeAffinity(preferred=preferred)) if preferred else None
        pods.append(make_pod(f"p{i}", requests={"cpu": f"{100 + 100 * shape}m"}, tolerations=tolerations,
                             affinity=affinity))
    return [*nodes, *pods]


def _scored(objects: list[object]) -> list[tuple[str, str | None, list[int] | None]]:
    scheduler = kschedlib.Scheduler(seed=1)
    scheduler.add_objects(objects)
    out = []
    for result in scheduler.run_until_idle():
        scores = result.outcome.scores if result.outcome is not None else None
        out.append((result.pod.key, result.node_name, list(scores.totals) if scores is not None else None))
    return out


@settings(max_examples=40)
@given(st.data())
def test_uniform_pure_columns_score_as_normalizing_every_cycle(data: st.DataObject) -> None:
    objects = data.draw(st.composite(_cluster)())
    reused = _scored(objects)
    saved = ProfileRuntime._pure_column
    ProfileRuntime._pure_column = lambda *args: None  # type: ignore[method-assign]
    try:
        plain = _scored(objects)
    finally:
        ProfileRuntime._pure_column = saved  # type: ignore[method-assign]
    assert reused == plain


def test_a_uniform_pure_column_is_normalized_once() -> None:
    objects: list[object] = [make_node(f"n{i}") for i in range(3)]
    objects += [make_pod(f"p{i}", requests={"cpu": "100m"}) for i in range(12)]
    calls: list[str] = []
    runtime = ProfileRuntime._normalize

    def counting(state: object, pod: object, nodes: object, name: str, *rest: object) -> object:
        calls.append(name)
        return runtime(state, pod, nodes, name, *rest)  # type: ignore[arg-type]

    ProfileRuntime._normalize = staticmethod(counting)  # type: ignore[method-assign,assignment]
    try:
        decided = _scored(objects)
    finally:
        ProfileRuntime._normalize = staticmethod(runtime)  # type: ignore[method-assign]
    assert all(node for _, node, _ in decided)
    assert calls.count("TaintToleration") < len(decided) / 2  # once the column exists, never again


# --- totals shifted by the alike columns and shared in one pass ----------------------------------

@settings(max_examples=60)
@given(st.lists(st.tuples(st.lists(st.integers(0, 900), max_size=12), st.sampled_from([0, 100, 300, 357])),
                max_size=6), st.sampled_from([4, 1 << 16]))
def test_shifted_totals_are_the_plain_sums_one_object_per_value(
    cycles: list[tuple[list[int], int]], limit: int
) -> None:
    runtime = ProfileRuntime(_RUNTIME.profile)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime_module, "_SHARED_INTS", limit)  # a small limit clears the tables between cycles
        for totals, shift in cycles:
            got = runtime._shared(list(totals), shift)
            assert got == [total + shift for total in totals]
            by_value: dict[int, int] = {}
            for total in got:
                assert by_value.setdefault(total, id(total)) == id(total)
