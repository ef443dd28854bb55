"""``kschedlib report RESULT.json``: a saved JSON result as one HTML page."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from kschedlib._cli.help import examples
from kschedlib.errors import ReportError
from kschedlib.report import KINDS, render_html

__all__ = ["SUMMARY", "add_arguments", "html_writer", "read_result", "run", "write_html"]

SUMMARY = "render a saved JSON result (simulate, explain, capacity, drain, nodes-needed, compare, sweep) as HTML"
"""What ``report`` does, in one line."""


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """``report``'s arguments; runs :func:`run`."""
    parser.add_argument("result", metavar="RESULT",
                        help="a file holding what a command printed with --format json ('-': standard input); "
                             "for sweep also its jsonl output")
    parser.add_argument("--kind", choices=KINDS, default=None,
                        help="the command the result came from (default: told from its keys)")
    parser.add_argument("--output", "-o", default="-", metavar="FILE",
                        help="file to write the page to (default: standard output)")
    parser.description = ("Render what a command printed with --format json (or a sweep's jsonl) as one "
                          "self-contained HTML page, readable without a network; --format html gives the page "
                          "directly.")
    parser.epilog = examples(
        "kschedlib simulate cluster.json --format json > result.json",
        "kschedlib report result.json -o result.html          # the page, to open in a browser or share",
        "kschedlib sweep grid.yaml --format jsonl | kschedlib report - -o sweep.html",
    )
    parser.set_defaults(run=run)


def _parse(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as whole:
        lines = [line for line in text.splitlines() if line.strip()]
        try:  # a sweep's jsonl: one row per line
            rows = [json.loads(line) for line in lines]
        except json.JSONDecodeError:
            raise ReportError(f"not JSON: {whole.msg} at line {whole.lineno} column {whole.colno}",
                              field=where) from None
        if len(rows) < 2:  # pragma: no cover - one line that parses is whole JSON already
            raise ReportError("not JSON", field=where) from whole
        return rows


def read_result(source: str, stdin: TextIO | None = None) -> Any:
    """The result in file ``source`` (``-``: ``stdin``): JSON, or JSON lines read as a list."""
    if source == "-":
        return _parse((stdin or sys.stdin).read(), "<standard input>")
    try:
        text = Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read it: {exc}", field=source) from exc
    return _parse(text, source)


def write_html(data: Any, kind: str | None, out: TextIO) -> None:
    """The page of ``data`` (a ``kind`` result) on ``out``: what ``--format html`` prints."""
    out.write(render_html(data, kind=kind))


def html_writer(command: str, answer: Any, out: TextIO) -> None:
    """``--format html`` of ``command``, whose ``answer`` has ``to_dict()`` (a result object)."""
    write_html(answer.to_dict(), command, out)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Render the result; 0 once the page is written, 2 (through :class:`ReportError`) for a file that is
    not a kschedlib result."""
    data = read_result(args.result)
    try:
        page = render_html(data, kind=args.kind)
    except ReportError as exc:  # say which file
        where = args.result if exc.field == "<top level>" else f"{args.result}, {exc.field}"
        raise ReportError(exc.message, field=where, value=exc.value) from exc
    if args.output == "-":
        out.write(page)
    else:
        Path(args.output).write_text(page, encoding="utf-8")
        err.write(f"kschedlib: wrote {args.output} ({len(page.encode()) // 1024 + 1} KiB)\n")
    return 0
