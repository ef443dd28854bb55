"""CEL source text to tokens, with cel-go's (ANTLR's) error texts; string and bytes literals with
their escapes are decoded here."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["SyntaxFault", "Token", "lex"]

_TOKEN: Final = re.compile(
    r"""
    (?P<space>[ \t\n\r\f]+|//[^\n]*)
  | (?P<double>(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<int>[0-9]+[uU]?)
  | (?P<string>[rR]?[bB]?[rR]?(?:\"\"\"|'''|"|'))
  | (?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|[<>!+\-*/%?:.,\[\](){}])
    """,
    re.VERBOSE,
)
_ESCAPES: Final = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?",
}  # fmt: skip
class SyntaxFault(Exception):
    """A parse error at a source offset; turned into cel-go's ``Syntax error: ...`` text by the caller.

    An offset of -1 is cel-go's "no location" (limits), reported as ``<input>:-1:0`` without a
    ``Syntax error:`` prefix.
    """

    def __init__(self, message: str, offset: int, *, syntax: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.syntax = syntax
        """A grammar error (``Syntax error: ...``), not a bad literal (``invalid int literal``)."""


class Token:
    __slots__ = ("kind", "offset", "text", "value")

    def __init__(self, kind: str, text: str, offset: int, value: object = None) -> None:
        self.kind = kind
        self.text = text
        self.offset = offset
        self.value = value


def lex(source: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(source):
        match = _TOKEN.match(source, pos)
        if match is None:
            raise SyntaxFault(f"token recognition error at: '{source[pos]}'", pos)
        kind = match.lastgroup or ""
        if kind == "string":
            token, pos = _lex_string(source, pos, match.group())
            tokens.append(token)
            continue
        text = match.group()
        if (kind == "ident" and text in ("true", "false", "null", "in")) or kind == "op":
            kind = text
        if kind != "space":
            tokens.append(Token(kind, text, pos))
        pos = match.end()
    tokens.append(Token("<EOF>", "<EOF>", len(source)))
    return tokens


def _lex_string(source: str, start: int, prefix: str) -> tuple[Token, int]:
    """Read one string or bytes literal starting at ``start``; ``prefix`` ends with its opening quote."""
    flags = prefix.rstrip("'\"").lower()
    quote = prefix[len(flags) :]
    raw, is_bytes = "r" in flags, "b" in flags
    pos = start + len(prefix)
    out: list[str] = []
    octets = bytearray()  # a bytes literal: escapes give single octets, other characters their UTF-8
    while True:
        if pos >= len(source) or (len(quote) == 1 and source[pos] == "\n"):
            raise SyntaxFault(f"token recognition error at: '{source[start:pos]}'", start)
        if source.startswith(quote, pos):
            pos += len(quote)
            break
        char = source[pos]
        if char == "\\" and not raw:
            text, pos = _escape(source, pos)
            out.append(text)
            octets.extend(text.encode("latin-1") if ord(text) < 256 else text.encode())
            continue
        out.append(char)
        octets.extend(char.encode())
        pos += 1
    value: object = bytes(octets) if is_bytes else "".join(out)
    return Token("bytes" if is_bytes else "string", source[start:pos], start, value), pos


def _escape(source: str, pos: int) -> tuple[str, int]:
    nxt = source[pos + 1 : pos + 2]
    if nxt in _ESCAPES:
        return _ESCAPES[nxt], pos + 2
    widths = {"x": 2, "X": 2, "u": 4, "U": 8}
    if nxt in widths:
        digits = source[pos + 2 : pos + 2 + widths[nxt]]
        if len(digits) == widths[nxt] and all(c in "0123456789abcdefABCDEF" for c in digits):
            point = int(digits, 16)
            if 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
                raise SyntaxFault(f"invalid unicode code point: {source[pos:pos + 2 + widths[nxt]]}", pos)
            return chr(point), pos + 2 + widths[nxt]
    octal = source[pos + 1 : pos + 4]
    if len(octal) == 3 and all(c in "01234567" for c in octal) and octal[0] in "0123":
        return chr(int(octal, 8)), pos + 4
    raise SyntaxFault(f"token recognition error at: '{source[pos:pos + 2]}'", pos)
