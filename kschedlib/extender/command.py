"""``python -m kschedlib serve-extender``: a profile's plugins as an HTTP extender for kube-scheduler."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import TextIO

from kschedlib._cli.help import examples
from kschedlib.extender.limits import DEFAULT_LIMITS, ExtenderLimits
from kschedlib.extender.server import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_BYTES_IN_FLIGHT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_PROBE_CONNECTIONS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_SWITCH_INTERVAL,
    ExtenderServer,
)
from kschedlib.versions import add_version_arguments

__all__ = ["add_arguments", "run"]


def add_arguments(cmd: argparse.ArgumentParser, command: str) -> None:
    """The ``serve-extender`` arguments."""
    cmd.description = ("Serve a profile's Filter and Score plugins (yours included) over kube-scheduler's HTTP "
                       "extender protocol, so that a real kube-scheduler can call them through its config's "
                       "extenders section. Runs until interrupted; the first output line is the URL.")
    cmd.add_argument("--config", required=True, metavar="FILE",
                     help="KubeSchedulerConfiguration file (its extenders are ignored)")
    cmd.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    cmd.add_argument("--port", type=int, default=8888, help="port (0 picks a free one; default 8888)")
    cmd.add_argument("--profile", metavar="NAME", help="schedulerName of the profile to serve (default: the first)")
    cmd.add_argument("--cluster", metavar="FILE",
                     help="nodes and bound pods to start from (needed for nodeCacheCapable)")
    cmd.add_argument("--scores", choices=("raw", "extender"), default="raw",
                     help="raw: the profile's weighted totals (default); extender: rescaled to 0..10")
    cmd.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES, metavar="N",
                     help=f"largest request body accepted; more is a 413 (default {DEFAULT_MAX_BODY_BYTES})")
    cmd.add_argument("--request-timeout", type=float, default=DEFAULT_REQUEST_TIMEOUT, metavar="SECONDS",
                     help="seconds a whole request may take to arrive, from its first byte (default 10)")
    cmd.add_argument("--work-timeout", type=float, default=DEFAULT_LIMITS.work_timeout, metavar="SECONDS",
                     help="seconds to compute an answer before giving up with a 503 (default 5, kube's httpTimeout)")
    cmd.add_argument("--max-nodes", type=int, default=DEFAULT_LIMITS.max_nodes, metavar="N",
                     help="nodes one request may name; more is a 413 (default 5000)")
    cmd.add_argument("--max-terms", type=int, default=DEFAULT_LIMITS.max_terms, metavar="N",
                     help="affinity terms and spread constraints of a pod; more is a 422 (default 32)")
    cmd.add_argument("--workers", type=int, default=DEFAULT_LIMITS.workers, metavar="N",
                     help="requests computed at once (default 4)")
    cmd.add_argument("--node-cache-size", type=int, default=DEFAULT_LIMITS.node_cache_size, metavar="N",
                     help="parsed request nodes kept between requests (default 5000)")
    cmd.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS, metavar="N",
                     help="connections served at once (default 64)")
    cmd.add_argument("--max-bytes-in-flight", type=int, default=DEFAULT_MAX_BYTES_IN_FLIGHT, metavar="N",
                     help="bytes of request bodies read and not yet answered; others wait (default 64 MiB)")
    cmd.add_argument("--probe-connections", type=int, default=DEFAULT_PROBE_CONNECTIONS, metavar="N",
                     help="connections kept beyond --max-connections for GET /healthz alone (default 4)")
    cmd.add_argument("--switch-interval", type=float, default=DEFAULT_SWITCH_INTERVAL, metavar="SECONDS",
                     help="seconds a computing thread may hold the interpreter while the connections wait "
                          "(default 0.001; 0 leaves Python's own)")
    add_version_arguments(cmd)
    cmd.epilog = examples(
        "kschedlib serve-extender --config my-profile.yaml --port 8888",
        "kschedlib serve-extender --config my-profile.yaml --host 0.0.0.0 --scores extender --workers 8",
    )
    cmd.set_defaults(run=lambda args, out, err: run(args, out))


def run(args: argparse.Namespace, out: TextIO, *, stop: threading.Event | None = None) -> int:
    """Serve until SIGINT/SIGTERM (or ``stop`` is set); the first output line is the URL."""
    limits = ExtenderLimits(max_nodes=args.max_nodes, max_terms=args.max_terms, work_timeout=args.work_timeout,
                            workers=args.workers, node_cache_size=args.node_cache_size)
    server = ExtenderServer(args.config, host=args.host, port=args.port, cluster=args.cluster,
                            profile=args.profile, scores=args.scores, limits=limits,
                            max_body_bytes=args.max_body_bytes, request_timeout=args.request_timeout,
                            max_connections=args.max_connections, max_bytes_in_flight=args.max_bytes_in_flight,
                            probe_connections=args.probe_connections,
                            switch_interval=args.switch_interval or None, kube_version=args.kube_version,
                            feature_gates=args.feature_gates)
    done = stop if stop is not None else threading.Event()
    if stop is None and threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: done.set())
    with server:
        verbs = ", ".join(server.service.verbs)
        out.write(f"serving extender on {server.url} (verbs: {verbs}; profile {server.service.profile})\n")
        out.flush()
        while not done.wait(0.2):
            pass
    return 0
