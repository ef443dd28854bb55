"""Reading kube-scheduler's FitError sentence back into its parts, and per-node verdicts into rejections."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr

__all__ = ["FitError", "parse_fit_error", "rejections_of"]

_HEAD: Final = re.compile(r"0/(\d+) nodes are available: ")
_END: Final = re.compile(r"\.(?: |$)")
_ITEM: Final = re.compile(r"(\d+) (.+)")


@final
@attrs.frozen(slots=True, repr=False)
class FitError(FieldsRepr):
    """``0/N nodes are available: <count reason>, ... . <rest>`` taken apart."""

    nodes: int | None
    reasons: tuple[tuple[int | None, str], ...]
    """(node count, reason) in the message's order; the count is ``None`` for a PreFilter message."""
    rest: str
    """What follows the reasons: the preemption outcome, as kube-scheduler words it."""


def parse_fit_error(message: str) -> FitError:
    """The parts of a FitError message; a message of another shape is one reason without a count."""
    head = _HEAD.match(message)
    if head is None:
        return FitError(None, ((None, message),) if message else (), "")
    body = message[head.end():]
    end = _END.search(body)
    listed, rest = (body[:end.start()], body[end.end():]) if end is not None else (body, "")
    reasons: list[tuple[int | None, str]] = []
    for item in re.split(r", (?=\d+ )", listed) if listed else []:
        match = _ITEM.fullmatch(item)
        reasons.append((int(match.group(1)), match.group(2)) if match else (None, item))
    return FitError(int(head.group(1)), tuple(reasons), rest.strip())


def rejections_of(filtered: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``explain``'s per-node verdicts (``{node: {plugin, code, reasons}}``) as ``[{plugin, reason, nodes}]``,
    the shape of ``simulate``'s ``fit_errors``."""
    groups: dict[tuple[str, str], list[str]] = {}
    for node, status in filtered.items():
        for reason in status.get("reasons") or [""]:
            groups.setdefault((status.get("plugin") or "", reason), []).append(node)
    return [{"plugin": plugin, "reason": reason, "nodes": nodes}
            for (plugin, reason), nodes in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))]
