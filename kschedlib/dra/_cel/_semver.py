"""Semantic versions as Kubernetes' CEL ``semver()`` and version attributes read them (blang/semver v4 rules)."""

from __future__ import annotations

import functools
from typing import Final, final

__all__ = ["Semver", "SemverParseError", "parse_semver"]

_DIGITS: Final = frozenset("0123456789")
_ALPHANUM: Final = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
_UINT64_MAX: Final = 2**64 - 1


class SemverParseError(ValueError):
    """A version string is not semantic; the message is blang/semver's."""


@final
class Semver:
    """A parsed ``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]``; ordering follows semver.org precedence.

    Equality and ordering ignore build metadata, as the Kubernetes CEL type does.
    """

    __slots__ = ("_key", "build", "major", "minor", "patch", "pre")

    def __init__(
        self, major: int, minor: int, patch: int, pre: tuple[int | str, ...] = (), build: tuple[str, ...] = ()
    ) -> None:
        self.major = major
        self.minor = minor
        self.patch = patch
        self.pre = pre
        self.build = build
        # A release sorts after its pre-releases; numeric identifiers sort before alphanumeric ones.
        ids = tuple((0, i, "") if isinstance(i, int) else (1, 0, i) for i in pre)
        self._key = (major, minor, patch, 1 if not pre else 0, ids)

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 as ``self`` is lower, equal or higher in precedence."""
        return (self._key > other._key) - (self._key < other._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


def _number(text: str, what: str) -> int:
    if any(c not in _DIGITS for c in text):
        raise SemverParseError(f"Invalid character(s) found in {what} number {_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise SemverParseError(f"{what.capitalize()} number must not contain leading zeroes {_quote(text)}")
    return _parse_uint(text)


def _parse_uint(text: str) -> int:
    if not text:
        raise SemverParseError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(text) if len(text.lstrip("0")) <= 20 else _UINT64_MAX + 1  # Python refuses 4,300+ digits
    if value > _UINT64_MAX:
        raise SemverParseError(f"strconv.ParseUint: parsing {_quote(text)}: value out of range")
    return value


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _prerelease(text: str) -> int | str:
    if not text:
        raise SemverParseError("Prerelease is empty")
    if all(c in _DIGITS for c in text):
        if len(text) > 1 and text[0] == "0":
            raise SemverParseError(f"Numeric PreRelease version must not contain leading zeroes {_quote(text)}")
        return _parse_uint(text)
    if all(c in _ALPHANUM for c in text):
        return text
    raise SemverParseError(f"Invalid character(s) found in prerelease {_quote(text)}")


@functools.lru_cache(maxsize=1024)
def parse_semver(text: str, normalize: bool = False) -> Semver:
    """Parse strictly, or with ``normalize`` (drop a ``v`` prefix, leading zeros; fill ``1.2`` to ``1.2.0``)."""
    if normalize:
        text = _normalized(text)
    if not text:
        raise SemverParseError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverParseError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    rest = parts[2]
    build: tuple[str, ...] = ()
    if "+" in rest:
        rest, meta = rest.split("+", 1)
        build = tuple(meta.split("."))
    pre_ids: list[str] = []
    if "-" in rest:
        rest, pre_text = rest.split("-", 1)
        pre_ids = pre_text.split(".")
    patch = _number(rest, "patch")
    pre = tuple(_prerelease(p) for p in pre_ids)
    for item in build:
        if not item:
            raise SemverParseError("Build meta data is empty")
        if any(c not in _ALPHANUM for c in item):
            raise SemverParseError(f"Invalid character(s) found in build meta data {_quote(item)}")
    return Semver(major, minor, patch, pre, build)


def _normalized(text: str) -> str:
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _DIGITS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in "+-" for c in parts[-1]):
            raise SemverParseError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)
