"""Go duration strings (``"5s"``, ``"1m30s"``), as kube-scheduler's configuration writes them."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["parse_duration"]

_UNITS: Final = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION: Final = re.compile(r"(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string (``"5s"``, ``"1m30s"``, ``"250ms"``, ``"0"``)."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    position, total = 0, 0.0
    while position < len(body):
        match = _DURATION.match(body, position)
        if match is None or match.group(1) in ("", "."):
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if not body:
        raise ValueError(f'time: invalid duration "{text}"')
    return -total if text.startswith("-") else total
