"""CEL values at run time: Python values, their CEL type names, CEL equality, and the ``device`` variable.

int is ``int``, uint is :class:`Uint`, double is ``float``, string ``str``, bytes ``bytes``, null
``None``, list ``tuple``/``list``, map ``dict``; Kubernetes' types are
:class:`~kschedlib.model.quantity.Quantity` and :class:`Semver`. Errors are Python exceptions
(:class:`Fault`) that ``&&``, ``||`` and the macros absorb as CEL's commutative logic says.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final, final, overload

from kschedlib.dra._cel._nodes import Uint
from kschedlib.dra._cel._semver import Semver
from kschedlib.model.quantity import Quantity

__all__ = [
    "DEVICE_TYPE",
    "LIST_TYPES",
    "ConcatList",
    "DeviceValue",
    "Fault",
    "Lazy",
    "cel_equal",
    "go_type_name",
    "type_name",
    "valid_text",
]

DEVICE_TYPE: Final = "kubernetes.DRADevice"
QUANTITY_TYPE: Final = "kubernetes.Quantity"
SEMVER_TYPE: Final = "kubernetes.Semver"

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class Fault(Exception):
    """A CEL runtime error value, carrying cel-go's message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


NO_SUCH_OVERLOAD: Final = "no such overload"
COST_EXCEEDED: Final = "operation cancelled: actual cost limit exceeded"


@final
class DefaultingMap(dict[str, object]):
    """``device.attributes`` / ``device.capacity``: an unknown domain reads as an empty map, as in kube."""

    def __missing__(self, key: str) -> object:
        return _EMPTY


_EMPTY: Final[dict[str, object]] = {}


@final
class DeviceValue:
    """The ``device`` variable: driver, attributes and capacity by domain, allowMultipleAllocations."""

    __slots__ = ("allowMultipleAllocations", "attributes", "capacity", "driver")

    def __init__(
        self,
        driver: str,
        attributes: Mapping[str, Mapping[str, object]],
        capacity: Mapping[str, Mapping[str, object]],
        allow_multiple_allocations: bool,
    ) -> None:
        self.driver = driver
        self.attributes = DefaultingMap({k: dict(v) for k, v in attributes.items()})
        self.capacity = DefaultingMap({k: dict(v) for k, v in capacity.items()})
        self.allowMultipleAllocations = allow_multiple_allocations


@final
class ConcatList(Sequence[object]):
    """``left + right`` of long lists, made as cel-go makes it: in constant time, nothing copied.

    ``cel.bind(x, x + x, ...)`` doubles a list at each step; kube answers ``size(x)`` of a list
    doubled 40 times at once, and so does this.
    """

    __slots__ = ("_length", "left", "right")

    def __init__(self, left: Sequence[object], right: Sequence[object]) -> None:
        self.left = left
        self.right = right
        self._length = len(left) + len(right)

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> object: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[object]: ...

    def __getitem__(self, index: int | slice) -> object:
        if isinstance(index, slice):
            return tuple(self)[index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError(index)
        node: Sequence[object] = self
        while isinstance(node, ConcatList):
            if index < len(node.left):
                node = node.left
            else:
                index -= len(node.left)
                node = node.right
        return node[index]

    def __iter__(self) -> Iterator[object]:
        stack: list[Sequence[object]] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, ConcatList):
                stack.append(node.right)
                stack.append(node.left)
            else:
                yield from node

    def __repr__(self) -> str:
        return f"ConcatList(<{self._length} items>)"


@final
class Lazy:
    """A ``cel.bind`` variable: its expression runs when the body first reads it, as in cel-go
    (so an unused failing expression is no error, and costs nothing)."""

    __slots__ = ("_activation", "_done", "_init", "_value")

    def __init__(self, init: Callable[[dict[str, object]], object], activation: dict[str, object]) -> None:
        self._init = init
        self._activation = activation
        self._done = False
        self._value: object = None

    def get(self) -> object:
        if not self._done:
            try:
                self._value = self._init(self._activation)
            except Fault as exc:
                self._value = exc
            self._done = True
        if isinstance(self._value, Fault):
            raise self._value
        return self._value

    @staticmethod
    def value_of(value: object) -> object:
        return value.get() if type(value) is Lazy else value


LIST_TYPES: Final = (tuple, list, ConcatList)
"""The Python types of a CEL list."""

_TYPE_NAMES: Final[dict[type, str]] = {
    bool: "bool",
    int: "int",
    Uint: "uint",
    float: "double",
    str: "string",
    bytes: "bytes",
    type(None): "null_type",
    list: "list",
    tuple: "list",
    ConcatList: "list",
    dict: "map",
    DefaultingMap: "map",
    Quantity: QUANTITY_TYPE,
    Semver: SEMVER_TYPE,
    DeviceValue: DEVICE_TYPE,
}
_GO_NAMES: Final = {
    "bool": "types.Bool",
    "int": "types.Int",
    "uint": "types.Uint",
    "double": "types.Double",
    "string": "types.String",
    "bytes": "types.Bytes",
    "null_type": "types.Null",
    QUANTITY_TYPE: "cel.Quantity",
    SEMVER_TYPE: "cel.Semver",
    DEVICE_TYPE: "*types.protoObj",
}


_SURROGATES: Final = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with lone surrogates (which Python's JSON decoder keeps) as U+FFFD, as Go's JSON
    decoder reads them, so that every string is valid Unicode."""
    if text.isascii() or not _SURROGATES.search(text):
        return text
    return _SURROGATES.sub("\ufffd", text)


def type_name(value: object) -> str:
    """The CEL type name of a runtime value (``int``, ``list``, ``kubernetes.Quantity``)."""
    return _TYPE_NAMES.get(type(value), "dyn")


def go_type_name(value: object) -> str:
    """The Go type cel-go names in "expected iterable type" errors (``types.Int``, ``cel.Semver``)."""
    name = type_name(value)
    return _GO_NAMES.get(name, name)


def check_int(value: int) -> int:
    """Refuse results outside int64, as cel-go does."""
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise Fault("integer overflow")
    return value


def check_uint(value: int) -> Uint:
    if not 0 <= value < 2**64:
        raise Fault("unsigned integer overflow")
    return Uint(value)


_NUMERIC: Final = frozenset({"int", "uint", "double"})


def cel_equal(left: object, right: object) -> bool:
    """CEL's heterogeneous equality: numbers compare by value across int/uint/double; other types never equal."""
    lt, rt = type_name(left), type_name(right)
    if lt != rt:
        if lt in _NUMERIC and rt in _NUMERIC:
            return left == right
        return False
    if lt == "list":
        assert isinstance(left, LIST_TYPES)
        assert isinstance(right, LIST_TYPES)
        return len(left) == len(right) and all(cel_equal(a, b) for a, b in zip(left, right, strict=True))
    if lt == "map":
        assert isinstance(left, dict)
        assert isinstance(right, dict)
        if len(left) != len(right):
            return False
        for key, value in left.items():
            found = map_lookup(right, key)
            if found is _ABSENT or not cel_equal(value, found):
                return False
        return True
    return left == right


_ABSENT: Final = object()


def map_lookup(mapping: dict[object, object], key: object) -> object:
    """``mapping[key]`` with CEL key semantics (1, 1u and 1.0 find the same entry; bool keys stay apart)."""
    kind = type_name(key)
    for candidate, value in mapping.items():
        other = type_name(candidate)
        if (other == kind or (kind in _NUMERIC and other in _NUMERIC)) and candidate == key:
            return value
    return _ABSENT


def index_map(mapping: dict[object, object], key: object) -> object:
    """Read one entry, raising cel-go's ``no such key`` error when absent."""
    if type(key) is str:
        try:
            return mapping[key]
        except KeyError:
            raise Fault(f"no such key: {key}") from None
    found = map_lookup(mapping, key)
    if found is _ABSENT:
        raise Fault(f"no such key: {format_value(key)}")
    return found


def format_value(value: object) -> str:
    """A value as Go's ``%v`` prints a CEL value in error messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "NULL_VALUE"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    return str(value)


def contains_key(mapping: dict[object, object], key: object) -> bool:
    if type(key) is str:
        return key in mapping
    return map_lookup(mapping, key) is not _ABSENT
