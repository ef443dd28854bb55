"""Eager argument checks for the strategies: a bad argument fails when the strategy is built.

Errors are Hypothesis' own :class:`~hypothesis.errors.InvalidArgument`, as ``st.integers(min_value=3,
max_value=1)`` raises, so users catch one error type for every strategy they compose.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TypeAlias

from hypothesis.errors import InvalidArgument

from kschedlib.errors import QuantityError
from kschedlib.model.quantity import Quantity, parse_quantity

__all__ = [
    "QuantityLike",
    "ResourceRanges",
    "Vocabulary",
    "as_quantity",
    "check_bool",
    "check_features",
    "check_int_range",
    "check_names",
    "check_quantity_ranges",
    "check_size",
    "check_vocabulary",
]

QuantityLike: TypeAlias = Quantity | str | int
"""A bound of a quantity range: a Quantity, its string (``"500m"``, ``"1Gi"``) or whole units."""

ResourceRanges: TypeAlias = Mapping[str, tuple[QuantityLike, QuantityLike]]
"""Resource name -> ``(min_value, max_value)`` of its quantities."""

Vocabulary: TypeAlias = Mapping[str, Sequence[str]]
"""Keys with the values they may take (label keys, taint keys): small vocabularies make selectors match."""


def check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be a bool")


def check_int_range(min_name: str, min_value: object, max_name: str, max_value: object, *, lowest: int = 0) -> None:
    """``lowest <= min_value <= max_value``, both integers (``max_value`` may be ``None``: unbounded)."""
    for name, value in ((min_name, min_value), (max_name, max_value)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise InvalidArgument(f"{name}={value!r} must be an integer")
    assert isinstance(min_value, int)
    if min_value < lowest:
        raise InvalidArgument(f"{min_name}={min_value!r} must be at least {lowest}")
    if isinstance(max_value, int) and max_value < min_value:
        raise InvalidArgument(f"{max_name}={max_value!r} must be at least {min_name}={min_value!r}")


def check_size(min_size: object, max_size: object) -> None:
    """Hypothesis' size convention: ``0 <= min_size <= max_size`` (``max_size=None``: no limit)."""
    check_int_range("min_size", min_size, "max_size", max_size)


def check_names(name: str, values: object, *, allow_empty: bool = False) -> tuple[str, ...]:
    """A sequence of distinct non-empty strings, as a tuple."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidArgument(f"{name}={values!r} must be a sequence of strings")
    out = tuple(values)
    if not out and not allow_empty:
        raise InvalidArgument(f"{name} must not be empty")
    for value in out:
        if not isinstance(value, str) or not value:
            raise InvalidArgument(f"{name} holds {value!r}, which is not a non-empty string")
    if len(set(out)) != len(out):
        raise InvalidArgument(f"{name}={out!r} holds duplicates")
    return out


def check_vocabulary(name: str, vocabulary: object) -> dict[str, tuple[str, ...]]:
    """A mapping of non-empty keys to non-empty sequences of string values."""
    if not isinstance(vocabulary, Mapping):
        raise InvalidArgument(f"{name}={vocabulary!r} must be a mapping of keys to sequences of values")
    out: dict[str, tuple[str, ...]] = {}
    for key, values in vocabulary.items():
        if not isinstance(key, str) or not key:
            raise InvalidArgument(f"{name} has the key {key!r}, which is not a non-empty string")
        if isinstance(values, str) or not isinstance(values, Iterable):
            raise InvalidArgument(f"{name}[{key!r}]={values!r} must be a sequence of strings")
        items = tuple(values)
        if not items or not all(isinstance(v, str) for v in items):
            raise InvalidArgument(f"{name}[{key!r}]={values!r} must be a non-empty sequence of strings")
        out[key] = items
    return out


def check_features(what: str, features: object, allowed: Collection[str]) -> frozenset[str]:
    """A subset of ``allowed``; an unknown name is refused with the list of known ones."""
    if isinstance(features, str) or not isinstance(features, Iterable):
        raise InvalidArgument(f"features={features!r} must be a collection of feature names")
    chosen = frozenset(features)
    unknown = sorted(str(f) for f in chosen - frozenset(allowed))
    if unknown:
        raise InvalidArgument(f"unknown {what} feature(s) {', '.join(unknown)}; known: {', '.join(sorted(allowed))}")
    return chosen


def as_quantity(name: str, value: object) -> Quantity:
    """A non-negative quantity from a Quantity, a quantity string or a whole number of units."""
    if isinstance(value, Quantity):
        quantity = value
    elif isinstance(value, str):
        try:
            quantity = parse_quantity(value)
        except QuantityError as exc:
            raise InvalidArgument(f"{name}={value!r} is not a quantity: {exc}") from None
    elif isinstance(value, int) and not isinstance(value, bool):
        quantity = Quantity(Fraction(value), "DecimalSI")
    else:
        raise InvalidArgument(f"{name}={value!r} must be a Quantity, a quantity string or an integer")
    if quantity.amount < 0:
        raise InvalidArgument(f"{name}={value!r} must not be negative")
    return quantity


def check_quantity_ranges(name: str, ranges: object) -> dict[str, tuple[Quantity, Quantity]]:
    """Resource name -> ``(min_value, max_value)``, each bound a :data:`QuantityLike`."""
    if not isinstance(ranges, Mapping):
        raise InvalidArgument(f"{name}={ranges!r} must map resource names to (min_value, max_value) pairs")
    out: dict[str, tuple[Quantity, Quantity]] = {}
    for resource, bounds in ranges.items():
        if not isinstance(resource, str) or not resource:
            raise InvalidArgument(f"{name} has the resource name {resource!r}, which is not a non-empty string")
        if not isinstance(bounds, tuple | list) or len(bounds) != 2:
            raise InvalidArgument(f"{name}[{resource!r}]={bounds!r} must be a (min_value, max_value) pair")
        low = as_quantity(f"{name}[{resource!r}] min_value", bounds[0])
        high = as_quantity(f"{name}[{resource!r}] max_value", bounds[1])
        if high < low:
            raise InvalidArgument(f"{name}[{resource!r}]: max_value={bounds[1]!r} is below min_value={bounds[0]!r}")
        out[resource] = (low, high)
    return out
