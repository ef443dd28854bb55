"""Regular expressions as Go's ``regexp`` reads them (RE2 syntax), with Go's error texts.

cel-go's ``matches`` and Kubernetes' ``find``/``findAll`` compile patterns with Go's ``regexp``,
so a pattern is accepted, refused and worded as Go does: no backreferences or lookaround,
``\\pL``, ``\\z``, ``(?U)``, ``\\Q...\\E`` and ``[[:alpha:]]`` accepted, ``^``/``$`` only at the
ends of the text unless ``(?m)``, ``\\w``/``\\d``/``\\b`` ASCII only.

:func:`parse` turns a pattern into a small tree of tuples (see ``Node``) that the pure-Python
automaton of :mod:`._regex_vm` runs, and gives the pattern text to hand to RE2 (Unicode class names
spelled as RE2 spells them).
"""

from __future__ import annotations

from typing import Final

from kschedlib.dra._cel._regex_classes import (
    PERL_GROUPS,
    POSIX_GROUPS,
    ClassItem,
    unicode_group,
)
from kschedlib.dra._cel._regex_tree import (
    Node,
    RegexSyntaxError,
    check_limits,
    fail,
    repeat_is_valid,
)

__all__ = ["Node", "RegexSyntaxError", "parse"]

_FOLD: Final = 1
_DOT_NL: Final = 2
_ONE_LINE: Final = 4
_NON_GREEDY: Final = 8
_PERL: Final = _ONE_LINE

_MAX_REPEAT: Final = 1000
_MAX_RUNE: Final = 0x10FFFF

_LEFT: Final = "("
_BAR: Final = "|"


class _Pseudo:
    """A ``(`` or ``|`` marker on the parse stack."""

    __slots__ = ("capture", "flags", "kind")

    def __init__(self, kind: str, flags: int, capture: bool = False) -> None:
        self.kind = kind
        self.flags = flags
        self.capture = capture


_Item = Node | _Pseudo


def parse(pattern: str) -> tuple[Node, str | None]:
    """The tree of ``pattern`` and the pattern text for RE2 (None where RE2 lacks a class Go has);
    raises :class:`RegexSyntaxError`."""
    parser = _Parser(pattern)
    tree = parser.run()
    check_limits(tree, pattern)
    return tree, parser.re2_text()


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.whole = pattern
        self.flags = _PERL
        self.stack: list[_Item] = []
        self.renamed: list[tuple[int, int, str]] = []
        """Spans of ``\\p`` names to respell for RE2: (start, end, replacement)."""
        self.re2_ok = True

    def re2_text(self) -> str | None:
        if not self.re2_ok:
            return None
        text = self.whole
        for start, end, replacement in reversed(self.renamed):
            text = text[:start] + replacement + text[end:]
        return text

    # -- the main loop, after Go's regexp/syntax.Parse
    def run(self) -> Node:
        s = self.whole
        pos = 0
        last_repeat = -1
        while pos < len(s):
            repeat = -1
            c = s[pos]
            if c == "(":
                if s.startswith("(?", pos):
                    pos = self.perl_flags(pos)
                else:
                    self.stack.append(_Pseudo(_LEFT, self.flags, capture=True))
                    pos += 1
            elif c == "|":
                self.vertical_bar()
                pos += 1
            elif c == ")":
                self.right_paren()
                pos += 1
            elif c == "^":
                self.push(("bot",) if self.flags & _ONE_LINE else ("bol",))
                pos += 1
            elif c == "$":
                self.push(("eot",) if self.flags & _ONE_LINE else ("eol",))
                pos += 1
            elif c == ".":
                self.push(("any",) if self.flags & _DOT_NL else ("anynl",))
                pos += 1
            elif c == "[":
                pos = self.char_class(pos)
            elif c in "*+?":
                op = {"*": "star", "+": "plus", "?": "quest"}[c]
                repeat = pos
                pos = self.repeat(op, 0, 0, pos, pos + 1, last_repeat)
            elif c == "{":
                bounds = _parse_repeat(s, pos)
                if bounds is None:
                    self.literal("{")
                    pos += 1
                else:
                    lo, hi, after = bounds
                    if lo < 0 or lo > _MAX_REPEAT or hi > _MAX_REPEAT or (hi >= 0 and lo > hi):
                        fail("invalid repeat count", s[pos:after])
                    repeat = pos
                    pos = self.repeat("repeat", lo, hi, pos, after, last_repeat)
            elif c == "\\":
                pos = self.backslash(pos)
            else:
                self.literal(c)
                pos += 1
            last_repeat = repeat
        self.concat()
        if self.swap_vertical_bar():
            self.stack.pop()
        self.alternate()
        if len(self.stack) != 1:
            fail("missing closing )", s)
        top = self.stack[0]
        assert not isinstance(top, _Pseudo)
        return top

    # -- stack operations
    def push(self, node: Node) -> None:
        self.stack.append(node)

    def literal(self, c: str) -> None:
        self.push(("lit", ord(c), bool(self.flags & _FOLD)))

    def repeat(self, op: str, lo: int, hi: int, before: int, after: int, last_repeat: int) -> int:
        flags = self.flags
        s = self.whole
        if after < len(s) and s[after] == "?":
            after += 1
            flags ^= _NON_GREEDY
        if last_repeat >= 0:
            fail("invalid nested repetition operator", s[last_repeat:after])
        if not self.stack or isinstance(self.stack[-1], _Pseudo):
            fail("missing argument to repetition operator", s[before:after])
        sub = self.stack[-1]
        greedy = not flags & _NON_GREEDY
        node: Node = ("repeat", sub, lo, hi, greedy) if op == "repeat" else (op, sub, greedy)
        self.stack[-1] = node
        if op == "repeat" and (lo >= 2 or hi >= 2) and not repeat_is_valid(node, _MAX_REPEAT):
            fail("invalid repeat count", s[before:after])
        return after

    def concat(self) -> None:
        i = len(self.stack)
        while i > 0 and not isinstance(self.stack[i - 1], _Pseudo):
            i -= 1
        subs = self.stack[i:]
        del self.stack[i:]
        if not subs:
            self.push(("empty",))
        elif len(subs) == 1:
            self.push(subs[0])  # type: ignore[arg-type]
        else:
            self.push(("cat", tuple(subs)))

    def alternate(self) -> None:
        i = len(self.stack)
        while i > 0 and not isinstance(self.stack[i - 1], _Pseudo):
            i -= 1
        subs = self.stack[i:]
        del self.stack[i:]
        if len(subs) == 1:
            self.push(subs[0])  # type: ignore[arg-type]
        else:
            flat: list[Node] = []
            for sub in subs:
                assert not isinstance(sub, _Pseudo)
                flat.extend(sub[1] if sub[0] == "alt" else (sub,))  # type: ignore[arg-type]
            self.push(("alt", tuple(flat)) if flat else ("nomatch",))

    def vertical_bar(self) -> None:
        self.concat()
        if not self.swap_vertical_bar():
            self.stack.append(_Pseudo(_BAR, self.flags))

    def swap_vertical_bar(self) -> bool:
        """Keep the alternatives parsed so far below the ``|`` marker (Go's swapVerticalBar)."""
        stack = self.stack
        if len(stack) >= 2 and isinstance(stack[-2], _Pseudo) and stack[-2].kind == _BAR:
            stack[-2], stack[-1] = stack[-1], stack[-2]
            return True
        return False

    def right_paren(self) -> None:
        self.concat()
        if self.swap_vertical_bar():
            self.stack.pop()
        self.alternate()
        if len(self.stack) < 2:
            fail("unexpected )", self.whole)
        inner = self.stack.pop()
        marker = self.stack.pop()
        if not isinstance(marker, _Pseudo) or marker.kind != _LEFT:
            fail("unexpected )", self.whole)
        assert not isinstance(inner, _Pseudo)
        self.flags = marker.flags
        self.push(("cap", inner) if marker.capture else inner)

    # -- (?...) groups and flags
    def perl_flags(self, start: int) -> int:
        s = self.whole
        named = s.startswith("(?P<", start) and len(s) - start > 4
        if named or (s.startswith("(?<", start) and len(s) - start > 3):
            end = s.find(">", start)
            if end < 0:
                fail("invalid named capture", s[start:])
            name = s[start + (4 if named else 3) : end]
            if not name or any(not (ch == "_" or (ch.isascii() and ch.isalnum())) for ch in name):
                fail("invalid named capture", s[start : end + 1])
            self.stack.append(_Pseudo(_LEFT, self.flags, capture=True))
            return end + 1
        pos = start + 2
        flags = self.flags
        negate = False
        saw_flag = False
        while pos < len(s):
            c = s[pos]
            pos += 1
            if c in "imsU":
                bit = {"i": _FOLD, "m": _ONE_LINE, "s": _DOT_NL, "U": _NON_GREEDY}[c]
                # (?m) clears one-line mode; the others set their bit (or the reverse after '-').
                flags = flags | bit if (c == "m") == negate else flags & ~bit
                saw_flag = True
            elif c == "-" and not negate:
                negate = True
                saw_flag = False
            elif c in ":)" and (saw_flag or not negate):
                if c == ":":
                    self.stack.append(_Pseudo(_LEFT, self.flags))
                self.flags = flags
                return pos
            else:
                break
        raise RegexSyntaxError("invalid or unsupported Perl syntax", s[start:pos])

    # -- escapes
    def backslash(self, pos: int) -> int:
        s = self.whole
        nxt = s[pos + 1 : pos + 2]
        simple = {"A": ("bot",), "z": ("eot",), "b": ("wb",), "B": ("nwb",)}
        if nxt in simple:
            self.push(simple[nxt])
            return pos + 2
        if nxt == "C":
            fail("invalid escape sequence", s[pos : pos + 2])
        if nxt == "Q":
            end = s.find("\\E", pos + 2)
            text = s[pos + 2 :] if end < 0 else s[pos + 2 : end]
            for ch in text:
                self.literal(ch)
            return len(s) if end < 0 else end + 2
        fold = bool(self.flags & _FOLD)
        if nxt in ("p", "P"):
            item, after = self.unicode_class(pos)
            self.push(("class", (item,), False, fold))
            return after
        group = PERL_GROUPS.get(s[pos : pos + 2])
        if group is not None:
            self.push(("class", (group,), False, fold))
            return pos + 2
        c, after = _escape(s, pos)
        self.literal(c)
        return after

    def unicode_class(self, pos: int) -> tuple[ClassItem, int]:
        """``\\pL``, ``\\p{Greek}``, ``\\P{^Lu}``: the class item and where the escape ends."""
        s = self.whole
        negated = s[pos + 1] == "P"
        if pos + 2 >= len(s):
            fail("invalid character class range", s[pos:])
        if s[pos + 2] != "{":
            seq, name, end = s[pos : pos + 3], s[pos + 2], pos + 3
        else:
            close = s.find("}", pos)
            if close < 0:
                fail("invalid character class range", s[pos:])
            seq, name, end = s[pos : close + 1], s[pos + 3 : close], close + 1
        braced = s[pos + 2] == "{"
        if name.startswith("^"):
            negated, name = not negated, name[1:]
        found = unicode_group(name, negated)
        if found is None:
            fail("invalid character class range", seq)
        item, re2_name = found
        if re2_name is None:
            self.re2_ok = False
        elif re2_name != name:
            self.renamed.append((end - 1 - len(name), end - 1, re2_name) if braced else (pos + 2, end, re2_name))
        return item, end

    # -- [...] classes
    def char_class(self, start: int) -> int:
        s = self.whole
        pos = start + 1
        negated = pos < len(s) and s[pos] == "^"
        if negated:
            pos += 1
        fold = bool(self.flags & _FOLD)
        items: list[ClassItem] = []
        first = True
        while pos >= len(s) or s[pos] != "]" or first:
            first = False
            if s.startswith("[:", pos):
                close = s.find(":]", pos + 2)
                if close >= 0:
                    name = s[pos : close + 2]
                    group = POSIX_GROUPS.get(name)
                    if group is None:
                        fail("invalid character class range", name)
                    items.append(group)
                    pos = close + 2
                    continue
            if s.startswith(("\\p", "\\P"), pos):
                item, pos = self.unicode_class(pos)
                items.append(item)
                continue
            group = PERL_GROUPS.get(s[pos : pos + 2])
            if group is not None:
                items.append(group)
                pos += 2
                continue
            range_start = pos
            lo, pos = _class_char(s, pos, start)
            hi = lo
            if pos + 1 < len(s) and s[pos] == "-" and s[pos + 1] != "]":
                hi, pos = _class_char(s, pos + 1, start)
                if ord(hi) < ord(lo):
                    fail("invalid character class range", s[range_start:pos])
            items.append(("range", ((ord(lo), ord(hi)),), False))
        self.push(("class", tuple(items), negated, fold))
        return pos + 1


def _class_char(s: str, pos: int, class_start: int) -> tuple[str, int]:
    if pos >= len(s):
        fail("missing closing ]", s[class_start:])
    if s[pos] == "\\":
        return _escape(s, pos)
    return s[pos], pos + 1


def _escape(s: str, pos: int) -> tuple[str, int]:
    """One escaped character at ``s[pos] == '\\'``: the character and where the escape ends."""
    if pos + 1 >= len(s):
        fail("trailing backslash at end of expression", "")
    c = s[pos + 1]
    t = pos + 2
    if c.isascii() and not c.isalnum():
        return c, t
    if (c in "1234567" and t < len(s) and s[t] in "01234567") or c == "0":
        value = int(c)
        for _ in range(2):
            if t < len(s) and s[t] in "01234567":
                value = value * 8 + int(s[t])
                t += 1
            else:
                break
        return chr(value), t
    if c == "x" and t < len(s):
        if s[t] == "{":
            close = t + 1
            value = 0
            while close < len(s) and s[close] != "}":
                digit = _unhex(s[close])
                value = value * 16 + digit if digit >= 0 else _MAX_RUNE + 1
                if value > _MAX_RUNE:
                    break
                close += 1
            if close < len(s) and s[close] == "}" and close > t + 1:
                return chr(value), close + 1
            t = min(close + 1, len(s))
        elif t + 1 < len(s) and _unhex(s[t]) >= 0 and _unhex(s[t + 1]) >= 0:
            return chr(_unhex(s[t]) * 16 + _unhex(s[t + 1])), t + 2
        else:
            t = min(t + 2, len(s))
    controls = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
    if c in controls:
        return controls[c], t
    raise RegexSyntaxError("invalid escape sequence", s[pos:t])


def _unhex(c: str) -> int:
    return int(c, 16) if c in "0123456789abcdefABCDEF" else -1


def _parse_repeat(s: str, pos: int) -> tuple[int, int, int] | None:
    """``{n}``, ``{n,}`` or ``{n,m}`` at ``pos``: (min, max or -1, end); None if not a repeat.

    Numbers of more than 8 digits give -1 (too big), as in Go.
    """
    lo, t = _parse_int(s, pos + 1)
    if t < 0 or t >= len(s):
        return None
    if s[t] != ",":
        hi = lo
    else:
        t += 1
        if t >= len(s):
            return None
        if s[t] == "}":
            hi = -1
        else:
            hi, t = _parse_int(s, t)
            if t < 0:
                return None
            if hi < 0:
                lo = -1
    if t >= len(s) or s[t] != "}":
        return None
    return lo, hi, t + 1


def _parse_int(s: str, pos: int) -> tuple[int, int]:
    end = pos
    while end < len(s) and "0" <= s[end] <= "9":
        end += 1
    digits = s[pos:end]
    if not digits or (len(digits) >= 2 and digits[0] == "0"):
        return 0, -1
    return (int(digits) if len(digits) <= 8 else -1), end


