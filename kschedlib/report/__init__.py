"""HTML reports: one self-contained page from a command's JSON result, for people who do not run Python.

``render_html(result)`` takes what ``simulate``, ``explain``, ``capacity``, ``drain``, ``nodes-needed``,
``compare`` or ``sweep`` print with ``--format json`` (or the result object itself: anything with
``to_dict()``), tells which it is, and returns the page: utilisation per zone and node, fragmentation,
pending pods grouped by reason with the verdicts per plugin and node, placements per node, what-if
states side by side, and the kube-scheduler version and config used.  The page fetches nothing (its
style, script and SVG charts are inline; its Content-Security-Policy forbids requests) and reads
fully without its script, which adds sorting and filtering to the tables.

Nothing here is imported by ``import kschedlib``: only the command line's ``--format html`` and
``kschedlib report`` load it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kschedlib.errors import ReportError
from kschedlib.report._detect import KINDS, detect_kind, require
from kschedlib.report._html import page
from kschedlib.report._kinds import Built, capacity_report, explain_report, nodes_needed_report, simulate_report
from kschedlib.report._what_if import compare_report, drain_report, sweep_report

__all__ = ["KINDS", "detect_kind", "render_html"]

_BUILDERS: Final[dict[str, Callable[[Any], Built]]] = {
    "simulate": simulate_report,
    "explain": explain_report,
    "capacity": capacity_report,
    "drain": drain_report,
    "nodes-needed": nodes_needed_report,
    "compare": compare_report,
    "sweep": sweep_report,
}


def _plain(result: Any) -> Any:
    """The JSON form of ``result``: a result object's ``to_dict()``, a sweep's results as rows."""
    if hasattr(result, "to_dict"):
        return result.to_dict()
    if isinstance(result, list | tuple):
        return [_plain(item) for item in result]
    return result


def render_html(result: Mapping[str, Any] | list[Any] | Any, kind: str | None = None) -> str:
    """The HTML page of one command's result (``kind``: ``simulate``, ``explain``, ``capacity``, ``drain``,
    ``nodes-needed``, ``compare`` or ``sweep``; by default told from the result's keys).

    Raises :class:`~kschedlib.errors.ReportError` naming the field when ``result`` is not such a result.
    """
    data = _plain(result)
    kind = detect_kind(data) if kind is None else kind
    checked = require(data, kind)
    try:
        title, lead, sections = _BUILDERS[kind](checked)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        field = exc.args[0] if isinstance(exc, KeyError) and exc.args else "<somewhere>"
        raise ReportError(f"a {kind} result of an unexpected shape ({type(exc).__name__}: {exc})",
                          field=str(field)) from exc
    return page(title, lead, sections)
