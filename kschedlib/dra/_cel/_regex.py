"""Regular expressions of ``matches``, ``find`` and ``findAll``, compiled once per pattern.

Python's ``re`` stands in for RE2: the same syntax for what selectors use, but it also accepts
backreferences and lookaround, which RE2 refuses.
"""

from __future__ import annotations

import functools
import re

from kschedlib.dra._cel._values import Fault

__all__ = ["compiled"]


@functools.lru_cache(maxsize=256)
def compiled(pattern: str) -> re.Pattern[str]:
    """The compiled pattern, or a runtime error with Go's wording around Python's reason."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise Fault(f"error parsing regexp: {exc}: `{pattern}`") from None
