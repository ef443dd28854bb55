"""apimachinery's ``resource.Quantity`` as Coscheduling's ``resource gap`` message prints it.

scheduler-plugins formats the gap with Go's ``%v`` of a ``ResourceList``: the map's keys sorted, each
value a Quantity *struct* (its ``String`` method has a pointer receiver, so ``fmt`` prints the fields):
``{{value scale} {<nil>} cached-string Format}``.  The fields are what ``ParseQuantity`` made of the
PodGroup's ``minResources`` and what ``Quantity.Sub`` did to them node by node, so this module keeps the
same int64 representation (value x 10^scale) through the same steps.  Only ``ParseQuantity``'s int64
path is modelled: a quantity Go keeps as an arbitrary-precision decimal (a fractional binary value, or
more than 18 digits) prints a pointer there, and :func:`parse` answers ``None`` for it.
"""

from __future__ import annotations

import re
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.quantity import Quantity

__all__ = ["GoQuantity", "go_map", "parse"]

_MAX_INT64_FACTORS: Final = 18
_NANO_SCALE: Final = -9
_TEXT: Final = re.compile(r"([+-]?)0*([0-9]*)(?:\.([0-9]*))?(.*)")
_DECIMAL: Final = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENT: Final = re.compile(r"[eE]([+-]?[0-9]+)")


@final
@attrs.frozen(slots=True, repr=False)
class GoQuantity(FieldsRepr):
    """A Quantity on Go's int64 path: ``value`` x 10^``scale``, the cached string ``s`` and the ``Format``."""

    value: int
    scale: int
    format: str
    s: str = ""

    def minus(self, other: GoQuantity) -> GoQuantity:
        """``Quantity.Sub``: the cached string goes, a zero quantity takes the other's format, and the scales
        align to the smaller one (``int64Amount.Add``)."""
        fmt = other.format if self.value == 0 else self.format
        value, scale, theirs = self.value, self.scale, -other.value
        if theirs == 0:
            pass
        elif value == 0:
            value, scale = theirs, other.scale
        elif scale == other.scale:
            value += theirs
        elif scale > other.scale:
            value, scale = value * 10 ** (scale - other.scale) + theirs, other.scale
        else:
            value += theirs * 10 ** (other.scale - scale)
        return GoQuantity(value, scale, fmt)

    @property
    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def __str__(self) -> str:
        return f"{{{{{self.value} {self.scale}}} {{<nil>}} {self.s} {self.format}}}"


def parse(quantity: Quantity) -> GoQuantity | None:
    """What ``ParseQuantity`` makes of the quantity's canonical text, or ``None`` off its int64 path."""
    text = str(quantity)
    if text == "0":
        return GoQuantity(0, 0, "DecimalSI", "0")
    match = _TEXT.fullmatch(text)
    if match is None:
        return None
    sign, num, denom, suffix = match.group(1), match.group(2) or "0", match.group(3) or "", match.group(4)
    exponent_match = _EXPONENT.fullmatch(suffix)
    if suffix in _BINARY:
        fmt, exponent = "BinarySI", _BINARY[suffix]
        if denom or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return None
        digits, scale, mantissa = int(num), 0, 1 << exponent
    elif suffix in _DECIMAL or exponent_match is not None:
        fmt = "DecimalSI" if suffix in _DECIMAL else "DecimalExponent"
        exponent = _DECIMAL[suffix] if suffix in _DECIMAL else int(exponent_match.group(1))  # type: ignore[union-attr]
        if _MAX_INT64_FACTORS - len(num) - len(denom) < 0:
            return None
        scale, mantissa = exponent - len(denom), 1
        if scale < _NANO_SCALE:
            return None
        digits = int(num + denom)
    else:
        return None
    value = digits * mantissa * (-1 if sign == "-" else 1)
    shifted = num + denom
    if fmt == "BinarySI":
        cached = text if exponent % 10 == 0 and digits & 0x07 else ""
    else:
        cached = text if scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0" else ""
    return GoQuantity(value, scale, fmt, cached)


def go_map(values: dict[str, GoQuantity]) -> str:
    """Go's ``%v`` of a map: ``map[k1:v1 k2:v2]``, keys sorted."""
    return "map[" + " ".join(f"{name}:{values[name]}" for name in sorted(values)) + "]"
