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

from collections.abc import Mapping
from typing import Any

from kschedlib.report._detect import KINDS, detect_kind

__all__ = ["KINDS", "detect_kind", "render_html"]


def render_html(result: Mapping[str, Any] | list[Any] | Any, kind: str | None = None) -> str:
    """The HTML page of one command's result (``kind``: ``simulate``, ``explain``, ``capacity``, ``drain``,
    ``nodes-needed``, ``compare`` or ``sweep``; by default told from the result's keys).

    ``result`` is the command's JSON data, a result object with ``to_dict()``, or a sweep's rows.  Raises
    :class:`~kschedlib.errors.ReportError` naming the field when it is not such a result.
    """
    from kschedlib.report._render import render  # the page's builders load on first use only

    return render(result, kind)
