"""Regular expressions of ``matches``, ``find`` and ``findAll`` with Go's (RE2's) semantics, compiled
once per pattern.

A pattern is read by :mod:`._regex_syntax` (Go's syntax and error texts) and then run by RE2
through ``google-re2`` (``pip install kschedlib[dra]``) when installed, else by the pure-Python
automaton of :mod:`._regex_vm`. Both take time linear in the text: no pattern can make a
selector hang, unlike a backtracking matcher (Python's ``re`` on ``^(a+)+$``). The automaton
refuses Unicode script classes (``\\p{Greek}``), which need RE2's tables, and gives up on a
search after a few million steps with the cost-limit error.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, Final

from kschedlib.dra._cel._regex_classes import RegexUnsupportedError
from kschedlib.dra._cel._regex_syntax import parse
from kschedlib.dra._cel._regex_tree import Node, RegexSyntaxError, children
from kschedlib.dra._cel._regex_vm import Program, RegexBudgetError, compile_program, nullable
from kschedlib.dra._cel._values import COST_EXCEEDED, Fault

__all__ = ["Regex", "compiled", "re2_module", "syntax_error"]


@functools.cache
def re2_module() -> Any:
    """The ``re2`` module of ``google-re2``, or None when it is not installed."""
    try:
        import re2  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return None
    return re2


class Regex:
    """One compiled pattern: :meth:`matches`, :meth:`find` and :meth:`find_all` as Go answers them.

    RE2 answers unless the pure-Python automaton must: without RE2; for ``\\B`` on non-ASCII text
    (RE2 also tests it between the bytes of one UTF-8 character, Go only between characters); and
    for the spans of patterns that repeat something able to match empty (``(a|)*``), where RE2's
    priorities differ from Go's.
    """

    __slots__ = (
        "_anchor", "_literal", "_low", "_program", "_python", "_re2", "_spans_by_program", "_unicode_by_program",
        "pattern",
    )  # fmt: skip

    def __init__(self, pattern: str, re2: Any, program: Program | None, tree: Node) -> None:
        self.pattern = pattern
        self._re2 = re2
        # google-re2's own Match on UTF-8 bytes: several times faster than its search() for a yes/no.
        self._low = getattr(re2, "_regexp", None)
        self._anchor = re2_module()._Anchor.UNANCHORED if self._low is not None else None
        self._program = program
        self._literal = _literal_test(tree)
        self._python = _python_test(tree)
        self._unicode_by_program = program is not None and _contains(tree, _is_not_word_boundary)
        self._spans_by_program = program is not None and _contains(tree, _is_nullable_loop)

    def _search(self, text: str, pos: int, *, spans: bool) -> tuple[int, int] | None:
        program = self._program
        if program is None or (
            self._re2 is not None
            and not (spans and self._spans_by_program)
            and not (self._unicode_by_program and not text.isascii())
        ):
            found = self._re2.search(text, pos)
            return None if found is None else found.span()
        try:
            return program.search(text, pos, first=not spans)
        except RegexBudgetError:
            raise Fault(COST_EXCEEDED) from None

    def matches(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text`` (cel-go's ``matches``)."""
        if self._literal is not None:
            return self._literal(text)
        if self._python is not None and len(text) <= _SHORT_TEXT:
            return self._python(text) is not None
        low = self._low
        if low is not None and (not self._unicode_by_program or text.isascii()):
            encoded = text.encode()
            return bool(low.Match(self._anchor, encoded, 0, len(encoded))[0][1] >= 0)
        return self._search(text, 0, spans=False) is not None

    def find(self, text: str) -> str:
        """The leftmost-first match, or "" (Go's ``FindString``)."""
        span = self._search(text, 0, spans=True)
        return "" if span is None else text[span[0] : span[1]]

    def find_all(self, text: str, limit: int) -> tuple[str, ...]:
        """Successive matches, at most ``limit`` (all if negative), as Go's ``FindAllString``:
        an empty match right after the previous match is skipped."""
        found: list[str] = []
        pos, previous_end = 0, -1
        while (limit < 0 or len(found) < limit) and pos <= len(text):
            span = self._search(text, pos, spans=True)
            if span is None:
                break
            start, end = span
            accept = not (start == end == previous_end)
            pos = end if end > pos else pos + 1
            previous_end = end
            if accept:
                found.append(text[start:end])
        return tuple(found)


def _literal_test(tree: Node) -> Callable[[str], bool] | None:
    """For ``abc``, ``^abc``, ``abc$`` and ``^abc$`` (plain characters): a string test instead."""
    parts = list(tree[1]) if tree[0] == "cat" else [tree]  # type: ignore[call-overload]
    start = bool(parts) and parts[0] == ("bot",)
    end = len(parts) > start and parts[-1] == ("eot",)
    middle = parts[int(start) : len(parts) - int(end)]
    if not all(p[0] == "lit" and not p[2] for p in middle):
        return None
    text = "".join(chr(p[1]) for p in middle)  # type: ignore[arg-type]
    if start and end:
        return text.__eq__
    if start:
        return lambda s: s.startswith(text)
    if end:
        return lambda s: s.endswith(text)
    return lambda s: text in s


_SHORT_TEXT: Final = 256
"""Texts this short are searched by Python's ``re`` when the pattern cannot make it backtrack."""


def _python_test(tree: Node) -> Callable[[str], object] | None:
    """Python's ``re`` search for a pattern it runs as Go does and without backtracking: a sequence
    of plain characters, classes of ranges and ``.``, optionally repeated, each repeated one
    disjoint from whatever can follow it, between an optional ``^`` and ``$``. Else None."""
    parts = list(tree[1]) if tree[0] == "cat" else [tree]  # type: ignore[call-overload]
    start = bool(parts) and parts[0] == ("bot",)
    end = len(parts) > start and parts[-1] == ("eot",)
    middle = parts[int(start) : len(parts) - int(end)]
    sets: list[tuple[tuple[int, int], ...]] = []
    text = "\\A" if start else ""
    for part in middle:
        single = part[1] if part[0] in ("star", "plus", "quest", "repeat") else part
        ranges = _ranges(single)  # type: ignore[arg-type]
        if ranges is None:
            return None
        sets.append(ranges)
        text += _re_class(ranges) + _re_repeat(part)
    for i, part in enumerate(middle):
        if part[0] in ("star", "plus", "quest", "repeat") and not _disjoint(sets[i], _first(middle, sets, i + 1)):
            return None
    return re.compile(text + ("\\Z" if end else "")).search


def _ranges(node: Node) -> tuple[tuple[int, int], ...] | None:
    """The characters one plain character, ``.`` or class of ranges matches; None for others."""
    kind = node[0]
    if kind == "lit" and not node[2]:
        cp = node[1]
        assert isinstance(cp, int)
        return ((cp, cp),)
    if kind == "anynl":
        return ((0, 9), (11, 0x10FFFF))
    if kind != "class" or node[3] or any(item[0] != "range" for item in node[1]):  # type: ignore[attr-defined]
        return None
    points: list[tuple[int, int]] = []
    for _, ranges, negated in node[1]:  # type: ignore[attr-defined]
        points.extend(_complement(ranges) if negated else ranges)
    merged = _merge(points)
    return _complement(merged) if node[2] else merged


def _merge(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    out, low = [], 0
    for lo, hi in _merge(list(ranges)):
        if lo > low:
            out.append((low, lo - 1))
        low = hi + 1
    if low <= 0x10FFFF:
        out.append((low, 0x10FFFF))
    return tuple(out)


def _disjoint(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
    return all(hi1 < lo2 or hi2 < lo1 for lo1, hi1 in a for lo2, hi2 in b)


def _first(parts: list[Node], sets: list[tuple[tuple[int, int], ...]], i: int) -> tuple[tuple[int, int], ...]:
    """What the parts from ``i`` on can start with (up to the first that cannot be skipped)."""
    out: list[tuple[int, int]] = []
    for part, chars in zip(parts[i:], sets[i:], strict=True):
        out.extend(chars)
        if not (part[0] in ("star", "quest") or (part[0] == "repeat" and part[2] == 0)):
            break
    return tuple(out)


def _re_class(ranges: tuple[tuple[int, int], ...]) -> str:
    def char(cp: int) -> str:
        return f"\\U{cp:08x}"

    return "[" + "".join(char(lo) if lo == hi else f"{char(lo)}-{char(hi)}" for lo, hi in ranges) + "]"


def _re_repeat(part: Node) -> str:
    kind = part[0]
    if kind in ("star", "plus", "quest"):
        return {"star": "*", "plus": "+", "quest": "?"}[str(kind)] + ("" if part[2] else "?")
    if kind == "repeat":
        lo, hi, greedy = part[2], part[3], part[4]
        return f"{{{lo},{'' if hi == -1 else hi}}}" + ("" if greedy else "?")
    return ""


def _is_not_word_boundary(node: Node) -> bool:
    return node[0] == "nwb"


def _is_nullable_loop(node: Node) -> bool:
    return node[0] in ("star", "plus", "repeat") and nullable(node[1])  # type: ignore[arg-type]


def _contains(tree: Node, test: Callable[[Node], bool]) -> bool:
    stack = [tree]
    while stack:
        node = stack.pop()
        if test(node):
            return True
        stack.extend(children(node))
    return False


_RE2_OPTIONS: Final[dict[str, object]] = {"log_errors": False, "never_capture": True}


@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> Regex | str:
    try:
        tree, re2_text = parse(pattern)
    except RegexSyntaxError as exc:
        return exc.message
    try:
        program: Program | None = compile_program(tree)
    except RegexUnsupportedError as exc:
        program, unsupported = None, str(exc)
    re2 = re2_module()
    if re2 is not None and re2_text is not None:
        options = re2.Options()
        for name, value in _RE2_OPTIONS.items():
            setattr(options, name, value)
        try:
            return Regex(pattern, re2.compile(re2_text, options), program, tree)
        except re2.error:
            pass  # a pattern Go accepts and RE2 does not (sizes): the automaton runs it
    if program is None:
        return f"regular expression `{pattern}` uses {unsupported} (install kschedlib[dra] for RE2)"
    return Regex(pattern, None, program, tree)


def syntax_error(pattern: str) -> str | None:
    """Go's error for an invalid pattern, or None (whether or not this engine can run it)."""
    try:
        parse(pattern)
    except RegexSyntaxError as exc:
        return exc.message
    return None


def compiled(pattern: str) -> Regex:
    """The compiled pattern; raises a :class:`Fault` with Go's parse error for an invalid one."""
    result = _compile(pattern)
    if isinstance(result, str):
        raise Fault(result)
    return result
