"""The options several commands share, each with one help text, and the examples of ``--help``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from kschedlib._cli.formats import add_format_argument
from kschedlib.versions import add_version_arguments

__all__ = ["EXIT_STATUS", "UNSCHEDULABLE_STATUS", "HelpFormatter", "add_cluster_arguments", "add_common_arguments",
           "add_config_argument", "add_expand_argument", "add_fail_on_unschedulable", "add_seed_argument", "examples",
           "new_command"]

UNSCHEDULABLE_STATUS = 3
"""The exit status of ``--fail-on-unschedulable`` when pods were left unschedulable."""

EXIT_STATUS = """exit status:
  0  the answer was printed
  1  an unexpected error, or the output's reader went away (| head)
  2  bad input: a file, an object or an option kschedlib refuses (one line on standard error says which)
  3  with --fail-on-unschedulable: some pods were left unschedulable (simulate, drain)
  130  interrupted (Ctrl-C)"""


class HelpFormatter(argparse.HelpFormatter):
    """Wraps prose paragraphs to the terminal; keeps paragraphs with indented lines (examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.split("\n\n"):
            if any(line.startswith(" ") for line in paragraph.splitlines()[1:]):
                paragraphs.append("\n".join(indent + line for line in paragraph.splitlines()))
            else:
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)


def examples(*lines: str) -> str:
    """The ``examples:`` section ending a command's ``--help``: ``"command  # what it does"`` lines."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def new_command(sub: Any, name: str, summary: str, description: str = "") -> argparse.ArgumentParser:
    """A subcommand whose help keeps its examples' line breaks."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=summary, description=description or summary,
        formatter_class=HelpFormatter)
    return parser


def add_cluster_arguments(parser: argparse.ArgumentParser, *, optional: bool = False, help: str = "") -> None:
    """Where the cluster comes from: files of Kubernetes v1 objects, read as one cluster."""
    parser.add_argument(
        "cluster", nargs="*" if optional else "+", metavar="CLUSTER",
        help=help or "cluster file(s): Kubernetes v1 objects in JSON or YAML (kubectl get nodes,pods -A -o json), "
                     "several files read as one cluster")


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="KubeSchedulerConfiguration file (JSON or YAML; default: kube-scheduler's default "
                             "profile)")


def add_seed_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, metavar="N",
                        help="seed of the random choice among equally scored nodes (default 0); the same seed "
                             "gives the same answer")


def add_expand_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--expand-controllers", action="store_true",
                        help="first create the pods of the cluster's Deployments, ReplicaSets, StatefulSets, Jobs "
                             "and DaemonSets, named as their controllers would name them")


def add_fail_on_unschedulable(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--fail-on-unschedulable", action="store_true",
                        help=f"exit with status 3 when {what} (for CI pipelines; the answer is printed as usual)")


def add_common_arguments(parser: argparse.ArgumentParser, *, config: bool = True, expand: bool = True,
                         extra_formats: Sequence[str] = ()) -> None:
    """``--config``, ``--seed``, ``--expand-controllers``, ``--format`` and the version options."""
    if config:
        add_config_argument(parser)
    add_seed_argument(parser)
    if expand:
        add_expand_argument(parser)
    add_format_argument(parser, extra=extra_formats)
    add_version_arguments(parser)
