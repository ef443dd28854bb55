"""The ``capacity``, ``drain``, ``nodes-needed`` and ``compare`` subcommands of the ``kschedlib`` command line."""

from __future__ import annotations

import argparse
import csv
import json
from typing import Any, Protocol, TextIO

from kschedlib.capacity._compare import compare
from kschedlib.capacity._drain_plan import drain
from kschedlib.capacity._nodes_needed import nodes_needed
from kschedlib.capacity._replicas import max_replicas
from kschedlib.errors import ManifestError
from kschedlib.progress import Progress
from kschedlib.report.command import html_writer
from kschedlib.versions import add_version_arguments

__all__ = ["COMMANDS", "add_parsers", "run"]

COMMANDS = ("capacity", "drain", "nodes-needed", "compare")
FORMATS = ("json", "yaml", "csv", "text", "html")


class _Answer(Protocol):
    def to_dict(self) -> dict[str, Any]: ...
    def rows(self) -> list[dict[str, Any]]: ...
    def text(self) -> str: ...


def _common(parser: argparse.ArgumentParser, *, config: bool = True) -> None:
    parser.add_argument("cluster", nargs="+", help="cluster file(s) (Kubernetes v1 objects, JSON or YAML), read as one")
    if config:
        parser.add_argument("--config", help="KubeSchedulerConfiguration file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--expand-controllers", action="store_true",
                        help="create the pods of Deployments, ReplicaSets, StatefulSets, Jobs and DaemonSets first")
    parser.add_argument("--format", choices=FORMATS, default="text")
    add_version_arguments(parser)


def add_parsers(sub: Any) -> None:
    """Add the four subcommands to the ``kschedlib`` parser."""
    cap = sub.add_parser("capacity", help="how many more copies of a pod fit (cluster-capacity)")
    _common(cap)
    cap.add_argument("--pod", action="append", required=True,
                     help="namespace/name of a pod in the cluster, or a pod file; repeat for round robin")
    cap.add_argument("--max", type=int, default=None, help="stop after this many copies")
    cap.add_argument("--include-pending", action="store_true", help="schedule the cluster's pending pods first")
    dr = sub.add_parser("drain", help="remove nodes and reschedule their pods (cluster-autoscaler's drain)")
    _common(dr)
    dr.add_argument("--node", action="append", required=True, help="node to drain; repeat for several (in order)")
    dr.add_argument("--ignore-pdbs", action="store_true",
                    help="drain even when a PodDisruptionBudget forbids it (violations are still reported)")
    need = sub.add_parser("nodes-needed", help="how many nodes of a template the pending pods need")
    _common(need)
    need.add_argument("--node-template", required=True, help="file with one v1 Node")
    need.add_argument("--max", type=int, default=100, help="most template nodes to try (default 100)")
    cmp = sub.add_parser("compare", help="the cluster scheduled under two configs, side by side")
    _common(cmp, config=False)
    cmp.add_argument("--config", action="append", required=True,
                     help="KubeSchedulerConfiguration file, or 'default'; give two or more")


def _config(value: str | None) -> str | None:
    return None if value in (None, "default") else value


UNITS = {"capacity": "copies placed", "drain": "pods tried", "nodes-needed": "tries", "compare": "configs run"}
"""What each command's progress line counts."""


def _answer(args: argparse.Namespace, meter: Progress) -> _Answer:
    versions: dict[str, Any] = {"kube_version": args.kube_version, "feature_gates": args.feature_gates,
                                "seed": args.seed, "expand_controllers": args.expand_controllers,
                                "progress": meter.update if meter.enabled else None}
    if args.command == "capacity":
        return max_replicas(args.cluster, args.pod, args.config, limit=args.max,
                            include_pending=args.include_pending, **versions)
    if args.command == "drain":
        return drain(args.cluster, args.node, args.config, respect_pdbs=not args.ignore_pdbs, **versions)
    if args.command == "nodes-needed":
        return nodes_needed(args.cluster, args.node_template, args.config, limit=args.max, **versions)
    labels = list(args.config)
    return compare(args.cluster, [_config(c) for c in args.config], labels=labels, **versions)


def _csv(rows: list[dict[str, Any]], out: TextIO) -> None:
    columns: list[str] = []
    for row in rows:
        columns.extend(key for key in row if key not in columns)
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def _yaml(data: dict[str, Any], out: TextIO) -> None:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ManifestError("YAML output needs PyYAML: pip install 'kschedlib[yaml]'", obj="--format") from exc
    yaml.safe_dump(data, out, sort_keys=False, default_flow_style=False)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """Answer the subcommand's question and print it in the chosen format; progress goes to ``err``
    when it is a terminal."""
    with Progress(unit=UNITS[args.command], label=args.command, stream=err) as meter:
        answer = _answer(args, meter)
    if args.format == "json":
        json.dump(answer.to_dict(), out, indent=2)
        out.write("\n")
    elif args.format == "yaml":
        _yaml(answer.to_dict(), out)
    elif args.format == "csv":
        _csv(answer.rows(), out)
    elif args.format == "html":
        html_writer(args.command, answer, out)
    else:
        out.write(answer.text() + "\n")
