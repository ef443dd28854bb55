"""The help of the command line: its layout (prose wrapped, examples as written), the examples
section of every command and the exit statuses they share."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["EXIT_STATUS", "UNSCHEDULABLE_STATUS", "HelpFormatter", "examples", "new_command"]

UNSCHEDULABLE_STATUS = 3
"""The exit status of ``--fail-on-unschedulable`` when pods were left unschedulable."""

EXIT_STATUS = """exit status:
  0  the answer was printed
  1  an unexpected error, or the output's reader went away (| head); explain: no profile schedules the pod;
     sweep: some scenario ended in an error
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
