"""Live sources: a cluster read from its API server, for the read-only commands and for ``dump``.

Nothing is written to the cluster: a snapshot is one list per kind at one resourceVersion
(:mod:`kschedlib.kube._snapshot`), read into a :class:`~kschedlib.Cluster` as a dump file would be.
The command-line helpers here are what every command calls, so that ``--kubeconfig``/``--context`` mean the
same everywhere.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, TextIO

from kschedlib.errors import ConfigError
from kschedlib.simulation.cluster import Cluster

if TYPE_CHECKING:
    from kschedlib.kube.client import KubeClient

# The API client and the snapshot reader are imported by the functions that contact a cluster: every
# command parses these options, and most of them read files.

__all__ = ["add_live_arguments", "cluster_input", "dump", "live_clusters", "snapshot"]


def snapshot(kubeconfig: str | None = "", context: str | None = None, *, client: KubeClient | None = None) -> Cluster:
    """The cluster as its API server has it now (one list per kind at one resourceVersion), read as a dump;
    an object kschedlib cannot read is left out with a warning (the API server accepted it).

    ``kubeconfig`` ``""`` (the default) follows ``$KUBECONFIG`` then ``~/.kube/config``; ``None`` with no
    ``context`` uses the in-cluster service account; ``client`` overrides both.
    """
    from kschedlib.kube._loading import load_live
    from kschedlib.kube._snapshot import read_snapshot
    from kschedlib.kube.client import connect

    read = read_snapshot(client if client is not None else connect(kubeconfig, context))
    return load_live(read.objects, read.version)


def dump(out: TextIO, kubeconfig: str | None = "", context: str | None = None, *,
         client: KubeClient | None = None) -> int:
    """Write the snapshot to ``out`` as one v1 ``List`` (JSON); returns the number of objects written."""
    from kschedlib.kube._snapshot import read_snapshot, snapshot_document
    from kschedlib.kube.client import connect

    read = read_snapshot(client if client is not None else connect(kubeconfig, context))
    json.dump(snapshot_document(read.objects, read.version), out, indent=1)
    out.write("\n")
    return len(read.objects)


def add_live_arguments(parser: argparse.ArgumentParser) -> None:
    """``--kubeconfig [PATH]`` and ``--context``: read the cluster from its API server instead of a file."""
    group = parser.add_argument_group("live cluster (instead of cluster files; needs the kube extra)")
    group.add_argument("--kubeconfig", nargs="?", const="", default=None, metavar="PATH",
                       help="read the cluster from the API server of this kubeconfig (no PATH: $KUBECONFIG or "
                            "~/.kube/config); nothing is written to the cluster")
    group.add_argument("--context", default=None, help="kubeconfig context to use (default: its current context)")


def _live(args: argparse.Namespace) -> bool:
    return getattr(args, "kubeconfig", None) is not None or getattr(args, "context", None) is not None


def cluster_input(args: argparse.Namespace, *, default: Any = None) -> Any:
    """What the command reads: ``args.cluster`` (files), or the live snapshot with ``--kubeconfig``/``--context``,
    or ``default`` when neither is given.

    Both, or neither without a ``default``, is a :class:`~kschedlib.errors.ConfigError`.
    """
    files = list(getattr(args, "cluster", None) or ())
    if not _live(args):
        if files:
            return files
        if default is None:
            raise ConfigError("give cluster file(s) or --kubeconfig [PATH]", field="cluster", value=None)
        return default
    if files:
        raise ConfigError("give cluster files or --kubeconfig/--context, not both", field="cluster", value=files)
    return snapshot(args.kubeconfig if args.kubeconfig is not None else "", args.context)


def live_clusters(args: argparse.Namespace) -> dict[str, Cluster] | None:
    """``{"live": snapshot}`` with ``--kubeconfig``/``--context`` (a sweep's one cluster), else ``None``."""
    if not _live(args):
        return None
    return {"live": snapshot(args.kubeconfig if args.kubeconfig is not None else "", args.context)}
