"""The pictures the contract kit compares, and the differences it reports."""

from __future__ import annotations

from typing import Any

from kschedlib.testing._fingerprint import Frozen, differences, freeze, seal


class Plain:
    def __init__(self) -> None:
        self.tags = {"a"}
        self.counts = {"node-0": 1}


def test_cycles_are_cut() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert freeze(loop) == Frozen("list", (("0", 1), ("1", Frozen("<cycle>", ()))))


def test_differences_name_paths() -> None:
    value = Plain()
    before = freeze(value)
    value.tags.add("b")
    value.counts["node-1"] = 2
    del value.counts["node-0"]
    lines = differences(before, freeze(value), "plugin")
    assert lines == [
        "plugin.tags{'b'}: <absent> -> 'b'",
        "plugin.counts['node-0']: 1 -> <absent>",
        "plugin.counts['node-1']: <absent> -> 2",
    ]
    assert differences(before, before) == []
    assert differences(1, "x" * 100) == ["<value>: 1 -> '" + "x" * 56 + "..."]


def test_differences_inside_sets_and_lists() -> None:
    assert differences(freeze({1, 2}), freeze({1, 3})) == ["{2}: 2 -> <absent>", "{3}: <absent> -> 3"]
    assert differences(freeze([1]), freeze([1, (2,)])) == ["[1]: <absent> -> <tuple of 1>"]
    assert differences(freeze([Plain()]), freeze([None]))[0] == "[0]: <Plain> -> None"


def test_seal_falls_back_to_pictures_for_what_does_not_pickle() -> None:
    value: dict[str, Any] = {"key": lambda: 1, "n": [1]}
    sealed = seal(value)
    assert sealed.data is None
    assert sealed.same_as(value)
    value["n"].append(2)
    assert not sealed.same_as(value)
    assert differences(sealed.before(), freeze(value)) == ["['n'][1]: <absent> -> 2"]


def test_seal_notices_changes_through_pickles() -> None:
    value = Plain()
    sealed = seal(value)
    assert sealed.data is not None
    assert sealed.same_as(value)
    value.counts["node-0"] = 5
    assert not sealed.same_as(value)
    assert differences(sealed.before(), freeze(value), "p") == ["p.counts['node-0']: 1 -> 5"]
    value.counts["f"] = lambda: 1  # type: ignore[assignment]
    assert not sealed.same_as(value)
