"""Evaluator builders that charge cel-go's runtime cost as they go (see :mod:`._cost`).

They are used for selectors whose cost bound exceeds the budget; the others run the untracked
builders of :mod:`._ops`, which cannot run out. A tracked evaluation does what cel-go does where
cost depends on it: every argument of a call is evaluated before the first error is raised, and
``map``, ``filter`` and ``exists_one`` go on after an element fails.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Final

from kschedlib.dra._cel._cost import COST, MAX_WALKED, charge, cost_of, join_cost, size_of
from kschedlib.dra._cel._ops import as_bool, iterate
from kschedlib.dra._cel._values import COST_EXCEEDED, LIST_TYPES, Fault

__all__ = ["call", "charged", "comprehension", "join", "qualified"]

Activation = dict[str, object]
Evaluator = Callable[[Activation], object]

_ERROR: Final = object()
"""An argument that failed: size 1 in cost formulas, as cel-go's error values."""

# What cel-go's macro expansions charge: the loop condition at each element, the step's own nodes
# (the accumulator, the list built, the addition) and the result.
_CONDITION: Final = {"all": 2, "exists": 3}
_RESULT: Final = {"exists_one": 2}


def charged(evaluator: Evaluator, cost: int) -> Evaluator:
    """``evaluator`` and then ``cost`` units, also when it fails (cel-go charges error values)."""

    def run(a: Activation) -> object:
        budget: list[int] = a[COST]  # type: ignore[assignment]
        try:
            value = evaluator(a)
        finally:
            budget[0] -= cost
            if budget[0] < 0:
                raise Fault(COST_EXCEEDED)
        return value

    return run


def qualified(operand: Evaluator, step: Callable[[Activation, object], object], base: int, cost: int) -> Evaluator:
    """A field selection or index: ``base`` for a value that is not itself an attribute (charged
    even if it fails), then ``cost`` for the qualification (only if the operand succeeded)."""

    def run(a: Activation) -> object:
        budget: list[int] = a[COST]  # type: ignore[assignment]
        try:
            value = operand(a)
        except Fault:
            charge(budget, base)
            raise
        charge(budget, base + cost)
        return step(a, value)

    return run


def _arguments(args: tuple[Evaluator, ...], a: Activation) -> tuple[list[object], Fault | None]:
    values: list[object] = []
    fault: Fault | None = None
    for arg in args:
        try:
            values.append(arg(a))
        except Fault as exc:
            fault = fault or exc
            values.append(_ERROR)
    return values, fault


def call(function: str, impl: Callable[..., object], args: tuple[Evaluator, ...], *, fixed: bool = False) -> Evaluator:
    """A call: all arguments, then the call's cost, then the first failure or the result.

    ``fixed``: the arguments' sizes are known to make it cost 1 (an equality with a scalar constant).
    """
    cost = 1 if fixed else cost_of(function)
    if isinstance(cost, int) and len(args) == 1:
        return _fixed_unary(cost, impl, args[0])
    if isinstance(cost, int) and len(args) == 2:
        return _fixed_binary(cost, impl, args[0], args[1])

    def run(a: Activation) -> object:
        values, fault = _arguments(args, a)
        budget: list[int] = a[COST]  # type: ignore[assignment]
        charge(budget, cost if isinstance(cost, int) else cost(tuple(values), budget[0]))
        if fault is not None:
            raise fault
        return impl(*values)

    return run


def _fixed_unary(cost: int, impl: Callable[..., object], arg: Evaluator) -> Evaluator:
    def run(a: Activation) -> object:
        try:
            value = arg(a)
        except Fault:
            charge(a[COST], cost)  # type: ignore[arg-type]
            raise
        charge(a[COST], cost)  # type: ignore[arg-type]
        return impl(value)

    return run


def _fixed_binary(cost: int, impl: Callable[..., object], first: Evaluator, second: Evaluator) -> Evaluator:
    def run(a: Activation) -> object:
        try:
            left = first(a)
        except Fault:
            with contextlib.suppress(Fault):  # the first failure is the call's
                second(a)
            charge(a[COST], cost)  # type: ignore[arg-type]
            raise
        try:
            right = second(a)
        finally:
            charge(a[COST], cost)  # type: ignore[arg-type]
        return impl(left, right)

    return run


def join(impl: Callable[..., object], args: tuple[Evaluator, ...]) -> Evaluator:
    """``join``, charged by the length of the string it makes, which is measured first."""

    def run(a: Activation) -> object:
        values, fault = _arguments(args, a)
        budget: list[int] = a[COST]  # type: ignore[assignment]
        if fault is None:
            items, separator = values[0], values[1] if len(values) > 1 else ""
            charge(budget, join_cost(_joined_length(items, separator, budget[0])))
            return impl(*values)
        charge(budget, join_cost(1))
        raise fault

    return run


def _joined_length(items: object, separator: object, budget: int) -> int:
    if not isinstance(items, LIST_TYPES) or not isinstance(separator, str):
        return 1
    total = len(separator) * max(len(items) - 1, 0)
    for count, item in enumerate(items):
        total += size_of(item)
        if count > MAX_WALKED or join_cost(total) > budget:
            raise Fault(COST_EXCEEDED)
    return total


def comprehension(
    kind: str, range_: Evaluator, var: str, body: Evaluator, predicate: Evaluator | None, list_cost: int
) -> Evaluator:
    """A macro charged as cel-go's expansion of it; ``list_cost`` is 10 when ``map`` builds a
    one-element list per step, 0 when that list is a constant."""
    condition = _CONDITION.get(kind, 0)
    result_cost = _RESULT.get(kind, 1)

    def run(a: Activation) -> object:
        items = iterate(range_(a))
        budget: list[int] = a[COST]  # type: ignore[assignment]
        scope = dict(a)
        if kind in ("all", "exists"):
            value = _quantifier(kind == "exists", items, scope, var, body, budget, condition)
        elif kind == "exists_one":
            value = _exists_one(items, scope, var, body, budget)
        else:
            value = _collect(kind, items, scope, var, body, predicate, budget, list_cost)
        charge(budget, result_cost)
        if isinstance(value, Fault):
            raise value
        return value

    return run


def _quantifier(
    decisive: bool, items: Sequence[object], scope: Activation, var: str, body: Evaluator, budget: list[int], cond: int
) -> object:
    error: Fault | None = None
    last = len(items) - 1
    for index, item in enumerate(items):
        charge(budget, cond)
        scope[var] = item
        charge(budget, 1)
        try:
            if as_bool(body(scope)) is decisive:
                if index < last:
                    charge(budget, cond)  # the next condition sees the decision and ends the loop
                return decisive
        except Fault as exc:
            error = error or exc
    return error if error is not None else not decisive


def _exists_one(items: Sequence[object], scope: Activation, var: str, body: Evaluator, budget: list[int]) -> object:
    count = 0
    error: Fault | None = None
    for item in items:
        scope[var] = item
        try:
            hit = as_bool(body(scope))
        except Fault as exc:
            error = error or exc
            continue
        charge(budget, 2 if hit else 1)
        count += hit
    return error if error is not None else count == 1


def _collect(
    kind: str,
    items: Sequence[object],
    scope: Activation,
    var: str,
    body: Evaluator,
    predicate: Evaluator | None,
    budget: list[int],
    list_cost: int,
) -> object:
    out: list[object] = []
    error: Fault | None = None
    for item in items:
        scope[var] = item
        try:
            if kind == "filter":
                keep = as_bool(body(scope))
                charge(budget, 13 if keep else 1)
                if keep:
                    out.append(item)
                continue
            if predicate is not None and not as_bool(predicate(scope)):
                charge(budget, 1)
                continue
            charge(budget, 2 + list_cost)
            out.append(body(scope))
        except Fault as exc:
            error = error or exc
    return error if error is not None else tuple(out)
