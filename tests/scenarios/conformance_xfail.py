"""Conformance cases kschedlib does not reproduce yet, with the reason (strict: they must fail)."""

from __future__ import annotations

import pytest

DECISION: dict[str, str] = {
}
POSTFILTER: dict[str, str] = {
}


def xfail_marks(case: str, part: str) -> list[pytest.MarkDecorator]:
    reasons = DECISION if part == "decision" else POSTFILTER
    reason = reasons.get(case)
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
