"""TaintToleration: hard taints filter, untolerated PreferNoSchedule taints lower the (reversed) score."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import Code, CycleState, NodeInfo
from kschedlib.model import Taint, Toleration
from kschedlib.plugins.taint_toleration import (
    DO_NOT_SCHEDULE_EFFECTS,
    TaintToleration,
    count_untolerated_prefer_no_schedule,
    find_untolerated_taint,
    prefer_no_schedule_tolerations,
    tolerations_tolerate_taint,
)
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

PLUGIN = TaintToleration(None, FakeHandle(kube_version="1.30"))
WEIGHT = 3  # the default profile's weight for TaintToleration


def run_filter(taints: list[Taint], tolerations: tuple[Toleration, ...] = ()) -> tuple[Code, tuple[str, ...]]:
    status = PLUGIN.filter(
        CycleState(), make_pod("p", tolerations=tolerations), node_info(make_node("n", taints=taints))
    )
    return status.code, status.reasons


# --- toleration matching ----------------------------------------------------------------------------

TAINT = Taint("dedicated", "NoSchedule", "gpu")


@pytest.mark.parametrize(
    ("toleration", "tolerates"),
    [
        (Toleration("dedicated", "Equal", "gpu", "NoSchedule"), True),
        (Toleration("dedicated", "Equal", "cpu", "NoSchedule"), False),
        (Toleration("dedicated", "", "gpu", "NoSchedule"), True),
        (Toleration("dedicated", value="gpu"), True),
        (Toleration("dedicated", "Exists"), True),
        (Toleration("dedicated", "Exists", "ignored"), True),
        (Toleration("", "Exists"), True),
        (Toleration("", "Exists", effect="NoExecute"), False),
        (Toleration("", "Equal", "gpu"), True),
        (Toleration("", "Equal", "cpu"), False),
        (Toleration("other", "Exists"), False),
        (Toleration("dedicated", "Exists", effect="PreferNoSchedule"), False),
        (Toleration("dedicated", "Lt", "gpu"), False),
    ],
    ids=[
        "equal-key-value-effect",
        "equal-wrong-value",
        "empty-operator-is-equal",
        "empty-effect-matches-all",
        "exists-ignores-value",
        "exists-with-value-still-matches",
        "empty-key-exists-tolerates-everything",
        "empty-key-exists-wrong-effect",
        "empty-key-equal-matches-any-key-with-that-value",
        "empty-key-equal-wrong-value",
        "wrong-key",
        "wrong-effect",
        "unknown-operator-never-matches",
    ],
)
def test_toleration_matching(toleration: Toleration, tolerates: bool) -> None:
    assert tolerations_tolerate_taint([toleration], TAINT) is tolerates
    code, _ = run_filter([TAINT], (toleration,))
    assert (code is Code.SUCCESS) is tolerates


# --- Filter ------------------------------------------------------------------------------------------

FILTER_CASES = [
    ([], (), Code.SUCCESS, ()),
    (
        [Taint("dedicated", "NoSchedule", "gpu")],
        (),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) had untolerated taint {dedicated: gpu}",),
    ),
    (
        [Taint("node-role.kubernetes.io/control-plane", "NoSchedule")],
        (),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }",),
    ),
    (
        [Taint("k", "NoExecute", "v")],
        (),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) had untolerated taint {k: v}",),
    ),
    ([Taint("k", "PreferNoSchedule", "v")], (), Code.SUCCESS, ()),
    (
        [Taint("a", "NoSchedule"), Taint("b", "NoExecute", "2")],
        (Toleration("a", "Exists"),),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) had untolerated taint {b: 2}",),
    ),
    (
        [Taint("a", "NoSchedule", "1"), Taint("b", "NoSchedule", "2")],
        (),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) had untolerated taint {a: 1}",),
    ),
    (
        [Taint("p", "PreferNoSchedule"), Taint("b", "NoSchedule", "2")],
        (),
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ("node(s) had untolerated taint {b: 2}",),
    ),
    ([Taint("a", "NoSchedule"), Taint("b", "NoExecute")], (Toleration("", "Exists"),), Code.SUCCESS, ()),
]


@pytest.mark.parametrize(
    ("taints", "tolerations", "code", "reasons"),
    FILTER_CASES,
    ids=[
        "no-taints",
        "noschedule-untolerated",
        "empty-value-keeps-colon-space",
        "noexecute-untolerated",
        "prefernoschedule-never-filters",
        "first-untolerated-reported",
        "first-of-two-untolerated",
        "soft-taints-skipped-in-order",
        "tolerate-everything",
    ],
)
def test_filter(
    taints: list[Taint], tolerations: tuple[Toleration, ...], code: Code, reasons: tuple[str, ...]
) -> None:
    assert run_filter(taints, tolerations) == (code, reasons)


def test_filter_ghost_node_is_an_error() -> None:
    assert PLUGIN.filter(CycleState(), make_pod("p"), NodeInfo.of(None)).code is Code.ERROR


@pytest.mark.parametrize(
    ("effects", "expected"),
    [
        (DO_NOT_SCHEDULE_EFFECTS, Taint("b", "NoSchedule")),
        (None, Taint("p", "PreferNoSchedule")),
        ({"NoExecute"}, None),
    ],
    ids=["hard-effects", "all-taints", "noexecute-only"],
)
def test_find_untolerated_taint(effects: set[str] | None, expected: Taint | None) -> None:
    taints = [Taint("p", "PreferNoSchedule"), Taint("a", "NoSchedule"), Taint("b", "NoSchedule")]
    assert find_untolerated_taint(taints, [Toleration("a", "Exists")], effects) == expected


# --- PreScore / Score / NormalizeScore ------------------------------------------------------------------


def test_pre_score_keeps_empty_and_prefer_no_schedule_effects() -> None:
    tols = (
        Toleration("a", "Exists"),
        Toleration("b", "Exists", effect="PreferNoSchedule"),
        Toleration("c", "Exists", effect="NoSchedule"),
        Toleration("d", "Exists", effect="NoExecute"),
    )
    assert prefer_no_schedule_tolerations(tols) == tols[:2]


def scores_for(
    taint_sets: list[list[Taint]], tolerations: tuple[Toleration, ...] = ()
) -> tuple[list[int], list[int]]:
    """(raw, normalized) scores over one node per taint list, through PreScore, Score and NormalizeScore."""
    pod = make_pod("p", tolerations=tolerations)
    infos = [node_info(make_node(f"n{i}", taints=taints)) for i, taints in enumerate(taint_sets)]
    state = CycleState()
    assert PLUGIN.pre_score(state, pod, infos).is_success
    raw = [PLUGIN.score(state, pod, info) for info in infos]
    return raw, PLUGIN.normalize_score(state, pod, infos, list(raw))


def test_reference_example_0_150_300() -> None:
    soft = [Taint("a", "PreferNoSchedule"), Taint("b", "PreferNoSchedule", "x")]
    raw, normalized = scores_for([soft, soft[:1], []])
    assert raw == [2, 1, 0]
    assert normalized == [0, 50, 100]
    assert [s * WEIGHT for s in normalized] == [0, 150, 300]


@pytest.mark.parametrize(
    ("taints", "tolerations", "raw"),
    [
        ([Taint("a", "NoSchedule"), Taint("b", "NoExecute")], (), 0),
        ([Taint("a", "PreferNoSchedule")], (Toleration("a", "Exists"),), 0),
        ([Taint("a", "PreferNoSchedule")], (Toleration("a", "Exists", effect="PreferNoSchedule"),), 0),
        ([Taint("a", "PreferNoSchedule")], (Toleration("a", "Exists", effect="NoSchedule"),), 1),
        ([Taint("a", "PreferNoSchedule", "1")], (Toleration("a", "Equal", "2"),), 1),
        ([Taint("a", "PreferNoSchedule"), Taint("b", "PreferNoSchedule")], (Toleration("", "Exists"),), 0),
    ],
    ids=[
        "hard-taints-not-counted",
        "tolerated-any-effect",
        "tolerated-prefernoschedule",
        "noschedule-toleration-dropped-by-prescore",
        "value-mismatch",
        "tolerate-everything",
    ],
)
def test_raw_score(taints: list[Taint], tolerations: tuple[Toleration, ...], raw: int) -> None:
    assert scores_for([taints], tolerations)[0] == [raw]


def test_all_zero_counts_normalize_to_100() -> None:
    assert scores_for([[], [Taint("a", "NoSchedule")]])[1] == [100, 100]


def test_score_without_pre_score_is_an_error() -> None:
    with pytest.raises(LookupError, match='failed to read "PreScoreTaintToleration" from cycleState'):
        PLUGIN.score(CycleState(), make_pod("p"), node_info(make_node("n")))


def test_pre_score_without_nodes_writes_nothing() -> None:
    state = CycleState()
    assert PLUGIN.pre_score(state, make_pod("p"), []).is_success
    with pytest.raises(LookupError):
        PLUGIN.score(state, make_pod("p"), node_info(make_node("n")))


def test_plugin_identity() -> None:
    assert TaintToleration.name == "TaintToleration"


# --- properties -------------------------------------------------------------------------------------

EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
taints_st = st.builds(
    Taint, key=st.sampled_from(["a", "b"]), effect=st.sampled_from(EFFECTS), value=st.sampled_from(["", "1"])
)
tolerations_st = st.builds(
    Toleration,
    key=st.sampled_from(["", "a", "b"]),
    operator=st.sampled_from(["", "Equal", "Exists"]),
    value=st.sampled_from(["", "1"]),
    effect=st.sampled_from(["", *EFFECTS]),
)


def brute_tolerates(t: Toleration, taint: Taint) -> bool:
    return (
        t.effect in ("", taint.effect)
        and t.key in ("", taint.key)
        and (t.operator == "Exists" or t.value == taint.value)
    )


@given(st.lists(taints_st, max_size=4), st.lists(tolerations_st, max_size=3))
def test_filter_matches_restatement(taints: list[Taint], tols: list[Toleration]) -> None:
    hard = [
        t for t in taints if t.effect != "PreferNoSchedule" and not any(brute_tolerates(x, t) for x in tols)
    ]
    code, reasons = run_filter(taints, tuple(tols))
    if hard:
        assert (code, reasons) == (
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            (f"node(s) had untolerated taint {{{hard[0].key}: {hard[0].value}}}",),
        )
    else:
        assert code is Code.SUCCESS


@given(
    st.lists(st.lists(taints_st, max_size=4), min_size=1, max_size=6), st.lists(tolerations_st, max_size=3)
)
def test_scores_within_range_and_reversed(taint_sets: list[list[Taint]], tols: list[Toleration]) -> None:
    raw, normalized = scores_for(taint_sets, tuple(tols))
    soft_tols = [t for t in tols if t.effect in ("", "PreferNoSchedule")]
    assert raw == [
        sum(
            1
            for t in ts
            if t.effect == "PreferNoSchedule" and not any(brute_tolerates(x, t) for x in soft_tols)
        )
        for ts in taint_sets
    ]
    assert raw == [count_untolerated_prefer_no_schedule(ts, soft_tols) for ts in taint_sets]
    assert all(0 <= s <= 100 for s in normalized)
    for r1, n1 in zip(raw, normalized, strict=True):
        for r2, n2 in zip(raw, normalized, strict=True):
            if r1 < r2:
                assert n1 >= n2
    top = max(raw)
    assert normalized == [100 - 100 * r // top if top else 100 for r in raw]


def test_state_clone_and_ghost_score() -> None:
    state = CycleState()
    PLUGIN.pre_score(state, make_pod("p"), [node_info(make_node("n"))])
    assert (
        PLUGIN.score(
            state.clone(), make_pod("p"), node_info(make_node("n", taints=[Taint("a", "PreferNoSchedule")]))
        )
        == 1
    )
    with pytest.raises(LookupError, match="node not found"):
        PLUGIN.score(state, make_pod("p"), NodeInfo.of(None))

