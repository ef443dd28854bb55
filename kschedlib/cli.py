"""The kschedlib command line: explain and simulate over cluster files, the capacity questions
(capacity, drain, nodes-needed, compare), sweep, serve-extender, report, and dump and run on a live cluster.

Every subcommand lives beside its feature, in a module with ``add_arguments(parser, command)`` that
adds its arguments and ``set_defaults(run=...)`` with a ``run(args, out, err) -> exit status``.
:data:`COMMANDS` names that module and the command's one-line summary; only the module of the
command being run is imported, so ``kschedlib --help`` (and each command) loads only what it uses.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Final, TextIO

from kschedlib._cli.help import EXIT_STATUS, HelpFormatter, new_command
from kschedlib.errors import KschedError

__all__ = ["main"]

COMMANDS: Final[dict[str, tuple[str, str]]] = {
    "explain": ("kschedlib.simulation.command", "where would a pod go, and why not elsewhere (one scheduling cycle)"),
    "simulate": ("kschedlib.simulation.command", "schedule the cluster's pending pods, as kube-scheduler's loop would"),
    "capacity": ("kschedlib.capacity._cli", "how many more copies of a pod fit (cluster-capacity)"),
    "drain": ("kschedlib.capacity._cli", "take nodes away and reschedule their pods (cluster-autoscaler's drain)"),
    "nodes-needed": ("kschedlib.capacity._cli", "how many nodes of one kind the pending pods need"),
    "compare": ("kschedlib.capacity._cli", "the cluster scheduled under two or more configs, side by side"),
    "sweep": ("kschedlib.sweeps.command", "ask one question of every scenario of a grid (clusters x workloads x ...)"),
    "serve-extender": ("kschedlib.extender.command", "serve a profile's Filter and Score plugins as an HTTP extender"),
    "report": ("kschedlib.report.command", "render a saved JSON result as one HTML page to share"),
    "dump": ("kschedlib.kube.command", "write a live cluster as one file every command reads (a snapshot)"),
    "run": ("kschedlib.kube.command", "schedule a live cluster's pods, as a (second) scheduler"),
}
"""Command -> (the module that adds its arguments and runs it, its one-line summary)."""

DESCRIPTION: Final = ("kschedlib answers scheduling questions with kube-scheduler's own decisions and messages "
                      "(v1.30 to v1.36), from cluster files such as kubectl get nodes,pods -A -o json writes, or "
                      "from a live cluster (--kubeconfig); and schedules a live cluster's pods (run).")

EXAMPLES: Final = """examples:
  kschedlib simulate                                   # schedule a bundled example cluster
  kubectl get nodes,pods,pdb,priorityclasses -A -o json > cluster.json
  kschedlib simulate cluster.json                      # where the pending pods go, and why others fit nowhere
  kschedlib explain cluster.json --pod default/web-1   # every node's verdict and score for one pod
  kschedlib capacity cluster.json --pod default/web-1  # how many more copies fit
  kschedlib simulate --kubeconfig                      # the same of a live cluster (the kube extra)
  kschedlib COMMAND --help                             # a command's options and examples"""


def _version() -> str:
    from kschedlib import __version__
    from kschedlib.versions import DEFAULT_KUBE_VERSION, SUPPORTED_VERSIONS

    return (f"kschedlib {__version__} (kube-scheduler {SUPPORTED_VERSIONS[0]}-{SUPPORTED_VERSIONS[-1]}, "
            f"default {DEFAULT_KUBE_VERSION})")


def _command_in(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not an option (the top level takes no values)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the command it names gets its arguments (and its module imported)."""
    parser = argparse.ArgumentParser(prog="kschedlib", description=DESCRIPTION,
                                     epilog=f"{EXAMPLES}\n\n{EXIT_STATUS}",
                                     formatter_class=HelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    wanted = _command_in(argv) if argv is not None else None
    for name, (module, summary) in COMMANDS.items():
        command = new_command(sub, name, summary)
        if argv is None or name == wanted:
            importlib.import_module(module).add_arguments(command, name)
    return parser


def _usage(parser: argparse.ArgumentParser) -> str:
    """What ``kschedlib`` alone prints: the usage line, the commands and examples."""
    commands = "\n".join(f"  {name:<15} {summary}" for name, (_, summary) in COMMANDS.items())
    return f"{parser.format_usage()}\n{textwrap.fill(DESCRIPTION, 100)}\n\ncommands:\n{commands}\n\n{EXAMPLES}\n"


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

    0 on success (and for ``kschedlib`` alone, which prints a short usage with examples), 2 for bad
    input, 3 when ``--fail-on-unschedulable`` finds unschedulable pods, 1 when ``explain`` finds no
    profile for the pod's scheduler, when the reader of the output went away (``| head``: the rest is
    dropped quietly) or on an unexpected error (one line, no traceback), 130 on Ctrl-C.
    """
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    words = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(words)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            args = parser.parse_args(words)
    except SystemExit as exc:  # --help, --version (status 0) or a usage error (2), already printed
        return exc.code if isinstance(exc.code, int) else 0
    if args.command is None:
        out.write(_usage(parser))
        return 0
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
