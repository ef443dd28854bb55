"""``kschedlib sweep GRID``: ask one question of every scenario of a grid, locally or on a cluster."""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

from kschedlib.report.command import write_html
from kschedlib.sweeps.driver import sweep
from kschedlib.sweeps.executors import open_executor
from kschedlib.sweeps.grid import Grid, load_grid
from kschedlib.sweeps.questions import Ask
from kschedlib.sweeps.scenario import SweepResult

__all__ = ["add_parser", "run"]

FORMATS = ("jsonl", "json", "csv", "html")


def add_parser(sub: Any) -> None:
    """The ``sweep`` subcommand."""
    parser = sub.add_parser("sweep", help="ask one question of every scenario of a grid (clusters x workloads x ...)")
    parser.add_argument("grid", help="grid file (JSON or YAML): clusters, workloads, configs, kube_versions, "
                                     "params, matrix, question")
    parser.add_argument("--executor", default="serial", metavar="serial|process|dask|dask://HOST:PORT|ray",
                        help="where scenarios run (default: one after the other in this process)")
    parser.add_argument("--workers", type=int, default=None, help="local worker processes (process, dask, ray)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds a scenario may take at the head of "
                                                                     "the stream before it counts as failed")
    parser.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")
    parser.add_argument("--format", choices=FORMATS, default="jsonl",
                        help="jsonl: one result per line as they come (default); json: one array; csv: flat columns; "
                             "html: a page with the scenarios side by side")


def _row(grid: Grid, result: SweepResult[Any]) -> dict[str, Any]:
    return {"index": result.index, "scenario": result.name, **grid.labels[result.index], "ok": result.ok,
            "error": result.error, "seconds": round(result.seconds, 6), "result": result.value}


def _flat(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _flat(f"{prefix}.{key}" if prefix else str(key), item)
    elif isinstance(value, list):
        yield prefix, json.dumps(value)
    else:
        yield prefix, value


def _write(rows: Iterable[dict[str, Any]], form: str, out: TextIO) -> None:
    if form == "jsonl":
        for row in rows:
            out.write(json.dumps(row) + "\n")
            out.flush()  # a reader sees each result as it comes
    elif form == "json":
        json.dump(list(rows), out, indent=2)
        out.write("\n")
    elif form == "html":
        write_html(list(rows), "sweep", out)
    else:
        flat = [dict(_flat("", row)) for row in rows]
        columns = list(dict.fromkeys(key for row in flat for key in row))
        writer = csv.DictWriter(out, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(flat)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the sweep; 0 when every scenario answered, 1 when some ended in an error (each one is in
    the output with its ``error``)."""
    grid = load_grid(args.grid)
    failed = 0

    def rows(results: Iterable[SweepResult[Any]]) -> Iterator[dict[str, Any]]:
        nonlocal failed
        for result in results:
            failed += not result.ok
            yield _row(grid, result)

    with (open_executor(args.executor, args.workers) as executor,
          sweep(grid.scenarios, Ask(grid.question), executor, timeout=args.timeout, progress=err) as results):
        if args.output == "-":
            _write(rows(results), args.format, out)
        else:
            with open(args.output, "w", encoding="utf-8", newline="") as file:
                _write(rows(results), args.format, file)
    if failed:
        err.write(f"kschedlib: {failed} of {len(grid)} scenarios failed (see their 'error')\n")
    return 1 if failed else 0
