"""Kubernetes ``resource.Quantity``: the exact amounts in ``requests``, ``limits`` and ``allocatable``.

Kubernetes never represents a quantity as a float, so neither do we: a :class:`Quantity` holds an
exact :class:`~fractions.Fraction`. Parsing reproduces apimachinery v0.30 (the version vendored by
kube-scheduler v1.30) down to its quirks, because a simulator that reads ``"0.1m"`` or ``"1E"``
differently from the API server would place pods where Kubernetes would not:

* the value is rounded **up in magnitude** to a multiple of 10^-9 ("if you ask for some, you get
  some"), so ``"1e-10"`` is ``1n``;
* ``BinarySI`` values are capped at 2^63-1, decimal ones are not;
* the suffix chosen by the author (``Mi`` vs ``M`` vs ``e6``) is remembered as :attr:`Quantity.format`
  and only affects :meth:`Quantity.__str__`, never the value;
* a few odd strings that Kubernetes' scanner lets through are accepted too (``"-"``, ``"."``,
  ``"m"`` and ``"Ki"`` all mean zero), while ``"Pi"`` and ``".e-10"`` fail the numeric check.

Two deliberate departures, both for inputs no real cluster contains: a value of 10^1000 or more
(or a ``BinarySI`` quantity with over 1000 significant digits) is refused instead of exhausting
memory, and a ``DecimalSI`` value of 10^21 or more prints as ``"1000E"`` where apimachinery would
drop the suffix and print ``"1"``.
"""

from __future__ import annotations

import functools
import math
import re
import typing
from fractions import Fraction
from typing import Final, Literal

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import QuantityError

__all__ = ["Quantity", "QuantityFormat", "parse_quantity"]

QuantityFormat = Literal["DecimalSI", "BinarySI", "DecimalExponent"]
"""How a quantity is written back: ``1500m``/``1k`` (DecimalSI), ``1536Mi`` (BinarySI), ``1e3``."""

_FORMATS: Final = frozenset({"DecimalSI", "BinarySI", "DecimalExponent"})
_NANO: Final = 10**9
_BINARY_CAP: Final = 2**63 - 1
_MAX_DIGITS: Final = 1000
_INT32: Final = 2**32

_FORMAT_ERROR: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_NUMERIC_ERROR: Final = "unable to parse numeric part of quantity"
_SUFFIX_ERROR: Final = "unable to parse quantity's suffix"
_SIZE_ERROR: Final = (
    f"quantities of 10^{_MAX_DIGITS} or more, or BinarySI ones with over {_MAX_DIGITS} significant "
    "digits, are not supported"
)
_MAX_INT: Final = 10**_MAX_DIGITS

# Kubernetes scans: sign, digits, optionally "." and digits, then suffix letters, one sign, digits.
# Every piece may be empty; the scanner is greedy and this pattern matches exactly what it accepts.
_SCAN: Final = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
_EXPONENT: Final = re.compile(r"[eE]([+-]?)([0-9]+)")
# What Go's strings.TrimSpace removes (unicode.IsSpace), which differs from str.strip()'s set.
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

# suffix -> (base, exponent, format)
_SUFFIXES: Final[dict[str, tuple[int, int, QuantityFormat]]] = {
    "": (10, 0, "DecimalSI"),
    "n": (10, -9, "DecimalSI"),
    "u": (10, -6, "DecimalSI"),
    "m": (10, -3, "DecimalSI"),
    "k": (10, 3, "DecimalSI"),
    "M": (10, 6, "DecimalSI"),
    "G": (10, 9, "DecimalSI"),
    "T": (10, 12, "DecimalSI"),
    "P": (10, 15, "DecimalSI"),
    "E": (10, 18, "DecimalSI"),
    "Ki": (2, 10, "BinarySI"),
    "Mi": (2, 20, "BinarySI"),
    "Gi": (2, 30, "BinarySI"),
    "Ti": (2, 40, "BinarySI"),
    "Pi": (2, 50, "BinarySI"),
    "Ei": (2, 60, "BinarySI"),
}
_DECIMAL_SUFFIX: Final = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


class _Malformed(Exception):
    """Internal: carries a Kubernetes error message out of the cached parser (inputs vary, text not)."""


def _normalize(amount: Fraction, format: QuantityFormat) -> Fraction:
    """Round up in magnitude to a multiple of 10^-9 and cap BinarySI, as ParseQuantity does."""
    if _NANO % amount.denominator:
        nanos = -(-abs(amount.numerator) * _NANO // amount.denominator)
        amount = Fraction(nanos if amount > 0 else -nanos, _NANO)
    if format == "BinarySI" and abs(amount) > _BINARY_CAP:
        amount = Fraction(_BINARY_CAP if amount > 0 else -_BINARY_CAP)
    return amount


@typing.final
@attrs.frozen(slots=True, eq=False, repr=False)
class Quantity(FieldsRepr):
    """An exact resource amount such as ``100m`` CPU or ``1Gi`` of memory.

    Equality, hashing and ordering look at :attr:`amount` only, as Kubernetes' ``Cmp`` does:
    ``parse_quantity("1Gi") == parse_quantity("1073741824")``. Instances are immutable and shared
    freely (the parser hands out cached instances).
    """

    amount: Fraction = attrs.field(validator=attrs.validators.instance_of(Fraction))
    """The exact value; non-zero values are multiples of 10^-9, BinarySI ones at most 2^63-1."""
    format: QuantityFormat = attrs.field(validator=attrs.validators.in_(_FORMATS))
    """The notation the value came in, reused by :meth:`__str__`; never affects the value."""
    _value: int = attrs.field(init=False, repr=False)
    _milli: int = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # Enforce the invariants on every construction path, then precompute the two integer views
        # the scheduler asks for per container per cycle.
        amount = _normalize(self.amount, self.format)
        object.__setattr__(self, "amount", amount)
        object.__setattr__(self, "_value", math.ceil(amount))
        object.__setattr__(self, "_milli", math.ceil(amount * 1000))

    @classmethod
    def from_int(cls, n: int, format: QuantityFormat = "DecimalSI") -> Quantity:
        """``n`` whole units (bytes, pods, devices), like Kubernetes' ``NewQuantity`` (BinarySI is capped)."""
        return cls(Fraction(n), format)

    @classmethod
    def from_milli(cls, m: int, format: QuantityFormat = "DecimalSI") -> Quantity:
        """``m`` thousandths (millicores), like Kubernetes' ``NewMilliQuantity``."""
        return cls(Fraction(m, 1000), format)

    def value(self) -> int:
        """The amount rounded up to a whole number: how Kubernetes counts bytes, pods and devices.

        Negative amounts get the true ceiling (``-1.5`` gives ``-1``); apimachinery's ``Value()`` is
        inconsistent there, but requests and allocatable are never negative.
        """
        return self._value

    def milli_value(self) -> int:
        """The amount in thousandths, rounded up: how Kubernetes counts CPU (``"0.1m"`` is 1)."""
        return self._milli

    def __str__(self) -> str:
        """Kubernetes' canonical form: no fraction digits and the largest suffix that loses nothing.

        ``1.5`` prints ``1500m``, ``1.5Gi`` prints ``1536Mi``, ``1e3`` prints ``1e3``. BinarySI
        values below 1024 in magnitude, or not whole, print in DecimalSI as Kubernetes does.
        """
        amount = self.amount
        if not amount:
            return "0"
        if self.format == "BinarySI" and amount.denominator == 1 and abs(amount) >= 1024:
            return _binary_string(amount.numerator)
        return _decimal_string(amount, self.format)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount == other.amount

    def __hash__(self) -> int:
        return hash(self.amount)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount < other.amount

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount <= other.amount

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount > other.amount

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.amount >= other.amount


def _binary_string(n: int) -> str:
    """``n`` as a mantissa times the largest power of 1024 that divides it (``1536Mi``)."""
    magnitude, power = abs(n), 0
    while power < len(_BINARY_SUFFIX) - 1 and magnitude % 1024 == 0:
        magnitude //= 1024
        power += 1
    return f"{'-' if n < 0 else ''}{magnitude}{_BINARY_SUFFIX[power]}"


def _decimal_string(amount: Fraction, format: QuantityFormat) -> str:
    """Mantissa and exponent with the exponent a multiple of 3 and as large as exactness allows."""
    if amount.denominator == 1:
        mantissa, exponent = abs(amount.numerator), 0
    else:  # a multiple of 10^-9, so the denominator divides 10^9
        mantissa, exponent = abs(amount.numerator) * (_NANO // amount.denominator), -9
    digits = str(mantissa)
    significant = digits.rstrip("0")
    exponent += len(digits) - len(significant)
    shift = exponent % 3  # move the exponent down to a multiple of 3 (never up: that needs a fraction)
    digits, exponent = significant + "0" * shift, exponent - shift
    if format == "DecimalExponent":
        suffix = f"e{exponent}" if exponent else ""
    elif exponent > 18:  # apimachinery has no suffix past E and prints a wrong value; stay exact
        digits, suffix = digits + "0" * (exponent - 18), "E"
    else:
        suffix = _DECIMAL_SUFFIX[exponent]
    return f"{'-' if amount < 0 else ''}{digits}{suffix}"


def parse_quantity(text: str | int | float) -> Quantity:
    """Read a quantity the way the Kubernetes API server reads a JSON value.

    Strings have surrounding whitespace trimmed (as ``UnmarshalJSON`` does); JSON numbers are read
    from their decimal text, so ``0.5`` means ``"0.5"``. Booleans and other types are malformed.
    Raises :class:`~kschedlib.errors.QuantityError` with Kubernetes' own message.
    """
    try:
        if isinstance(text, str):
            return _parse_text(text)
        if isinstance(text, bool) or not isinstance(text, (int, float)):
            raise _Malformed(_FORMAT_ERROR)
        if isinstance(text, int):
            return _parse_int(text)
        return _parse_text(repr(text))  # shortest round-trip text: 0.5 -> "0.5", 1e20 -> "1e+20"
    except _Malformed as exc:
        raise QuantityError(str(exc), value=text) from None


@functools.lru_cache(maxsize=1024)
def _parse_int(n: int) -> Quantity:
    """A JSON integer: exactly the value of its decimal text, in DecimalSI."""
    if abs(n) >= _MAX_INT:
        raise _Malformed(_SIZE_ERROR)
    return Quantity(Fraction(n), "DecimalSI")


@functools.lru_cache(maxsize=4096)
def _parse_text(raw: str) -> Quantity:
    """Parse one string; memoized because a cluster repeats the same few ("100m", "1Gi") endlessly."""
    text = raw.strip(_GO_SPACE)
    match = _SCAN.fullmatch(text)
    if not text or match is None:
        raise _Malformed(_FORMAT_ERROR)
    sign, whole, fraction, suffix = match.groups()
    fraction = fraction or ""
    base, exponent, format = _interpret(suffix)
    if not whole and not fraction:
        # Kubernetes reads a number without digits as zero, except on the two paths where it hands
        # the text to its big-decimal parser, which refuses it.
        if (format == "DecimalExponent" and exponent < -9) or (format == "BinarySI" and exponent >= 50):
            raise _Malformed(_NUMERIC_ERROR)
        return Quantity(Fraction(0), format)
    digits = (whole + fraction).lstrip("0")
    significant = digits.rstrip("0")
    if not significant:
        return Quantity(Fraction(0), format)
    power = len(digits) - len(significant) - len(fraction)  # value = significant * 10**power * base**exp
    if base == 10:
        magnitude = _decimal_magnitude(significant, power + exponent)
    else:
        magnitude = _binary_magnitude(significant, power, exponent)
    if format == "BinarySI" and magnitude < 1:
        format = "DecimalSI"  # Kubernetes switches so that a fraction of a byte is not rounded away
    return Quantity(-magnitude if sign == "-" else magnitude, format)


def _interpret(suffix: str) -> tuple[int, int, QuantityFormat]:
    """(base, exponent, format) of a suffix: a table entry, or ``e``/``E`` and a signed integer."""
    known = _SUFFIXES.get(suffix)
    if known is not None:
        return known
    match = _EXPONENT.fullmatch(suffix)
    if match is None:
        raise _Malformed(_SUFFIX_ERROR)
    sign, digits = match.groups()
    if len(digits.lstrip("0")) > 19:
        raise _Malformed(_SUFFIX_ERROR)  # beyond int64, where Go's ParseInt gives up
    exponent = int(sign + digits)
    if not -(2**63) <= exponent < 2**63:
        raise _Malformed(_SUFFIX_ERROR)
    # Kubernetes keeps the exponent in an int32 and silently wraps it ("1e4294967296" is 1).
    return 10, (exponent + 2**31) % _INT32 - 2**31, "DecimalExponent"


def _decimal_magnitude(significant: str, power: int) -> Fraction:
    """``significant * 10**power`` rounded up to a multiple of 10^-9, without building huge powers."""
    if len(significant) + power > _MAX_DIGITS:
        raise _Malformed(_SIZE_ERROR)
    if power >= 0:
        return Fraction(int(significant) * 10**power)
    if power >= -9:
        return Fraction(int(significant), 10**-power)
    # Digits below 10^-9 only decide whether to round up, and the last digit is non-zero, so yes.
    kept = len(significant) + power + 9
    return Fraction((int(significant[:kept]) if kept > 0 else 0) + 1, _NANO)


def _binary_magnitude(significant: str, power: int, exponent: int) -> Fraction:
    """``significant * 10**power * 2**exponent``, rounded up to 10^-9 and capped at 2^63-1."""
    top = len(significant) + power  # the value without 2**exponent is below 10**top
    if top > 20:
        return Fraction(_BINARY_CAP)  # at least 10^20 before the binary factor: capped anyway
    if top <= -28:
        return Fraction(1, _NANO)  # below 10^-28 * 2^60 < 10^-9: rounds up to 1n
    if len(significant) > _MAX_DIGITS:
        raise _Malformed(_SIZE_ERROR)
    scaled = int(significant) << exponent
    exact = Fraction(scaled * 10**power) if power >= 0 else Fraction(scaled, 10**-power)
    return _normalize(exact, "BinarySI")
