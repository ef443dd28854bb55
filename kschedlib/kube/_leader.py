"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's leaderelection package runs it.

A candidate tries every ``retry_period`` to take the Lease (when it is free or its holder has not renewed it for
``lease_duration``) and, once leader, renews it every ``retry_period``; a leader that could not renew within
``renew_deadline`` stops leading.  Taking and renewing are updates with the Lease's resourceVersion, so two
candidates can never both succeed; on a graceful stop the leader hands the Lease back (empty holder, duration
1 s) so a standby takes over at once.  Defaults are kube-scheduler's: 15 s, 10 s, 2 s.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Final, final

from kschedlib.kube._events import micro_time
from kschedlib.kube.client import KubeApiError, KubeClient
from kschedlib.kube.settings import LeaderElection

__all__ = ["LeaderElector"]

log = logging.getLogger("kschedlib.kube")
_LEASES: Final = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"


@final
class LeaderElector:
    """Runs the election on its own thread; :attr:`leading` is set while this process holds the Lease."""

    def __init__(self, client: KubeClient, settings: LeaderElection, *, on_lost: Callable[[], None],
                 on_started: Callable[[dict[str, Any]], None] | None = None,
                 on_leading: Callable[[], None] | None = None, identity: str | None = None) -> None:
        self.client = client
        self.settings = settings
        self.identity = identity if identity is not None else f"{socket.gethostname()}_{uuid.uuid4()}"
        self.leading = threading.Event()
        self.stop = threading.Event()
        self.on_lost = on_lost
        self.on_started = on_started
        self.on_leading = on_leading
        """Called once :attr:`leading` is set, so a loop waiting for leadership starts at once."""
        self._renewed = 0.0
        self._observed: tuple[str, str] = ("", "")  # the holder and renewTime last seen
        self._observed_at = 0.0  # when they last changed (our clock: clocks of two machines never compared)
        self.thread = threading.Thread(target=self._run, name="leader-election", daemon=True)

    @property
    def _path(self) -> str:
        return _LEASES.format(namespace=self.settings.resource_namespace) + f"/{self.settings.resource_name}"

    def start(self) -> None:
        self.thread.start()

    def healthy(self) -> bool:
        """False when we lead but have not renewed for longer than the lease (client-go's health adaptor)."""
        return not self.leading.is_set() or time.monotonic() - self._renewed <= self.settings.lease_duration + 20

    def _run(self) -> None:
        period = self.settings.retry_period
        while not self.stop.is_set():
            if self._attempt():
                if not self.leading.is_set():
                    self.leading.set()
                    log.info("successfully acquired lease %s/%s", self.settings.resource_namespace,
                             self.settings.resource_name)
                    if self.on_leading is not None:
                        self.on_leading()
                self._renewed = time.monotonic()
            elif self.leading.is_set() and time.monotonic() - self._renewed > self.settings.renew_deadline:
                log.error("leader election lost: could not renew %s within %.0f s", self._path,
                          self.settings.renew_deadline)
                self.leading.clear()
                self.on_lost()
                return
            self.stop.wait(period * (1.2 if not self.leading.is_set() else 1.0))  # client-go jitters the tries

    def _attempt(self) -> bool:
        """:meth:`_try`, an unexpected error counting as a failed try: the thread never dies leading, unrenewed."""
        try:
            return self._try()
        except Exception:
            log.exception("leader election: an attempt on %s failed", self._path)
            return False

    def _try(self) -> bool:
        """One attempt to take or renew the Lease; whether we hold it now."""
        now = micro_time(time.time())
        try:
            lease = self.client.request("GET", self._path, timeout=self.settings.renew_deadline)
        except KubeApiError as exc:
            if exc.status != 404:
                log.warning("leader election: reading the lease failed: %s", exc)
                return False
            return self._create(now)
        spec = lease.setdefault("spec", {})
        holder = spec.get("holderIdentity") or ""
        renewed = str(spec.get("renewTime"))
        if (holder, renewed) != self._observed:
            self._observed = (holder, renewed)
            self._observed_at = time.monotonic()
        duration = float(spec.get("leaseDurationSeconds") or self.settings.lease_duration)
        expired = time.monotonic() - self._observed_at > duration
        if holder and holder != self.identity and not expired:
            return False
        if holder != self.identity:
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if holder else 0)
            spec["acquireTime"] = now
        spec.update(holderIdentity=self.identity, leaseDurationSeconds=int(self.settings.lease_duration),
                    renewTime=now)
        try:
            self.client.request("PUT", self._path, body=lease, timeout=self.settings.renew_deadline)
        except KubeApiError as exc:
            log.info("leader election: the lease update was refused (%s)", exc.status)
            return False
        if holder != self.identity and self.on_started is not None:
            self.on_started(lease)
        return True

    def _create(self, now: str) -> bool:
        body = {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
                "metadata": {"name": self.settings.resource_name, "namespace": self.settings.resource_namespace},
                "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.settings.lease_duration),
                         "acquireTime": now, "renewTime": now, "leaseTransitions": 0}}
        try:
            created = self.client.request("POST", _LEASES.format(namespace=self.settings.resource_namespace),
                                          body=body, timeout=self.settings.renew_deadline)
        except KubeApiError as exc:
            log.info("leader election: creating the lease was refused (%s)", exc.status)
            return False
        if self.on_started is not None:
            self.on_started(created)
        return True

    def release(self) -> None:
        """Stop, and hand the Lease back if we hold it (kube-scheduler releases on cancel)."""
        self.stop.set()
        if self.thread.ident is not None:  # never started when the scheduler stopped before reading the cluster
            self.thread.join(timeout=self.settings.renew_deadline)
        if not self.leading.is_set():
            return
        self.leading.clear()
        try:
            lease = self.client.request("GET", self._path)
            spec = lease.setdefault("spec", {})
            if spec.get("holderIdentity") != self.identity:
                return
            now = micro_time(time.time())
            spec.update(holderIdentity="", leaseDurationSeconds=1, acquireTime=now, renewTime=now)
            self.client.request("PUT", self._path, body=lease)
        except KubeApiError as exc:
            log.warning("leader election: releasing the lease failed: %s", exc)
