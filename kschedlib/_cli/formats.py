"""One output vocabulary for every command: ``--format text|json|yaml|csv|html``, ``text`` by default.

A command hands :func:`write` its :class:`Answer` (anything with ``to_dict()``, ``rows()`` and
``text()``) and the format the user chose; the writer of that format does the rest.  A format is
one entry of :data:`WRITERS`: add a writer there and every command offers it (``--format`` lists
exactly the formats that have one, in the order of :data:`FORMATS`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol, TextIO

from kschedlib.errors import ExtraNotInstalledError

__all__ = ["DEFAULT_FORMAT", "FORMATS", "WRITERS", "Answer", "Writer", "add_format_argument", "offered", "write",
           "write_csv", "write_json"]

FORMATS: Final = ("text", "json", "yaml", "csv", "html")
"""Every format name, in the order ``--help`` lists them."""

DEFAULT_FORMAT: Final = "text"
"""The default of every command: what a person reads; scripts ask for ``json``."""


class Answer(Protocol):
    """What a command prints: its JSON data, its CSV rows and its text (and, optionally, ``csv_columns``: the
    CSV header, also when there are no rows)."""

    def to_dict(self) -> Any: ...
    def rows(self) -> list[dict[str, Any]]: ...
    def text(self) -> str: ...


Writer = Callable[[str, Answer, TextIO], None]
"""``writer(command, answer, out)``: print ``command``'s answer on ``out`` in one format."""


def write_json(data: Any, out: TextIO) -> None:
    """Indented JSON and a final newline."""
    json.dump(data, out, indent=2)
    out.write("\n")


def write_csv(rows: Sequence[dict[str, Any]], out: TextIO, columns: Sequence[str] = ()) -> None:
    """A header (``columns``, then every other key in order of first appearance) and one line per row: an
    answer without rows is its header alone."""
    columns = list(dict.fromkeys([*columns, *(key for row in rows for key in row)]))
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def _text(command: str, answer: Answer, out: TextIO) -> None:
    out.write(answer.text().rstrip("\n") + "\n")


def _json(command: str, answer: Answer, out: TextIO) -> None:
    write_json(answer.to_dict(), out)


def _yaml(command: str, answer: Answer, out: TextIO) -> None:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ExtraNotInstalledError("--format yaml", "yaml", "yaml") from exc
    yaml.safe_dump(answer.to_dict(), out, sort_keys=False, default_flow_style=False)


def _csv(command: str, answer: Answer, out: TextIO) -> None:
    write_csv(answer.rows(), out, getattr(answer, "csv_columns", ()))  # the header of an answer without rows


def _html(command: str, answer: Answer, out: TextIO) -> None:
    from kschedlib.report.command import html_writer  # the page builders load only for a page

    html_writer(command, answer, out)


WRITERS: dict[str, Writer] = {"text": _text, "json": _json, "yaml": _yaml, "csv": _csv, "html": _html}
"""Format name -> its writer.  The place to plug a renderer in."""


def offered(extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The formats a command offers: those with a writer, then the command's own (``extra``)."""
    return (*(name for name in FORMATS if name in WRITERS), *extra)


def add_format_argument(parser: Any, *, extra: Sequence[str] = (), extra_help: str = "") -> None:
    """``--format``, the same on every command (plus the command's own formats, ``extra``)."""
    choices = offered(extra)
    parser.add_argument("--format", choices=choices, default=DEFAULT_FORMAT, metavar="|".join(choices),
                        help=f"output format (default {DEFAULT_FORMAT}): text for people, json or yaml for "
                             f"scripts, csv for spreadsheets, html for a page to share{extra_help}")


def write(command: str, answer: Answer, form: str, out: TextIO) -> None:
    """Print ``answer`` in format ``form``."""
    WRITERS[form](command, answer, out)
