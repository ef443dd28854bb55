"""PrioritySort: priority first, then queue timestamp, then arrival sequence."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import PodInfo, QueuedPodInfo, QueueSortPlugin
from kschedlib.plugins.priority_sort import PrioritySort, less, sort_key
from kschedlib.testing import FakeHandle
from tests.helpers import make_pod


def queued(priority: int | None, timestamp: float, sequence: int = 0, name: str = "p") -> QueuedPodInfo:
    return QueuedPodInfo(PodInfo.of(make_pod(name, priority=priority)), timestamp, sequence=sequence)


PLUGIN = PrioritySort(None, FakeHandle(kube_version="1.30"))

CASES = [
    # (a: priority, timestamp, sequence), (b: ...), a before b?
    ((10, 5.0, 2), (1, 1.0, 1), True),
    ((1, 1.0, 1), (10, 5.0, 2), False),
    ((None, 1.0, 0), (0, 2.0, 1), True),
    ((0, 2.0, 0), (None, 1.0, 1), False),
    ((None, 1.0, 0), (-1, 0.0, 0), True),
    ((-5, 0.0, 0), (-4, 9.0, 9), False),
    ((3, 1.0, 9), (3, 2.0, 0), True),
    ((3, 2.0, 0), (3, 1.0, 9), False),
    ((3, 1.0, 1), (3, 1.0, 2), True),
    ((3, 1.0, 2), (3, 1.0, 1), False),
    ((3, 1.0, 1), (3, 1.0, 1), False),
]
IDS = [
    "higher-priority-first-despite-later-timestamp",
    "lower-priority-after",
    "nil-priority-equals-zero-then-earlier-timestamp",
    "zero-equals-nil-later-timestamp",
    "nil-priority-beats-negative",
    "negative-priorities-compare",
    "equal-priority-earlier-timestamp-first",
    "equal-priority-later-timestamp-after",
    "equal-timestamp-smaller-sequence-first",
    "equal-timestamp-larger-sequence-after",
    "identical-keys-not-less",
]


@pytest.mark.parametrize(("a", "b", "expected"), CASES, ids=IDS)
def test_less(a: tuple[int | None, float, int], b: tuple[int | None, float, int], expected: bool) -> None:
    qa, qb = queued(*a, name="a"), queued(*b, name="b")
    assert PLUGIN.less(qa, qb) is expected
    assert less(qa, qb) is expected


def test_plugin_identity() -> None:
    assert PrioritySort.name == "PrioritySort"
    assert isinstance(PLUGIN, QueueSortPlugin)


keys = st.tuples(
    st.one_of(st.none(), st.integers(-3, 3)),
    st.sampled_from([0.0, 1.0, 1.5, 2.0]),
    st.integers(0, 5),
)


@given(st.lists(keys, max_size=12))
def test_sorting_by_less_matches_key_order(items: list[tuple[int | None, float, int]]) -> None:
    pods = [queued(p, ts, seq, name=f"p{i}") for i, (p, ts, seq) in enumerate(items)]

    def compare(x: QueuedPodInfo, y: QueuedPodInfo) -> int:
        return -1 if less(x, y) else (1 if less(y, x) else 0)

    ordered = sorted(pods, key=functools.cmp_to_key(compare))
    expected = sorted(pods, key=lambda q: (-(q.pod.priority or 0), q.timestamp, q.sequence))
    assert [(-(q.pod.priority or 0), q.timestamp, q.sequence) for q in ordered] == [
        (-(q.pod.priority or 0), q.timestamp, q.sequence) for q in expected
    ]


@given(keys, keys)
def test_less_is_asymmetric_and_total_on_distinct_keys(
    a: tuple[int | None, float, int], b: tuple[int | None, float, int]
) -> None:
    qa, qb = queued(*a), queued(*b)
    assert not (less(qa, qb) and less(qb, qa))
    same = ((a[0] or 0), a[1], a[2]) == ((b[0] or 0), b[1], b[2])
    assert (less(qa, qb) or less(qb, qa)) is not same


@given(keys, keys)
def test_the_sort_key_orders_as_less(a: tuple[int | None, float, int], b: tuple[int | None, float, int]) -> None:
    qa, qb = queued(*a, name="a"), queued(*b, name="b")
    assert (sort_key(qa) < sort_key(qb)) is less(qa, qb)
    assert (sort_key(qb) < sort_key(qa)) is less(qb, qa)
