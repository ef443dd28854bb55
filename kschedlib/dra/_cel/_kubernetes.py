"""The Kubernetes CEL libraries selectors may call (quantity, semver, regex, lists), cel-go's sets,
and DRA's ``includes``."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Final

from kschedlib.dra._cel._nodes import Uint
from kschedlib.dra._cel._overloads import Overload
from kschedlib.dra._cel._overloads import global_overload as _g
from kschedlib.dra._cel._overloads import member_overload as _m
from kschedlib.dra._cel._regex import compiled as _regex
from kschedlib.dra._cel._semver import Semver, SemverParseError, parse_semver
from kschedlib.dra._cel._values import (
    LIST_TYPES,
    NO_SUCH_OVERLOAD,
    QUANTITY_TYPE,
    SEMVER_TYPE,
    Fault,
    cel_equal,
    check_int,
    check_uint,
    type_name,
)
from kschedlib.errors import QuantityError
from kschedlib.model.quantity import Quantity, parse_quantity

__all__ = ["KUBERNETES_FUNCTIONS", "MAX_INCLUDES_VALUES", "list_index_of", "list_last_index_of"]

MAX_INCLUDES_VALUES: Final = 48
"""``ResourceSliceMaxAttributeValuesPerDevice``: ``includes`` refuses longer lists."""

_INT64_MAX: Final = 2**63 - 1

# -- Kubernetes regex and lists libraries -----------------------------------------------------------


def _find(text: str, pattern: str) -> str:
    return _regex(pattern).find(text)


def _find_all(text: str, pattern: str, limit: int = -1) -> tuple[str, ...]:
    return _regex(pattern).find_all(text, limit)


def _comparable(items: Sequence[object]) -> list[object]:
    kinds = {type_name(i) for i in items}
    if len(kinds) > 1 or kinds & {"list", "map", "null_type", QUANTITY_TYPE, SEMVER_TYPE}:
        raise Fault(NO_SUCH_OVERLOAD)
    return list(items)


def _is_sorted(items: Sequence[object]) -> bool:
    values = _comparable(items)
    return all(not (b < a) for a, b in itertools.pairwise(values))  # type: ignore[operator]


def _sum(items: Sequence[object]) -> object:
    if not items:
        return 0
    _comparable(items)
    total = items[0]
    for item in items[1:]:
        total = total + item  # type: ignore[operator]
    if type(items[0]) is int:
        return check_int(total)  # type: ignore[arg-type]
    if type(items[0]) is Uint:
        return check_uint(total)  # type: ignore[arg-type]
    return total


def _min(items: Sequence[object]) -> object:
    if not items:
        raise Fault("min(list) argument must not be empty")
    return min(_comparable(items))  # type: ignore[type-var]


def _max(items: Sequence[object]) -> object:
    if not items:
        raise Fault("max(list) argument must not be empty")
    return max(_comparable(items))  # type: ignore[type-var]


def list_index_of(items: Sequence[object], value: object) -> int:
    for i, item in enumerate(items):
        if cel_equal(item, value):
            return i
    return -1


def list_last_index_of(items: Sequence[object], value: object) -> int:
    for i in range(len(items) - 1, -1, -1):
        if cel_equal(items[i], value):
            return i
    return -1


def _sets_contains(items: Sequence[object], wanted: Sequence[object]) -> bool:
    return all(any(cel_equal(w, i) for i in items) for w in wanted)


def _sets_equivalent(left: Sequence[object], right: Sequence[object]) -> bool:
    return _sets_contains(left, right) and _sets_contains(right, left)


def _sets_intersects(left: Sequence[object], right: Sequence[object]) -> bool:
    return any(any(cel_equal(a, b) for b in right) for a in left)


def _includes(target: object, value: object) -> bool:
    if isinstance(target, LIST_TYPES):
        for i, item in enumerate(target):
            if i >= MAX_INCLUDES_VALUES:
                raise Fault(f"'includes' function cannot be applied to lists longer than {MAX_INCLUDES_VALUES} values")
            if cel_equal(item, value):
                return True
        return False
    return cel_equal(target, value)


# -- Kubernetes quantity library ---------------------------------------------------------------------


def _parse_quantity(text: str) -> Quantity:
    if text != text.strip() or not text:
        raise QuantityError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    return parse_quantity(text)


def _quantity(text: str) -> Quantity:
    try:
        return _parse_quantity(text)
    except QuantityError as exc:
        raise Fault(exc.message) from None


def _is_quantity(text: str) -> bool:
    try:
        _parse_quantity(text)
    except QuantityError:
        return False
    return True


def _compare(a: Quantity | Semver, b: Quantity | Semver) -> int:
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b)
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.amount > b.amount) - (a.amount < b.amount)
    raise Fault(NO_SUCH_OVERLOAD)


def _as_integer(q: Quantity) -> int:
    amount = q.amount
    if amount.denominator != 1 or not -(2**63) <= amount.numerator <= _INT64_MAX:
        raise Fault("cannot convert value to integer")
    return amount.numerator


def _is_integer(q: Quantity) -> bool:
    amount = q.amount
    return amount.denominator == 1 and -(2**63) <= amount.numerator <= _INT64_MAX


def _as_float(q: Quantity) -> float:
    try:
        return float(q.amount)
    except OverflowError:
        return math.inf if q.amount > 0 else -math.inf


def _add(q: Quantity, other: Quantity | int) -> Quantity:
    amount = other.amount if isinstance(other, Quantity) else Fraction(other)
    return Quantity(q.amount + amount, q.format)


def _sub(q: Quantity, other: Quantity | int) -> Quantity:
    amount = other.amount if isinstance(other, Quantity) else Fraction(other)
    return Quantity(q.amount - amount, q.format)


def _sign(q: Quantity) -> int:
    return (q.amount > 0) - (q.amount < 0)


# -- Kubernetes semver library -----------------------------------------------------------------------


def _semver(text: str, normalize: bool = False) -> Semver:
    try:
        return parse_semver(text, normalize)
    except SemverParseError as exc:
        raise Fault(str(exc)) from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(text, normalize)
    except SemverParseError:
        return False
    return True


Q, SV = QUANTITY_TYPE, SEMVER_TYPE

KUBERNETES_FUNCTIONS: Final[dict[str, tuple[Overload, ...]]] = {
    "find": (_m(["string", "string"], "string", _find),),
    "findAll": (
        _m(["string", "string"], "list(string)", _find_all),
        _m(["string", "string", "int"], "list(string)", _find_all),
    ),
    "isSorted": (_m(["list(A)"], "bool", _is_sorted),),
    "sum": (_m(["list(A)"], "A", _sum),),
    "min": (_m(["list(A)"], "A", _min),),
    "max": (_m(["list(A)"], "A", _max),),
    "sets.contains": (_g(["list(A)", "list(A)"], "bool", _sets_contains),),
    "sets.equivalent": (_g(["list(A)", "list(A)"], "bool", _sets_equivalent),),
    "sets.intersects": (_g(["list(A)", "list(A)"], "bool", _sets_intersects),),
    "includes": (_m(["dyn", "dyn"], "bool", _includes),),
    "quantity": (_g(["string"], Q, _quantity),),
    "isQuantity": (_g(["string"], "bool", _is_quantity),),
    "sign": (_g([Q], "int", _sign),),
    "isGreaterThan": (
        _m([Q, Q], "bool", lambda a, b: _compare(a, b) == 1),
        _m([SV, SV], "bool", lambda a, b: _compare(a, b) == 1),
    ),
    "isLessThan": (
        _m([Q, Q], "bool", lambda a, b: _compare(a, b) == -1),
        _m([SV, SV], "bool", lambda a, b: _compare(a, b) == -1),
    ),
    "compareTo": (_m([Q, Q], "int", _compare), _m([SV, SV], "int", _compare)),
    "asApproximateFloat": (_m([Q], "double", _as_float),),
    "asInteger": (_m([Q], "int", _as_integer),),
    "isInteger": (_m([Q], "bool", _is_integer),),
    "add": (_m([Q, Q], Q, _add), _m([Q, "int"], Q, _add)),
    "sub": (_m([Q, Q], Q, _sub), _m([Q, "int"], Q, _sub)),
    "semver": (_g(["string"], SV, _semver), _g(["string", "bool"], SV, _semver)),
    "isSemver": (_g(["string"], "bool", _is_semver), _g(["string", "bool"], "bool", _is_semver)),
    "major": (_m([SV], "int", lambda v: v.major),),
    "minor": (_m([SV], "int", lambda v: v.minor),),
    "patch": (_m([SV], "int", lambda v: v.patch),),
}
