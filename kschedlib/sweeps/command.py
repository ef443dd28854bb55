"""``kschedlib sweep GRID``: ask one question of every scenario of a grid, locally or on a cluster."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, TextIO, final

import attrs

from kschedlib._cli.formats import add_format_argument, write
from kschedlib._cli.help import examples
from kschedlib._fields_repr import FieldsRepr
from kschedlib.kube.sources import add_live_arguments, live_clusters
from kschedlib.simulation.report import table
from kschedlib.sweeps.driver import check_timeout, sweep
from kschedlib.sweeps.executors import open_executor
from kschedlib.sweeps.grid import Grid, load_grid
from kschedlib.sweeps.questions import Ask
from kschedlib.sweeps.scenario import SweepResult

__all__ = ["SweepAnswer", "add_arguments", "summary_row"]

STREAMING: Final = "jsonl"
"""The sweep's own format: one JSON result per line, written as each scenario ends."""

_SCALARS: Final = (str, int, float, bool, type(None))


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The ``sweep`` arguments."""
    parser.description = ("Ask one question (simulate, explain, max_replicas, drain, nodes_needed, compare) of "
                          "every scenario of a grid: clusters x workloads x configs x kube versions x parameters, "
                          "one after the other or on worker processes, Dask or Ray; results in grid order.")
    parser.add_argument("grid", metavar="GRID",
                        help="grid file (JSON or YAML): clusters, workloads, configs, kube_versions, params, matrix, "
                             "question")
    parser.add_argument("--executor", default="serial", metavar="serial|process|dask|dask://HOST:PORT|ray|ray://HOST",
                        help="where scenarios run (default: one after the other in this process)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="local worker processes (process, dask, ray; default: one per core)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="seconds a scenario may run before it counts as failed (above 0; default: no limit)")
    parser.add_argument("--output", "-o", default="-", metavar="FILE",
                        help="file to write (default: standard output)")
    add_live_arguments(parser)
    add_format_argument(parser, extra=(STREAMING,),
                        extra_help="; text and csv give one summary row per scenario, json and yaml every answer "
                                   "whole, jsonl one result per line as each scenario ends")
    parser.epilog = examples(
        "kschedlib sweep examples/sweep/grid.yaml                         # a summary table, one row per scenario",
        "kschedlib sweep examples/sweep/grid.yaml --executor process --workers 4 --format csv -o results.csv",
        "kschedlib sweep grid.yaml --executor dask://scheduler.example:8786 --format jsonl -o results.jsonl",
    ) + "\n\nexit status: 0 when every scenario answered, 1 when some ended in an error, 2 for bad input."
    parser.set_defaults(run=run)


def _row(grid: Grid, result: SweepResult[Any]) -> dict[str, Any]:
    return {"index": result.index, "scenario": result.name, **grid.labels[result.index], "ok": result.ok,
            "error": result.error, "seconds": round(result.seconds, 6), "result": result.value}


def summary_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A result row's summary: the scenario's labels, and the answer's single values (those at its top
    level and in its ``summary``), never its per-pod or per-node maps."""
    out = {key: value for key, value in row.items() if key != "result"}
    result = row.get("result")
    if isinstance(result, Mapping):
        summary = result.get("summary")
        for source in (result, summary if isinstance(summary, Mapping) else {}):
            out.update((key, value) for key, value in source.items()
                       if isinstance(value, _SCALARS) and key not in out)
    return out


@final
@attrs.frozen(slots=True, repr=False)
class SweepAnswer(FieldsRepr):
    """The whole sweep in one answer: every result row, in grid order."""

    results: Sequence[Mapping[str, Any]]

    def to_dict(self) -> list[dict[str, Any]]:
        """Every row whole (one JSON array, as ``--format json`` prints)."""
        return [dict(row) for row in self.results]

    def rows(self) -> list[dict[str, Any]]:
        """One summary row per scenario (:func:`summary_row`)."""
        return [summary_row(row) for row in self.results]

    def text(self) -> str:
        """The summary rows as a table (without timings: the answers, which runs repeat; errors below)."""
        rows = self.rows()
        columns = list(dict.fromkeys(key for row in rows for key in row if key not in ("error", "seconds")))
        lines = [table(columns, [["" if row.get(c) is None else str(row.get(c)) for c in columns] for row in rows])]
        lines.extend(f"{row['scenario']}: error: {row['error']}" for row in rows if row.get("error"))
        return "\n".join(lines)


def _write(rows: Iterable[dict[str, Any]], form: str, out: TextIO) -> None:
    if form == STREAMING:
        for row in rows:
            out.write(json.dumps(row) + "\n")
            out.flush()  # a reader sees each result as it comes
    else:
        write("sweep", SweepAnswer(list(rows)), form, out)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the sweep; 0 when every scenario answered, 1 when some ended in an error (each one is in
    the output with its ``error``)."""
    timeout = check_timeout(args.timeout, "--timeout")
    grid = load_grid(args.grid, clusters=live_clusters(args))
    failed = 0

    def rows(results: Iterable[SweepResult[Any]]) -> Iterator[dict[str, Any]]:
        nonlocal failed
        for result in results:
            failed += not result.ok
            yield _row(grid, result)

    with (open_executor(args.executor, args.workers) as executor,
          sweep(grid.scenarios, Ask(grid.question), executor, timeout=timeout, progress=err) as results):
        if args.output == "-":
            _write(rows(results), args.format, out)
        else:
            with open(args.output, "w", encoding="utf-8", newline="") as file:
                _write(rows(results), args.format, file)
    if failed:
        err.write(f"kschedlib: {failed} of {len(grid)} scenarios failed (see their 'error')\n")
    return 1 if failed else 0
