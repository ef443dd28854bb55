"""Numbers as people read them: cores, bytes in binary units, percentages."""

from __future__ import annotations

from typing import Final

__all__ = ["amount", "percent", "plural"]

_BYTES: Final = ("memory", "ephemeral-storage", "hugepages")
_UNITS: Final = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def _bytes(value: float) -> str:
    unit = 0
    while abs(value) >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    return f"{value:.0f} {_UNITS[unit]}" if unit == 0 or value >= 100 else f"{value:.1f} {_UNITS[unit]}"


def amount(resource: str, value: float | None) -> str:
    """``value`` of ``resource`` as results count it (cpu in millicores, memory in bytes) for reading."""
    if value is None:
        return "-"
    if resource == "cpu":
        return f"{value:g}m" if abs(value) < 1000 else f"{value / 1000:g} CPU"
    if resource.startswith(_BYTES):
        return _bytes(value)
    return f"{value:g}"


def percent(ratio: float | None) -> str:
    """``0.375`` -> ``38%``; ``None`` (nothing allocatable) -> ``-``."""
    return "-" if ratio is None else f"{ratio * 100:.0f}%"


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 pod``, ``2 pods``, ``10,000 pods`` (``many``: the plural when it is not ``noun + "s"``)."""
    return f"{count} {noun}" if count == 1 else f"{count:,} {many or noun + 's'}"
