"""``kschedlib explain`` and ``kschedlib simulate``: one pod's scheduling cycle, or all pending pods."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from kschedlib._cli.formats import write
from kschedlib._cli.help import UNSCHEDULABLE_STATUS, examples
from kschedlib._cli.options import add_cluster_arguments, add_common_arguments, add_fail_on_unschedulable
from kschedlib._cli.plugin_modules import plugins_registry
from kschedlib.kube.sources import cluster_input
from kschedlib.progress import Progress
from kschedlib.simulation.explain import explain
from kschedlib.simulation.report import ExplainAnswer, SimulationAnswer

__all__ = ["EXAMPLE_CLUSTER", "add_arguments"]

EXAMPLE_CLUSTER = "example-cluster.json"
"""The bundled cluster ``simulate`` schedules when given no file."""


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``explain`` or ``simulate``."""
    if command == "explain":
        _explain_arguments(parser)
    else:
        _simulate_arguments(parser)


def _explain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Run one scheduling cycle for one pod, as kube-scheduler would, and show every node's "
                          "verdict (the first Filter plugin that rejected it, with kube's reason) and every "
                          "feasible node's scores. Nothing is changed.")
    add_cluster_arguments(parser)
    parser.add_argument("--pod", required=True, metavar="POD",
                        help="namespace/name of a pod in the cluster (a bare name when unique), or a pod file")
    parser.add_argument("--start-index", type=int, default=0, metavar="N",
                        help="where the node search starts, as kube-scheduler's rotating index would after "
                             "earlier cycles (matters only when the config samples nodes; default 0)")
    add_common_arguments(parser, expand=False)
    parser.epilog = examples(
        "kschedlib explain cluster.json --pod default/web-1              # a table of every node",
        "kschedlib explain cluster.json --pod default/web-1 --format json  # the same, for scripts",
        "kschedlib explain cluster.json --pod new-pod.yaml --config packing.yaml --kube-version 1.33",
    ) + "\n\nexit status: 0, or 1 when no profile schedules the pod (its schedulerName), 2 for bad input."
    parser.set_defaults(run=_explain)


def _simulate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Schedule the cluster's pending pods one after another, as kube-scheduler's loop "
                          "would (retries, backoff and preemption on a simulated clock), and say where each went "
                          "and why the others fit nowhere.")
    add_cluster_arguments(parser, help="cluster file(s), read as one cluster, or --kubeconfig (default: a bundled "
                                       "example, named in the output)")
    parser.add_argument("--once", action="store_true", help="give every pending pod exactly one attempt (no retries)")
    parser.add_argument("--events", metavar="FILE",
                        help="timeline of cluster changes to apply while simulating (a JSON or YAML list of "
                             "{op, ...} events; see the API reference)")
    add_fail_on_unschedulable(parser, "a pending pod is left unschedulable")
    add_common_arguments(parser)
    parser.epilog = examples(
        "kschedlib simulate                                  # the bundled example",
        "kschedlib simulate cluster.json                     # where the pending pods go",
        "kschedlib simulate nodes.json pods.json --once      # two files as one cluster, one attempt per pod",
        "kschedlib simulate cluster.json --format json --fail-on-unschedulable  # in CI",
    )
    parser.set_defaults(run=_simulate)


def _simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from importlib import resources  # here: ``explain`` never reads the bundled example

    from kschedlib.simulation.simulator import simulate  # here: ``explain`` does not import the simulation

    meter = Progress(unit="attempts", label="simulate", stream=err)  # of the pods' first attempts: ETA
    with resources.as_file(resources.files("kschedlib.simulation.data") / EXAMPLE_CLUSTER) as example:
        cluster: Any = cluster_input(args, default=example)
        files = _inputs(args) or (str(example),)
        source = " ".join(files) if args.cluster else (f"{example} (the bundled example)" if cluster is example
                                                        else f"the live cluster ({' '.join(files)})")
        if args.expand_controllers:
            from kschedlib.capacity import expand_controllers

            cluster = expand_controllers(cluster)
        report = simulate(cluster, args.config, seed=args.seed, once=args.once, events=args.events,
                          registry=plugins_registry(args.plugins),
                          progress=meter.update if meter.enabled else None, kube_version=args.kube_version,
                          feature_gates=args.feature_gates)
    summary = report.summary()
    meter.close(f"{sum(report.attempts.values())} attempts, {summary['pods']} pods: {summary['scheduled']} scheduled")
    write("simulate", SimulationAnswer(report, source, files, bundled=cluster is example), args.format, out)
    if args.fail_on_unschedulable and report.unschedulable:
        return UNSCHEDULABLE_STATUS
    return 0


def _inputs(args: argparse.Namespace) -> tuple[str, ...]:
    """What the command read, as arguments to repeat: its files, or its live cluster's options."""
    if args.kubeconfig is None and args.context is None:
        return tuple(args.cluster)
    live = ("--kubeconfig", *([args.kubeconfig] if args.kubeconfig else []))
    return (*live, *(("--context", args.context) if args.context else ()))


def _explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    result = explain(cluster_input(args), args.pod, args.config, start_index=args.start_index, seed=args.seed,
                     registry=plugins_registry(args.plugins),
                     kube_version=args.kube_version, feature_gates=args.feature_gates)
    write("explain", ExplainAnswer(result), args.format, out)
    if result.refused:
        err.write(f"kschedlib: error: {result.error}\n")
        return 1
    return 0
