"""Selector validation of incoming pods: remembered answers are the answers computed afresh."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kschedlib.plugins._helpers import validation

NAMES = st.sampled_from(["app", "example.com/tier", "-bad", "a" * 64, "x/y/z", "", "ok.io/ok"])
VALUES = st.lists(st.sampled_from(["web", "", "a b", "v" * 64, "x.y-z", "-no"]), max_size=3)


@given(st.lists(st.tuples(NAMES, VALUES), min_size=1, max_size=6))
def test_remembered_requirement_errors_match_fresh_ones(requirements: list[tuple[str, list[str]]]) -> None:
    for key, values in requirements:
        fresh = validation._requirement_error.__wrapped__(key, tuple(values))
        assert validation.requirement_error(key, values) == fresh
        assert validation.requirement_error(key, tuple(values)) == fresh  # asked again: from the cache


def test_an_invalid_value_is_named() -> None:
    assert validation.requirement_error("app", ["a b"]) == (
        'values[0][app]: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
