"""List and watch one resource, as client-go's reflector does, on a thread of its own.

The informer starts from a list it is given (the snapshot the scheduler started with) and watches from its
resourceVersion: with bookmarks (so a quiet resource still moves its version on), resuming from the last version
seen when a watch ends (the API server closes each after a random time above its ``--min-request-timeout``),
backing off on errors (0.8 s doubling to 30 s, as client-go), and listing anew when the API server answers
410 Gone (the version was compacted away).  A relist is delivered as the differences from what was known:
additions, changes (a new resourceVersion) and deletions, so the consumer never misses a deletion.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final, final

from kschedlib.kube._resources import Resource
from kschedlib.kube._snapshot import list_all
from kschedlib.kube.client import KubeApiError, KubeClient, Stream

__all__ = ["ADDED", "DELETED", "MODIFIED", "Backoff", "Deliver", "Informer", "object_key"]

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"
Deliver = Callable[[Resource, str, dict[str, Any]], None]
"""Where changes go: ``(resource, ADDED|MODIFIED|DELETED, object)``, called on the informer's thread."""
log = logging.getLogger("kschedlib.kube")


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name`` (``name`` for cluster-scoped objects), as client-go's cache keys them."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


def resource_version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


@final
class Backoff:
    """client-go's reflector backoff: 0.8 s doubling to 30 s, with jitter, reset after a calm spell."""

    __slots__ = ("_delay", "initial", "maximum", "rng")

    def __init__(self, initial: float = 0.8, maximum: float = 30.0, rng: random.Random | None = None) -> None:
        self.initial = initial
        self.maximum = maximum
        self.rng = rng if rng is not None else random.Random()
        self._delay = 0.0

    def next(self) -> float:
        """The next wait."""
        self._delay = self.initial if self._delay == 0 else min(self._delay * 2, self.maximum)
        return self._delay * (1 + self.rng.random())

    def reset(self) -> None:
        self._delay = 0.0


class _Gone(Exception):
    """The watch's resourceVersion is too old (410): list again."""


@final
class Informer:
    """One resource's list and watch; changes go to ``deliver`` in the order the API server made them."""

    def __init__(self, client: KubeClient, resource: Resource, deliver: Deliver, *, stop: threading.Event,
                 initial: list[dict[str, Any]], version: str, read_timeout: float = 330.0,
                 backoff: Backoff | None = None) -> None:
        self.client = client
        self.resource = resource
        self.deliver = deliver
        self.stop = stop
        self.store: dict[str, dict[str, Any]] = {object_key(o): o for o in initial}
        self.version = version
        self.read_timeout = read_timeout
        """A watch silent this long is given up and made again (bookmarks come about every minute)."""
        self.backoff = backoff if backoff is not None else Backoff()
        self.relists = 0
        """Lists after the first (410 Gone), for logs and tests."""
        self.watches = 0
        """Watch requests made."""
        self._stream: Stream | None = None
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name=f"informer-{resource.plural}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """End a watch blocked in a read and wait for the thread (``stop`` must be set first)."""
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()
        self.thread.join(timeout)

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                if not self.version:
                    self._relist()
                self._watch()
                self.backoff.reset()
            except _Gone:
                log.info("watch of %s: resourceVersion %s is gone; listing again", self.resource.plural, self.version)
                self.version = ""
            except KubeApiError as exc:
                if self.stop.is_set():
                    return
                if exc.status == 410:
                    self.version = ""
                    continue
                if exc.reason == "ReadTimeoutError":  # a quiet watch given up on our side: watch again at once
                    continue
                wait = self.backoff.next()
                log.warning("watch of %s failed (%s); retrying in %.1f s", self.resource.plural, exc, wait)
                self.stop.wait(wait)
            except Exception:  # an informer never dies: log, back off, watch again
                if self.stop.is_set():
                    return
                log.exception("watch of %s failed", self.resource.plural)
                self.stop.wait(self.backoff.next())

    def _relist(self) -> None:
        items, version = list_all(self.client, self.resource)
        self.relists += 1
        fresh = {object_key(o): o for o in items}
        for key, obj in fresh.items():
            old = self.store.get(key)
            if old is None:
                self.deliver(self.resource, ADDED, obj)
            elif resource_version(old) != resource_version(obj):
                self.deliver(self.resource, MODIFIED, obj)
        for key, obj in self.store.items():
            if key not in fresh:
                self.deliver(self.resource, DELETED, obj)
        self.store = fresh
        self.version = version

    def _watch(self) -> None:
        query = {"watch": True, "resourceVersion": self.version, "allowWatchBookmarks": True}
        stream = self.client.stream(self.resource.path, query, read_timeout=self.read_timeout)
        self.watches += 1
        with self._lock:
            self._stream = stream
        try:
            for event in stream:
                if self.stop.is_set():
                    return
                self._event(event)
        finally:
            with self._lock:
                self._stream = None
            stream.close()

    def _event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise _Gone
            raise KubeApiError(int(obj.get("code") or 0), str(obj.get("reason")), str(obj.get("message")),
                               method="WATCH", path=self.resource.path)
        version = resource_version(obj)
        if kind == "BOOKMARK":
            self.version = version
            return
        obj["kind"] = self.resource.kind
        obj["apiVersion"] = self.resource.api_version
        (obj.get("metadata") or {}).pop("managedFields", None)
        key = object_key(obj)
        if kind == DELETED:
            self.store.pop(key, None)
        else:
            self.store[key] = obj
        self.version = version
        self.deliver(self.resource, str(kind), obj)
