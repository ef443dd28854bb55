"""Label selectors and node selectors: every operator, nil versus empty, and invalid input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.errors import SelectorError
from kschedlib.model.convert import label_selector_from_dict
from kschedlib.model.labels import (
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Requirement,
    selector_from_labels,
)

LABELS = {"app": "web", "tier": "front", "cores": "8"}

# --- Requirement ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "operator", "values", "expected"),
    [
        pytest.param("app", "In", ("web", "db"), True, id="in-match"),
        pytest.param("app", "In", ("db",), False, id="in-other-value"),
        pytest.param("zone", "In", ("a",), False, id="in-missing-key"),
        pytest.param("app", "NotIn", ("db",), True, id="notin-other-value"),
        pytest.param("app", "NotIn", ("web",), False, id="notin-same-value"),
        pytest.param("zone", "NotIn", ("a",), True, id="notin-missing-key-matches"),
        pytest.param("app", "Exists", (), True, id="exists"),
        pytest.param("zone", "Exists", (), False, id="exists-missing"),
        pytest.param("zone", "DoesNotExist", (), True, id="doesnotexist"),
        pytest.param("app", "DoesNotExist", (), False, id="doesnotexist-present"),
        pytest.param("cores", "Gt", ("4",), True, id="gt-true"),
        pytest.param("cores", "Gt", ("8",), False, id="gt-equal-is-false"),
        pytest.param("cores", "Lt", ("16",), True, id="lt-true"),
        pytest.param("cores", "Lt", ("8",), False, id="lt-equal-is-false"),
        pytest.param("zone", "Gt", ("1",), False, id="gt-missing-key"),
        pytest.param("app", "Gt", ("1",), False, id="gt-label-not-an-integer"),
        pytest.param("cores", "Gt", ("x",), False, id="gt-value-not-an-integer"),
    ],
)
def test_requirement_operators(key: str, operator: str, values: tuple[str, ...], expected: bool) -> None:
    assert Requirement(key, operator, values).matches(LABELS) is expected


@pytest.mark.parametrize(
    ("label", "bound", "operator", "expected"),
    [
        pytest.param("+5", "4", "Gt", True, id="plus-sign"),
        pytest.param("-3", "-4", "Gt", True, id="negative"),
        pytest.param("007", "6", "Gt", True, id="leading-zeros"),
        pytest.param("9223372036854775807", "0", "Gt", True, id="int64-max"),
        pytest.param("9223372036854775808", "0", "Gt", False, id="int64-overflow"),
        pytest.param("-9223372036854775808", "0", "Lt", True, id="int64-min"),
        pytest.param("-9223372036854775809", "0", "Lt", False, id="int64-underflow"),
        pytest.param("1.5", "1", "Gt", False, id="decimal-is-not-int"),
        pytest.param("", "-1", "Gt", False, id="empty-label"),
        pytest.param(" 5", "1", "Gt", False, id="space"),
        pytest.param("1_000", "1", "Gt", False, id="underscore"),
        pytest.param("\u0663", "1", "Gt", False, id="non-ascii-digit"),
        pytest.param("5", "+", "Lt", False, id="bare-sign-bound"),
    ],
)
def test_gt_lt_parse_like_go_parseint(label: str, bound: str, operator: str, expected: bool) -> None:
    assert Requirement("n", operator, (bound,)).matches({"n": label}) is expected


@given(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1))
def test_gt_lt_agree_with_integer_comparison(have: int, want: int) -> None:
    labels = {"n": str(have)}
    assert Requirement("n", "Gt", (str(want),)).matches(labels) is (have > want)
    assert Requirement("n", "Lt", (str(want),)).matches(labels) is (have < want)


@given(
    st.dictionaries(st.sampled_from("abc"), st.sampled_from("xyz"), max_size=3),
    st.sampled_from("abc"),
    st.lists(st.sampled_from("xyz"), min_size=1, max_size=3),
)
def test_complementary_operators(labels: dict[str, str], key: str, values: list[str]) -> None:
    vals = tuple(values)
    assert Requirement(key, "In", vals).matches(labels) is not Requirement(key, "NotIn", vals).matches(labels)
    assert Requirement(key, "Exists").matches(labels) is not Requirement(key, "DoesNotExist").matches(labels)


@pytest.mark.parametrize(
    ("operator", "values", "message"),
    [
        pytest.param("Equals", ("a",), "not a valid selector operator", id="unknown-operator"),
        pytest.param("in", ("a",), "not a valid selector operator", id="operator-is-case-sensitive"),
        pytest.param("In", (), "non-empty", id="in-without-values"),
        pytest.param("NotIn", (), "non-empty", id="notin-without-values"),
        pytest.param("Exists", ("a",), "must be empty", id="exists-with-values"),
        pytest.param("DoesNotExist", ("a",), "must be empty", id="doesnotexist-with-values"),
        pytest.param("Gt", (), "exactly one", id="gt-without-value"),
        pytest.param("Lt", ("1", "2"), "exactly one", id="lt-with-two-values"),
    ],
)
def test_invalid_requirement_raises(operator: str, values: tuple[str, ...], message: str) -> None:
    with pytest.raises(SelectorError, match=message):
        Requirement("k", operator, values)


def test_selector_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="Bogus"):
        Requirement("k", "Bogus")


# --- LabelSelector ----------------------------------------------------------------------------


def test_empty_selector_matches_everything() -> None:
    selector = LabelSelector()
    assert selector.is_empty()
    assert selector.matches({})
    assert selector.matches(LABELS)


def test_nil_selector_is_none_and_empty_is_not() -> None:
    assert label_selector_from_dict(None) is None
    empty = label_selector_from_dict({})
    assert empty == LabelSelector()
    assert empty is not None
    assert empty.matches({"anything": "at-all"})


def test_match_labels_and_expressions_are_anded() -> None:
    selector = LabelSelector({"app": "web"}, (Requirement("tier", "In", ("front",)),))
    assert selector.matches(LABELS)
    assert not selector.matches({"app": "web", "tier": "back"})
    assert not selector.matches({"tier": "front"})
    assert not selector.is_empty()


def test_requirements_list_labels_first_sorted_then_expressions() -> None:
    expr = Requirement("z", "Exists")
    selector = LabelSelector({"b": "2", "a": "1"}, (expr,))
    assert selector.requirements == (Requirement("a", "In", ("1",)), Requirement("b", "In", ("2",)), expr)


@pytest.mark.parametrize("operator", ["Gt", "Lt"])
def test_label_selector_rejects_node_only_operators(operator: str) -> None:
    with pytest.raises(SelectorError, match="not a valid label selector operator"):
        LabelSelector({}, (Requirement("n", operator, ("1",)),))


def test_with_requirements_ands_extra_and_keeps_original() -> None:
    base = LabelSelector({"app": "web"})
    narrowed = base.with_requirements([Requirement("tier", "In", ("back",))])
    assert base.matches(LABELS)
    assert not narrowed.matches(LABELS)
    assert narrowed.matches({"app": "web", "tier": "back"})
    assert base == LabelSelector({"app": "web"})


def test_selector_from_labels_is_a_match_labels_selector() -> None:
    selector = selector_from_labels({"app": "web"})
    assert selector == LabelSelector({"app": "web"})
    assert selector.matches(LABELS)
    assert not selector.matches({"app": "db"})
    assert selector_from_labels({}).is_empty()


@given(
    st.dictionaries(st.sampled_from("abcd"), st.sampled_from("xy"), max_size=4),
    st.dictionaries(st.sampled_from("abcd"), st.sampled_from("xy"), max_size=4),
)
def test_match_labels_is_subset_test(selector_labels: dict[str, str], labels: dict[str, str]) -> None:
    expected = all(labels.get(k) == v for k, v in selector_labels.items())
    assert LabelSelector(selector_labels).matches(labels) is expected


# --- NodeSelectorTerm / NodeSelector ----------------------------------------------------------


def req(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, operator, values)


NODE_LABELS = {"zone": "a", "cores": "8"}


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        pytest.param(NodeSelectorTerm(), False, id="empty-term-matches-nothing"),
        pytest.param(NodeSelectorTerm((req("zone", "In", "a"),)), True, id="in"),
        pytest.param(NodeSelectorTerm((req("zone", "NotIn", "a"),)), False, id="notin"),
        pytest.param(NodeSelectorTerm((req("zone", "Exists"),)), True, id="exists"),
        pytest.param(NodeSelectorTerm((req("gpu", "DoesNotExist"),)), True, id="doesnotexist"),
        pytest.param(NodeSelectorTerm((req("cores", "Gt", "4"),)), True, id="gt"),
        pytest.param(NodeSelectorTerm((req("cores", "Lt", "4"),)), False, id="lt"),
        pytest.param(
            NodeSelectorTerm((req("cores", "Gt", "four"),)), False, id="gt-non-integer-value-invalid"
        ),
        pytest.param(NodeSelectorTerm((req("zone", "Bogus", "a"),)), False, id="bad-operator-invalid"),
        pytest.param(NodeSelectorTerm((req("zone", "In"),)), False, id="in-without-values-invalid"),
        pytest.param(NodeSelectorTerm((req("zone", "In", "a"), req("cores", "Gt", "16"))), False, id="anded"),
        pytest.param(
            NodeSelectorTerm((req("zone", "In", "a"), req("x", "Bogus"))),
            False,
            id="one-invalid-requirement-spoils-the-term",
        ),
        pytest.param(NodeSelectorTerm((), (req("metadata.name", "In", "node-1"),)), True, id="field-in"),
        pytest.param(
            NodeSelectorTerm((), (req("metadata.name", "In", "node-2"),)), False, id="field-in-other"
        ),
        pytest.param(
            NodeSelectorTerm((), (req("metadata.name", "NotIn", "node-2"),)), True, id="field-notin"
        ),
        pytest.param(
            NodeSelectorTerm((), (req("metadata.name", "In", "node-1", "node-2"),)),
            False,
            id="field-two-values-invalid",
        ),
        pytest.param(
            NodeSelectorTerm((), (req("metadata.name", "Exists"),)), False, id="field-exists-invalid"
        ),
        pytest.param(
            NodeSelectorTerm((), (req("metadata.uid", "In", "node-1"),)), False, id="field-other-key-invalid"
        ),
        pytest.param(
            NodeSelectorTerm((req("zone", "In", "a"),), (req("metadata.name", "In", "node-1"),)),
            True,
            id="labels-and-fields",
        ),
        pytest.param(
            NodeSelectorTerm((req("zone", "In", "b"),), (req("metadata.name", "In", "node-1"),)),
            False,
            id="labels-and-fields-anded",
        ),
        pytest.param(
            NodeSelectorTerm((req("metadata.name", "In", "node-1"),)),
            False,
            id="metadata-name-as-label-is-a-label",
        ),
    ],
)
def test_node_selector_term(term: NodeSelectorTerm, expected: bool) -> None:
    assert term.matches("node-1", NODE_LABELS) is expected


def test_node_selector_terms_are_ored() -> None:
    selector = NodeSelector(
        (
            NodeSelectorTerm((req("zone", "In", "b"),)),
            NodeSelectorTerm((req("cores", "Gt", "4"),)),
        )
    )
    assert selector.matches("n", NODE_LABELS)
    assert not selector.matches("n", {"zone": "a", "cores": "2"})


def test_node_selector_without_terms_matches_nothing() -> None:
    assert not NodeSelector().matches("node-1", NODE_LABELS)


def test_node_selector_of_only_empty_or_invalid_terms_matches_nothing() -> None:
    selector = NodeSelector((NodeSelectorTerm(), NodeSelectorTerm((req("zone", "Bogus"),))))
    assert not selector.matches("node-1", NODE_LABELS)
    assert not selector.matches("node-1", {})


def test_invalid_term_does_not_spoil_a_valid_one() -> None:
    selector = NodeSelector(
        (NodeSelectorTerm((req("zone", "Bogus"),)), NodeSelectorTerm((req("zone", "Exists"),)))
    )
    assert selector.matches("node-1", NODE_LABELS)


def test_node_selector_requirement_equality_ignores_nothing_relevant() -> None:
    assert NodeSelectorTerm((req("a", "In", "x"),)) == NodeSelectorTerm((req("a", "In", "x"),))
    assert NodeSelectorTerm((req("a", "In", "x"),)) != NodeSelectorTerm((req("a", "In", "y"),))
