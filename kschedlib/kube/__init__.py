"""kschedlib on a live cluster (the ``kube`` extra): snapshots for the read-only commands, and a scheduler process.

    import kschedlib.kube

    cluster = kschedlib.kube.snapshot("~/.kube/config")      # a Cluster, as load_cluster reads a dump
    kschedlib.explain(cluster, "default/web-1")
    kschedlib.kube.run("my-scheduler.yaml")                   # schedule until SIGTERM, as a second scheduler

Importing this package imports no client library; connecting does, and without the extra it raises
:class:`~kschedlib.errors.ExtraNotInstalledError` (``pip install 'kschedlib[kube]'``).
"""

import typing

from kschedlib._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
    from kschedlib.errors import LoopNotRunning
    from kschedlib.kube.client import KubeApiError, KubeClient, RateLimiter, connect
    from kschedlib.kube.scheduler import LiveScheduler, run
    from kschedlib.kube.settings import ClientConnection, LeaderElection, RunSettings, read_settings
    from kschedlib.kube.sources import dump, snapshot

__getattr__, __dir__ = _lazy_exports(globals(), {
    "kschedlib.kube.client": ("KubeApiError", "KubeClient", "RateLimiter", "connect"),
    "kschedlib.errors": ("LoopNotRunning",),
    "kschedlib.kube.scheduler": ("LiveScheduler", "run"),
    "kschedlib.kube.settings": ("ClientConnection", "LeaderElection", "RunSettings", "read_settings"),
    "kschedlib.kube.sources": ("dump", "snapshot"),
})  # imported on first use: the commands that take --kubeconfig load only kube.sources

__all__ = [
    "ClientConnection",
    "KubeApiError",
    "KubeClient",
    "LeaderElection",
    "LiveScheduler",
    "LoopNotRunning",
    "RateLimiter",
    "RunSettings",
    "connect",
    "dump",
    "read_settings",
    "run",
    "snapshot",
]
