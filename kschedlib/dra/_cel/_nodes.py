"""The syntax tree of a CEL expression; every node remembers its source offset for error messages."""

from __future__ import annotations

from typing import final

__all__ = [
    "Binary",
    "Bind",
    "Call",
    "Comprehension",
    "Conditional",
    "CreateList",
    "CreateMap",
    "Ident",
    "Index",
    "Literal",
    "Node",
    "Select",
    "Uint",
    "Unary",
    "children",
]


@final
class Uint(int):
    """A CEL ``uint`` value (``1u``): an int that equality and overloads tell apart from ``int``."""

    __slots__ = ()


class Node:
    """Base of the syntax tree."""

    __slots__ = ("offset",)

    def __init__(self, offset: int) -> None:
        self.offset = offset


@final
class Literal(Node):
    __slots__ = ("value",)

    def __init__(self, offset: int, value: object) -> None:
        super().__init__(offset)
        self.value = value


@final
class Ident(Node):
    __slots__ = ("name",)

    def __init__(self, offset: int, name: str) -> None:
        super().__init__(offset)
        self.name = name


@final
class Select(Node):
    """``operand.field``; ``test_only`` for ``has(operand.field)``."""

    __slots__ = ("field", "operand", "test_only")

    def __init__(self, offset: int, operand: Node, field: str, *, test_only: bool = False) -> None:
        super().__init__(offset)
        self.operand = operand
        self.field = field
        self.test_only = test_only


@final
class Index(Node):
    __slots__ = ("index", "operand")

    def __init__(self, offset: int, operand: Node, index: Node) -> None:
        super().__init__(offset)
        self.operand = operand
        self.index = index


@final
class Call(Node):
    """A global call ``f(args)`` (``target`` is None) or a member call ``target.f(args)``."""

    __slots__ = ("args", "function", "target")

    def __init__(self, offset: int, function: str, target: Node | None, args: list[Node]) -> None:
        super().__init__(offset)
        self.function = function
        self.target = target
        self.args = args


@final
class Unary(Node):
    __slots__ = ("op", "operand")

    def __init__(self, offset: int, op: str, operand: Node) -> None:
        super().__init__(offset)
        self.op = op
        self.operand = operand


@final
class Binary(Node):
    __slots__ = ("left", "op", "right")

    def __init__(self, offset: int, op: str, left: Node, right: Node) -> None:
        super().__init__(offset)
        self.op = op
        self.left = left
        self.right = right


@final
class Conditional(Node):
    __slots__ = ("cond", "when_false", "when_true")

    def __init__(self, offset: int, cond: Node, when_true: Node, when_false: Node) -> None:
        super().__init__(offset)
        self.cond = cond
        self.when_true = when_true
        self.when_false = when_false


@final
class CreateList(Node):
    __slots__ = ("items",)

    def __init__(self, offset: int, items: list[Node]) -> None:
        super().__init__(offset)
        self.items = items


@final
class CreateMap(Node):
    __slots__ = ("entries",)

    def __init__(self, offset: int, entries: list[tuple[Node, Node]]) -> None:
        super().__init__(offset)
        self.entries = entries


@final
class Comprehension(Node):
    """A macro over a list or map: ``all``, ``exists``, ``exists_one``, ``map`` (optional filter), ``filter``."""

    __slots__ = ("body", "kind", "predicate", "range", "var")

    def __init__(self, offset: int, kind: str, range_: Node, var: str, body: Node, predicate: Node | None) -> None:
        super().__init__(offset)
        self.kind = kind
        self.range = range_
        self.var = var
        self.body = body
        self.predicate = predicate


@final
class Bind(Node):
    """``cel.bind(var, init, body)``: ``body`` with ``var`` bound to ``init``."""

    __slots__ = ("body", "init", "var")

    def __init__(self, offset: int, var: str, init: Node, body: Node) -> None:
        super().__init__(offset)
        self.var = var
        self.init = init
        self.body = body


def children(node: Node) -> list[Node]:
    """The sub-trees of ``node``, in source order."""
    found: list[Node] = []
    for name in type(node).__slots__:
        child = getattr(node, name, None)
        if isinstance(child, Node):
            found.append(child)
        elif isinstance(child, list):
            for item in child:
                found.extend(i for i in (item if isinstance(item, tuple) else (item,)) if isinstance(i, Node))
    return found
