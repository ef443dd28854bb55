"""Events as kube-scheduler records them: ``events.k8s.io/v1``, sent from threads of their own on a client
with its own rate limiter (kube-scheduler gives its event client one), never holding up scheduling.

An Event's name is the object's name and the time in hex nanoseconds; ``reportingController`` is the profile's
scheduler name and ``reportingInstance`` that name, a dash and the host name.  An event identical to one
already sent (same reason, action, controller, note and object version) turns the first into a series, patched
once with ``series.count: 2``; later repeats only count, as client-go's event broadcaster does.  A series patch
that finds no event (the first is still being created on another thread, or the API server's event TTL removed
it) creates it with its series instead, as client-go does.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, final

from kschedlib.kube.client import KubeApiError, KubeClient

__all__ = ["NOTE_LIMIT", "EventRecorder", "micro_time", "reference", "truncate"]

NOTE_LIMIT: Final = 1024
"""kube's limit on an event note, in bytes; longer notes end in `` ...``."""
log = logging.getLogger("kschedlib.kube")
_SERIES_KEPT: Final = 10_000


def truncate(message: str) -> str:
    """A note cut to :data:`NOTE_LIMIT` characters as kube-scheduler cuts it."""
    if len(message) <= NOTE_LIMIT:
        return message
    suffix = " ..."
    return message[: NOTE_LIMIT - len(suffix)] + suffix


def micro_time(at: float) -> str:
    """RFC 3339 with microseconds (a MicroTime)."""
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def reference(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The ObjectReference an event's ``regarding`` holds."""
    meta = obj.get("metadata") or {}
    ref = {"kind": obj.get("kind", "Pod"), "namespace": meta.get("namespace"), "name": meta.get("name"),
           "uid": meta.get("uid"), "apiVersion": obj.get("apiVersion", "v1"),
           "resourceVersion": meta.get("resourceVersion")}
    return {key: value for key, value in ref.items() if value}


@final
class EventRecorder:
    """Queues events and sends them on ``senders`` threads; :meth:`close` sends what is queued (bounded)."""

    def __init__(self, client: KubeClient, *, hostname: str | None = None, senders: int = 4) -> None:
        self.client = client
        self.hostname = hostname if hostname is not None else socket.gethostname()
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._series: dict[tuple[str, ...], dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.sent = 0
        self.threads = [threading.Thread(target=self._run, name=f"events-{i}", daemon=True) for i in range(senders)]
        for thread in self.threads:
            thread.start()

    def record(self, regarding: Mapping[str, Any], *, controller: str, event_type: str, reason: str, action: str,
               note: str) -> None:
        """Queue one event about ``regarding`` (an object with kind, apiVersion and metadata)."""
        now = time.time()
        ref = reference(regarding)
        event = {
            "kind": "Event", "apiVersion": "events.k8s.io/v1",
            "metadata": {"name": f"{ref.get('name')}.{int(now * 1e9):x}",
                         "namespace": ref.get("namespace") or "default"},
            "eventTime": micro_time(now), "reportingController": controller,
            "reportingInstance": f"{controller}-{self.hostname}", "action": action, "reason": reason,
            "regarding": ref, "note": truncate(note), "type": event_type,
        }
        self._queue.put(event)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            try:
                self._send(event)
            except KubeApiError as exc:
                log.warning("event %s/%s not recorded: %s", event["metadata"]["namespace"], event["metadata"]["name"],
                            exc)
            except Exception:  # a failed event never stops the recorder
                log.exception("event not recorded")

    def _send(self, event: dict[str, Any]) -> None:
        ref = event["regarding"]
        key = (event["action"], event["reason"], event["reportingController"], event["note"],
               ref.get("namespace", ""), ref.get("name", ""), ref.get("uid", ""), ref.get("resourceVersion", ""))
        with self._lock:
            first = self._series.get(key)
            if first is None:
                if len(self._series) >= _SERIES_KEPT:  # client-go forgets series after a while, too
                    self._series.clear()
                self._series[key] = event
            else:
                series = first.setdefault("series", {"count": 1})
                series["count"] += 1
                series["lastObservedTime"] = event["eventTime"]
                if series["count"] > 2:  # the event becomes a series once; later repeats are counted here
                    return
                series = dict(series)
        if first is None:
            self._create(event)
        else:
            self._count(first, series)
        with self._lock:
            self.sent += 1

    def _create(self, event: dict[str, Any]) -> None:
        namespace = event["metadata"]["namespace"]
        self.client.request("POST", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", body=event)

    def _count(self, first: dict[str, Any], series: dict[str, Any]) -> None:
        """Patch the first event into a series; create it with the series when it is not there (yet, or any more)."""
        path = f"/apis/events.k8s.io/v1/namespaces/{first['metadata']['namespace']}/events/{first['metadata']['name']}"
        for _ in range(2):
            try:
                self.client.request("PATCH", path, body={"series": series}, content_type="application/merge-patch+json")
                return
            except KubeApiError as exc:
                if exc.status != 404:
                    raise
            try:
                self._create({**first, "series": series})
                return
            except KubeApiError as exc:  # the first one's own create landed meanwhile: patch it after all
                if exc.status != 409:
                    raise

    def close(self, timeout: float = 10.0) -> None:
        """Send what is queued (for at most ``timeout`` seconds), then stop."""
        for _ in self.threads:
            self._queue.put(None)
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
