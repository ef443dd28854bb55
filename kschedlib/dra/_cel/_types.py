"""Static CEL types as cel-go prints them (``int``, ``list(string)``, ``map(string, dyn)``) and overload matching."""

from __future__ import annotations

from typing import Final

__all__ = ["DYN", "element_type", "is_dyn", "join", "map_types", "match"]

DYN: Final = "dyn"
_LOOSE: Final = frozenset({"dyn", "any", "A", "K", "V"})


def is_dyn(t: str) -> bool:
    """``dyn`` and ``any`` (the attribute value type) are checked at run time only."""
    return t in _LOOSE


def _args(t: str) -> list[str]:
    """The top-level type arguments of ``list(...)`` / ``map(..., ...)``."""
    inner = t[t.index("(") + 1 : -1]
    parts, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    parts.append(inner[start:].strip())
    return parts


def element_type(t: str) -> str:
    """The element type of a list, the key type of a map (what a macro ranges over), else ``dyn``."""
    if t.startswith("list("):
        return _args(t)[0]
    if t.startswith("map("):
        return _args(t)[0]
    return DYN


def map_types(t: str) -> tuple[str, str]:
    if t.startswith("map("):
        key, value = _args(t)
        return key, value
    return DYN, DYN


def _base(t: str) -> str:
    return t.split("(", 1)[0]


def match(pattern: str, actual: str, bound: dict[str, str]) -> bool:
    """Whether a value of static type ``actual`` fits parameter ``pattern``; binds type parameters."""
    if actual in ("dyn", "any") or pattern == "dyn":
        return True
    if pattern in ("A", "K", "V"):
        seen = bound.get(pattern)
        if seen is None or is_dyn(seen):
            bound[pattern] = actual
            return True
        return _compatible(seen, actual)
    if _base(pattern) != _base(actual):
        return False
    if "(" not in pattern:
        return True
    return all(match(p, a, bound) for p, a in zip(_args(pattern), _args(actual), strict=True))


def _compatible(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` can be one type: equal up to ``dyn`` anywhere (``list(dyn)`` is the
    type of ``[]`` and fits ``list(string)``)."""
    if a == b or is_dyn(a) or is_dyn(b):
        return True
    if _base(a) != _base(b) or "(" not in a or "(" not in b:
        return False
    return all(_compatible(x, y) for x, y in zip(_args(a), _args(b), strict=True))


def substitute(t: str, bound: dict[str, str]) -> str:
    """``t`` with its type parameters replaced by what they were bound to (``dyn`` if unbound)."""
    if t in ("A", "K", "V"):
        return bound.get(t, DYN)
    if "(" not in t:
        return t
    return f"{_base(t)}({', '.join(substitute(a, bound) for a in _args(t))})"


def join(a: str, b: str) -> str:
    """The type of a value that is either ``a`` or ``b`` (list elements, ternary branches)."""
    if a == b:
        return a
    return DYN


def runtime_fits(pattern: str, name: str) -> bool:
    """Whether a runtime value whose CEL type name is ``name`` fits parameter ``pattern``."""
    if pattern in _LOOSE:
        return True
    return _base(pattern) == name
