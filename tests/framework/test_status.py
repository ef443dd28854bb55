"""Status and Code (reference §1.1): codes, labels, predicates, reasons and messages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import Code, Status

CODES = [
    (Code.SUCCESS, 0, "Success"),
    (Code.ERROR, 1, "Error"),
    (Code.UNSCHEDULABLE, 2, "Unschedulable"),
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 3, "UnschedulableAndUnresolvable"),
    (Code.WAIT, 4, "Wait"),
    (Code.SKIP, 5, "Skip"),
    (Code.PENDING, 6, "Pending"),
]


@pytest.mark.parametrize(("code", "value", "label"), CODES, ids=[label for _, _, label in CODES])
def test_code_values_and_kubernetes_labels(code: Code, value: int, label: str) -> None:
    assert int(code) == value
    assert code.label == label


def test_every_code_has_a_label() -> None:
    assert sorted(Code) == [code for code, _, _ in CODES]


PREDICATES = [
    # code, is_success, is_skip, is_wait, is_rejected
    (Code.SUCCESS, True, False, False, False),
    (Code.ERROR, False, False, False, False),
    (Code.UNSCHEDULABLE, False, False, False, True),
    (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, False, False, False, True),
    (Code.WAIT, False, False, True, False),
    (Code.SKIP, False, True, False, False),
    (Code.PENDING, False, False, False, True),
]


@pytest.mark.parametrize(("code", "success", "skip", "wait", "rejected"), PREDICATES,
                         ids=[c.label for c, *_ in PREDICATES])
def test_predicates(code: Code, success: bool, skip: bool, wait: bool, rejected: bool) -> None:
    status = Status(code, ("r",))
    assert (status.is_success, status.is_skip, status.is_wait, status.is_rejected) == (success, skip, wait, rejected)


def test_default_status_is_success() -> None:
    assert Status().is_success
    assert Status() == Status.success()
    assert Status.success() is Status.success()
    assert Status.skip() is Status.skip()
    assert Status.skip().code is Code.SKIP
    assert Status.SUCCESS is Status.success()
    assert Status.SKIP is Status.skip()


CONSTRUCTORS = [
    ("unschedulable", Status.unschedulable("a", "b", plugin="P"), Code.UNSCHEDULABLE, ("a", "b"), "P"),
    ("unresolvable", Status.unresolvable("x"), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("x",), ""),
    ("from_error-text", Status.from_error("boom", plugin="P"), Code.ERROR, ("boom",), "P"),
]


@pytest.mark.parametrize(("status", "code", "reasons", "plugin"), [c[1:] for c in CONSTRUCTORS],
                         ids=[c[0] for c in CONSTRUCTORS])
def test_constructors(status: Status, code: Code, reasons: tuple[str, ...], plugin: str) -> None:
    assert (status.code, status.reasons, status.plugin) == (code, reasons, plugin)


def test_from_exception_puts_the_error_text_first() -> None:
    error = ValueError("disk on fire")
    status = Status.from_error(error, plugin="P").with_reason("later")
    assert status.code is Code.ERROR
    assert status.error is error
    assert status.all_reasons() == ("disk on fire", "later")
    assert status.message() == "disk on fire, later"


def test_message_joins_reasons_with_comma_space() -> None:
    assert Status.unschedulable("Insufficient cpu", "Insufficient memory").message() == \
        "Insufficient cpu, Insufficient memory"
    assert Status().message() == ""


def test_equality_ignores_the_exception_object() -> None:
    assert Status(Code.ERROR, ("m",), "P", ValueError("a")) == Status(Code.ERROR, ("m",), "P", KeyError("b"))
    assert Status.unschedulable("a") != Status.unresolvable("a")
    assert Status.unschedulable("a", plugin="X") != Status.unschedulable("a", plugin="Y")


def test_with_plugin_returns_self_when_unchanged_and_a_copy_otherwise() -> None:
    status = Status.unschedulable("r", plugin="P")
    assert status.with_plugin("P") is status
    other = status.with_plugin("Q")
    assert other.plugin == "Q"
    assert status.plugin == "P"
    assert other.reasons == status.reasons


@given(st.sampled_from(list(Code)), st.lists(st.sampled_from(["a", "b", "Insufficient cpu"]), max_size=3),
       st.sampled_from(["", "P", "Q"]), st.sampled_from(["P", "Q", "R"]), st.booleans())
def test_with_plugin_shares_one_status_per_code_reasons_and_plugin(
    code: Code, reasons: list[str], own: str, plugin: str, errs: bool,
) -> None:
    """What ``with_plugin`` hands out equals the plainly built status; without an error it is one
    shared object per code, reasons and plugin, and an error is always carried over."""
    error = RuntimeError("boom") if errs else None
    status = Status(code, tuple(reasons), own, error)
    plain = Status(code, tuple(reasons), plugin, error)
    got = status.with_plugin(plugin)
    assert (got, got.plugin, got.error) == (plain, plain.plugin, plain.error)
    fresh = Status(code, tuple(reasons), own, error)
    again = fresh.with_plugin(plugin)
    if own == plugin:
        assert again is fresh
    else:
        assert (again is got) == (not errs)


def test_shared_attributed_statuses_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedlib.framework import status as module

    monkeypatch.setattr(module, "_ATTRIBUTED_MAX", 2)
    for i in range(5):
        assert Status.unschedulable(f"r{i}").with_plugin("P").reasons == (f"r{i}",)
    assert len(module._ATTRIBUTED) <= 2


def test_with_reason_appends_without_mutating() -> None:
    status = Status.unschedulable("a")
    longer = status.with_reason("b")
    assert longer.reasons == ("a", "b")
    assert status.reasons == ("a",)


STRINGS = [
    ("success", Status(), "Success"),
    ("rejected-with-plugin", Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit"),
     "Unschedulable from NodeResourcesFit: Insufficient cpu"),
    ("no-plugin", Status.unresolvable("x", "y"), "UnschedulableAndUnresolvable: x, y"),
    ("skip", Status.skip(), "Skip"),
]


@pytest.mark.parametrize(("status", "text"), [s[1:] for s in STRINGS], ids=[s[0] for s in STRINGS])
def test_str(status: Status, text: str) -> None:
    assert str(status) == text


def test_status_is_immutable() -> None:
    status = Status.unschedulable("a")
    with pytest.raises(AttributeError):
        status.code = Code.SUCCESS  # type: ignore[misc]


@given(st.sampled_from(list(Code)), st.lists(st.text(max_size=5), max_size=4), st.text(max_size=5))
def test_message_is_the_reasons_joined(code: Code, reasons: list[str], plugin: str) -> None:
    status = Status(code, tuple(reasons), plugin)
    assert status.message() == ", ".join(reasons)
    assert status.all_reasons() == tuple(reasons)
    assert status.with_plugin(plugin) == status
    assert status.is_rejected == (code in {Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})
