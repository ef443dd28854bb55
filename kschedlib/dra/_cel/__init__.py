"""The CEL environment DRA device selectors run in, as kube-scheduler v1.36 builds it.

A DeviceClass or ResourceClaim request selects devices with CEL expressions over one variable,
``device``: ``device.driver``, ``device.attributes[domain].name``, ``device.capacity[domain].name``
(a Kubernetes quantity) and ``device.allowMultipleAllocations``. Attribute names without a domain
get the driver's name as domain; an unknown domain reads as an empty map, so a missing attribute
fails with ``no such key: name`` unless the expression tests for it first (``"name" in ...`` or
``has(...)``).

The evaluator is pure Python (its own parser, type check and closure compiler): no dependency, a
few microseconds per device. Usage::

    selector = compile_selector('device.attributes["gpu.example.com"].model == "a100"')
    selector.matches(DeviceView("gpu.example.com", {"model": "a100"}))   # True

:func:`compile_selector` caches per expression and raises
:class:`~kschedlib.errors.CelCompileError`; :meth:`Selector.matches` memoises per device and raises
:class:`~kschedlib.errors.CelRuntimeError` with cel-go's text, which the allocator wraps as
:func:`selector_error` shows.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.dra._cel._compile import CheckFault, Evaluator, compile_tree
from kschedlib.dra._cel._cost import COST, COST_LIMIT
from kschedlib.dra._cel._nodes import Node
from kschedlib.dra._cel._semver import Semver, SemverParseError, parse_semver
from kschedlib.dra._cel._syntax import SHALLOW, SyntaxFault, headroom, parse, tree_depth
from kschedlib.dra._cel._types import is_dyn
from kschedlib.dra._cel._values import COST_EXCEEDED, DeviceValue, Fault, type_name, valid_text
from kschedlib.errors import CelCompileError, CelError, CelRuntimeError, ModelError
from kschedlib.model.quantity import Quantity

__all__ = [
    "COST_LIMIT",
    "AttributeValue",
    "CelCompileError",
    "CelError",
    "CelRuntimeError",
    "DeviceView",
    "Selector",
    "Semver",
    "Version",
    "compile_selector",
    "selector_error",
]

_COMPILE_CACHE_SIZE: Final = 1024
_MEMO_SIZE: Final = 256
"""Selectors remembered per device; more distinct expressions than this on one device start over."""


@final
@attrs.frozen(slots=True, repr=False)
class Version(FieldsRepr):
    """A version attribute (``DeviceAttribute.version``) as the ResourceSlice gives it, parsed on use."""

    text: str = attrs.field(validator=attrs.validators.instance_of(str))


AttributeValue = bool | int | str | Version
"""One device attribute: ``bool``, ``int``, ``string`` or ``version`` in the ResourceSlice."""


@final
class DeviceView:
    """What a selector sees of one device; hashable by content, so results memoise per device.

    ``attributes`` and ``capacity`` are keyed by qualified name as in the ResourceSlice
    (``"model"`` or ``"gpu.example.com/model"``); a name without a domain belongs to the driver.
    """

    __slots__ = (
        "_bounded", "_error", "_key", "_results", "_value", "allow_multiple_allocations", "attributes", "capacity",
        "driver",
    )  # fmt: skip

    def __init__(
        self,
        driver: str,
        attributes: Mapping[str, AttributeValue] | None = None,
        capacity: Mapping[str, Quantity] | None = None,
        *,
        allow_multiple_allocations: bool = False,
    ) -> None:
        if not isinstance(driver, str):
            raise ModelError("must be a string", obj="DeviceView", field="driver", value=driver)
        self.driver = driver
        self.attributes: Mapping[str, AttributeValue] = dict(attributes or {})
        self.capacity: Mapping[str, Quantity] = dict(capacity or {})
        self.allow_multiple_allocations = bool(allow_multiple_allocations)
        self._error: str | None = None
        by_domain: dict[str, dict[str, object]] = {}
        texts = [driver]
        for name, value in self.attributes.items():
            domain, ident = _split(valid_text(name), driver)
            converted = self._attribute(name, value)
            by_domain.setdefault(domain, {})[ident] = converted
            texts += (domain, ident, converted) if isinstance(converted, str) else (domain, ident)
        capacity_by_domain: dict[str, dict[str, object]] = {}
        for name, quantity in self.capacity.items():
            if not isinstance(quantity, Quantity):
                raise ModelError("must be a Quantity", obj="DeviceView", field=f"capacity[{name}]", value=quantity)
            domain, ident = _split(valid_text(name), driver)
            capacity_by_domain.setdefault(domain, {})[ident] = quantity
            texts += (domain, ident)
        self._value = DeviceValue(valid_text(driver), by_domain, capacity_by_domain, self.allow_multiple_allocations)
        self._bounded = len(self.attributes) + len(self.capacity) <= 32 and all(len(t) <= 64 for t in texts)
        """Within kube's validation limits, which selectors' cost bounds assume."""
        self._key: tuple[object, ...] | None = None
        self._results: dict[Selector, bool | str] = {}

    def _attribute(self, name: str, value: AttributeValue) -> object:
        if isinstance(value, Version):
            try:
                return parse_semver(value.text)
            except SemverParseError as exc:
                self._error = self._error or f"attribute {name}: parse semantic version: {exc}"
                return None
        if not isinstance(value, (bool, int, str)):
            raise ModelError("must be a bool, int, str or Version", obj="DeviceView",
                             field=f"attributes[{name}]", value=value)  # fmt: skip
        if type(value) is int and not -(2**63) <= value < 2**63:
            raise ModelError("must fit in 64 bits", obj="DeviceView", field=f"attributes[{name}]", value=value)
        return valid_text(value) if isinstance(value, str) else value

    def _content(self) -> tuple[object, ...]:
        if self._key is None:
            attributes = sorted((n, type(v).__name__, str(v)) for n, v in self.attributes.items())
            capacity = sorted((n, q.amount) for n, q in self.capacity.items())
            self._key = (self.driver, tuple(attributes), tuple(capacity), self.allow_multiple_allocations)
        return self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceView) and self._content() == other._content()

    def __hash__(self) -> int:
        return hash(self._content())

    def __repr__(self) -> str:
        return f"DeviceView({self.driver!r}, {dict(self.attributes)!r}, {dict(self.capacity)!r})"


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


@final
class Selector:
    """A compiled selector; :meth:`matches` evaluates it on a device, memoising per device.

    The memo lives on the :class:`DeviceView` (keyed by selector), so it goes when the view goes:
    build one view per published device and reuse it across pods and cycles.
    """

    __slots__ = ("__weakref__", "_deep", "_fast", "_tracked", "_tree", "expression")

    def __init__(self, expression: str, tree: Node, fast: Evaluator | None) -> None:
        self.expression = expression
        self._tree = tree
        self._fast = fast
        """The untracked evaluator, when the selector's cost bound fits the budget."""
        self._tracked: Evaluator | None = None
        self._deep = tree_depth(tree) > SHALLOW
        """Evaluated with Python's recursion limit raised (see :func:`._syntax.headroom`)."""

    def matches(self, device: DeviceView) -> bool:
        """Whether ``device`` is selected; raises :class:`~kschedlib.errors.CelRuntimeError`."""
        memo = device._results
        result = memo.get(self)
        if result is None:
            result = self.evaluate(device)
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            memo[self] = result
        if result is True or result is False:
            return result
        raise CelRuntimeError(result, expression=self.expression)

    def evaluate(self, device: DeviceView) -> bool | str:
        """Evaluate without the memo: the result, or the runtime error's message."""
        if device._error is not None:
            return device._error
        fast = self._fast
        if fast is None or self._deep or not device._bounded:
            return self._evaluate_slowly(device)
        try:
            value = fast({"device": device._value})
        except Fault as exc:
            return exc.message
        if value is True or value is False:
            return value
        return _not_bool(value)

    def _evaluate_slowly(self, device: DeviceView) -> bool | str:
        """With cost tracking (unless the bound allows none) and room for deep recursion."""
        evaluator = self._fast if self._fast is not None and device._bounded else self._tracked_evaluator()
        try:
            with headroom():
                value = evaluator({"device": device._value, COST: [COST_LIMIT]})
        except Fault as exc:
            return exc.message
        except (RecursionError, MemoryError):  # a safety net: cel-go's limits are meant to prevent both
            return COST_EXCEEDED
        if value is True or value is False:
            return value
        return _not_bool(value)

    def _tracked_evaluator(self) -> Evaluator:
        """The evaluator that charges cel-go's cost as it goes, compiled on first need."""
        if self._tracked is None:
            with headroom():
                self._tracked = compile_tree(self._tree, tracked=True).evaluator
        return self._tracked

    def __repr__(self) -> str:
        return f"Selector({self.expression!r})"


def _not_bool(value: object) -> str:
    name = type_name(value)
    return f"CEL result of type {name} could not be converted to bool: {_NOT_BOOL.get(name, name)}"


# cel-go's ConvertToNative errors for a result that is not a bool, by result type.
_NOT_BOOL: Final = {
    "int": "unsupported type conversion from 'int' to bool",
    "uint": "unsupported type conversion from 'uint' to bool",
    "string": "unsupported native conversion from string to 'bool'",
    "double": "type conversion error from Double to 'bool'",
    "bytes": "type conversion error from Bytes to 'bool'",
    "list": "type conversion error from list to 'bool'",
    "map": "type conversion error from map to 'bool'",
    "null_type": "type conversion error from 'null_type' to 'bool'",
    "kubernetes.Quantity": "type conversion error from 'Quantity' to 'bool'",
    "kubernetes.Semver": "type conversion error from 'Semver' to 'bool'",
}


def compile_selector(expression: str) -> Selector:
    """Compile ``expression`` (cached per expression); raises :class:`~kschedlib.errors.CelCompileError`."""
    if not isinstance(expression, str):
        raise CelCompileError(f"expression must be a string, got {type(expression).__name__}")
    expression = valid_text(expression)
    compiled = _compile(expression)
    if isinstance(compiled, str):
        raise CelCompileError(compiled, expression=expression)
    return compiled


@functools.lru_cache(maxsize=_COMPILE_CACHE_SIZE)
def _compile(expression: str) -> Selector | str:
    """The selector, or cel-go's error in the order cel-go finds them: syntax, types, the checks
    after type-checking, the result type, then program planning."""
    if len(expression) <= SHALLOW:
        return _compile_in(expression)
    with headroom():
        return _compile_in(expression)


def _compile_in(expression: str) -> Selector | str:
    try:
        tree = parse(expression)
    except SyntaxFault as exc:
        if exc.offset < 0:
            return f"compilation failed: ERROR: <input>:-1:0: {exc.message}"
        message = f"Syntax error: {exc.message}" if exc.syntax else exc.message
        return "compilation failed: " + _located(expression, exc.offset, message)
    try:
        compiled = compile_tree(tree)
    except CheckFault as exc:
        issues = [(exc.offset, exc.message), *exc.more]
        return "compilation failed: " + "\n".join(_located(expression, o, m) for o, m in issues)
    if compiled.issues:
        return "compilation failed: " + "\n".join(_located(expression, o, m) for o, m in compiled.issues)
    if compiled.type != "bool" and not is_dyn(compiled.type):
        return f"must evaluate to bool or the unknown type, not {compiled.type}"
    if compiled.plan_errors:
        return "program instantiation failed: " + compiled.plan_errors[0]
    fast = compiled.evaluator if compiled.max_cost <= COST_LIMIT else None
    return Selector(expression, tree, fast)


def _located(source: str, offset: int, message: str) -> str:
    """cel-go's issue format: ``ERROR: <input>:line:col: message`` and the line with a caret under it."""
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    line = source[line_start : line_end if line_end != -1 else len(source)]
    column = offset - line_start
    number = source.count("\n", 0, offset) + 1
    return f"ERROR: <input>:{number}:{column + 1}: {message}\n | {line}\n | {'.' * column}^"


def selector_error(owner: str, index: int, error: CelError) -> str:
    """The allocator's wording around a selector error.

    ``owner`` is ``"class NAME"`` or ``"claim NAMESPACE/NAME"``, ``index`` the selector's position:
    ``class gpu: selector #0: CEL runtime error: no such key: model``.
    """
    kind = "CEL compile error" if isinstance(error, CelCompileError) else "CEL runtime error"
    return f"{owner}: selector #{index}: {kind}: {error.message}"
