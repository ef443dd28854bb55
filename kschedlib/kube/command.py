"""The ``dump`` and ``run`` subcommands (the ``kube`` extra)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TextIO

from kschedlib._cli.help import examples
from kschedlib._cli.options import add_plugins_argument
from kschedlib.kube.sources import add_live_arguments, dump
from kschedlib.versions import add_version_arguments

__all__ = ["add_arguments", "configure_logging"]


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``dump`` or ``run``."""
    (_dump_arguments if command == "dump" else _run_arguments)(parser)


def _dump_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Read a live cluster from its API server (one list per kind at one resourceVersion) "
                          "and write it as one file every other command reads. Nothing is written to the cluster.")
    add_live_arguments(parser)
    parser.add_argument("--output", "-o", default="-", metavar="FILE", help="file to write (default: standard output)")
    parser.epilog = examples(
        "kschedlib dump --kubeconfig -o cluster.json       # $KUBECONFIG or ~/.kube/config",
        "kschedlib dump --kubeconfig ~/.kube/prod --context eu-1 -o prod.json",
        "kschedlib simulate cluster.json                   # then ask it anything, offline",
    )
    parser.set_defaults(run=_dump)


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Schedule a live cluster's pods as a (second) scheduler: the pods whose schedulerName "
                          "a profile of --config names, with kube-scheduler's decisions, bindings, events and "
                          "status conditions. Runs until SIGTERM or Ctrl-C.")
    parser.add_argument("--kubeconfig", default=None, metavar="PATH",
                        help="kubeconfig of the cluster (default: the config's clientConnection.kubeconfig, "
                             "else the in-cluster service account)")
    parser.add_argument("--context", default=None, help="kubeconfig context to use")
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="KubeSchedulerConfiguration file (profiles, clientConnection, leaderElection); "
                             "default: the default profile")
    add_version_arguments(parser)
    parser.add_argument("--leader-elect", action="store_true",
                        help="run leader election on a coordination.k8s.io Lease (replicas: one schedules at a time)")
    parser.add_argument("--metrics-bind-address", default=None, metavar="HOST:PORT",
                        help="serve /healthz, /readyz and /metrics there (plain HTTP)")
    add_plugins_argument(parser)
    parser.add_argument("--seed", type=int, default=None, metavar="N",
                        help="seed of the tie-breaks (default: random)")
    parser.add_argument("-v", "--v", dest="verbosity", type=int, default=0, metavar="N",
                        help="log verbosity, as kube-scheduler's: 2 logs each decision, 3 each attempt")
    parser.epilog = examples(
        "kschedlib run --config my-scheduler.yaml --kubeconfig ~/.kube/config -v 2",
        "kschedlib run --config my-scheduler.yaml --leader-elect --metrics-bind-address 0.0.0.0:10259",
    )
    parser.set_defaults(run=_run)


def _dump(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    kubeconfig = args.kubeconfig if args.kubeconfig is not None else ""
    if args.output == "-":
        count = dump(out, kubeconfig, args.context)
    else:
        with open(args.output, "w", encoding="utf-8") as file:
            count = dump(file, kubeconfig, args.context)
    err.write(f"kschedlib: dumped {count} objects\n")
    return 0


def configure_logging(verbosity: int, stream: TextIO) -> None:
    """Lines as klog writes them (``I1203 18:13:14.195056 ...``) on ``stream``; warnings always, decisions
    from ``-v 2``."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname).1s%(asctime)s.%(msecs)03d000 %(threadName)s] %(message)s",
                                           datefmt="%m%d %H:%M:%S"))
    logger = logging.getLogger("kschedlib.kube")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO if verbosity > 0 else logging.WARNING)
    logger.propagate = False


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from kschedlib.kube.scheduler import run

    configure_logging(args.verbosity, err if err is not sys.stdout else sys.stderr)
    return run(args.config, kubeconfig=args.kubeconfig, context=args.context, kube_version=args.kube_version,
               feature_gates=args.feature_gates, leader_elect=args.leader_elect,
               metrics_bind_address=args.metrics_bind_address, plugins=args.plugins, seed=args.seed,
               verbosity=args.verbosity)
