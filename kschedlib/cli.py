"""The ``kschedlib`` command line: ``explain`` and ``simulate`` over cluster files, the capacity questions
(``capacity``, ``drain``, ``nodes-needed``, ``compare``), ``sweep``, ``serve-extender``.

Every subcommand is added the same way: an ``add_parser(sub)`` function that adds its arguments and
``set_defaults(run=...)`` with a ``run(args, out, err) -> exit status``; :func:`main` calls ``args.run``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, TextIO, TypeAlias

from kschedlib.capacity import _cli as capacity_cli
from kschedlib.capacity import expand_controllers
from kschedlib.errors import KschedError
from kschedlib.extender import command as serve_extender
from kschedlib.progress import Progress
from kschedlib.report import command as report_command
from kschedlib.simulation.explain import explain
from kschedlib.simulation.report import explanation_text, simulation_text
from kschedlib.simulation.simulate import simulate
from kschedlib.sweeps import command as sweep_command
from kschedlib.versions import add_version_arguments

__all__ = ["main"]

EXAMPLE_CLUSTER = "example-cluster.json"


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kschedlib", description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    _add_explain(sub)
    _add_simulate(sub)
    capacity_cli.add_parsers(sub)
    for command in capacity_cli.COMMANDS:
        sub.choices[command].set_defaults(run=_capacity)
    sweep_command.add_parser(sub)
    sub.choices["sweep"].set_defaults(run=sweep_command.run)
    serve_extender.add_parser(sub)
    report_command.add_parser(sub)
    return parser


def _capacity(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    capacity_cli.run(args, out, err)
    return 0


def _add_explain(sub: Subparsers) -> None:
    ex = sub.add_parser("explain", help="where would a pod go, and why not elsewhere")
    ex.add_argument("cluster", nargs="+", help="cluster file(s) (Kubernetes v1 objects, JSON or YAML), read as one")
    ex.add_argument("--pod", required=True, help="namespace/name of a pod in the cluster, or a pod file")
    ex.add_argument("--config", help="KubeSchedulerConfiguration file")
    ex.add_argument("--start-index", type=int, default=0, help="node search start (rotating index)")
    ex.add_argument("--seed", type=int, default=0)
    ex.add_argument("--format", choices=("json", "text", "html"), default="json")
    add_version_arguments(ex)
    ex.set_defaults(run=_explain)


def _add_simulate(sub: Subparsers) -> None:
    sim = sub.add_parser("simulate", help="schedule the cluster's pending pods")
    sim.add_argument("cluster", nargs="*", help="cluster file(s), read as one (default: a bundled example)")
    sim.add_argument("--config", help="KubeSchedulerConfiguration file")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--once", action="store_true", help="give every pending pod exactly one attempt")
    sim.add_argument("--events", help="timeline of cluster changes to apply while simulating (JSON/YAML list)")
    sim.add_argument("--format", choices=("json", "text", "html"), default="text")
    sim.add_argument("--expand-controllers", action="store_true",
                     help="create the pods of Deployments, ReplicaSets, StatefulSets, Jobs and DaemonSets first")
    add_version_arguments(sim)
    sim.set_defaults(run=_simulate)


def _dump(data: Any, out: TextIO) -> None:
    json.dump(data, out, indent=2, sort_keys=False)
    out.write("\n")


def _simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    meter = Progress(unit="attempts", label="simulate", stream=err)  # of the pods' first attempts: ETA
    with resources.as_file(resources.files("kschedlib.simulation.data") / EXAMPLE_CLUSTER) as example:
        cluster: Any = args.cluster or example
        if args.expand_controllers:
            cluster = expand_controllers(cluster)
        report = simulate(cluster, args.config, seed=args.seed, once=args.once, events=args.events,
                          progress=meter.update if meter.enabled else None, kube_version=args.kube_version,
                          feature_gates=args.feature_gates)
    summary = report.summary()
    meter.close(f"{sum(report.attempts.values())} attempts, {summary['pods']} pods: {summary['scheduled']} scheduled")
    if args.format == "json":
        _dump(report.to_dict(), out)
    elif args.format == "html":
        report_command.html_writer("simulate", report, out)
    else:
        out.write(simulation_text(report) + "\n")
    return 0


def _explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result = explain(args.cluster, args.pod, args.config, start_index=args.start_index, seed=args.seed,
                     kube_version=args.kube_version, feature_gates=args.feature_gates)
    if args.format == "json":
        _dump(result.to_dict(), out)
    elif args.format == "html":
        report_command.html_writer("explain", result, out)
    else:
        out.write(explanation_text(result) + "\n")
    if result.refused:
        err.write(f"kschedlib: error: {result.error}\n")
        return 1
    return 0


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    run: Callable[[argparse.Namespace, TextIO, TextIO], int] = args.run
    status = run(args, out, err)
    out.flush()  # a closed pipe shows here, not at exit
    return status


def _silence(out: TextIO) -> None:
    """After a broken pipe: point the output at devnull, so that the flush at exit cannot fail again."""
    try:
        fileno = out.fileno()
    except (OSError, ValueError):  # not a real file (a StringIO): nothing is flushed at exit
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command line; returns the exit status.

    0 on success, 2 for bad input, 1 when ``explain`` finds no profile for the pod's scheduler,
    when the reader of the output went away (``| head``: the rest is dropped quietly) or on an
    unexpected error (one line, no traceback), 130 on Ctrl-C.
    """
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    args = _parser().parse_args(argv)
    try:
        return _run(args, out, err)
    except KschedError as exc:
        err.write(f"kschedlib: error: {exc}\n")
        return 2
    except BrokenPipeError:
        _silence(out)
        return 1
    except KeyboardInterrupt:
        err.write("kschedlib: interrupted\n")
        return 130
    except Exception as exc:  # the command line ends in one line, never a traceback
        err.write(f"kschedlib: unexpected error: {type(exc).__name__}: {exc}\n")
        return 1
