"""One shared copy of equal read-only parts of model objects, handed out while reading manifests.

Replicated pods repeat the same labels, requests, selectors and empty maps thousands of times.
Model objects are frozen and their maps are read-only by contract, so the reader gives every
object with the same content the same map (or selector) instead of a copy each; a cluster's
memory then grows with its distinct shapes rather than with its pods.

Shared maps are :class:`ReadOnlyMap` (a ``dict`` that refuses writes), so that changing one object's
map in place, which the model's contract forbids, fails loudly instead of changing every object that
shares it.  Sharing is exact: keys hold every value's type and, for quantities, the notation as well as
the amount (``Quantity`` equality ignores the notation, which ``str()`` still shows), so a
shared part is indistinguishable from the copy it replaces.  The pool is bounded: when the recent
generation is full it becomes the old one (the previous old one is dropped), and a part found in the
old generation moves back to the recent one, so a stream of unique content (a hostname label)
cannot evict the few shapes every pod uses.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, Final, Never, NoReturn, TypeVar

from kschedlib.model.labels import LabelSelector, Requirement
from kschedlib.model.quantity import Quantity

__all__ = ["EMPTY_MAP", "MAX_SHARED", "ReadOnlyMap", "from_manifest", "manifest_key", "resource_map", "selector",
           "share", "str_map"]

MAX_SHARED: Final = 4096
"""Distinct parts remembered per generation (at most twice this many in all)."""

_K = TypeVar("_K")
_V = TypeVar("_V")
_T = TypeVar("_T")


class ReadOnlyMap(dict[_K, _V]):
    """A ``dict`` that refuses to be changed: the reader hands one to many objects.

    It is a real ``dict`` for everything else (equality, JSON, ``dict(m)``, ``m | other``), pickles and
    copies as itself, and ``m.copy()`` gives a plain, writable ``dict``.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("this map is shared between model objects and read-only: give the object a new map "
                        "(attrs.evolve(obj, labels={**obj.labels, ...})) instead of changing it in place")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[type[ReadOnlyMap[_K, _V]], tuple[dict[_K, _V]]]:
        return type(self), (dict(self),)


EMPTY_MAP: Final[Mapping[str, Never]] = ReadOnlyMap()
"""The empty map every absent labels/annotations/resources field reads as."""

_MISSING: Final = object()
_pool: dict[Hashable, object] = {}
_old: dict[Hashable, object] = {}


def share(key: Hashable, make: Callable[[], _T]) -> _T:
    """The part remembered under ``key``, else ``make()`` remembered; ``key`` must tell apart every
    two parts that differ in anything (value types included)."""
    global _pool, _old
    found = _pool.get(key, _MISSING)
    if found is _MISSING:
        found = _old.get(key, _MISSING)
        if found is _MISSING:
            found = make()
        if len(_pool) >= MAX_SHARED:
            _pool, _old = {}, _pool
        _pool[key] = found
    return found  # type: ignore[return-value]


def _plain(items: tuple[tuple[object, object], ...]) -> bool:
    """Whether every key and value is exactly a ``str`` (a subclass would be shared as a plain one)."""
    return all(type(k) is str and type(v) is str for k, v in items)


def str_map(value: Mapping[str, str]) -> Mapping[str, str]:
    """A read-only dict equal to ``value`` (same order), shared with every earlier equal one."""
    if not value:
        return EMPTY_MAP
    items = tuple(value.items())
    if not _plain(items):
        return dict(items)
    return share(("s", items), lambda: ReadOnlyMap(items))


def resource_map(value: Mapping[str, Quantity]) -> Mapping[str, Quantity]:
    """A read-only dict equal to ``value`` whose quantities also print alike, shared with every earlier such one."""
    if not value:
        return EMPTY_MAP
    items = tuple(value.items())
    key = []
    for k, q in items:
        if type(k) is not str or type(q) is not Quantity:
            return dict(items)
        key.append((k, q.amount, q.format))
    return share(("r", *key), lambda: ReadOnlyMap(items))


_SCALARS: Final = frozenset({str, int, bool, type(None)})


def manifest_key(raw: object) -> Hashable | None:
    """A hashable stand-in for a JSON value that tells apart any two values that differ, types and
    order included (``1``, ``1.0`` and ``True`` are three); ``None`` for anything but plain JSON."""
    kind = type(raw)
    if kind in _SCALARS:
        return kind, raw
    if kind is float:
        return float, repr(raw)  # -0.0 is not 0.0, and nan is nan
    if kind is dict:
        items = []
        for k, v in raw.items():  # type: ignore[attr-defined]
            frozen = manifest_key(v)
            if type(k) is not str or frozen is None:
                return None
            items.append((k, frozen))
        return dict, tuple(items)
    if kind is list:
        values = []
        for v in raw:  # type: ignore[attr-defined]
            frozen = manifest_key(v)
            if frozen is None:
                return None
            values.append(frozen)
        return list, tuple(values)
    return None


def from_manifest(kind: Hashable, raw: object, read: Callable[[], _T]) -> _T:
    """``read()``, the model part read from the manifest subtree ``raw``, shared with every earlier
    part of the same ``kind`` read from an equal subtree (reading must depend on nothing else)."""
    if raw is None:
        return read()
    try:
        key = manifest_key(raw)
    except RecursionError:  # nested deeper than any part reads
        key = None
    return read() if key is None else share((kind, key), read)


def selector(match_labels: Mapping[str, str], expressions: tuple[Requirement, ...]) -> LabelSelector:
    """``LabelSelector(match_labels, expressions)``, shared with every earlier equal one."""
    items = tuple(match_labels.items())
    if not _plain(items) or not all(
            type(r.key) is str and type(r.operator) is str and all(type(v) is str for v in r.values)
            for r in expressions):
        return LabelSelector(dict(items), expressions)
    labels = str_map(match_labels)
    return share(("l", items, expressions), lambda: LabelSelector(labels, expressions))
