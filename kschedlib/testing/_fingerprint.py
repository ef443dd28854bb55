"""Deep, comparable pictures of objects, and the readable differences between two pictures.

:func:`freeze` walks attrs classes, slotted and plain objects, mappings, sequences and sets into
nested :class:`Frozen` tuples (leaves stay as they are), so "did this call mutate that?" is one
``==``. :func:`differences` names what changed, as paths such as ``node.labels['zone']``.
"""

from __future__ import annotations

import enum
import pickle
import random
import types
from collections.abc import Mapping, Set
from fractions import Fraction
from typing import Any, Final, NamedTuple

import attrs

from kschedlib.framework.snapshot import Snapshot

__all__ = ["Frozen", "Sealed", "differences", "freeze", "seal"]

_LEAVES: Final = (str, bytes, int, float, complex, bool, Fraction, enum.Enum, type(None))
_OPAQUE: Final = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
                  random.Random)
_NAMES: dict[type, tuple[str, ...]] = {}


class Frozen(NamedTuple):
    """A container's picture: its kind (``map``, ``list``, ``set``, or a class name) and labelled parts."""

    kind: str
    parts: tuple[tuple[str, Any], ...]


def _label(part: tuple[str, Any]) -> str:
    return part[0]


def _names(cls: type) -> tuple[str, ...]:
    """The attribute names of instances of ``cls`` (attrs fields, else every ``__slots__`` entry), cached."""
    names = _NAMES.get(cls)
    if names is None:
        if attrs.has(cls):
            names = tuple(f.name for f in attrs.fields(cls))
        else:
            slots: list[str] = []
            for klass in cls.__mro__:
                declared = klass.__dict__.get("__slots__", ())
                slots.extend((declared,) if isinstance(declared, str) else declared)
            names = tuple(n for n in dict.fromkeys(slots) if n not in ("__weakref__", "__dict__"))
        _NAMES[cls] = names
    return names


class _Freezer:
    __slots__ = ("opaque", "path")

    def __init__(self, opaque: tuple[type, ...]) -> None:
        self.opaque = _OPAQUE + opaque
        self.path: set[int] = set()

    def __call__(self, value: object) -> Any:
        if isinstance(value, _LEAVES):
            return value
        if isinstance(value, self.opaque):
            return Frozen(f"<{type(value).__qualname__}>", ())
        key = id(value)
        if key in self.path:
            return Frozen("<cycle>", ())
        self.path.add(key)
        try:
            return self._container(value)
        finally:
            self.path.discard(key)

    def _container(self, value: object) -> Frozen:
        if isinstance(value, Snapshot):
            parts = (("node_infos", value.node_infos), ("namespaces", dict(value.namespaces)),
                     ("generation", value.generation))
            return Frozen("Snapshot", tuple((label, self(item)) for label, item in parts))
        if isinstance(value, Mapping):
            return Frozen("map", tuple(sorted(((repr(k), self(v)) for k, v in value.items()), key=_label)))
        if isinstance(value, list | tuple):
            return Frozen(type(value).__name__, tuple((str(i), self(v)) for i, v in enumerate(value)))
        if isinstance(value, Set):
            pictures = ((repr(p), p) for p in map(self, value))
            return Frozen("set", tuple(sorted(pictures, key=_label)))
        fields = [(name, self(getattr(value, name))) for name in _names(type(value)) if hasattr(value, name)]
        if hasattr(value, "__dict__"):
            fields.extend((name, self(item)) for name, item in vars(value).items())
        return Frozen(type(value).__qualname__, tuple(fields))


def freeze(value: object, *, opaque: tuple[type, ...] = ()) -> Any:
    """The picture of ``value``; instances of ``opaque`` types are pictured by their type name only.

    A Snapshot is pictured by what it shows (its NodeInfos, namespaces and generation), not by the
    caches it fills on first use. Cycles are cut.
    """
    return _Freezer(opaque)(value)


class Sealed(NamedTuple):
    """A cheap record of an object's state: its pickle, or (when it does not pickle) its picture."""

    data: bytes | None
    picture: Any

    def same_as(self, value: object) -> bool:
        """Whether ``value`` is still in the recorded state."""
        if self.data is not None:
            try:
                return pickle.dumps(_plain(value), pickle.HIGHEST_PROTOCOL) == self.data
            except Exception:
                return False
        return bool(freeze(value) == self.picture)

    def before(self) -> Any:
        """The picture of the recorded state (rebuilt from the pickle when there is one)."""
        return freeze(pickle.loads(self.data)) if self.data is not None else self.picture


def _plain(value: object) -> object:
    """What to pickle for ``value``: a Snapshot's contents without the caches it fills on first use."""
    if isinstance(value, Snapshot):
        return ("Snapshot", value.node_infos, dict(value.namespaces), value.generation)
    return value


def seal(value: object) -> Sealed:
    """Record ``value``'s state in C speed (pickle); compare later with :meth:`Sealed.same_as`.

    Checking a call for mutations this way costs two pickles; the slow picture and its diff are
    only made when something changed.
    """
    try:
        return Sealed(pickle.dumps(_plain(value), pickle.HIGHEST_PROTOCOL), None)
    except Exception:
        return Sealed(None, freeze(value))


def _show(picture: Any) -> str:
    if isinstance(picture, Frozen):
        if picture.kind in ("map", "list", "tuple", "set"):
            return f"<{picture.kind} of {len(picture.parts)}>"
        return f"<{picture.kind}>"
    text = repr(picture)
    return text if len(text) <= 60 else text[:57] + "..."


def _step(kind: str, label: str) -> str:
    if kind in ("map", "list", "tuple"):
        return f"[{label}]"
    if kind == "set":
        return "{" + label[:40] + "}"
    return f".{label}"


def differences(before: Any, after: Any, path: str = "", *, limit: int = 5) -> list[str]:
    """Up to ``limit`` lines ``path: old -> new`` (``<absent>`` for added or removed parts)."""
    if before == after:
        return []
    same_shape = isinstance(before, Frozen) and isinstance(after, Frozen) and before.kind == after.kind
    if not same_shape:
        return [f"{path or '<value>'}: {_show(before)} -> {_show(after)}"]
    old, new = dict(before.parts), dict(after.parts)
    out: list[str] = []
    for label in dict.fromkeys([*old, *new]):
        if len(out) >= limit:
            break
        where = path + _step(before.kind, label)
        if label not in new:
            out.append(f"{where}: {_show(old[label])} -> <absent>")
        elif label not in old:
            out.append(f"{where}: <absent> -> {_show(new[label])}")
        else:
            out.extend(differences(old[label], new[label], where, limit=limit - len(out)))
    return out[:limit]
