"""Evaluator builders: one small closure per syntax node, with CEL's runtime semantics and cel-go's error texts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from kschedlib.dra._cel._nodes import Uint
from kschedlib.dra._cel._operators import (
    add,
    arith,
    as_bool,
    binary_impl,
    check_binary,
    compare,
    contains,
    equal,
    is_primitive_list,
    negated,
    unary_impl,
)
from kschedlib.dra._cel._types import runtime_fits
from kschedlib.dra._cel._values import (
    LIST_TYPES,
    NO_SUCH_OVERLOAD,
    ConcatList,
    DeviceValue,
    Fault,
    cel_equal,
    format_value,
    go_type_name,
    index_map,
    type_name,
)

if TYPE_CHECKING:
    from kschedlib.dra._cel._overloads import Impl, Overload

__all__ = [
    "as_bool",
    "binary",
    "binary_impl",
    "check_binary",
    "comprehension",
    "conditional",
    "device_field_of",
    "dispatcher",
    "has_field_of",
    "index_step",
    "is_primitive_list",
    "iterate",
    "select_field_of",
    "unary_impl",
]

Activation = dict[str, object]
Evaluator = Callable[[Activation], object]

NOT_CONSTANT: Final = object()
# -- leaves and selection ----------------------------------------------------------------------------


def device_field(operand: Evaluator, field: str) -> Evaluator:
    if field == "driver":
        return lambda a: _device(operand(a)).driver
    if field == "attributes":
        return lambda a: _device(operand(a)).attributes
    if field == "capacity":
        return lambda a: _device(operand(a)).capacity
    return lambda a: _device(operand(a)).allowMultipleAllocations


def device_field_of(field: str) -> Callable[[object], object]:
    """The field's value of a ``device`` value."""
    return lambda value: getattr(_device(value), field)


def _device(value: object) -> DeviceValue:
    assert isinstance(value, DeviceValue)
    return value


def select_field_of(field: str) -> Callable[[object], object]:
    """``value.field`` of a map value."""

    def select(value: object) -> object:
        if isinstance(value, dict):
            try:
                return value[field]
            except KeyError:
                raise Fault(f"no such key: {field}") from None
        raise Fault(f"type '{type_name(value)}' does not support field selection")

    return select


def select_field(operand: Evaluator, field: str) -> Evaluator:
    def select(a: Activation) -> object:  # select_field_of inlined: selections are the hot path
        value = operand(a)
        if isinstance(value, dict):
            try:
                return value[field]
            except KeyError:
                raise Fault(f"no such key: {field}") from None
        raise Fault(f"type '{type_name(value)}' does not support field selection")

    return select


def has_field_of(field: str) -> Callable[[object], object]:
    """``has(value.field)`` of a map value."""

    def has(value: object) -> object:
        if isinstance(value, dict):
            return field in value
        raise Fault(f"invalid type for field selection: {type_name(value)}")

    return has


def has_field(operand: Evaluator, field: str) -> Evaluator:
    has = has_field_of(field)
    return lambda a: has(operand(a))


def _lookup(container: object, k: object) -> object:
    if isinstance(container, dict):
        return index_map(container, k)
    if isinstance(container, LIST_TYPES):
        return _list_get(container, k)
    raise Fault(NO_SUCH_OVERLOAD)


def index(operand: Evaluator, key: Evaluator) -> Evaluator:
    def lookup(a: Activation) -> object:  # _lookup inlined: indexing is the hot path
        container = operand(a)
        k = key(a)
        if isinstance(container, dict):
            return index_map(container, k)
        if isinstance(container, LIST_TYPES):
            return _list_get(container, k)
        raise Fault(NO_SUCH_OVERLOAD)

    return lookup


def index_step(key: Evaluator) -> Callable[[Activation, object], object]:
    """``container[key]`` once the container is known (the key is evaluated after it)."""
    return lambda a, container: _lookup(container, key(a))


def _list_get(items: Sequence[object], key: object) -> object:
    if isinstance(key, float):
        if not key.is_integer():
            raise Fault(f"unsupported index value {format_value(key)} in list")
        key = int(key)
    if type(key) not in (int, Uint):
        raise Fault(f"unsupported index type '{type_name(key)}' in list")
    assert isinstance(key, int)
    if not 0 <= key < len(items):
        raise Fault(f"index '{key}' out of range in list size '{len(items)}'")
    return items[key]


def create_map(pairs: tuple[tuple[Evaluator, Evaluator], ...]) -> Evaluator:
    def build(a: Activation) -> object:
        result: dict[object, object] = {}
        for key, value in pairs:
            k = key(a)
            if isinstance(k, (dict, ConcatList)):
                raise Fault(f"unsupported map key type: {type_name(k)}")
            for seen in [s for s in result if s is not k and cel_equal(k, s)]:
                del result[seen]  # a repeated key: the last value wins, as in cel-go
            result[k] = value(a)
        return result

    return build


# -- logic -------------------------------------------------------------------------------------------


def logical_not(operand: Evaluator) -> Evaluator:
    return lambda a: not as_bool(operand(a))


def _and(left: Evaluator, right: Evaluator) -> Evaluator:
    def conjunction(a: Activation) -> object:
        try:
            if not as_bool(left(a)):
                return False
        except Fault:
            # CEL's && is commutative over errors: a false right side still decides.
            if right(a) is False:
                return False
            raise
        return as_bool(right(a))

    return conjunction


def _or(left: Evaluator, right: Evaluator) -> Evaluator:
    def disjunction(a: Activation) -> object:
        try:
            if as_bool(left(a)):
                return True
        except Fault:
            if right(a) is True:
                return True
            raise
        return as_bool(right(a))

    return disjunction


def conditional(cond: Evaluator, when_true: Evaluator, when_false: Evaluator) -> Evaluator:
    return lambda a: when_true(a) if as_bool(cond(a)) else when_false(a)


# -- comparison and arithmetic -----------------------------------------------------------------------


def negate(operand: Evaluator) -> Evaluator:
    return lambda a: negated(operand(a))


def binary(op: str, left: Evaluator, right: Evaluator, right_constant: object) -> Evaluator:
    """The evaluator of ``left op right``; ``right_constant`` is the right side's value if known."""
    if op == "&&":
        return _and(left, right)
    if op == "||":
        return _or(left, right)
    if op == "==":
        if type(right_constant) is str:
            text = right_constant
            return lambda a: _equal_string(left(a), text)
        return lambda a: equal(left(a), right(a))
    if op == "!=":
        return lambda a: not equal(left(a), right(a))
    if op == "<":
        return lambda a: compare(left(a), right(a)) < 0
    if op == "<=":
        return lambda a: compare(left(a), right(a)) <= 0
    if op == ">":
        return lambda a: compare(left(a), right(a)) > 0
    if op == ">=":
        return lambda a: compare(left(a), right(a)) >= 0
    if op == "in":
        if isinstance(right_constant, tuple) and all(type(i) is str for i in right_constant):
            return _in_strings(left, right_constant)
        return lambda a: contains(right(a), left(a))
    if op == "+":
        return lambda a: add(left(a), right(a))
    return lambda a: arith(op, left(a), right(a))


def _in_strings(left: Evaluator, items: tuple[str, ...]) -> Evaluator:
    members = frozenset(items)

    def is_member(a: Activation) -> object:
        value = left(a)
        if type(value) is str:
            return value in members
        return contains(items, value)

    return is_member


def _equal_string(value: object, constant: str) -> bool:
    if type(value) is str:
        return value == constant
    return equal(value, constant)


# -- calls -------------------------------------------------------------------------------------------


def call_direct(impl: Impl, args: tuple[Evaluator, ...]) -> Evaluator:
    """A call whose overload the type check already decided."""
    if len(args) == 1:
        (only,) = args
        return lambda a: impl(only(a))
    if len(args) == 2:
        first, second = args
        return lambda a: impl(first(a), second(a))
    return lambda a: impl(*(arg(a) for arg in args))


def dispatcher(function: str, overloads: list[Overload]) -> Impl:
    """A call on ``dyn`` arguments: pick the overload by the runtime types, else cel-go's
    ``no such overload: isGreaterThan(string, kubernetes.Semver)`` (the receiver first)."""

    def dispatch(*values: object) -> object:
        names = [type_name(v) for v in values]
        for overload in overloads:
            if all(runtime_fits(p, n) for p, n in zip(overload.params, names, strict=True)):
                return overload.impl(*values)
        raise Fault(f"{NO_SUCH_OVERLOAD}: {function}({', '.join(names)})")

    return dispatch


# -- macros ------------------------------------------------------------------------------------------


def iterate(value: object) -> Sequence[object]:
    if isinstance(value, LIST_TYPES):
        return value
    if isinstance(value, dict):
        return list(value)
    raise Fault(f"got '{go_type_name(value)}', expected iterable type")


def comprehension(kind: str, range_: Evaluator, var: str, body: Evaluator, predicate: Evaluator | None) -> Evaluator:
    """``all``/``exists`` absorb errors when another element decides; the others propagate them."""

    def run(a: Activation) -> object:
        items = iterate(range_(a))
        scope = dict(a)
        if kind in ("all", "exists"):
            decisive = kind == "exists"
            error: Fault | None = None
            for item in items:
                scope[var] = item
                try:
                    if as_bool(body(scope)) is decisive:
                        return decisive
                except Fault as exc:
                    error = error or exc
            if error is not None:
                raise error
            return not decisive
        if kind == "exists_one":
            count = 0
            for item in items:
                scope[var] = item
                count += as_bool(body(scope))
            return count == 1
        out: list[object] = []
        for item in items:
            scope[var] = item
            if kind == "filter":
                if as_bool(body(scope)):
                    out.append(item)
            elif predicate is None or as_bool(predicate(scope)):
                out.append(body(scope))
        return tuple(out)

    return run
