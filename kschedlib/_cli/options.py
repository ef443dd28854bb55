"""The options several commands share, each with one help text."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from kschedlib._cli.formats import add_format_argument
from kschedlib.kube.sources import add_live_arguments
from kschedlib.versions import add_version_arguments

__all__ = ["add_cluster_arguments", "add_common_arguments", "add_config_argument", "add_expand_argument",
           "add_fail_on_unschedulable", "add_plugins_argument", "add_seed_argument"]

def add_cluster_arguments(parser: argparse.ArgumentParser, *, help: str = "") -> None:
    """Where the cluster comes from: files of Kubernetes v1 objects read as one cluster, or a live cluster
    (``--kubeconfig``/``--context``); the command's run reads it with
    :func:`kschedlib.kube.sources.cluster_input`."""
    parser.add_argument(
        "cluster", nargs="*", metavar="CLUSTER",
        help=help or "cluster file(s): Kubernetes v1 objects in JSON or YAML (kubectl get nodes,pods -A -o json), "
                     "several files read as one cluster; or --kubeconfig")
    add_live_arguments(parser)


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="KubeSchedulerConfiguration file (JSON or YAML; default: kube-scheduler's default "
                             "profile)")


def add_plugins_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugins", action="append", default=[], metavar="MODULE",
                        help="module or .py file whose plugins to register, for --config to enable; repeatable "
                             "(entry points are always loaded)")


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
    """``--config``, ``--plugins``, ``--seed``, ``--expand-controllers``, ``--format`` and the version options."""
    if config:
        add_config_argument(parser)
    add_plugins_argument(parser)
    add_seed_argument(parser)
    if expand:
        add_expand_argument(parser)
    add_format_argument(parser, extra=extra_formats)
    add_version_arguments(parser)
