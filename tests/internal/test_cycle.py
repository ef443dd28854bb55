"""The scheduling algorithm of one cycle (reference §3 steps 8-12, §6): sampling, search, host choice."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib._internal.cycle import CycleOutcome, num_feasible_nodes_to_find, run_cycle, select_host
from kschedlib._internal.nominator import Nominator
from kschedlib._internal.profile import build_profile
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib.framework import (
    Code,
    CycleState,
    Diagnosis,
    FilterPlugin,
    Handle,
    NodeInfo,
    ScorePlugin,
    Snapshot,
    Status,
    fit_error_message,
    parse_config,
)
from kschedlib.model import Pod
from kschedlib.plugins import in_tree_registry
from kschedlib.results import ScoreTable
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod

# --- §3 step 8: how many feasible nodes to find -----------------------------------------------

ADAPTIVE = [(50, 50), (99, 99), (100, 100), (200, 100), (500, 230), (1000, 420), (3000, 780), (5000, 500),
            (6000, 300), (10000, 500)]


@pytest.mark.parametrize(("nodes", "expected"), ADAPTIVE, ids=[f"{n}-nodes" for n, _ in ADAPTIVE])
def test_adaptive_number_of_nodes_to_find(nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(0, nodes) == expected


EXPLICIT = [(30, 500, 150), (100, 500, 500), (10, 500, 100), (1, 5000, 100), (50, 60, 60), (5, 10000, 500)]


@pytest.mark.parametrize(("pct", "nodes", "expected"), EXPLICIT, ids=[f"{p}pct-{n}-nodes" for p, n, _ in EXPLICIT])
def test_explicit_percentage(pct: int, nodes: int, expected: int) -> None:
    assert num_feasible_nodes_to_find(pct, nodes) == expected


@given(st.integers(0, 100), st.integers(0, 20000))
def test_number_to_find_is_within_bounds(pct: int, nodes: int) -> None:
    found = num_feasible_nodes_to_find(pct, nodes)
    assert min(nodes, 100) <= found <= nodes
    if nodes < 100 or pct == 100:
        assert found == nodes


# --- a tiny profile with controllable plugins -------------------------------------------------


class PassSet(FilterPlugin):
    """Passes the nodes named in its args; raises on the node named ``boom``."""

    name: ClassVar[str] = "PassSet"

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.passing = frozenset((args or {}).get("pass", ()))
        self.boom = (args or {}).get("boom")
        self.calls: list[str] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.calls.append(node_info.name)
        if node_info.name == self.boom:
            raise RuntimeError("kaput")
        if node_info.name in self.passing:
            return Status.success()
        return Status.unschedulable("not in the set")


class Flat(ScorePlugin):
    name: ClassVar[str] = "Flat"

    def __init__(self, args: Any, handle: Handle) -> None:
        pass

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 50


def runtime(passing: Sequence[str] = (), *, boom: str | None = None, score: bool = True,
            filter_: bool = True) -> ProfileRuntime:
    registry = in_tree_registry()
    registry.register("PassSet", PassSet)
    registry.register("Flat", Flat)
    enabled = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]
    if filter_:
        enabled.append({"name": "PassSet"})
    if score:
        enabled.append({"name": "Flat"})
    config = parse_config({"profiles": [{"plugins": {"multiPoint": {"enabled": enabled}},
                                         "pluginConfig": [{"name": "PassSet",
                                                           "args": {"pass": list(passing), "boom": boom}}]}]})
    handle = cast(Handle, FakeHandle(kube_version="1.30"))
    return ProfileRuntime(build_profile(config.profiles[0], registry, handle, {}))


def nodes(count: int) -> list[str]:
    return [f"n{i:03d}" for i in range(count)]


def snapshot_of(names: Sequence[str]) -> Snapshot:
    return Snapshot([NodeInfo.of(make_node(name)) for name in names])


def cycle(rt: ProfileRuntime, names: Sequence[str], *, start: int = 0, pct: int = 0, seed: int = 0) -> Any:
    return run_cycle(rt, make_pod("p"), snapshot_of(names), start_index=start, percentage_of_nodes_to_score=pct,
                     rng=random.Random(seed), nominator=Nominator())


def visited(order: Sequence[str], start: int, offsets: range) -> list[str]:
    return [order[(start + i) % len(order)] for i in offsets]


# --- the search-stop rule and the next start index --------------------------------------------


@pytest.mark.parametrize("start", [0, 37, 200], ids=["start-0", "start-37", "start-200-wraps"])
def test_reference_example_of_where_the_search_stops(start: int) -> None:
    # K = 100 (250 nodes at 10 %): visits 1-80 fail, 81-180 pass (the 100th pass at visit 180),
    # 181-186 fail, 187 passes and is dropped.
    order = nodes(250)
    passing = visited(order, start, range(80, 180)) + visited(order, start, range(186, 250))
    outcome = cycle(runtime(passing), order, start=start, pct=10)
    assert num_feasible_nodes_to_find(10, 250) == 100
    assert list(outcome.feasible) == visited(order, start, range(80, 180))
    assert set(outcome.node_statuses) == set(visited(order, start, range(80))) | set(visited(order, start,
                                                                                        range(180, 186)))
    assert len(outcome.node_statuses) == 86
    assert outcome.evaluated_nodes == 186
    assert outcome.search_stopped_at == order[(start + 186) % 250]
    assert outcome.next_start_index == (start + 186) % 250
    assert outcome.start_index == start
    assert outcome.num_all_nodes == 250


def test_search_stops_at_the_first_pass_after_enough_feasible_nodes() -> None:
    order = nodes(300)
    rt = runtime(order)
    outcome = cycle(rt, order, start=10, pct=10)
    assert len(outcome.feasible) == 100
    assert outcome.node_statuses == {}
    assert outcome.next_start_index == 110
    assert outcome.search_stopped_at == order[110]
    filter_plugin = rt.profile.plugins["PassSet"]
    assert isinstance(filter_plugin, PassSet)
    assert filter_plugin.calls == order[10:111]  # the dropped node was filtered, not counted


def test_without_enough_feasible_nodes_every_node_is_visited() -> None:
    order = nodes(150)
    outcome = cycle(runtime(order[::3]), order, start=20)
    assert len(outcome.feasible) == 50
    assert len(outcome.node_statuses) == 100
    assert outcome.evaluated_nodes == 150
    assert outcome.search_stopped_at is None
    assert outcome.next_start_index == 20


def test_small_clusters_are_searched_completely() -> None:
    order = nodes(60)
    outcome = cycle(runtime(order), order, start=59)
    assert len(outcome.feasible) == 60
    assert outcome.feasible[0] == "n059"
    assert outcome.next_start_index == 59


def test_start_index_rotates_over_successive_cycles() -> None:
    order = nodes(400)
    rt = runtime(order)
    start = 0
    starts = []
    for _ in range(5):
        outcome = cycle(rt, order, start=start, pct=25)  # K = 100
        starts.append(outcome.next_start_index)
        start = outcome.next_start_index
    assert starts == [100, 200, 300, 0, 100]


def test_without_score_plugins_one_feasible_node_is_enough() -> None:
    order = nodes(20)
    outcome = cycle(runtime(order[5:], score=False), order, start=0)
    assert list(outcome.feasible) == ["n005"]
    assert outcome.selected == "n005"
    assert outcome.evaluated_nodes == 6
    assert outcome.next_start_index == 6


def test_without_filter_plugins_nodes_are_taken_from_the_start_index() -> None:
    order = nodes(150)
    outcome = cycle(runtime(filter_=False), order, start=70)
    assert list(outcome.feasible) == visited(order, 70, range(100))
    assert outcome.next_start_index == 20


def test_a_filter_error_aborts_the_cycle() -> None:
    order = nodes(10)
    outcome = cycle(runtime(order, boom="n004"), order, start=0)
    assert outcome.selected is None
    assert outcome.error is not None
    assert outcome.error.code is Code.ERROR
    assert outcome.error.plugin == "PassSet"
    assert outcome.error.message() == 'running "PassSet" filter plugin: kaput'
    assert outcome.diagnosis is None
    assert outcome.message == 'running "PassSet" filter plugin: kaput'


def test_no_nodes_at_all() -> None:
    outcome = cycle(runtime(), [], start=0)
    assert outcome.error is not None
    assert outcome.error.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert outcome.error.message() == "no nodes available to schedule pods"


def test_nothing_fits_gives_the_fit_error() -> None:
    order = nodes(3)
    outcome = cycle(runtime(), order)
    assert outcome.selected is None
    assert outcome.fit_error == "0/3 nodes are available: 3 not in the set."
    assert outcome.diagnosis is not None
    assert outcome.diagnosis.unschedulable_plugins == {"PassSet"}


def test_one_feasible_node_is_chosen_without_scoring() -> None:
    order = nodes(5)
    outcome = cycle(runtime(["n003"]), order)
    assert outcome.selected == "n003"
    assert outcome.scores is None
    assert outcome.best == ("n003",)


def test_scores_are_weighted_and_totalled() -> None:
    order = nodes(4)
    outcome = cycle(runtime(order), order)
    assert outcome.scores is not None
    assert outcome.scores.plugins == ("Flat",)
    assert outcome.scores.totals == [50, 50, 50, 50]
    assert outcome.best == tuple(order)
    assert outcome.selected in order


# --- §3 step 12: selectHost -------------------------------------------------------------------


def test_select_host_picks_only_among_the_top_scores() -> None:
    rng = random.Random(1)
    for _ in range(200):
        assert select_host(["a", "b", "c", "d"], [5, 9, 3, 9], rng) in {"b", "d"}


def test_the_top_keeps_scoring_order_and_best_sorts_it() -> None:
    outcome = CycleOutcome(pod=make_pod("p"), state=CycleState(), num_all_nodes=4, start_index=0,
                           next_start_index=0, selected="a", feasible=("d", "b", "c", "a"),
                           scores=ScoreTable((), (), [9, 5, 3, 9]), scored_nodes=("d", "b", "c", "a"))
    assert outcome.top == ("d", "a")
    assert outcome.best == ("a", "d")


def test_an_unscored_outcome_tops_with_its_selected_node_alone() -> None:
    outcome = CycleOutcome(pod=make_pod("p"), state=CycleState(), num_all_nodes=4, start_index=0,
                           next_start_index=0, selected="b", feasible=("b",))
    assert outcome.top == ("b",)
    failed = CycleOutcome(pod=make_pod("p"), state=CycleState(), num_all_nodes=4, start_index=0, next_start_index=0)
    assert failed.top == ()


def test_select_host_single_best_uses_no_randomness() -> None:
    rng = random.Random(3)
    state = rng.getstate()
    assert select_host(["a", "b"], [1, 2], rng) == "b"
    assert rng.getstate() == state


def test_select_host_is_uniform() -> None:
    rng = random.Random(12345)
    names = ["a", "b", "c", "d", "e"]
    draws = 25000
    counts = Counter(select_host(names, [7, 7, 7, 7, 7], rng) for _ in range(draws))
    expected = draws / len(names)
    chi_square = sum((counts[n] - expected) ** 2 / expected for n in names)
    assert set(counts) == set(names)
    assert chi_square < 18.47  # p = 0.001 with 4 degrees of freedom


@given(st.lists(st.integers(0, 3), min_size=1, max_size=12), st.integers(0, 2**32))
def test_select_host_is_deterministic_for_a_seed(totals: list[int], seed: int) -> None:
    names = [f"n{i}" for i in range(len(totals))]
    first = [select_host(names, totals, rng) for rng in [random.Random(seed)] for _ in range(5)]
    second = [select_host(names, totals, rng) for rng in [random.Random(seed)] for _ in range(5)]
    assert first == second
    top = max(totals)
    assert all(totals[names.index(name)] == top for name in first)


def _plain_select_host(names: list[str], totals: list[int], rng: random.Random) -> str:
    top = max(totals)
    best = tuple(name for name, total in zip(names, totals, strict=True) if total == top)
    return best[0] if len(best) == 1 else best[rng.randrange(len(best))]


@given(st.lists(st.integers(0, 4), min_size=1, max_size=40), st.booleans(), st.integers(0, 2**32))
def test_select_host_matches_the_plain_comparison(values: list[int], shared: bool, seed: int) -> None:
    """The set-count-and-index selection == a comparison per node: same pick, same RNG state,
    whether equal totals are one shared object or distinct objects."""
    big = 10**12  # ints this large are never cached: each sum below is an object of its own
    totals = [big + value for value in values]
    if shared:
        one = {total: total for total in totals}
        totals = [one[total] for total in totals]
    names = [f"n{i}" for i in range(len(totals))]
    ours, plain = random.Random(seed), random.Random(seed)
    assert select_host(names, totals, ours) == _plain_select_host(names, totals, plain)
    assert ours.getstate() == plain.getstate()


def test_same_seed_same_choice_through_the_cycle() -> None:
    order = nodes(30)
    picks = {cycle(runtime(order), order, seed=seed).selected for seed in range(40)}
    assert len(picks) > 1  # ties are really broken at random
    for seed in range(10):
        assert cycle(runtime(order), order, seed=seed).selected == cycle(runtime(order), order, seed=seed).selected


# --- §6: the FitError message ------------------------------------------------------------------

UNTOLERATED = "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
FIT_ERRORS = [
    ("reference-example",
     {"n1": Status.unschedulable("Insufficient cpu"),
      "n2": Status.unschedulable("Insufficient cpu", "Insufficient memory"),
      "n3": Status.unresolvable(UNTOLERATED)}, "", "",
     f"0/3 nodes are available: 1 Insufficient memory, 1 {UNTOLERATED}, 2 Insufficient cpu."),
    ("plain-string-sort", {f"n{i}": Status.unschedulable("X" if i < 10 else "Y") for i in range(12)}, "", "",
     "0/12 nodes are available: 10 X, 2 Y."),
    ("prefilter-message-wins", {"n1": Status.unresolvable("ignored")}, "pod affinity terms conflict",
     "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.",
     "0/1 nodes are available: pod affinity terms conflict. preemption: 0/5 nodes are available: 5 Preemption is "
     "not helpful for scheduling."),
    ("no-reasons", {}, "", "", "0/1 nodes are available:"),
    ("postfilter-without-period", {"n1": Status.unschedulable("Insufficient cpu")}, "",
     "preemption: not eligible due to preemptionPolicy=Never.",
     "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."),
]


@pytest.mark.parametrize(("statuses", "pre", "post", "message"), [f[1:] for f in FIT_ERRORS],
                         ids=[f[0] for f in FIT_ERRORS])
def test_fit_error_message(statuses: dict[str, Status], pre: str, post: str, message: str) -> None:
    num_nodes = max(len(statuses), 1)
    diagnosis = Diagnosis(statuses, pre_filter_message=pre, post_filter_message=post)
    assert fit_error_message(num_nodes, diagnosis) == message


@pytest.mark.parametrize("version", ["1.30", "1.36"])
def test_a_plain_pods_default_filter_plan_is_fully_node_local(version: str) -> None:
    """Only the leading node-local Filters are reused: an early non-local Filter that did not skip would
    silently turn reuse off for every Filter after it.  With the default profile, a pod without spread
    constraints, affinity or volumes must keep every active Filter in the reusable prefix."""
    from kschedlib.plugins import default_plugin_sets
    from kschedlib.versions import resolve

    switches = resolve(version).switches
    handle = cast(Handle, FakeHandle(kube_version=version))
    config = parse_config({})
    rt = ProfileRuntime(build_profile(config.profiles[0], in_tree_registry(), handle, default_plugin_sets(switches)),
                        switches=switches)
    pod = make_pod("plain", requests={"cpu": "1"})
    state = CycleState()
    assert rt.run_pre_filter(state, pod).status.is_success
    plan = rt.reuse.filter_plan(state, pod)
    assert plan.active
    assert plan.local == len(plan.active), [name for name, _ in plan.active[plan.local:]]


@given(st.lists(st.integers(0, 4), min_size=1, max_size=40), st.integers(0, 2**32))
def test_select_host_draws_among_the_top_in_order(totals: list[int], seed: int) -> None:
    names = [f"n{i}" for i in range(len(totals))]
    top = max(totals)
    plain = tuple(name for name, total in zip(names, totals, strict=True) if total == top)
    rng, twin = random.Random(seed), random.Random(seed)
    chosen = select_host(names, totals, rng)
    assert chosen == (plain[0] if len(plain) == 1 else plain[twin.randrange(len(plain))])
    assert rng.getstate() == twin.getstate()
