"""From a result to its page: the JSON form, the kind, the builder of that kind, the page around it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kschedlib.errors import ReportError
from kschedlib.report._detect import detect_kind, require
from kschedlib.report._html import page
from kschedlib.report._kinds import Built, capacity_report, explain_report, nodes_needed_report, simulate_report
from kschedlib.report._what_if import compare_report, drain_report, sweep_report

__all__ = ["render"]

BUILDERS: Final[dict[str, Callable[[Any], Built]]] = {
    "simulate": simulate_report,
    "explain": explain_report,
    "capacity": capacity_report,
    "drain": drain_report,
    "nodes-needed": nodes_needed_report,
    "compare": compare_report,
    "sweep": sweep_report,
}


def plain(result: Any) -> Any:
    """The JSON form of ``result``: a result object's ``to_dict()``; a sweep's results (``SweepResult``) as
    the rows ``kschedlib sweep`` prints, with the scenario's params as its labels."""
    if hasattr(result, "to_dict"):
        return result.to_dict()
    if hasattr(result, "unwrap") and hasattr(result, "scenario"):
        params = getattr(result.scenario, "params", {}) or {}
        return {"index": result.index, "scenario": result.name, **{str(k): v for k, v in params.items()},
                "ok": result.ok, "error": result.error, "seconds": result.seconds, "result": plain(result.value)}
    if isinstance(result, list | tuple):
        return [plain(item) for item in result]
    return result


def render(result: Any, kind: str | None) -> str:
    """See :func:`kschedlib.report.render_html`."""
    data = plain(result)
    kind = detect_kind(data) if kind is None else kind
    checked = require(data, kind)
    try:
        title, lead, sections = BUILDERS[kind](checked)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        field = exc.args[0] if isinstance(exc, KeyError) and exc.args else "<somewhere>"
        raise ReportError(f"a result of {kind} of an unexpected shape ({type(exc).__name__}: {exc})",
                          field=str(field)) from exc
    return page(title, lead, sections)
