"""The ``capacity``, ``drain``, ``nodes-needed`` and ``compare`` subcommands of the ``kschedlib`` command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Final, Protocol, TextIO

from kschedlib._cli.formats import write
from kschedlib._cli.help import UNSCHEDULABLE_STATUS, examples
from kschedlib._cli.options import add_cluster_arguments, add_common_arguments, add_fail_on_unschedulable
from kschedlib._cli.plugin_modules import plugins_registry
from kschedlib.capacity._compare import compare
from kschedlib.capacity._drain_plan import drain
from kschedlib.capacity._nodes_needed import nodes_needed
from kschedlib.capacity._replicas import max_replicas
from kschedlib.kube.sources import cluster_input
from kschedlib.progress import Progress

__all__ = ["COMMANDS", "add_arguments"]

COMMANDS: Final = ("capacity", "drain", "nodes-needed", "compare")

UNITS: Final = {"capacity": "copies placed", "drain": "pods tried", "nodes-needed": "tries", "compare": "configs run"}
"""What each command's progress line counts."""


class _Answer(Protocol):
    def to_dict(self) -> dict[str, Any]: ...
    def rows(self) -> list[dict[str, Any]]: ...
    def text(self) -> str: ...


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The arguments of one of :data:`COMMANDS`."""
    _ARGUMENTS[command](parser)
    parser.set_defaults(run=run)


def _capacity(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Add copies of a pod one at a time, each placed by a full kube-scheduler cycle (as "
                          "cluster-capacity does), until one fits nowhere; say how many fit, where, and what "
                          "stopped the next one (including the pods a preemption would evict).")
    add_cluster_arguments(parser)
    parser.add_argument("--pod", action="append", required=True, metavar="POD",
                        help="namespace/name of a pod in the cluster, a pod file, or (with --expand-controllers) "
                             "a Deployment, ReplicaSet, StatefulSet or Job file; repeat for round robin")
    parser.add_argument("--max", type=int, default=None, metavar="N", help="stop after N copies (default: no limit)")
    parser.add_argument("--include-pending", action="store_true",
                        help="schedule the cluster's pending pods first (by default they are left out, and the "
                             "output says how many)")
    add_common_arguments(parser)
    parser.epilog = examples(
        "kschedlib capacity cluster.json --pod default/web-1              # more copies of a pod of the cluster",
        "kschedlib capacity cluster.json --pod web.json --max 10 --format json",
        "kschedlib capacity cluster.json --pod deploy.yaml --expand-controllers   # a Deployment's pod",
        "kschedlib capacity cluster.json --pod web.json --pod batch.json --include-pending",
    )


def _drain(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Take nodes away and reschedule their pods as cluster-autoscaler's drain simulation "
                          "does: DaemonSet and mirror pods stay, PodDisruptionBudgets are honoured, and the moved "
                          "pods are scheduled as kube-scheduler would (retries, preemption).")
    add_cluster_arguments(parser)
    parser.add_argument("--node", action="append", required=True, metavar="NODE",
                        help="node to drain; repeat for several (drained in order)")
    parser.add_argument("--ignore-pdbs", action="store_true",
                        help="drain even when a PodDisruptionBudget forbids it (the violations are still reported)")
    add_fail_on_unschedulable(parser, "a moved pod finds no node, or a node is not drained")
    add_common_arguments(parser)
    parser.epilog = examples(
        "kschedlib drain cluster.json --node node-a                      # what moves where",
        "kschedlib drain cluster.json --node node-a --node node-c --format yaml",
        "kschedlib drain cluster.json --node node-a --ignore-pdbs --fail-on-unschedulable   # in CI",
    )


def _nodes_needed(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Find the fewest nodes like a template to add so that the pending pods are scheduled; "
                          "say which pods needed each new node, and which pods no number of such nodes helps "
                          "(with the reason: a FitError, a scheduling gate, a deletion).")
    add_cluster_arguments(parser)
    parser.add_argument("--node-template", required=True, metavar="FILE", help="file with one v1 Node")
    parser.add_argument("--max", type=int, default=100, metavar="N",
                        help="most template nodes to try (default 100)")
    parser.add_argument("--only-unschedulable", action="store_true",
                        help="plan only for the pending pods that fit nowhere in the cluster as it is, each "
                             "checked on its own (the others, which fit on an existing node or by preemption, "
                             "are left out)")
    add_common_arguments(parser)
    parser.epilog = examples(
        "kschedlib nodes-needed cluster.json --node-template pool-node.json",
        "kschedlib nodes-needed cluster.json --node-template pool-node.json --only-unschedulable --format csv",
    )


def _compare(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Schedule the cluster's pending pods under each config (as simulate does) and put the "
                          "runs side by side: counts, utilisation, fragmentation and the pods placed differently.")
    add_cluster_arguments(parser)
    parser.add_argument("--config", action="append", required=True, metavar="FILE",
                        help="KubeSchedulerConfiguration file, or 'default' (kube-scheduler's default profile); "
                             "give two or more")
    add_common_arguments(parser, config=False)
    parser.epilog = examples(
        "kschedlib compare cluster.json --config default --config packing.yaml",
        "kschedlib compare cluster.json --config default --config packing.yaml --format json",
    )


_ARGUMENTS: Final[dict[str, Callable[[argparse.ArgumentParser], None]]] = {
    "capacity": _capacity, "drain": _drain, "nodes-needed": _nodes_needed, "compare": _compare}


def _config(value: str | None) -> str | None:
    return None if value in (None, "default") else value


def _answer(args: argparse.Namespace, meter: Progress) -> _Answer:
    versions: dict[str, Any] = {"kube_version": args.kube_version, "feature_gates": args.feature_gates,
                                "seed": args.seed, "expand_controllers": args.expand_controllers,
                                "progress": meter.update if meter.enabled else None,
                                "registry": plugins_registry(args.plugins)}
    if args.command == "capacity":
        return max_replicas(args.cluster, args.pod, args.config, limit=args.max,
                            include_pending=args.include_pending, **versions)
    if args.command == "drain":
        return drain(args.cluster, args.node, args.config, respect_pdbs=not args.ignore_pdbs, **versions)
    if args.command == "nodes-needed":
        return nodes_needed(args.cluster, args.node_template, args.config, limit=args.max,
                            only_unschedulable=args.only_unschedulable, **versions)
    labels = list(args.config)
    return compare(args.cluster, [_config(c) for c in args.config], labels=labels, **versions)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Answer the subcommand's question and print it in the chosen format; progress goes to ``err``
    when it is a terminal."""
    args.cluster = cluster_input(args)
    with Progress(unit=UNITS[args.command], label=args.command, stream=err) as meter:
        answer = _answer(args, meter)
    write(args.command, answer, args.format, out)
    if getattr(args, "fail_on_unschedulable", False):
        data = answer.to_dict()
        if data["unschedulable"] or data["blocked"]:
            return UNSCHEDULABLE_STATUS
    return 0
