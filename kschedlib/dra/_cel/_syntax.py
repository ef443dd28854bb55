"""CEL source text to a small syntax tree (lexer and recursive-descent parser).

The grammar is CEL's (github.com/google/cel-spec, ``doc/langdef.md``) minus message construction
and optional syntax, which device selectors cannot use (the device environment declares no
message types). Macros (``has``, ``all``, ``exists``, ``exists_one``, ``map``, ``filter``,
``cel.bind``) are expanded here, as cel-go's parser does.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
from collections.abc import Iterator
from typing import Final, NoReturn

from kschedlib.dra._cel._lexer import SyntaxFault, Token, lex
from kschedlib.dra._cel._nodes import (
    Binary,
    Bind,
    Call,
    Comprehension,
    Conditional,
    CreateList,
    CreateMap,
    Ident,
    Index,
    Literal,
    Node,
    Select,
    Uint,
    Unary,
    children,
)

__all__ = ["MAX_RECURSION", "SHALLOW", "SyntaxFault", "headroom", "parse", "tree_depth"]

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_UINT64_MAX: Final = 2**64 - 1

_RESERVED: Final = frozenset(
    "as break const continue else for function if import let loop package namespace return var void while".split()  # noqa: SIM905
)
_RELATIONS: Final = frozenset({"<", "<=", ">", ">=", "==", "!=", "in"})

MAX_RECURSION: Final = 250
"""cel-go's parser recursion limit: nested expressions (parentheses, list elements, arguments) and
nested operations (operators, selections, calls on a receiver, indexing)."""
MAX_CODE_POINTS: Final = 100_000
"""cel-go's default limit on the length of an expression."""
_HEADROOM: Final = 20_000
"""Python frames an expression within cel-go's limits may need to parse, check and evaluate
(a few per level of nesting; Python's default limit is 1,000)."""
SHALLOW: Final = 60
"""Expressions this short, and trees this shallow, fit in Python's default recursion limit."""

_headroom_lock = threading.Lock()
_headroom_users = 0
_headroom_saved = 0


@contextlib.contextmanager
def headroom() -> Iterator[None]:
    """Python's recursion limit raised to :data:`_HEADROOM` while deep expressions are handled
    (by any thread), and put back afterwards."""
    global _headroom_users, _headroom_saved
    with _headroom_lock:
        if _headroom_users == 0:
            _headroom_saved = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_headroom_saved, _HEADROOM))
        _headroom_users += 1
    try:
        yield
    finally:
        with _headroom_lock:
            _headroom_users -= 1
            if _headroom_users == 0:
                sys.setrecursionlimit(_headroom_saved)


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens = lex(source)
        self.pos = 0
        self.next_id = 0
        self.depth = 0
        """Nested ``expr`` rules, as cel-go's parse listener counts them."""

    # -- token helpers
    def peek(self) -> Token:
        return self.tokens[self.pos]

    def take(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def accept(self, kind: str) -> Token | None:
        if self.tokens[self.pos].kind == kind:
            return self.take()
        return None

    def expect(self, kind: str) -> Token:
        token = self.peek()
        if token.kind != kind:
            self.fail_at(token, f"mismatched input '{token.text}' expecting '{kind}'")
        return self.take()

    def fail_at(self, token: Token, message: str) -> NoReturn:
        raise SyntaxFault(message, token.offset)

    # -- grammar
    def parse(self) -> Node:
        node = self.expr()
        token = self.peek()
        if token.kind != "<EOF>":
            self.fail_at(token, f"extraneous input '{token.text}' expecting <EOF>")
        return node

    def expr(self) -> Node:
        self.depth += 1
        if self.depth > MAX_RECURSION:
            raise SyntaxFault(f"expression recursion limit exceeded: {MAX_RECURSION}", -1)
        cond = self.logical("||")
        token = self.accept("?")
        if token is not None:
            when_true = self.logical("||")
            self.expect(":")
            cond = Conditional(token.offset, cond, when_true, self.expr())
        self.depth -= 1
        return cond

    def logical(self, op: str) -> Node:
        """A chain of ``||`` (or ``&&``) as cel-go builds it: a balanced tree, not a deep one."""
        terms = [self.logical("&&") if op == "||" else self.relation()]
        offsets: list[int] = []
        while (token := self.accept(op)) is not None:
            offsets.append(token.offset)
            terms.append(self.logical("&&") if op == "||" else self.relation())
        return _balanced(op, terms, offsets, 0, len(offsets) - 1) if offsets else terms[0]

    def relation(self) -> Node:
        node = self.addition()
        while self.peek().kind in _RELATIONS:
            token = self.take()
            node = Binary(token.offset, token.kind, node, self.addition())
        return node

    def addition(self) -> Node:
        node = self.multiplication()
        while self.peek().kind in ("+", "-"):
            token = self.take()
            node = Binary(token.offset, token.kind, node, self.multiplication())
        return node

    def multiplication(self) -> Node:
        node = self.unary()
        while self.peek().kind in ("*", "/", "%"):
            token = self.take()
            node = Binary(token.offset, token.kind, node, self.unary())
        return node

    def unary(self) -> Node:
        """``!x``, ``-x``: cel-go keeps one operator of an odd run and none of an even one."""
        token = self.peek()
        if token.kind not in ("!", "-"):
            return self.member(self.primary())
        run = 0
        while self.peek().kind == token.kind:
            self.take()
            run += 1
        nxt = self.peek()
        signed_number = nxt.kind in ("int", "double", "hex") and not nxt.text.lower().endswith("u")
        if token.kind == "-" and run == 1 and signed_number:
            return self.member(self.number(self.take(), negative=True, offset=token.offset))
        operand = self.member(self.primary())
        return Unary(token.offset, token.kind, operand) if run % 2 else operand

    def member(self, node: Node) -> Node:
        while True:
            token = self.peek()
            if token.kind == ".":
                self.take()
                name = self.expect_ident()
                opening = self.accept("(")
                if opening is not None:
                    node = self.call(name, node, self.arguments(")"), opening.offset)
                else:
                    node = Select(name.offset - 1, node, name.text)
            elif token.kind == "[":
                self.take()
                index = self.expr()
                self.expect("]")
                node = Index(token.offset, node, index)
            else:
                return node

    def expect_ident(self) -> Token:
        token = self.peek()
        if token.kind != "ident":
            self.fail_at(token, f"no viable alternative at input '.{token.text}'")
        if token.text in _RESERVED:
            self.fail_at(token, f"reserved identifier: {token.text}")
        return self.take()

    def arguments(self, closer: str) -> list[Node]:
        args: list[Node] = []
        if self.accept(closer) is not None:
            return args
        while True:
            args.append(self.expr())
            if self.accept(closer) is not None:
                return args
            token = self.peek()
            if token.kind != ",":
                self.fail_at(token, f"mismatched input '{token.text}' expecting {{',', '{closer}'}}")
            self.take()
            if self.accept(closer) is not None:  # a trailing comma is allowed
                return args

    def primary(self) -> Node:
        token = self.take()
        kind = token.kind
        if kind == "ident":
            if token.text in _RESERVED:
                self.fail_at(token, f"reserved identifier: {token.text}")
            opening = self.accept("(")
            if opening is not None:
                return self.call(token, None, self.arguments(")"), opening.offset)
            if self.peek().kind == "{":
                self.fail_at(self.peek(), f"message construction is not supported: {token.text}{{...}}")
            return Ident(token.offset, token.text)
        if kind == ".":
            name = self.expect_ident()
            return Ident(name.offset, name.text)
        if kind == "(":
            node = self.expr()
            self.expect(")")
            return node
        if kind == "[":
            return CreateList(token.offset, self.arguments("]"))
        if kind == "{":
            return self.map_literal(token)
        if kind in ("int", "hex", "double"):
            return self.number(token, negative=False, offset=token.offset)
        if kind in ("string", "bytes"):
            return Literal(token.offset, token.value)
        if kind in ("true", "false"):
            return Literal(token.offset, kind == "true")
        if kind == "null":
            return Literal(token.offset, None)
        if kind == "<EOF>":
            self.fail_at(token, "mismatched input '<EOF>' expecting an expression")
        raise SyntaxFault(f"extraneous input '{token.text}' expecting an expression", token.offset)

    def map_literal(self, opening: Token) -> Node:
        entries: list[tuple[Node, Node]] = []
        if self.accept("}") is not None:
            return CreateMap(opening.offset, entries)
        while True:
            key = self.expr()
            self.expect(":")
            entries.append((key, self.expr()))
            if self.accept("}") is not None:
                return CreateMap(opening.offset, entries)
            self.expect(",")
            if self.accept("}") is not None:
                return CreateMap(opening.offset, entries)

    def number(self, token: Token, *, negative: bool, offset: int) -> Node:
        """A numeric literal; out of range (or past 64 bits) it is cel-go's ``invalid ... literal``."""
        text = token.text
        if token.kind == "double":
            value = float(text)
            if math.isinf(value):
                raise SyntaxFault("invalid double literal", offset, syntax=False)
            return Literal(offset, -value if negative else value)
        unsigned = text[-1] in "uU"
        digits = text[:-1] if unsigned else text
        hexadecimal = token.kind == "hex"
        significant = (digits[2:] if hexadecimal else digits).lstrip("0")
        if len(significant) > (16 if hexadecimal else 20):  # past 64 bits (and Python's digit limit)
            raise SyntaxFault(f"invalid {'uint' if unsigned else 'int'} literal", offset, syntax=False)
        number = int(digits, 16) if hexadecimal else int(digits, 10)
        if negative:
            number = -number
        if unsigned:
            if number > _UINT64_MAX:
                raise SyntaxFault("invalid uint literal", offset, syntax=False)
            return Literal(offset, Uint(number))
        if not _INT64_MIN <= number <= _INT64_MAX:
            raise SyntaxFault("invalid int literal", offset, syntax=False)
        return Literal(offset, number)

    def call(self, name: Token, target: Node | None, args: list[Node], offset: int) -> Node:
        """A call, located as cel-go locates it: at its opening parenthesis."""
        function = name.text
        if target is None and function == "has":
            return self.has_macro(name, args, offset)
        if target is not None and function in ("all", "exists", "exists_one", "map", "filter"):
            return self.comprehension(name, target, args)
        if function == "bind" and isinstance(target, Ident) and target.name == "cel" and len(args) == 3:
            var = self.macro_var(name, args[0])
            return Bind(offset, var, args[1], args[2])
        return Call(offset, function, target, args)

    def has_macro(self, name: Token, args: list[Node], offset: int) -> Node:
        if len(args) != 1 or not isinstance(args[0], Select):
            raise SyntaxFault("invalid argument to has() macro", name.offset)
        select = args[0]
        return Select(offset, select.operand, select.field, test_only=True)

    def comprehension(self, name: Token, target: Node, args: list[Node]) -> Node:
        kind = name.text
        arity = (2, 3) if kind == "map" else (2,)
        if len(args) not in arity:
            raise SyntaxFault(f"no matching overload for '{kind}' with {len(args)} arguments", name.offset)
        var = self.macro_var(name, args[0])
        if kind == "map" and len(args) == 3:
            return Comprehension(name.offset - 1, kind, target, var, args[2], args[1])
        return Comprehension(name.offset - 1, kind, target, var, args[1], None)

    def macro_var(self, name: Token, node: Node) -> str:
        if not isinstance(node, Ident):
            raise SyntaxFault("argument must be a simple name", node.offset if node else name.offset)
        return node.name


def _balanced(op: str, terms: list[Node], offsets: list[int], lo: int, hi: int) -> Node:
    mid = (lo + hi + 1) // 2
    left = terms[mid] if mid == lo else _balanced(op, terms, offsets, lo, mid - 1)
    right = terms[mid + 1] if mid == hi else _balanced(op, terms, offsets, mid + 1, hi)
    return Binary(offsets[mid], op, left, right)


def parse(source: str) -> Node:
    """Parse ``source`` or raise :class:`SyntaxFault`, within cel-go's size and recursion limits."""
    if len(source) > MAX_CODE_POINTS:
        raise SyntaxFault(
            f"expression code point size exceeds limit: size: {len(source)}, limit {MAX_CODE_POINTS}", -1
        )
    tree = _Parser(source).parse()
    if _operation_depth(tree) > MAX_RECURSION:
        raise SyntaxFault("max recursion depth exceeded", -1)
    return tree


def tree_depth(tree: Node) -> int:
    """How many levels ``tree`` has."""
    deepest = 0
    stack: list[tuple[Node, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children(node))
    return deepest


def _operation_depth(tree: Node) -> int:
    """The most operations nested in one another, counted as cel-go's parser visits them:
    ternaries, relations, arithmetic, selections, calls on a receiver and indexing (not ``&&``,
    ``||``, ``!``, ``-``, global calls or literals)."""
    deepest = 0
    stack: list[tuple[Node, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if _counts(node):
            depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children(node))
    return deepest


def _counts(node: Node) -> bool:
    if isinstance(node, (Conditional, Select, Index, Comprehension, Bind)):
        return True
    if isinstance(node, Binary):
        return node.op not in ("&&", "||")
    return isinstance(node, Call) and node.target is not None
