"""HTML building blocks: escaped text, elements, sortable tables, sections and the page around them.

Everything is a string of finished HTML; text from a result goes through :func:`esc` exactly once,
where it enters an element.  The page carries its own style and script (no request at view time,
which its Content-Security-Policy also forbids), and reads fully without the script: the script
only adds sorting and filtering to tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from importlib import resources
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr

__all__ = ["Cell", "Section", "cell", "el", "esc", "figures", "page", "table"]

CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
"""Nothing is fetched when the page is viewed: no script, style, font or image from anywhere else."""

FILTER_FROM: Final = 8
"""Tables with at least this many rows get a filter box (when the script runs)."""


def esc(value: object) -> str:
    """Text as HTML (quotes too, so that it may stand in an attribute)."""
    return escape(str(value), quote=True)


def el(tag: str, *children: str, **attributes: object) -> str:
    """``<tag attributes>children</tag>``: ``children`` are HTML already; an attribute ``class_`` is
    ``class``, ``data_x`` is ``data-x``; ``None`` and ``False`` leave an attribute out, ``True`` sets it bare."""
    parts = [tag]
    for name, value in attributes.items():
        if value is None or value is False:
            continue
        name = name.rstrip("_").replace("_", "-")
        parts.append(name if value is True else f'{name}="{esc(value)}"')
    return f"<{' '.join(parts)}>{''.join(children)}</{tag}>"


@final
@attrs.frozen(slots=True, repr=False)
class Cell(FieldsRepr):
    """A table cell given as HTML, with the value it sorts by and its class."""

    html: str
    sort: str | float | None = None
    class_: str | None = None


def cell(value: object, sort: str | float | None = None, class_: str | None = None) -> Cell:
    """A cell showing ``value`` as text."""
    return Cell(esc("" if value is None else value), sort, class_)


def _td(value: object) -> str:
    """A ``<td>``: a :class:`Cell` as it is, anything else as text (numbers sorting as numbers)."""
    if not isinstance(value, Cell):
        value = cell(value, value if isinstance(value, int | float) and not isinstance(value, bool) else None)
    return el("td", value.html, data_v=value.sort, class_=value.class_)


def table(header: Sequence[str], rows: Iterable[Sequence[object]], *, id_: str | None = None,
          caption: str | None = None, numeric: Sequence[int] = ()) -> str:
    """A table whose columns the script sorts (``numeric``: the columns sorted as numbers) and whose rows
    it filters when there are many; ``data-rows`` holds the row count for readers and tests."""
    body = [el("tr", *(_td(value) for value in row)) for row in rows]
    heads = [el("th", esc(name), scope="col", data_num="1" if index in numeric else None)
             for index, name in enumerate(header)]
    parts = [el("caption", esc(caption))] if caption else []
    parts += [el("thead", el("tr", *heads)), el("tbody", *body)]
    return el("div", el("table", *parts, id=id_, class_="sortable", data_rows=len(body),
                        data_filter="1" if len(body) >= FILTER_FROM else None), class_="scroll")


def figures(items: Iterable[tuple[str, object]]) -> str:
    """The headline numbers of a report, as label/value pairs."""
    return el("dl", *(el("div", el("dt", esc(label)), el("dd", esc(_number(value)))) for label, value in items),
              class_="figures")


def _number(value: object) -> object:
    """Whole numbers with thousands separators (``10,000``)."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else value


@final
@attrs.frozen(slots=True, repr=False)
class Section(FieldsRepr):
    """One part of a report: an anchor, a heading and its HTML."""

    id: str
    title: str
    html: str

    def render(self) -> str:
        return el("section", el("h2", esc(self.title)), self.html, id=self.id)


def _asset(name: str) -> str:
    return (resources.files("kschedlib.report") / "assets" / name).read_text(encoding="utf-8")


def page(title: str, lead: str, sections: Sequence[Section]) -> str:
    """The whole self-contained document: head with style, a table of contents, the sections, the script."""
    nav = el("nav", el("ul", *(el("li", el("a", esc(s.title), href=f"#{s.id}")) for s in sections)),
             aria_label="sections")
    head = (f'<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"{el('title', esc(title))}<style>{_asset('report.css')}</style>")
    body = (el("header", el("h1", esc(title)), el("p", esc(lead), class_="lead")) + nav
            + el("main", *(s.render() for s in sections))
            + el("footer", el("p", "Made by kschedlib; this file needs no network and no script to be read."))
            + f"<script>{_asset('report.js')}</script>")
    return f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head><body>{body}</body></html>\n'
