"""The functions a device selector may call: CEL's standard library, cel-go's string extension, and
(from :mod:`._kubernetes`) the Kubernetes libraries, in one table by function name."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence, Sized
from decimal import Decimal
from typing import Final

from kschedlib.dra._cel._cost import MAX_BUILT
from kschedlib.dra._cel._kubernetes import KUBERNETES_FUNCTIONS, list_index_of, list_last_index_of
from kschedlib.dra._cel._nodes import Uint
from kschedlib.dra._cel._overloads import Overload
from kschedlib.dra._cel._overloads import global_overload as _g
from kschedlib.dra._cel._overloads import member_overload as _m
from kschedlib.dra._cel._regex import compiled as _regex
from kschedlib.dra._cel._values import COST_EXCEEDED, Fault, check_uint, format_value

__all__ = ["FUNCTIONS"]

_INT64_MAX: Final = 2**63 - 1

# -- standard library -------------------------------------------------------------------------------


def _size(value: Sized) -> int:
    return len(value)


def _matches(text: str, pattern: str) -> bool:
    return _regex(pattern).matches(text)


def _to_int(value: object) -> int:
    if type(value) is float:
        if math.isnan(value) or not -(2.0**63) < value < 2.0**63:
            raise Fault("integer overflow")
        return int(value)
    if type(value) is str:
        number = _parse_integer(value, signed=True)
        if number is None or not -(2**63) <= number <= _INT64_MAX:
            raise Fault("type conversion error from 'string' to 'int'")
        return number
    assert isinstance(value, int)
    if int(value) > _INT64_MAX:
        raise Fault("integer overflow")
    return int(value)


def _to_uint(value: object) -> Uint:
    if type(value) is float:
        if math.isnan(value) or not 0 <= value < 2.0**64:
            raise Fault("unsigned integer overflow")
        return Uint(int(value))
    if type(value) is str:
        number = _parse_integer(value, signed=False)
        if number is None or number >= 2**64:
            raise Fault("type conversion error from 'string' to 'uint'")
        return Uint(number)
    assert isinstance(value, int)
    return check_uint(int(value))


def _parse_integer(text: str, *, signed: bool) -> int | None:
    """Go's ``strconv.ParseInt``/``ParseUint`` in base 10 (a sign only when signed), or None.
    Digits past what 64 bits hold are not converted (Python refuses over 4,300 of them)."""
    if (_GO_INT if signed else _GO_UINT).fullmatch(text) is None:
        return None
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) > 20:
        return None
    return int(text, 10)


def _to_double(value: object) -> float:
    if type(value) is str:
        number = _parse_float(value)
        if number is None:
            raise Fault("type conversion error from 'string' to 'double'")
        return number
    assert isinstance(value, (int, float))
    return float(value)


def _parse_float(text: str) -> float | None:
    """Go's ``strconv.ParseFloat``: decimal or hexadecimal (``0x1p-2``) notation, ``inf``,
    ``infinity`` and ``nan`` in any case; None for anything else or a value out of range."""
    lowered = text.lower()
    if lowered.lstrip("+-") in ("inf", "infinity") and len(lowered) - len(lowered.lstrip("+-")) <= 1:
        return -math.inf if lowered.startswith("-") else math.inf
    if lowered == "nan":
        return math.nan
    try:
        if _GO_HEX_FLOAT.fullmatch(text):
            number = float.fromhex(text.replace("_", ""))
        elif _GO_FLOAT.fullmatch(text):
            number = float(text.replace("_", ""))
        else:
            return None
    except OverflowError:
        return None
    return None if math.isinf(number) else number


def _to_string(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _format_double(value)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise Fault("invalid UTF-8 in bytes, cannot convert to string") from None
    return str(value)


def _format_double(value: float) -> str:
    """Go's ``%g``: the shortest digits, in exponent form when the exponent is below -4 or at least 6."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    point = exponent + len(text)  # digits before the decimal point
    prefix = "-" if sign else ""
    if not -4 <= point - 1 < 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        power = point - 1
        return f"{prefix}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return prefix + text + "0" * (point - len(text))
    return f"{prefix}{text[:point]}.{text[point:]}"


_GO_INT: Final = re.compile(r"[+-]?[0-9]+")
_GO_UINT: Final = re.compile(r"[0-9]+")
_DIGITS: Final = r"[0-9](?:_?[0-9])*"
_GO_FLOAT: Final = re.compile(rf"[+-]?(?:{_DIGITS}\.?(?:{_DIGITS})?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?")
_GO_HEX_FLOAT: Final = re.compile(r"[+-]?0[xX](?:_?[0-9a-fA-F])*(?:\.(?:[0-9a-fA-F]_?)*)?[pP][+-]?[0-9]+")
_BOOL_STRINGS: Final = {"1": True, "t": True, "T": True, "true": True, "TRUE": True, "True": True,
                        "0": False, "f": False, "F": False, "false": False, "FALSE": False, "False": False}  # fmt: skip


def _to_bool(value: object) -> bool:
    if isinstance(value, bool):
        return value
    assert isinstance(value, str)
    if value not in _BOOL_STRINGS:
        raise Fault("type conversion error from 'string' to 'bool'")
    return _BOOL_STRINGS[value]


# -- strings extension (cel-go ext.Strings) ---------------------------------------------------------


def _char_at(text: str, index: int) -> str:
    if not 0 <= index <= len(text):
        raise Fault(f"index out of range: {index}")
    return text[index : index + 1]


def _index_of(text: str, sub: str, start: int = 0) -> int:
    # cel-go's order of checks: an empty needle is found at the offset, before any bounds check.
    if not sub:
        return start
    if not 0 <= start < len(text):
        raise Fault(f"index out of range: {start}")
    return text.find(sub, start)


def _last_index_of(text: str, sub: str, last: int | None = None) -> int:
    if last is None:
        if not sub:
            return len(text)
        last = len(text) - 1
    if not sub:
        return last
    if not 0 <= last < len(text):
        raise Fault(f"index out of range: {last}")
    return text.rfind(sub, 0, last + len(sub))


def _lower_ascii(text: str) -> str:
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in text)


def _upper_ascii(text: str) -> str:
    return "".join(c.upper() if "a" <= c <= "z" else c for c in text)


def _replace(text: str, old: str, new: str, limit: int = -1) -> str:
    count = text.count(old) if old else len(text) + 1
    if limit >= 0:
        count = min(count, limit)
    if len(text) + count * (len(new) - len(old)) > MAX_BUILT:
        raise Fault(COST_EXCEEDED)
    return text.replace(old, new, limit if limit >= 0 else -1)


def _split(text: str, sep: str, limit: int = -1) -> tuple[str, ...]:
    if limit == 0:
        return ()
    if sep == "":
        parts = list(text)
        if limit > 0 and len(parts) > limit:
            parts = [*parts[: limit - 1], "".join(parts[limit - 1 :])]
        return tuple(parts)
    return tuple(text.split(sep, limit - 1 if limit > 0 else -1))


def _substring(text: str, start: int, end: int | None = None) -> str:
    stop = len(text) if end is None else end
    if end is not None and start > end:
        raise Fault(f"invalid substring range. start: {start}, end: {end}")
    if not 0 <= start <= len(text):
        raise Fault(f"index out of range: {start}")
    if not start <= stop <= len(text):
        raise Fault(f"index out of range: {stop}")
    return text[start:stop]


_GO_SPACE: Final = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # noqa: E501


def _trim(text: str) -> str:
    return text.strip(_GO_SPACE)


def _join(items: Sequence[object], sep: str = "") -> str:
    for item in items:
        if type(item) is not str:
            raise Fault(f"join: invalid input: {format_value(item)}")
    return sep.join(str(i) for i in items)


FUNCTIONS: Final[dict[str, tuple[Overload, ...]]] = {
    "size": tuple(
        ov
        for t in ("string", "bytes", "list(A)", "map(K, V)")
        for ov in (_g([t], "int", _size), _m([t], "int", _size))
    ),
    "int": tuple(_g([t], "int", _to_int) for t in ("int", "uint", "double", "string")),
    "uint": tuple(_g([t], "uint", _to_uint) for t in ("int", "uint", "double", "string")),
    "double": tuple(_g([t], "double", _to_double) for t in ("int", "uint", "double", "string")),
    "string": tuple(_g([t], "string", _to_string) for t in ("int", "uint", "double", "string", "bool", "bytes")),
    "bool": (_g(["bool"], "bool", _to_bool), _g(["string"], "bool", _to_bool)),
    "bytes": (_g(["string"], "bytes", lambda s: s.encode()), _g(["bytes"], "bytes", lambda b: b)),
    "dyn": (_g(["dyn"], "dyn", lambda v: v),),
    "contains": (_m(["string", "string"], "bool", lambda s, t: t in s),),
    "startsWith": (_m(["string", "string"], "bool", lambda s, t: s.startswith(t)),),
    "endsWith": (_m(["string", "string"], "bool", lambda s, t: s.endswith(t)),),
    "matches": (_m(["string", "string"], "bool", _matches), _g(["string", "string"], "bool", _matches)),
    "charAt": (_m(["string", "int"], "string", _char_at),),
    "indexOf": (
        _m(["string", "string"], "int", _index_of),
        _m(["string", "string", "int"], "int", _index_of),
        _m(["list(A)", "A"], "int", list_index_of),
    ),
    "lastIndexOf": (
        _m(["string", "string"], "int", _last_index_of),
        _m(["string", "string", "int"], "int", _last_index_of),
        _m(["list(A)", "A"], "int", list_last_index_of),
    ),
    "lowerAscii": (_m(["string"], "string", _lower_ascii),),
    "upperAscii": (_m(["string"], "string", _upper_ascii),),
    "replace": (
        _m(["string", "string", "string"], "string", _replace),
        _m(["string", "string", "string", "int"], "string", _replace),
    ),
    "split": (
        _m(["string", "string"], "list(string)", _split),
        _m(["string", "string", "int"], "list(string)", _split),
    ),
    "substring": (_m(["string", "int"], "string", _substring), _m(["string", "int", "int"], "string", _substring)),
    "trim": (_m(["string"], "string", _trim),),
    "join": (_m(["list(string)"], "string", _join), _m(["list(string)", "string"], "string", _join)),
    "reverse": (),  # kube v1.36 has only the lists extension's list(A).reverse(), not modelled: no string overload
    **KUBERNETES_FUNCTIONS,
}
