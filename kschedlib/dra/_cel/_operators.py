"""CEL's operators on values, as cel-go computes them (Go's integer division, overflow checks,
heterogeneous equality), and the static type check of operators."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from kschedlib.dra._cel._nodes import Uint
from kschedlib.dra._cel._semver import Semver
from kschedlib.dra._cel._types import DYN, element_type, is_dyn, map_types, match
from kschedlib.dra._cel._values import (
    LIST_TYPES,
    NO_SUCH_OVERLOAD,
    ConcatList,
    Fault,
    cel_equal,
    check_int,
    check_uint,
    contains_key,
    type_name,
)
from kschedlib.model.quantity import Quantity

__all__ = [
    "add",
    "arith",
    "as_bool",
    "binary_impl",
    "check_binary",
    "compare",
    "contains",
    "equal",
    "is_primitive_list",
    "negated",
    "unary_impl",
]

_COPY_LIMIT: Final = 64
"""Longer concatenations are made without copying (:class:`ConcatList`), as cel-go makes them."""
_INT64_MIN: Final = -(2**63)


_ORDERED: Final = frozenset({"int", "uint", "double", "string", "bytes", "bool"})
_NUMBERS: Final = frozenset({"int", "uint", "double"})
_ARITHMETIC: Final = {"+": ("int", "uint", "double", "string", "bytes", "list"), "-": ("int", "uint", "double"),
                      "*": ("int", "uint", "double"), "/": ("int", "uint", "double"), "%": ("int", "uint")}  # fmt: skip




def check_binary(op: str, left: str, right: str) -> str | None:
    """The result type of ``left op right``, or None when cel-go's checker finds no overload."""
    if op in ("&&", "||"):
        return "bool" if all(t == "bool" or is_dyn(t) for t in (left, right)) else None
    if op in ("==", "!="):
        bound: dict[str, str] = {}
        return "bool" if match("A", left, bound) and match("A", right, bound) else None
    if op in ("<", "<=", ">", ">="):
        if is_dyn(left) or is_dyn(right):
            return "bool"
        if left == right and left in _ORDERED:
            return "bool"
        return "bool" if left in _NUMBERS and right in _NUMBERS else None
    if op == "in":
        if is_dyn(right):
            return "bool"
        if right.startswith("list("):
            return "bool" if match(element_type(right), left, {}) else None
        if right.startswith("map("):
            return "bool" if match(map_types(right)[0], left, {}) else None
        return None
    allowed = _ARITHMETIC[op]
    if is_dyn(left) or is_dyn(right):
        known = right if is_dyn(left) else left
        if not is_dyn(known) and known.split("(")[0] not in allowed:
            return None
        return known if not is_dyn(known) else DYN
    if left.split("(")[0] != right.split("(")[0] or left.split("(")[0] not in allowed:
        return None
    if left.startswith("list("):
        return left if left == right else "list(dyn)"
    return left


def as_bool(value: object) -> bool:
    if value is True or value is False:
        return value
    raise Fault(NO_SUCH_OVERLOAD)


def equal(left: object, right: object) -> bool:
    """``left == right``; Kubernetes' own types refuse a comparison with another type, as in cel-go."""
    if isinstance(left, (Quantity, Semver)) and right is not None and type(right) is not type(left):
        raise Fault(NO_SUCH_OVERLOAD)
    return cel_equal(left, right)


def compare(left: object, right: object) -> int:
    lt, rt = type_name(left), type_name(right)
    if (lt == rt and lt in _ORDERED) or (lt in _NUMBERS and rt in _NUMBERS):
        return int((left > right) - (left < right))  # type: ignore[operator]
    raise Fault(NO_SUCH_OVERLOAD)


def contains(container: object, value: object) -> bool:
    if isinstance(container, dict):
        return contains_key(container, value)
    if isinstance(container, LIST_TYPES):
        return any(cel_equal(item, value) for item in container)
    raise Fault(NO_SUCH_OVERLOAD)


def add(left: object, right: object) -> object:
    lt, rt = type(left), type(right)
    if lt is int and rt is int:
        return check_int(left + right)  # type: ignore[operator]
    if lt is rt and lt in (float, str, bytes):
        return left + right  # type: ignore[operator]
    if lt is Uint and rt is Uint:
        return check_uint(left + right)  # type: ignore[operator]
    if isinstance(left, LIST_TYPES) and isinstance(right, LIST_TYPES):
        if len(left) + len(right) > _COPY_LIMIT:
            return ConcatList(left, right)
        return (*left, *right)
    raise Fault(NO_SUCH_OVERLOAD)


def arith(op: str, left: object, right: object) -> object:
    lt, rt = type(left), type(right)
    if lt is not rt or lt not in (int, Uint, float):
        raise Fault(NO_SUCH_OVERLOAD)
    assert isinstance(left, (int, float))
    assert isinstance(right, (int, float))
    if op == "-":
        result = left - right
    elif op == "*":
        result = left * right
    elif lt is float:
        if op == "%":
            raise Fault(NO_SUCH_OVERLOAD)
        return left / right if right else _float_div(left, right)
    elif right == 0:
        raise Fault("division by zero" if op == "/" else "modulus by zero")
    elif lt is int and left == _INT64_MIN and right == -1:
        raise Fault("integer overflow")  # cel-go refuses MinInt64 / -1 and MinInt64 % -1 alike
    else:
        # Go truncates toward zero; Python floors.
        quotient = abs(int(left)) // abs(int(right)) * (1 if (left < 0) == (right < 0) else -1)
        result = quotient if op == "/" else left - right * quotient
    if lt is float:
        return result
    return check_uint(int(result)) if lt is Uint else check_int(int(result))


def _float_div(left: float, right: float) -> float:
    if left == 0 or left != left:
        return float("nan")
    return float("inf") if (left > 0) == (str(right)[0] != "-") else float("-inf")


def negated(value: object) -> object:
    if type(value) is int:
        return check_int(-value)
    if type(value) is float:
        return -value
    raise Fault(NO_SUCH_OVERLOAD)


def unary_impl(op: str) -> Callable[[object], object]:
    """``!`` or ``-`` of a value."""
    if op == "!":
        return lambda value: not as_bool(value)
    return negated


def binary_impl(op: str) -> Callable[[object, object], object]:
    """``left op right`` of two values (not ``&&`` or ``||``, which decide on errors)."""
    comparisons: dict[str, Callable[[int], bool]] = {
        "<": lambda c: c < 0, "<=": lambda c: c <= 0, ">": lambda c: c > 0, ">=": lambda c: c >= 0,
    }  # fmt: skip
    if op == "==":
        return equal
    if op == "!=":
        return lambda left, right: not equal(left, right)
    if op in comparisons:
        test = comparisons[op]
        return lambda left, right: test(compare(left, right))
    if op == "in":
        return lambda left, right: contains(right, left)
    if op == "+":
        return add
    return lambda left, right: arith(op, left, right)


def is_primitive_list(value: object) -> bool:
    """A constant list cel-go turns ``x in list`` into a set lookup for (no cost but the lookup)."""
    return isinstance(value, tuple) and all(type(v) in (bool, int, Uint, float, str) for v in value)
