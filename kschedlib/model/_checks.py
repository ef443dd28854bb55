"""Field checks for the model's constructors: convert what has one obvious meaning, refuse the rest.

A model object is built on hot paths (``attrs.evolve`` per assumed pod) and read on every cycle,
so a wrong type must fail at construction with a :class:`~kschedlib.errors.ModelError` naming the
object, the field and the value — not later inside a plugin, the queue or the cache — and a
well-typed object must cost next to nothing.  :func:`checker` therefore compiles, once per class,
one boolean expression of ``type(...) is`` tests (what attrs does for ``__init__``); only when it
fails does the slow path run, which converts unambiguous values (``None`` -> an empty map, a list
-> a tuple, a quantity string or number -> a :class:`~kschedlib.model.quantity.Quantity`) and
refuses the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from kschedlib.errors import ModelError, QuantityError
from kschedlib.model.quantity import Quantity, parse_quantity

__all__ = [
    "FLAG",
    "FLAG_OR_NONE",
    "INT",
    "INT_OR_NONE",
    "MAP",
    "MAP_OR_NONE",
    "RESOURCES",
    "RESOURCES_OR_NONE",
    "SECONDS_OR_NONE",
    "TEXT",
    "TEXT_OR_NONE",
    "Kind",
    "checker",
    "one_of",
    "tuple_of",
]

Kind = tuple[str, Any]
"""A field's expected shape: a tag and, for tuples and instances, the accepted classes."""

TEXT: Kind = ("text", None)
TEXT_OR_NONE: Kind = ("text?", None)
INT: Kind = ("int", None)
INT_OR_NONE: Kind = ("int?", None)
FLAG: Kind = ("bool", None)
FLAG_OR_NONE: Kind = ("bool?", None)
SECONDS_OR_NONE: Kind = ("seconds?", None)
MAP: Kind = ("map", None)
MAP_OR_NONE: Kind = ("map?", None)
RESOURCES: Kind = ("resources", None)
RESOURCES_OR_NONE: Kind = ("resources?", None)


def tuple_of(*kinds: type) -> Kind:
    """A tuple (a list is converted) whose items are ``kinds`` instances."""
    return ("tuple", kinds)


def one_of(*kinds: type) -> Kind:
    """``None`` or an instance of ``kinds``."""
    return ("instance?", kinds)


# --- the fast guard: one generated expression per class -------------------------------------------

_FAST: dict[str, str] = {
    "text": "type({v}) is str",
    "text?": "({v} is None or type({v}) is str)",
    "int": "type({v}) is int",
    "int?": "({v} is None or type({v}) is int)",
    "bool": "type({v}) is bool",
    "bool?": "({v} is None or type({v}) is bool)",
    "seconds?": "({v} is None or type({v}) is float or type({v}) is int)",
    "map": "(type({v}) is dict and (not {v} or _is_str_map({v})))",
    "map?": "({v} is None or (type({v}) is dict and (not {v} or _is_str_map({v}))))",
    "resources": "(type({v}) is dict and (not {v} or _is_resources({v})))",
    "resources?": "({v} is None or (type({v}) is dict and (not {v} or _is_resources({v}))))",
    "tuple": "(type({v}) is tuple and (not {v} or _all_of({v}, {k})))",
    "instance?": "({v} is None or isinstance({v}, {k}))",
}


def _is_str_map(value: dict[object, object]) -> bool:
    for key, item in value.items():
        if type(key) is not str or type(item) is not str:
            return False
    return True


def _is_resources(value: dict[object, object]) -> bool:
    for key, item in value.items():
        if type(key) is not str or type(item) is not Quantity:
            return False
    return True


def _all_of(value: tuple[object, ...], kinds: tuple[type, ...]) -> bool:
    for item in value:
        if not isinstance(item, kinds):
            return False
    return True


def checker(fields: Mapping[str, Kind]) -> Callable[[Any], None]:
    """A post-init hook that checks ``fields`` of a frozen instance, converting or refusing in place."""
    namespace: dict[str, Any] = {"_is_str_map": _is_str_map, "_is_resources": _is_resources, "_all_of": _all_of,
                                 "_repair": _repair, "_fields": dict(fields)}
    tests = []
    for index, (name, (tag, kinds)) in enumerate(fields.items()):
        namespace[f"_k{index}"] = kinds
        tests.append(_FAST[tag].format(v=f"self.{name}", k=f"_k{index}"))
    source = f"def check(self):\n    if not ({' and '.join(tests)}):\n        _repair(self, _fields)\n"
    exec(compile(source, f"<model checks for {', '.join(fields)}>", "exec"), namespace)
    check: Callable[[Any], None] = namespace["check"]
    return check


# --- the slow path: name the field, convert or refuse ---------------------------------------------


def _describe(inst: object) -> str:
    """``Pod default/web-1``, ``Node n1``, or the class name when the name itself is bad."""
    kind = type(inst).__name__
    name = getattr(inst, "name", None)
    if type(name) is not str:
        return kind
    namespace = getattr(inst, "namespace", None)
    return f"{kind} {namespace}/{name}" if type(namespace) is str else f"{kind} {name}"


def _refuse(inst: object, field: str, value: object, expected: str) -> NoReturn:
    raise ModelError(f"must be {expected}", obj=_describe(inst), field=field, value=value)


def _repair(inst: object, fields: Mapping[str, Kind]) -> None:
    for name, kind in fields.items():
        value = getattr(inst, name)
        fixed = _convert(inst, name, value, kind)
        if fixed is not value:
            object.__setattr__(inst, name, fixed)


_SCALARS: dict[str, tuple[tuple[type, ...], bool, str]] = {
    "text": ((str,), False, "a string"),
    "text?": ((str,), True, "a string or None"),
    "int": ((int,), False, "an int"),
    "int?": ((int,), True, "an int or None"),
    "bool": ((bool,), False, "a bool"),
    "bool?": ((bool,), True, "a bool or None"),
    "seconds?": ((int, float), True, "a number of seconds or None"),
}


def _convert(inst: object, name: str, value: object, kind: Kind) -> object:
    tag, kinds = kind
    scalar = _SCALARS.get(tag)
    if scalar is not None:
        types, optional, expected = scalar
        if (value is None and optional) or (isinstance(value, types) and (bool in types or type(value) is not bool)):
            return value
        _refuse(inst, name, value, expected)
    if value is None and tag in ("map?", "resources?", "instance?"):
        return None
    if tag in ("map", "map?"):
        return _str_map(inst, name, value)
    if tag in ("resources", "resources?"):
        return _resource_list(inst, name, value)
    if tag == "instance?":
        if isinstance(value, kinds):
            return value
        _refuse(inst, name, value, f"{_names(kinds)} or None")
    return _tuple(inst, name, value, kinds)


def _names(kinds: tuple[type, ...]) -> str:
    return " or ".join(f"a {kind.__name__}" for kind in kinds)


def _str_map(inst: object, name: str, value: object) -> Mapping[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        _refuse(inst, name, value, "a mapping of strings to strings")
    for key, item in value.items():
        if type(key) is not str:
            _refuse(inst, name, key, "keyed by strings")
        if type(item) is not str:
            _refuse(inst, f"{name}[{key!r}]", item, "a string")
    return value


def _resource_list(inst: object, name: str, value: object) -> Mapping[str, Quantity]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        _refuse(inst, name, value, "a mapping of resource names to quantities")
    converted = dict(value)
    for key, amount in value.items():
        if type(key) is not str:
            _refuse(inst, name, key, "keyed by resource names (strings)")
        if not isinstance(amount, Quantity):
            try:
                converted[key] = parse_quantity(amount)
            except QuantityError as err:
                raise QuantityError(err.message, obj=_describe(inst), field=f"{name}[{key!r}]",
                                    value=amount) from None
    return converted


def _tuple(inst: object, name: str, value: object, kinds: tuple[type, ...]) -> tuple[object, ...]:
    if not isinstance(value, (tuple, list)):
        _refuse(inst, name, value, f"a tuple of {_names(kinds)[2:]}")
    for index, item in enumerate(value):
        if not isinstance(item, kinds):
            _refuse(inst, f"{name}[{index}]", item, _names(kinds))
    return tuple(value)
