"""CycleState (reference §1.2): typed keys, read/write/delete, clone semantics."""

from __future__ import annotations

from typing import Self

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import CycleState, StateKey


class Counter:
    """Mutable state that copies itself in clone()."""

    def __init__(self, value: int = 0) -> None:
        self.value = value
        self.clones = 0

    def clone(self) -> Self:
        self.clones += 1
        return type(self)(self.value)


class Frozen:
    """Immutable state: clone() returns self."""

    def __init__(self, value: str) -> None:
        self.value = value

    def clone(self) -> Self:
        return self


COUNTER: StateKey[Counter] = StateKey("PreFilterCounter")
FROZEN: StateKey[Frozen] = StateKey("PreScoreFrozen")


def test_write_then_read() -> None:
    state = CycleState()
    value = Counter(3)
    state.write(COUNTER, value)
    assert state.read(COUNTER) is value
    assert state.get(COUNTER) is value
    assert COUNTER in state


def test_write_replaces() -> None:
    state = CycleState()
    state.write(COUNTER, Counter(1))
    second = Counter(2)
    state.write(COUNTER, second)
    assert state.read(COUNTER) is second


def test_read_missing_raises_key_error_naming_the_key() -> None:
    state = CycleState()
    with pytest.raises(KeyError, match="PreFilterCounter: not found"):
        state.read(COUNTER)
    assert state.get(COUNTER) is None
    assert COUNTER not in state


def test_keys_are_distinct_objects_even_with_the_same_name() -> None:
    state = CycleState()
    other: StateKey[Counter] = StateKey("PreFilterCounter")
    state.write(COUNTER, Counter())
    assert other not in state


def test_delete_is_idempotent() -> None:
    state = CycleState()
    state.write(FROZEN, Frozen("x"))
    state.delete(FROZEN)
    state.delete(FROZEN)
    assert FROZEN not in state


def test_clone_copies_each_value_through_its_clone() -> None:
    state = CycleState()
    original = Counter(5)
    frozen = Frozen("f")
    state.write(COUNTER, original)
    state.write(FROZEN, frozen)
    copy = state.clone()
    assert original.clones == 1
    copied = copy.read(COUNTER)
    assert copied is not original
    assert copied.value == 5
    copied.value = 99
    assert state.read(COUNTER).value == 5
    assert copy.read(FROZEN) is frozen


def test_clone_is_independent_for_writes_and_deletes() -> None:
    state = CycleState()
    state.write(FROZEN, Frozen("a"))
    copy = state.clone()
    copy.write(COUNTER, Counter())
    copy.delete(FROZEN)
    assert COUNTER not in state
    assert FROZEN in state


def test_clone_shares_the_skip_sets() -> None:
    state = CycleState()
    state.skip_filter_plugins = frozenset({"NodePorts"})
    state.skip_score_plugins = frozenset({"ImageLocality"})
    copy = state.clone()
    assert copy.skip_filter_plugins is state.skip_filter_plugins
    assert copy.skip_score_plugins is state.skip_score_plugins


def test_fresh_state_skips_nothing() -> None:
    state = CycleState()
    assert state.skip_filter_plugins == frozenset()
    assert state.skip_score_plugins == frozenset()


def test_state_key_repr() -> None:
    assert repr(COUNTER) == "StateKey('PreFilterCounter')"


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers()), max_size=20))
def test_behaves_like_a_dict_of_the_last_writes(writes: list[tuple[str, int]]) -> None:
    keys: dict[str, StateKey[Counter]] = {name: StateKey(name) for name in "abc"}
    state = CycleState()
    model: dict[str, int] = {}
    for name, value in writes:
        state.write(keys[name], Counter(value))
        model[name] = value
    clone = state.clone()
    for name, key in keys.items():
        for s in (state, clone):
            got = s.get(key)
            assert (got.value if got is not None else None) == model.get(name)
