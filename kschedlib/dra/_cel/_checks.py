"""cel-go's type-check errors and the checks it makes on literals, and what the compiler needs to
know of a node's shape (whether it can fail, whether it is a scalar constant)."""

from __future__ import annotations

from kschedlib.dra._cel._nodes import Ident, Index, Literal, Node, Select
from kschedlib.dra._cel._ops import NOT_CONSTANT
from kschedlib.dra._cel._types import DYN, is_dyn, match

__all__ = ["CheckFault", "homogeneous", "infallible", "is_scalar", "no_overload", "require_bool"]


class CheckFault(Exception):
    """A type-check error at a source offset, with cel-go's message (and any further ones cel-go
    reports with it, as (offset, message))."""

    def __init__(self, message: str, offset: int, more: list[tuple[int, str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.more = more or []


def no_overload(name: str, arg_types: list[str], offset: int, *, member: bool = False) -> CheckFault:
    if member:
        shown = f"{arg_types[0]}.({', '.join(arg_types[1:])})"
    else:
        shown = f"({', '.join(arg_types)})"
    return CheckFault(f"found no matching overload for '{name}' applied to '{shown}'", offset)


def homogeneous(*groups: list[tuple[str, int]], first_only: bool = False) -> None:
    """cel-go's homogeneous aggregate literals: elements (keys, values) of the first one's type.
    cel-go reports every map key or value that differs, but only a list's first."""
    issues: list[tuple[int, str]] = []
    for group in groups:
        if not group:
            continue
        first = group[0][0]
        for t, offset in group[1:]:
            if t != first and (first == DYN or t == DYN or not match(first, t, {})):
                issues.append((offset, f"expected type '{_shown(first)}' but found '{_shown(t)}'"))
                if first_only:
                    break
    if issues:
        (offset, message), *more = sorted(issues)
        raise CheckFault(message, offset, more)


def _shown(t: str) -> str:
    return "null" if t == "null_type" else t


def require_bool(t: str, node: Node) -> None:
    if t != "bool" and not is_dyn(t):
        raise CheckFault(f"expected type 'bool' but found '{t}'", node.offset)


def infallible(node: Node) -> bool:
    """A literal, ``device``, one of its fields, or ``device.attributes[...]`` by a literal domain
    (an unknown domain reads as an empty map): nothing that can fail."""
    if isinstance(node, (Literal, Ident)):
        return isinstance(node, Literal) or node.name == "device"
    if isinstance(node, Select):
        return not node.test_only and isinstance(node.operand, Ident) and node.operand.name == "device"
    if isinstance(node, Index):
        operand = node.operand
        return (isinstance(node.index, Literal) and isinstance(node.index.value, str) and isinstance(operand, Select)
                and operand.field in ("attributes", "capacity") and infallible(operand))  # fmt: skip
    return False


def is_scalar(value: object) -> bool:
    """A constant whose size is 1, so that comparing it with anything costs 1."""
    return value is not NOT_CONSTANT and not isinstance(value, (str, bytes, dict, tuple, list))
