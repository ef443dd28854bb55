"""Type-check a syntax tree in the DRA device environment and turn it into nested Python closures.

One pass does both: every node yields its static type (for cel-go's compile errors) and an
evaluator ``f(activation) -> value``. Closures, not an interpreter loop, keep an evaluation at a few
microseconds. The activation is a dict of variables (``device`` and macro variables) plus the
remaining cost budget under ``COST``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from kschedlib.dra._cel import _ops
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
    children,
)
from kschedlib.dra._cel._ops import COST, COST_LIMIT, NOT_CONSTANT
from kschedlib.dra._cel._overloads import Overload
from kschedlib.dra._cel._types import DYN, element_type, is_dyn, join, map_types, match, substitute
from kschedlib.dra._cel._values import DEVICE_TYPE, Fault, type_name

__all__ = ["COST", "CheckFault", "Evaluator", "compile_tree"]

Activation = dict[str, object]
Evaluator = Callable[[Activation], object]

_DEVICE_FIELDS: Final = {
    "driver": "string",
    "allowMultipleAllocations": "bool",
    "attributes": "map(string, map(string, any))",
    "capacity": "map(string, map(string, kubernetes.Quantity))",
}
_NUMBERS: Final = frozenset({"int", "uint", "double"})
_OPERATOR_NAMES: Final = {
    "==": "_==_", "!=": "_!=_", "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "in": "@in",
    "+": "_+_", "-": "_-_", "*": "_*_", "/": "_/_", "%": "_%_", "&&": "_&&_", "||": "_||_",
}  # fmt: skip


class CheckFault(Exception):
    """A type-check error at a source offset, with cel-go's message."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


def compile_tree(node: Node) -> tuple[str, Evaluator]:
    """The static type of ``node`` and its evaluator; raises :class:`CheckFault`."""
    return _Compiler().compile(node, {})


def _no_overload(name: str, arg_types: list[str], offset: int, *, member: bool = False) -> CheckFault:
    if member:
        shown = f"{arg_types[0]}.({', '.join(arg_types[1:])})"
    else:
        shown = f"({', '.join(arg_types)})"
    return CheckFault(f"found no matching overload for '{name}' applied to '{shown}'", offset)


class _Compiler:
    def __init__(self) -> None:
        self.constants: dict[int, object] = {}
        """Values of the evaluators that need no variable, by ``id(evaluator)`` (folded at compile time)."""

    def compile(self, node: Node, scope: dict[str, str]) -> tuple[str, Evaluator]:
        method = getattr(self, "_" + type(node).__name__.lower())
        result_type, evaluator = method(node, scope)
        if isinstance(node, _FOLDABLE) and not _uses_variables(node):
            try:
                value = evaluator({COST: [COST_LIMIT]})
            except Fault:
                return result_type, evaluator  # the error belongs to evaluation time
            return result_type, self.constant(value)
        return result_type, evaluator

    def constant(self, value: object) -> Evaluator:
        def evaluator(a: Activation) -> object:
            return value

        self.constants[id(evaluator)] = value
        return evaluator

    def constant_of(self, evaluator: Evaluator) -> object:
        return self.constants.get(id(evaluator), NOT_CONSTANT)

    # -- leaves
    def _literal(self, node: Literal, scope: dict[str, str]) -> tuple[str, Evaluator]:
        return type_name(node.value), self.constant(node.value)

    def _ident(self, node: Ident, scope: dict[str, str]) -> tuple[str, Evaluator]:
        name = node.name
        if name in scope:
            return scope[name], lambda a: a[name]
        if name == "device":
            return DEVICE_TYPE, lambda a: a["device"]
        raise CheckFault(f"undeclared reference to '{name}' (in container '')", node.offset)

    # -- selection and indexing
    def _select(self, node: Select, scope: dict[str, str]) -> tuple[str, Evaluator]:
        operand_type, operand = self.compile(node.operand, scope)
        field = node.field
        if operand_type == DEVICE_TYPE:
            if field not in _DEVICE_FIELDS:
                raise CheckFault(f"undefined field '{field}'", node.offset)
            if node.test_only:
                return "bool", lambda a: (operand(a), True)[1]
            return _DEVICE_FIELDS[field], _ops.device_field(operand, field)
        if operand_type.startswith("map(") or is_dyn(operand_type):
            if node.test_only:
                return "bool", _ops.has_field(operand, field)
            value_type = map_types(operand_type)[1] if operand_type.startswith("map(") else DYN
            return (DYN if value_type == "any" else value_type), _ops.select_field(operand, field)
        raise CheckFault(f"type '{operand_type}' does not support field selection", node.offset)

    def _index(self, node: Index, scope: dict[str, str]) -> tuple[str, Evaluator]:
        operand_type, operand = self.compile(node.operand, scope)
        index_type, index = self.compile(node.index, scope)
        if operand_type.startswith("map("):
            key_type, value_type = map_types(operand_type)
            numeric = key_type in _NUMBERS and index_type in _NUMBERS
            if not (match(key_type, index_type, {}) or numeric):
                raise _no_overload("_[_]", [operand_type, index_type], node.offset)
            return (DYN if value_type == "any" else value_type), _ops.index(operand, index)
        if operand_type.startswith("list("):
            if index_type not in ("int", "uint", "double") and not is_dyn(index_type):
                raise _no_overload("_[_]", [operand_type, index_type], node.offset)
            return element_type(operand_type), _ops.index(operand, index)
        if is_dyn(operand_type):
            return DYN, _ops.index(operand, index)
        raise _no_overload("_[_]", [operand_type, index_type], node.offset)

    # -- operators
    def _unary(self, node: Unary, scope: dict[str, str]) -> tuple[str, Evaluator]:
        operand_type, operand = self.compile(node.operand, scope)
        if node.op == "!":
            if operand_type != "bool" and not is_dyn(operand_type):
                raise _no_overload("!_", [operand_type], node.offset)
            return "bool", _ops.logical_not(operand)
        if operand_type not in ("int", "double") and not is_dyn(operand_type):
            raise _no_overload("-_", [operand_type], node.offset)
        return (operand_type if not is_dyn(operand_type) else DYN), _ops.negate(operand)

    def _binary(self, node: Binary, scope: dict[str, str]) -> tuple[str, Evaluator]:
        left_type, left = self.compile(node.left, scope)
        right_type, right = self.compile(node.right, scope)
        op = node.op
        result_type = _ops.check_binary(op, left_type, right_type)
        if result_type is None:
            raise _no_overload(_OPERATOR_NAMES[op], [left_type, right_type], node.offset)
        return result_type, _ops.binary(op, left, right, self.constant_of(right))

    def _conditional(self, node: Conditional, scope: dict[str, str]) -> tuple[str, Evaluator]:
        cond_type, cond = self.compile(node.cond, scope)
        true_type, when_true = self.compile(node.when_true, scope)
        false_type, when_false = self.compile(node.when_false, scope)
        if cond_type != "bool" and not is_dyn(cond_type):
            raise _no_overload("_?_:_", [cond_type, true_type, false_type], node.offset)
        return join(true_type, false_type), _ops.conditional(cond, when_true, when_false)

    # -- literals with parts
    def _createlist(self, node: CreateList, scope: dict[str, str]) -> tuple[str, Evaluator]:
        compiled = [self.compile(item, scope) for item in node.items]
        elem = DYN
        if compiled:
            elem = compiled[0][0]
            for t, _ in compiled[1:]:
                elem = join(elem, t)
        items = tuple(e for _, e in compiled)
        return f"list({elem})", lambda a: tuple(item(a) for item in items)

    def _createmap(self, node: CreateMap, scope: dict[str, str]) -> tuple[str, Evaluator]:
        keys = [self.compile(k, scope) for k, _ in node.entries]
        values = [self.compile(v, scope) for _, v in node.entries]
        key_type = value_type = DYN
        if keys:
            key_type, value_type = keys[0][0], values[0][0]
            for (kt, _), (vt, _) in zip(keys[1:], values[1:], strict=True):
                key_type, value_type = join(key_type, kt), join(value_type, vt)
        for (kt, _), (k_node, _) in zip(keys, node.entries, strict=True):
            if kt not in ("int", "uint", "bool", "string") and not is_dyn(kt):
                raise CheckFault(f"unsupported map key type: {kt}", k_node.offset)
        pairs = tuple((k, v) for (_, k), (_, v) in zip(keys, values, strict=True))
        return f"map({key_type}, {value_type})", _ops.create_map(pairs)

    # -- calls
    def _call(self, node: Call, scope: dict[str, str]) -> tuple[str, Evaluator]:
        name, target = node.function, node.target
        if isinstance(target, Ident) and target.name not in scope and f"{target.name}.{name}" in FUNCTIONS:
            name, target = f"{target.name}.{name}", None
        overloads = FUNCTIONS.get(name)
        if overloads is None:
            raise CheckFault(f"undeclared reference to '{name}' (in container '')", node.offset)
        member = target is not None
        args = ([target] if target is not None else []) + list(node.args)
        compiled = [self.compile(arg, scope) for arg in args]
        arg_types = [t for t, _ in compiled]
        candidates: list[tuple[Overload, str]] = []
        for overload in overloads:
            if overload.member != member or len(overload.params) != len(arg_types):
                continue
            bound: dict[str, str] = {}
            if all(match(p, t, bound) for p, t in zip(overload.params, arg_types, strict=True)):
                candidates.append((overload, substitute(overload.result, bound)))
        if not candidates:
            raise _no_overload(name, arg_types, node.offset, member=member)
        result = candidates[0][1]
        for _, other in candidates[1:]:
            result = join(result, other)
        evaluators = tuple(e for _, e in compiled)
        chosen = [c for c, _ in candidates]
        if len(chosen) == 1 and not any(is_dyn(t) or "dyn" in t for t in arg_types):
            return result, _ops.call_direct(chosen[0].impl, evaluators)
        return result, _ops.call_dispatch(name, chosen, evaluators)

    # -- macros
    def _comprehension(self, node: Comprehension, scope: dict[str, str]) -> tuple[str, Evaluator]:
        range_type, range_ = self.compile(node.range, scope)
        if not (range_type.startswith(("list(", "map(")) or is_dyn(range_type)):
            raise _no_overload(node.kind, [range_type], node.offset)
        inner = {**scope, node.var: element_type(range_type)}
        body_type, body = self.compile(node.body, inner)
        predicate = None
        if node.predicate is not None:
            predicate_type, predicate = self.compile(node.predicate, inner)
            _require_bool(predicate_type, node.predicate)
        cost = 1 + _size(node.body)
        if node.kind in ("all", "exists", "exists_one", "filter"):
            _require_bool(body_type, node.body)
        evaluator = _ops.comprehension(node.kind, range_, node.var, body, predicate, cost)
        if node.kind == "map":
            return f"list({body_type})", evaluator
        if node.kind == "filter":
            return f"list({element_type(range_type)})", evaluator
        return "bool", evaluator

    def _bind(self, node: Bind, scope: dict[str, str]) -> tuple[str, Evaluator]:
        init_type, init = self.compile(node.init, scope)
        body_type, body = self.compile(node.body, {**scope, node.var: init_type})
        var = node.var

        def bind(a: Activation) -> object:
            return body({**a, var: init(a)})

        return body_type, bind


_FOLDABLE: Final = (Call, Unary, Binary, Conditional, CreateList, CreateMap, Index)


def _uses_variables(node: Node) -> bool:
    if isinstance(node, Ident):
        return True
    return any(_uses_variables(child) for child in children(node))


def _require_bool(t: str, node: Node) -> None:
    if t != "bool" and not is_dyn(t):
        raise CheckFault(f"expected type 'bool' but found '{t}'", node.offset)


def _size(node: Node) -> int:
    """How many nodes a tree has: the cost one macro step is charged."""
    return 1 + sum(_size(child) for child in children(node))

