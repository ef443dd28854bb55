"""One overload of a CEL function: its signature for the type check, its implementation for evaluation.

Types are written as cel-go prints them: ``int``, ``list(string)``, ``kubernetes.Quantity``;
``A``, ``K``, ``V`` are type parameters and ``dyn`` accepts anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

__all__ = ["Impl", "Overload", "global_overload", "member_overload"]

Impl = Callable[..., object]


class Overload(NamedTuple):
    member: bool
    params: tuple[str, ...]
    """Parameter types, the receiver first for a member overload."""
    result: str
    impl: Impl


def global_overload(params: Iterable[str], result: str, impl: Impl) -> Overload:
    """``f(args)``."""
    return Overload(False, tuple(params), result, impl)


def member_overload(params: Iterable[str], result: str, impl: Impl) -> Overload:
    """``receiver.f(args)``; ``params`` starts with the receiver's type."""
    return Overload(True, tuple(params), result, impl)
