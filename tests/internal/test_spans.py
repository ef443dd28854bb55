"""Feasible positions kept with their runs: slices give exactly what position-by-position reads give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib._internal.cache import Cache
from kschedlib._internal.reuse.spans import Spans, among, take, take_names
from tests.helpers import make_node

# one step of building positions: a run (low, length), a lone position, or a plain append
_STEPS = st.lists(st.one_of(
    st.tuples(st.just("run"), st.integers(0, 60), st.integers(0, 30)),
    st.tuples(st.just("one"), st.integers(0, 89), st.just(1)),
    st.tuples(st.just("append"), st.integers(0, 89), st.just(1)),
), max_size=12)


@settings(max_examples=300)
@given(_STEPS, st.booleans(), st.sets(st.integers(0, 95), max_size=12))
def test_take_is_the_comprehension_over_the_positions(steps: list[tuple[str, int, int]], frozen: bool,
                                                      candidates: set[int]) -> None:
    values = [f"v{i}" for i in range(90)]
    names = tuple(values)
    positions = Spans()
    for kind, low, length in steps:
        if kind == "run":
            positions.add_run(low, low + length)
        elif kind == "one":
            positions.add(low)
        else:
            positions.append(low)  # not a run: the runs no longer cover the positions
    source = tuple(values) if frozen else values
    listed = [p for _, p in sorted(_listed(steps))]  # what a plain list would hold
    assert len(positions) == len(listed)
    assert among(candidates, positions) == candidates & set(listed)  # before anything lists them
    assert positions == listed
    assert list(positions) == listed
    assert [positions[i] for i in range(len(listed))] == listed
    assert take(source, positions) == [values[p] for p in positions]
    assert take_names(names, positions) == tuple(values[p] for p in positions)
    assert take(source, list(positions)) == [values[p] for p in positions]
    runs = positions.sliceable()
    if runs is not None:
        assert "append" not in {kind for kind, _, _ in steps}
        assert [p for low, high in runs for p in range(low, high)] == listed


def _listed(steps: list[tuple[str, int, int]]) -> list[tuple[int, int]]:
    """(order, position) of every position the steps add."""
    out: list[tuple[int, int]] = []
    for kind, low, length in steps:
        for p in range(low, low + length) if kind == "run" else [low]:
            out.append((len(out), p))
    return out


def test_adjacent_runs_merge() -> None:
    positions = Spans()
    positions.add_run(5, 9)
    positions.add(9)
    positions.add_run(10, 12)
    positions.add_run(0, 3)
    assert positions._runs == [(5, 12), (0, 3)]
    assert positions == [5, 6, 7, 8, 9, 10, 11, 0, 1, 2]


def test_a_snapshot_from_the_cache_names_its_nodes_in_order() -> None:
    cache = Cache()
    for i in range(7):
        cache.add_node(make_node(f"n{i}", labels={"topology.kubernetes.io/zone": f"z{i % 3}"}))
    first = cache.snapshot()
    assert first.node_names == tuple(info.name for info in first.node_infos)
    cache.remove_node("n4")
    second = cache.snapshot()
    assert second.node_names == tuple(info.name for info in second.node_infos)
    assert first.node_names != second.node_names


def test_positions_listed_early_keep_up_with_later_runs() -> None:
    positions = Spans()
    positions.add_run(3, 6)
    assert list(positions) == [3, 4, 5]  # listed now
    positions.add_run(6, 8)
    positions.add(0)
    assert positions == [3, 4, 5, 6, 7, 0]
    assert positions._runs == [(3, 8), (0, 1)]
    positions.append(9)
    assert positions == [3, 4, 5, 6, 7, 0, 9]
    assert positions.sliceable() is None
    assert len(positions) == 7
