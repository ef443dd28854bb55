"""A linear-time regular expression automaton in pure Python: the fallback when RE2 is not installed.

The tree of :mod:`._regex_syntax` becomes a Thompson program that a Pike VM runs: every thread
advances one character at a time, so time is bounded by (text length) x (program size), never
exponential as a backtracking matcher on ``^(a+)+$``. Threads are kept in priority order, which
gives Go's leftmost-first matches. A search also stops after :data:`STEP_BUDGET` thread steps
(a few seconds of Python) with :class:`RegexBudgetError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from kschedlib.dra._cel._regex_classes import RegexUnsupportedError, class_predicate, fold_orbit
from kschedlib.dra._cel._regex_tree import Node

__all__ = ["MAX_PROGRAM", "STEP_BUDGET", "Program", "RegexBudgetError", "compile_program", "nullable"]

STEP_BUDGET: Final = 5_000_000
"""Thread steps one search may take before it gives up."""
MAX_PROGRAM: Final = 200_000
"""Instructions a program may have (Go allows more; RE2 runs those)."""

# Instruction opcodes; an instruction is (opcode, a, b).
_CHAR: Final = 0  # a: predicate(cp) -> bool
_SPLIT: Final = 1  # a: preferred target, b: other target
_JMP: Final = 2  # a: target
_ASSERT: Final = 3  # a: one of _BOT.._NWB
_MATCH: Final = 4

_BOT, _EOT, _BOL, _EOL, _WB, _NWB = range(6)
_ASSERTS: Final = {"bot": _BOT, "eot": _EOT, "bol": _BOL, "eol": _EOL, "wb": _WB, "nwb": _NWB}

Inst = tuple[int, object, object]


class RegexBudgetError(Exception):
    """A search needed more than :data:`STEP_BUDGET` steps."""


class _Emitter:
    def __init__(self) -> None:
        self.prog: list[Inst] = []

    def add(self, inst: Inst) -> int:
        if len(self.prog) >= MAX_PROGRAM:
            raise RegexUnsupportedError(f"a program of more than {MAX_PROGRAM} instructions")
        self.prog.append(inst)
        return len(self.prog) - 1

    def patch(self, at: int, inst: Inst) -> None:
        self.prog[at] = inst

    def emit(self, node: Node) -> None:
        kind = node[0]
        if kind == "lit":
            cp, fold = node[1], node[2]
            assert isinstance(cp, int)
            self.add((_CHAR, _literal(cp, bool(fold)), None))
        elif kind == "class":
            items, negated, fold = node[1], node[2], node[3]
            assert isinstance(items, tuple)
            self.add((_CHAR, class_predicate(items, bool(negated), bool(fold)), None))
        elif kind == "any":
            self.add((_CHAR, _any, None))
        elif kind == "anynl":
            self.add((_CHAR, _any_not_nl, None))
        elif kind in _ASSERTS:
            self.add((_ASSERT, _ASSERTS[kind], None))
        elif kind == "cap":
            self.emit(node[1])  # type: ignore[arg-type]
        elif kind == "cat":
            for sub in node[1]:  # type: ignore[attr-defined]
                self.emit(sub)
        elif kind == "alt":
            self.alternation(node[1])  # type: ignore[arg-type]
        elif kind in ("star", "plus", "quest"):
            self.loop(kind, node[1], bool(node[2]))  # type: ignore[arg-type]
        elif kind == "repeat":
            self.repeat(node[1], node[2], node[3], bool(node[4]))  # type: ignore[arg-type]
        elif kind == "nomatch":
            self.add((_CHAR, _never, None))
        # "empty" emits nothing

    def alternation(self, subs: tuple[Node, ...]) -> None:
        jumps: list[int] = []
        for sub in subs[:-1]:
            split = self.add((_SPLIT, None, None))
            self.emit(sub)
            jumps.append(self.add((_JMP, None, None)))
            self.patch(split, (_SPLIT, split + 1, len(self.prog)))
        self.emit(subs[-1])
        for jump in jumps:
            self.patch(jump, (_JMP, len(self.prog), None))

    def loop(self, kind: str, sub: Node, greedy: bool) -> None:
        if kind == "star" and nullable(sub):
            # Go and RE2 compile x* as (x+)? when x can match empty, for the priority order of matches.
            self.loop("quest", ("plus", sub, greedy), greedy)
            return
        if kind == "plus":
            start = len(self.prog)
            self.emit(sub)
            self.add(_split(start, len(self.prog) + 1, greedy))
            return
        split = self.add((_SPLIT, None, None))
        self.emit(sub)
        if kind == "star":
            self.add((_JMP, split, None))
        self.patch(split, _split(split + 1, len(self.prog), greedy))

    def repeat(self, sub: Node, lo: int, hi: int, greedy: bool) -> None:
        """``x{n,m}`` as Go simplifies it: ``n`` copies of ``x`` and ``m-n`` nested optional ones;
        ``x{n,}`` as ``n-1`` copies and ``x+``."""
        if hi == -1:
            for _ in range(lo - 1):
                self.emit(sub)
            self.loop("star" if lo == 0 else "plus", sub, greedy)
            return
        for _ in range(lo):
            self.emit(sub)
        splits: list[int] = []
        for _ in range(hi - lo):
            splits.append(self.add((_SPLIT, None, None)))
            self.emit(sub)
        for split in splits:
            self.patch(split, _split(split + 1, len(self.prog), greedy))


def nullable(node: Node) -> bool:
    """Whether ``node`` can match the empty string."""
    kind = node[0]
    if kind in ("lit", "class", "any", "anynl", "nomatch"):
        return False
    if kind in ("cat", "alt"):
        subs = node[1]
        assert isinstance(subs, tuple)
        return (all if kind == "cat" else any)(nullable(sub) for sub in subs)
    if kind in ("cap", "plus"):
        return nullable(node[1])  # type: ignore[arg-type]
    if kind == "repeat":
        return node[2] == 0 or nullable(node[1])  # type: ignore[arg-type]
    return True  # empty, assertions, star, quest


def _split(body: int, out: int, greedy: bool) -> Inst:
    return (_SPLIT, body, out) if greedy else (_SPLIT, out, body)


def _literal(cp: int, fold: bool) -> Callable[[int], bool]:
    if not fold:
        return cp.__eq__
    return frozenset(fold_orbit(cp)).__contains__


def _any(cp: int) -> bool:
    return True


def _any_not_nl(cp: int) -> bool:
    return cp != 0x0A


def _never(cp: int) -> bool:
    return False


def compile_program(tree: Node) -> Program:
    """The program of ``tree``; raises :class:`RegexUnsupportedError` for what it cannot run."""
    emitter = _Emitter()
    emitter.emit(tree)
    emitter.add((_MATCH, None, None))
    return Program(tuple(emitter.prog))


def _is_word(text: str, i: int) -> bool:
    if 0 <= i < len(text):
        c = text[i]
        return c.isascii() and (c.isalnum() or c == "_")
    return False


def _assert_holds(kind: object, text: str, pos: int) -> bool:
    if kind == _BOT:
        return pos == 0
    if kind == _EOT:
        return pos == len(text)
    if kind == _BOL:
        return pos == 0 or text[pos - 1] == "\n"
    if kind == _EOL:
        return pos == len(text) or text[pos] == "\n"
    boundary = _is_word(text, pos - 1) != _is_word(text, pos)
    return boundary if kind == _WB else not boundary


class Program:
    """A compiled pattern: :meth:`search` finds the leftmost-first match at or after a position."""

    __slots__ = ("prog",)

    def __init__(self, prog: tuple[Inst, ...]) -> None:
        self.prog = prog

    def _add(self, queue: list[tuple[int, int]], seen: set[int], pc: int, start: int, text: str, pos: int) -> None:
        """Add ``pc`` and what it reaches without reading a character, in priority order."""
        prog = self.prog
        stack = [pc]
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            op, a, b = prog[pc]
            if op == _JMP:
                stack.append(a)  # type: ignore[arg-type]
            elif op == _SPLIT:
                stack.append(b)  # type: ignore[arg-type]
                stack.append(a)  # type: ignore[arg-type]
            elif op == _ASSERT:
                if _assert_holds(a, text, pos):
                    stack.append(pc + 1)
            else:
                queue.append((pc, start))

    def search(self, text: str, pos: int = 0, *, first: bool = False) -> tuple[int, int] | None:
        """The (start, end) of the leftmost-first match starting at or after ``pos``, or None.

        ``first`` stops at the first match found (its span is then not necessarily Go's): enough
        to know whether there is one.
        """
        prog = self.prog
        steps = 0
        matched: tuple[int, int] | None = None
        current: list[tuple[int, int]] = []
        seen: set[int] = set()
        self._add(current, seen, 0, pos, text, pos)
        while True:
            steps += len(current) + 1
            if steps > STEP_BUDGET:
                raise RegexBudgetError
            cp = ord(text[pos]) if pos < len(text) else -1
            following: list[tuple[int, int]] = []
            next_seen: set[int] = set()
            for pc, start in current:
                op, predicate, _ = prog[pc]
                if op == _MATCH:
                    matched = (start, pos)
                    if first:
                        return matched
                    break  # lower-priority threads lose to this match
                if cp >= 0 and predicate(cp):  # type: ignore[operator]
                    self._add(following, next_seen, pc + 1, start, text, pos + 1)
            if pos >= len(text):
                return matched
            pos += 1
            if matched is None:
                self._add(following, next_seen, 0, pos, text, pos)
            if not following and matched is not None:
                return matched
            current = following
