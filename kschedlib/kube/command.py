"""The ``dump`` and ``run`` subcommands (the ``kube`` extra)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any, TextIO

from kschedlib.kube.sources import add_live_arguments, dump
from kschedlib.versions import add_version_arguments

__all__ = ["add_parsers", "configure_logging"]


def add_parsers(sub: Any) -> None:
    """Add ``dump`` and ``run``."""
    dp = sub.add_parser("dump", help="write a live cluster as one file every command reads (a consistent snapshot)")
    add_live_arguments(dp)
    dp.add_argument("--output", "-o", default="-", help="file to write (default: standard output)")
    dp.set_defaults(run=_dump)
    rn = sub.add_parser("run", help="schedule a live cluster's pods, as a (second) scheduler")
    rn.add_argument("--kubeconfig", default=None, metavar="PATH",
                    help="kubeconfig of the cluster (default: the config's clientConnection.kubeconfig, "
                         "else the in-cluster service account)")
    rn.add_argument("--context", default=None, help="kubeconfig context to use")
    rn.add_argument("--config", default=None, help="KubeSchedulerConfiguration file (profiles, clientConnection, "
                                                   "leaderElection); default: the default profile")
    add_version_arguments(rn)
    rn.add_argument("--leader-elect", action="store_true",
                    help="run leader election on a coordination.k8s.io Lease (replicas: one schedules at a time)")
    rn.add_argument("--metrics-bind-address", default=None, metavar="HOST:PORT",
                    help="serve /healthz, /readyz and /metrics there (plain HTTP)")
    rn.add_argument("--plugins", action="append", default=[], metavar="MODULE",
                    help="module or .py file whose plugins to register; repeatable (entry points are always loaded)")
    rn.add_argument("--seed", type=int, default=None, help="seed of the tie-breaks (default: random)")
    rn.add_argument("-v", "--v", dest="verbosity", type=int, default=0, metavar="N",
                    help="log verbosity, as kube-scheduler's: 2 logs each decision, 3 each attempt")
    rn.set_defaults(run=_run)


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
