"""BoundedLRU: the one bounded cache behind the memo tables, tallies, count tables and filter runners."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework._bounded import BoundedLRU


def test_storing_beyond_the_size_drops_the_least_recently_used() -> None:
    cache: BoundedLRU[str, int] = BoundedLRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert "b" not in cache
    assert (cache.get("a"), cache.get("c"), len(cache)) == (1, 3, 2)


def test_storing_an_existing_key_replaces_it_without_dropping_another() -> None:
    cache: BoundedLRU[str, int] = BoundedLRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)  # "a" most recent, "b" least
    assert len(cache) == 2
    cache.put("c", 3)
    assert ("a" in cache, "b" in cache, cache.get("a")) == (True, False, 10)


def test_pop_forgets_a_key_and_a_missing_key_reads_as_none() -> None:
    cache: BoundedLRU[str, int] = BoundedLRU(1)
    cache.put("a", 1)
    assert (cache.pop("a"), cache.pop("a"), cache.get("a"), len(cache)) == (1, None, None, 0)


@pytest.mark.parametrize("size", [0, -1], ids=["zero", "negative"])
def test_a_size_below_one_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match=f"at least 1, got {size}"):
        BoundedLRU(size)


_OPS = st.lists(st.tuples(st.sampled_from(["get", "put", "pop"]), st.integers(0, 6), st.integers(1, 99)),
                max_size=60)


@given(size=st.integers(1, 4), ops=_OPS)
def test_behaves_as_a_list_ordered_by_last_use(size: int, ops: list[tuple[str, int, int]]) -> None:
    """Against a plain model: keys ordered from least to most recently used, the first dropped on overflow."""
    cache: BoundedLRU[int, int] = BoundedLRU(size)
    model: list[tuple[int, int]] = []
    for op, key, value in ops:
        found = next((v for k, v in model if k == key), None)
        if op == "get":
            assert cache.get(key) == found
            if found is not None:
                model = [*(kv for kv in model if kv[0] != key), (key, found)]
        elif op == "put":
            cache.put(key, value)
            model = [*(kv for kv in model if kv[0] != key), (key, value)][-size:]
        else:
            assert cache.pop(key) == found
            model = [kv for kv in model if kv[0] != key]
        assert len(cache) == len(model) <= size
    assert all(cache.get(k) == v for k, v in model)
