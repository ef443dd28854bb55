"""Type-check a syntax tree in the DRA device environment and turn it into nested Python closures.

One pass does both: every node yields its static type (for cel-go's compile errors), an evaluator
``f(activation) -> value`` and a bound of its cost (:class:`._cost.Estimate`). Closures, not an
interpreter loop, keep an evaluation at a few microseconds. The activation is a dict of variables
(``device`` and macro variables).

A tree whose cost bound fits the budget is compiled once, untracked. Otherwise (and for devices
larger than kube's validation allows) it is compiled again with ``tracked=True``: every node then
charges cel-go's cost to the budget under ``COST`` in the activation (see :mod:`._tracked`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NamedTuple

from kschedlib.dra._cel import _ops, _tracked
from kschedlib.dra._cel._checks import CheckFault, homogeneous, infallible, is_scalar, no_overload, require_bool
from kschedlib.dra._cel._cost import COST, COST_LIMIT, INFINITE, Estimate, charge, estimate_call, widest
from kschedlib.dra._cel._library import FUNCTIONS
from kschedlib.dra._cel._nodes import (
    Binary,
    Bind,
    Call,
    Comprehension,
    Conditional,
    CreateList,
    CreateMap,
    Ident,
    Index,
    Literal,
    Node,
    Select,
    Unary,
)
from kschedlib.dra._cel._ops import NOT_CONSTANT
from kschedlib.dra._cel._overloads import Overload
from kschedlib.dra._cel._regex import compiled as compiled_regex
from kschedlib.dra._cel._regex import syntax_error as regex_syntax_error
from kschedlib.dra._cel._types import DYN, element_type, is_dyn, join, map_types, match, substitute
from kschedlib.dra._cel._values import DEVICE_TYPE, Fault, Lazy, type_name

__all__ = ["CheckFault", "Compiled", "Evaluator", "compile_tree"]

Activation = dict[str, object]
Evaluator = Callable[[Activation], object]

_DEVICE_FIELDS: Final = {
    "driver": ("string", (64,)),
    "allowMultipleAllocations": ("bool", (1,)),
    "attributes": ("map(string, map(string, any))", (32, 64, 64)),
    "capacity": ("map(string, map(string, kubernetes.Quantity))", (32, 64, 64)),
}
"""Each field's type and size bounds (kube's validation: 32 attributes and capacities per device,
names, domains and string values of at most 64 characters)."""
_NUMBERS: Final = frozenset({"int", "uint", "double"})
_OPERATOR_NAMES: Final = {
    "==": "_==_", "!=": "_!=_", "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "in": "@in",
    "+": "_+_", "-": "_-_", "*": "_*_", "/": "_/_", "%": "_%_", "&&": "_&&_", "||": "_||_",
}  # fmt: skip
_CONVERSIONS: Final = frozenset({"int", "uint", "double", "string", "bool", "bytes", "dyn"})
_FOLD_SIZE: Final = 1 << 20
"""Constant sub-expressions are computed at compile time when their values are at most this large."""


class Part(NamedTuple):
    """A compiled node."""

    type: str
    evaluator: Evaluator
    estimate: Estimate
    value: object = NOT_CONSTANT
    """The value, when known at compile time."""
    const: bool = False
    """A constant for cel-go too (literal, constant list or map, conversion of one): costs nothing."""
    attribute: bool = False
    """A variable, field selection or index: cel-go qualifies it further at 1 per step."""
    variable: bool = False
    """Uses a variable, so is not computed at compile time."""


class _Var(NamedTuple):
    type: str
    estimate: Estimate
    lazy: bool
    """A ``cel.bind`` variable: its expression is evaluated when first used, as in cel-go."""


class Compiled(NamedTuple):
    """A checked tree: its type, evaluator and cost bound, and cel-go's later compile errors."""

    type: str
    evaluator: Evaluator
    max_cost: float
    issues: list[tuple[int, str]]
    """Errors of cel-go's checks after type-checking, as (source offset, message)."""
    plan_errors: list[str]
    """Errors of cel-go's program planning (constant conversions and regular expressions)."""


def compile_tree(node: Node, *, tracked: bool = False) -> Compiled:
    """Type-check and compile ``node``; raises :class:`CheckFault`. ``tracked`` charges cost."""
    compiler = _Compiler(tracked)
    part = compiler.compile(node, {})
    return Compiled(part.type, part.evaluator, part.estimate.cost, compiler.issues, compiler.plan_errors)


def _charged(evaluator: Evaluator, cost: float, tracked: bool) -> Evaluator:
    return _tracked.charged(evaluator, int(cost)) if tracked and cost else evaluator


class _Compiler:
    def __init__(self, tracked: bool) -> None:
        self.tracked = tracked
        self.issues: list[tuple[int, str]] = []
        self.plan_errors: list[str] = []

    def compile(self, node: Node, scope: dict[str, _Var]) -> Part:
        part: Part = getattr(self, "_" + type(node).__name__.lower())(node, scope)
        if part.variable or part.value is not NOT_CONSTANT or not isinstance(node, _FOLDABLE):
            return part
        estimate = part.estimate
        if estimate.cost > COST_LIMIT or max(estimate.sizes) > _FOLD_SIZE:
            return part
        budget = [COST_LIMIT]
        try:
            value = part.evaluator({COST: budget})
        except Fault:
            return part  # the error belongs to evaluation time
        spent = 0 if part.const else COST_LIMIT - budget[0]
        return part._replace(evaluator=self.constant(value, spent), value=value)

    def constant(self, value: object, cost: int = 0) -> Evaluator:
        if self.tracked and cost:

            def charged(a: Activation) -> object:
                charge(a[COST], cost)  # type: ignore[arg-type]
                return value

            return charged
        return lambda a: value

    # -- leaves
    def _literal(self, node: Literal, scope: dict[str, _Var]) -> Part:
        value = node.value
        size = len(value) if isinstance(value, (str, bytes)) else 1
        return Part(type_name(value), self.constant(value), Estimate(0, (size,)), value, const=True)

    def _ident(self, node: Ident, scope: dict[str, _Var]) -> Part:
        name = node.name
        var = scope.get(name)
        if var is None and name != "device":
            raise CheckFault(f"undeclared reference to '{name}' (in container '')", node.offset)
        read: Evaluator = (lambda a: Lazy.value_of(a[name])) if var is not None and var.lazy else (lambda a: a[name])
        evaluator = _charged(read, 1, self.tracked)
        if var is None:
            return Part(DEVICE_TYPE, evaluator, Estimate(1), attribute=True, variable=True)
        return Part(var.type, evaluator, var.estimate._replace(cost=1), attribute=True, variable=True)

    # -- selection and indexing
    def _qualify(self, operand: Part, step: Callable[[object], object], cost: int, fast: Evaluator) -> Evaluator:
        """``step`` applied to the operand's value (``fast`` does it untracked); tracked, cel-go
        charges 1 per qualification."""
        if not self.tracked:
            return fast
        base = 0 if operand.attribute else 1
        return _tracked.qualified(operand.evaluator, lambda a, v: step(v), base, cost)

    def _select(self, node: Select, scope: dict[str, _Var]) -> Part:
        operand = self.compile(node.operand, scope)
        field = node.field
        extra = 0 if operand.attribute else 1
        if operand.type == DEVICE_TYPE:
            if field not in _DEVICE_FIELDS:
                raise CheckFault(f"undefined field '{field}'", node.offset)
            inner = operand.evaluator
            if node.test_only:
                evaluator = self._qualify(operand, lambda v: True, 0, lambda a: (inner(a), True)[1])
                return self._derived(operand, "bool", evaluator, (1,), extra)
            field_type, sizes = _DEVICE_FIELDS[field]
            fast = _ops.device_field(inner, field)
            evaluator = self._qualify(operand, _ops.device_field_of(field), 1, fast)
            return self._derived(operand, field_type, evaluator, sizes, 1 + extra)
        if operand.type.startswith("map(") or is_dyn(operand.type):
            if node.test_only:
                fast = _ops.has_field(operand.evaluator, field)
                evaluator = self._qualify(operand, _ops.has_field_of(field), 1, fast)
                return self._derived(operand, "bool", evaluator, (1,), 1 + extra)
            value_type = map_types(operand.type)[1] if operand.type.startswith("map(") else DYN
            fast = _ops.select_field(operand.evaluator, field)
            evaluator = self._qualify(operand, _ops.select_field_of(field), 1, fast)
            return self._derived(operand, value_type, evaluator, operand.estimate.inner().sizes, 1 + extra)
        raise CheckFault(f"type '{operand.type}' does not support field selection", node.offset)

    def _derived(self, operand: Part, type_: str, evaluator: Evaluator, sizes: tuple[float, ...], cost: int) -> Part:
        estimate = Estimate(operand.estimate.cost + cost, sizes)
        return Part(type_, evaluator, estimate, attribute=True, variable=operand.variable)

    def _index(self, node: Index, scope: dict[str, _Var]) -> Part:
        operand = self.compile(node.operand, scope)
        index = self.compile(node.index, scope)
        operand_type, index_type = operand.type, index.type
        if operand_type.startswith("map("):
            key_type, value_type = map_types(operand_type)
            numeric = key_type in _NUMBERS and index_type in _NUMBERS
            if not (match(key_type, index_type, {}) or numeric):
                raise no_overload("_[_]", [operand_type, index_type], node.offset)
            result_type = value_type
        elif operand_type.startswith("list("):
            if index_type != "int" and not is_dyn(index_type):
                raise no_overload("_[_]", [operand_type, index_type], node.offset)
            result_type = element_type(operand_type)
        elif is_dyn(operand_type):
            result_type = DYN
        else:
            raise no_overload("_[_]", [operand_type, index_type], node.offset)
        key = index.evaluator
        # An attribute used as a key is read by the qualification itself, which cel-go charges once.
        step_cost = 0 if index.attribute else 1
        if self.tracked:
            base = 0 if operand.attribute else 1
            evaluator = _tracked.qualified(operand.evaluator, _ops.index_step(key), base, step_cost)
        else:
            evaluator = _ops.index(operand.evaluator, key)
        cost = operand.estimate.cost + index.estimate.cost + 1 + (0 if operand.attribute else 1)
        estimate = Estimate(cost, operand.estimate.inner().sizes)
        return Part(result_type, evaluator, estimate, attribute=True, variable=operand.variable or index.variable)

    # -- operators
    def _unary(self, node: Unary, scope: dict[str, _Var]) -> Part:
        operand = self.compile(node.operand, scope)
        if node.op == "!":
            if operand.type != "bool" and not is_dyn(operand.type):
                raise no_overload("!_", [operand.type], node.offset)
            result_type, build = "bool", _ops.logical_not
        else:
            if operand.type not in ("int", "double") and not is_dyn(operand.type):
                raise no_overload("-_", [operand.type], node.offset)
            result_type, build = (operand.type if not is_dyn(operand.type) else DYN), _ops.negate
        if self.tracked:
            evaluator = _tracked.call(node.op, _ops.unary_impl(node.op), (operand.evaluator,))
        else:
            evaluator = build(operand.evaluator)
        estimate = Estimate(operand.estimate.cost + 1, operand.estimate.sizes)
        return Part(result_type, evaluator, estimate, variable=operand.variable)

    def _binary(self, node: Binary, scope: dict[str, _Var]) -> Part:
        left = self.compile(node.left, scope)
        right = self.compile(node.right, scope)
        op = node.op
        result_type = _ops.check_binary(op, left.type, right.type)
        if result_type is None:
            raise no_overload(_OPERATOR_NAMES[op], [left.type, right.type], node.offset)
        variable = left.variable or right.variable
        if op in ("&&", "||"):
            estimate = Estimate(left.estimate.cost + right.estimate.cost)
            return Part(result_type, _ops.binary(op, left.evaluator, right.evaluator, right.value), estimate,
                        variable=variable)  # fmt: skip
        name = _OPERATOR_NAMES[op]
        estimate = estimate_call(name, [left.estimate, right.estimate], [left.type, right.type], result_type)
        set_membership = op == "in" and right.const and _ops.is_primitive_list(right.value)
        if not self.tracked or set_membership:
            evaluator = _ops.binary(op, left.evaluator, right.evaluator, right.value)
        else:
            fixed = op in ("==", "!=") and is_scalar(left.value if right.value is NOT_CONSTANT else right.value)
            evaluator = _tracked.call(name, _ops.binary_impl(op), (left.evaluator, right.evaluator), fixed=fixed)
        return Part(result_type, evaluator, estimate, variable=variable)

    def _conditional(self, node: Conditional, scope: dict[str, _Var]) -> Part:
        cond = self.compile(node.cond, scope)
        when_true = self.compile(node.when_true, scope)
        when_false = self.compile(node.when_false, scope)
        if cond.type != "bool" and not is_dyn(cond.type):
            raise no_overload("_?_:_", [cond.type, when_true.type, when_false.type], node.offset)
        bound: dict[str, str] = {}
        if not match("A", when_true.type, bound) or not match("A", when_false.type, bound):
            raise no_overload("_?_:_", [cond.type, when_true.type, when_false.type], node.offset)
        branches = [when_true.estimate, when_false.estimate]
        estimate = Estimate(cond.estimate.cost + max(b.cost for b in branches), widest([b.sizes for b in branches]))
        evaluator = _ops.conditional(cond.evaluator, when_true.evaluator, when_false.evaluator)
        variable = cond.variable or when_true.variable or when_false.variable
        return Part(join(when_true.type, when_false.type), evaluator, estimate, variable=variable)

    # -- literals with parts
    def _createlist(self, node: CreateList, scope: dict[str, _Var]) -> Part:
        items = [self.compile(item, scope) for item in node.items]
        homogeneous([(i.type, n.offset) for i, n in zip(items, node.items, strict=True)], first_only=True)
        elem = DYN
        if items:
            elem = items[0].type
            for item in items[1:]:
                elem = join(elem, item.type)
        evaluators = tuple(item.evaluator for item in items)
        const = all(item.const for item in items)
        evaluator = _charged(lambda a: tuple(item(a) for item in evaluators), 0 if const else 10, self.tracked)
        sizes = (len(items), *widest([item.estimate.sizes for item in items]))
        estimate = Estimate(sum(i.estimate.cost for i in items) + (0 if const else 10), sizes)
        return Part(f"list({elem})", evaluator, estimate, const=const, variable=any(i.variable for i in items))

    def _createmap(self, node: CreateMap, scope: dict[str, _Var]) -> Part:
        keys = [self.compile(k, scope) for k, _ in node.entries]
        values = [self.compile(v, scope) for _, v in node.entries]
        homogeneous(
            [(k.type, kn.offset) for k, (kn, _) in zip(keys, node.entries, strict=True)],
            [(v.type, vn.offset) for v, (_, vn) in zip(values, node.entries, strict=True)],
        )
        key_type = value_type = DYN
        if keys:
            key_type, value_type = keys[0].type, values[0].type
            for k, v in zip(keys[1:], values[1:], strict=True):
                key_type, value_type = join(key_type, k.type), join(value_type, v.type)
        for k, (k_node, _) in zip(keys, node.entries, strict=True):
            if k.type not in ("int", "uint", "bool", "string") and not is_dyn(k.type):
                raise CheckFault(f"unsupported map key type: {k.type}", k_node.offset)
        parts = keys + values
        const = all(p.const for p in parts)
        pairs = tuple((k.evaluator, v.evaluator) for k, v in zip(keys, values, strict=True))
        evaluator = _charged(_ops.create_map(pairs), 0 if const else 30, self.tracked)
        sizes = (len(keys), *widest([p.estimate.sizes for p in parts]))
        estimate = Estimate(sum(p.estimate.cost for p in parts) + (0 if const else 30), sizes)
        variable = any(p.variable for p in parts)
        return Part(f"map({key_type}, {value_type})", evaluator, estimate, const=const, variable=variable)

    # -- calls
    def _call(self, node: Call, scope: dict[str, _Var]) -> Part:
        name, target = node.function, node.target
        if isinstance(target, Ident) and target.name not in scope and f"{target.name}.{name}" in FUNCTIONS:
            name, target = f"{target.name}.{name}", None
        overloads = FUNCTIONS.get(name)
        if overloads is None:
            raise CheckFault(f"undeclared reference to '{name}' (in container '')", node.offset)
        member = target is not None
        arg_nodes = ([target] if target is not None else []) + list(node.args)
        args = [self.compile(arg, scope) for arg in arg_nodes]
        arg_types = [a.type for a in args]
        candidates: list[tuple[Overload, str]] = []
        for overload in overloads:
            if overload.member != member or len(overload.params) != len(arg_types):
                continue
            bound: dict[str, str] = {}
            if all(match(p, t, bound) for p, t in zip(overload.params, arg_types, strict=True)):
                candidates.append((overload, substitute(overload.result, bound)))
        if not candidates:
            raise no_overload(name, arg_types, node.offset, member=member)
        result = candidates[0][1]
        for _, other in candidates[1:]:
            result = join(result, other)
        self.check_plan(name, member, arg_nodes, args)
        evaluators = tuple(a.evaluator for a in args)
        chosen = [c for c, _ in candidates]
        direct = len(chosen) == 1 and not any(is_dyn(t) or "dyn" in t for t in arg_types)
        if direct:
            impl = _prebound(name, args) or chosen[0].impl
        else:
            impl = _ops.dispatcher(name, chosen)
        if not self.tracked:
            evaluator = _ops.call_direct(impl, evaluators)
        elif name == "join":
            evaluator = _tracked.join(impl, evaluators)
        else:
            evaluator = _tracked.call(name, impl, evaluators)
        estimate = estimate_call(name, [a.estimate for a in args], arg_types, result)
        const = name in _CONVERSIONS and len(args) == 1 and args[0].const
        return Part(result, evaluator, estimate, const=const, variable=any(a.variable for a in args))

    def check_plan(self, name: str, member: bool, nodes: list[Node], args: list[Part]) -> None:
        """cel-go's checks of constant arguments: regular expressions, conversions."""
        if self.tracked:
            return  # found by the untracked compilation, which always comes first
        if name == "matches" and member and isinstance(nodes[1], Literal) and isinstance(nodes[1].value, str):
            if regex_syntax_error(nodes[1].value) is not None:
                self.issues.append((nodes[1].offset, "invalid matches argument"))
            return
        if name in ("matches", "find", "findAll") and args[1].const and isinstance(args[1].value, str):
            error = regex_syntax_error(args[1].value)
            if error is not None:
                self.plan_errors.append(error)
        if name in _CONVERSIONS and len(args) == 1 and args[0].const:
            impl = _ops.dispatcher(name, list(FUNCTIONS[name]))
            try:
                impl(args[0].evaluator({COST: [COST_LIMIT]}))
            except Fault as exc:
                self.plan_errors.append(exc.message)

    # -- macros
    def _comprehension(self, node: Comprehension, scope: dict[str, _Var]) -> Part:
        range_ = self.compile(node.range, scope)
        if not (range_.type.startswith(("list(", "map(")) or is_dyn(range_.type)):
            raise no_overload(node.kind, [range_.type], node.offset)
        element = range_.estimate.inner()
        inner = {**scope, node.var: _Var(element_type(range_.type), element, lazy=False)}
        body = self.compile(node.body, inner)
        predicate = None
        step = body.estimate.cost + _STEP.get(node.kind, 1)
        if node.predicate is not None:
            predicate = self.compile(node.predicate, inner)
            require_bool(predicate.type, node.predicate)
            step += predicate.estimate.cost
        if node.kind in ("all", "exists", "exists_one", "filter"):
            require_bool(body.type, node.body)
        evaluators = (range_.evaluator, node.var, body.evaluator, predicate.evaluator if predicate else None)
        if self.tracked:
            evaluator = _tracked.comprehension(node.kind, *evaluators, 0 if body.const else 10)
        else:
            evaluator = _ops.comprehension(node.kind, *evaluators)
        count = range_.estimate.size
        cost = range_.estimate.cost + (INFINITE if count == INFINITE else count * step) + 2
        if node.kind == "map":
            result_type, sizes = f"list({body.type})", (count, *body.estimate.sizes)
        elif node.kind == "filter":
            result_type, sizes = f"list({element_type(range_.type)})", range_.estimate.sizes
        else:
            result_type, sizes = "bool", (1,)
        return Part(result_type, evaluator, Estimate(cost, sizes), variable=True)

    def _bind(self, node: Bind, scope: dict[str, _Var]) -> Part:
        init = self.compile(node.init, scope)
        # cel-go evaluates the expression on first use; one that cannot fail and costs nothing
        # untracked (a literal, a device's attribute domain) is as well evaluated at once.
        lazy = self.tracked or not infallible(node.init)
        body = self.compile(node.body, {**scope, node.var: _Var(init.type, init.estimate, lazy=lazy)})
        var, init_evaluator, body_evaluator = node.var, init.evaluator, body.evaluator

        def bind(a: Activation) -> object:
            return body_evaluator({**a, var: Lazy(init_evaluator, a)})

        def bind_now(a: Activation) -> object:
            return body_evaluator({**a, var: init_evaluator(a)})

        estimate = Estimate(init.estimate.cost + body.estimate.cost, body.estimate.sizes)
        return Part(body.type, bind if lazy else bind_now, estimate, variable=init.variable or body.variable)


_FOLDABLE: Final = (Call, Unary, Binary, Conditional, CreateList, CreateMap, Index)
_STEP: Final = {"all": 3, "exists": 4, "exists_one": 2, "map": 12, "filter": 13}
"""Cost of one step of a macro besides its body: condition, accumulator, list built, addition."""


def _prebound(name: str, args: list[Part]) -> Callable[..., object] | None:
    """``matches`` with a constant pattern, compiled once here rather than looked up per call."""
    if name != "matches" or not isinstance(args[1].value, str):
        return None
    try:
        regex = compiled_regex(args[1].value)
    except Fault:
        return None  # the error is the evaluation's
    return lambda text, pattern: regex.matches(text)
