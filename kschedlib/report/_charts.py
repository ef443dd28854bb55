"""Charts as inline SVG, made here: grouped bars and a per-node heat map.

No charting library: the charts a report needs are rectangles and text, and made here they cost a
few bytes per node, need no script, and show their exact figures as tooltips (``<title>``).
Colours come from the page's style sheet (classes ``h0``..``h7``, ``hx`` above 100%, ``hn`` for
nothing allocatable).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from kschedlib.report._format import percent
from kschedlib.report._html import el, esc

__all__ = ["HEAT_STEPS", "bars", "heat_class", "heat_legend", "heatmap"]

HEAT_STEPS: Final = (0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 0.95)
"""Upper bounds of the classes ``h0``..``h6``; ``h7`` up to 100%, ``hx`` beyond."""

SERIES: Final = 4
"""Distinct series colours (classes ``s0``..``s3``)."""
LABEL_WIDTH: Final = 100
BAR_WIDTH: Final = 240
BAR_HEIGHT: Final = 13


def heat_class(ratio: float | None) -> str:
    """The colour class of a utilisation ratio."""
    if ratio is None:
        return "hn"
    if ratio > 1:
        return "hx"
    for step, bound in enumerate(HEAT_STEPS):
        if ratio <= bound:
            return f"h{step}"
    return "h7"


def heat_legend() -> str:
    """The key to the heat map's colours."""
    lower = 0.0
    items = []
    for step, bound in enumerate((*HEAT_STEPS, 1.0)):
        items.append(el("span", f"{lower * 100:.0f}-{bound * 100:.0f}%", style=f"--k:var(--h{step})"))
        lower = bound
    items.append(el("span", "over 100%", style="--k:var(--hx)"))
    items.append(el("span", "nothing allocatable", style="--k:#e3e5e8"))
    return el("div", *items, class_="legend")


def _svg(width: int, height: int, label: str, body: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{esc(label)}">{body}</svg>')


def _bar_class(ratio: float | None, index: int, count: int, heat: bool) -> str:
    if count > 1:
        return f"s{index % SERIES}"
    return heat_class(ratio) if heat else "s1"


def bars(rows: Sequence[tuple[str, Sequence[tuple[float | None, str]]]], series: Sequence[str], label: str, *,
         heat: bool = True, text: Callable[[float | None], str] = percent) -> str:
    """Horizontal bars, one group per row and one bar per series (``(ratio, tooltip)``), 0-100% wide; a single
    series is coloured by the heat scale (``heat``, for utilisation) or plainly; ``text`` writes the figure
    beside a bar."""
    per_row = len(series) * (BAR_HEIGHT + 2) + 8
    legend_height = 18 if len(series) > 1 else 0
    width = LABEL_WIDTH + BAR_WIDTH + 60
    parts = []
    for index, name in enumerate(series if len(series) > 1 else ()):
        x = LABEL_WIDTH + index * 90
        parts.append(f'<rect x="{x}" y="3" width="10" height="10" class="s{index % SERIES}"/>'
                     f'<text x="{x + 14}" y="12">{esc(name[:12])}</text>')
    for row, (name, values) in enumerate(rows):
        top = legend_height + row * per_row
        parts.append(f'<text x="0" y="{top + BAR_HEIGHT}">{esc(name[:16])}</text>')
        for index, (ratio, tip) in enumerate(values):
            y = top + index * (BAR_HEIGHT + 2)
            length = min(max(ratio or 0.0, 0.0), 1.0) * BAR_WIDTH
            parts.append(f'<rect x="{LABEL_WIDTH}" y="{y}" width="{BAR_WIDTH}" height="{BAR_HEIGHT}" class="hn"/>'
                         f'<rect x="{LABEL_WIDTH}" y="{y}" width="{length:.1f}" height="{BAR_HEIGHT}" '
                         f'class="{_bar_class(ratio, index, len(values), heat)}">'
                         f"<title>{esc(tip)}</title></rect>"
                         f'<text x="{LABEL_WIDTH + BAR_WIDTH + 6}" y="{y + BAR_HEIGHT - 2}">{esc(text(ratio))}</text>')
    return _svg(width, legend_height + len(rows) * per_row, label, "".join(parts))


DETAILED: Final = 600
"""Up to this many nodes every cell carries its own tooltip; beyond, cells of one colour are one path
(a few bytes per node) and the page's script names the node under the pointer."""


def _cell_size(count: int) -> tuple[int, int]:
    """(cell side, cells per row) for ``count`` nodes: big cells for small clusters, a dense grid for large ones."""
    if count <= 60:
        return 16, 30
    if count <= DETAILED:
        return 11, 50
    return 6, 100


def _cells(values: Sequence[tuple[float | None, str]], top: int, columns: int, side: int) -> str:
    """One block of the heat map: a rect with a tooltip per node, or one path per colour."""
    if len(values) <= DETAILED:
        return "".join(f'<rect x="{(i % columns) * (side + 1)}" y="{top + (i // columns) * (side + 1)}" '
                       f'width="{side}" height="{side}" class="{heat_class(ratio)}"><title>{esc(tip)}</title></rect>'
                       for i, (ratio, tip) in enumerate(values))
    paths: dict[str, list[str]] = {}
    for i, (ratio, _) in enumerate(values):
        paths.setdefault(heat_class(ratio), []).append(
            f"M{(i % columns) * (side + 1)} {top + (i // columns) * (side + 1)}h{side}v{side}h-{side}z")
    return "".join(f'<path class="{name}" d="{"".join(parts)}"/>' for name, parts in sorted(paths.items()))


def heatmap(names: Sequence[str], cells: Sequence[tuple[str, Sequence[tuple[float | None, str]]]],
            label: str, *, table: str | None = None) -> str:
    """One grid per resource (``cells``: resource -> per node ``(ratio, tooltip)``, in the order of
    ``names``); every node a square coloured by its ratio.  ``table`` is the id of the table whose row
    the script shows for the node under the pointer (large clusters)."""
    side, per_line = _cell_size(len(names))
    columns = min(per_line, max(len(names), 1))
    lines = -(-len(names) // columns) if names else 0
    block = 18 + lines * (side + 1) + 10
    parts = []
    for index, (resource, values) in enumerate(cells):
        parts.append(f'<text x="0" y="{index * block + 12}">{esc(resource)}</text>')
        parts.append(_cells(values, index * block + 18, columns, side))
    width = max(columns * (side + 1), 120)
    svg = _svg(width, max(len(cells) * block, 1), label, "".join(parts))
    if len(names) <= DETAILED:
        return svg
    grid = {"names": " ".join(names), "cols": columns, "step": side + 1, "block": block, "head": 18,
            "table": table or ""}
    attributes = "".join(f' data-{key}="{esc(value)}"' for key, value in grid.items())
    return f'<div class="heatmap"{attributes}>{svg}</div>'
