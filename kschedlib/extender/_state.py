"""The served extender's bounded state: a node LRU, per-request snapshots and a pool of plugin runtimes.

Nothing a request brings outlives it except in the LRU of parsed nodes, whose
size is fixed: a request's snapshot is the base cluster (the cluster file and
the pods bound through the service) with the request's nodes in place.  Each
request runs on a worker of its own (a runtime with its own plugin instances
and handle), so requests never share per-request state and none holds a lock
another request needs for longer than a dictionary lookup.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, final

from kschedlib.extender.limits import Deadline
from kschedlib.framework.node_info import ImageState, NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.model.objects import Node
from kschedlib.scheduler import Scheduler

__all__ = ["NodeCache", "Worker", "Workers", "request_snapshot"]


@final
class NodeCache:
    """Parsed request nodes by name, least recently used dropped past ``size``; thread-safe."""

    __slots__ = ("_entries", "_lock", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[str, tuple[Mapping[str, Any], NodeInfo]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, name: str, raw: Mapping[str, Any]) -> NodeInfo | None:
        """The NodeInfo parsed from ``raw`` before, if the node's object is unchanged."""
        with self._lock:
            entry = self._entries.get(name)
            if entry is None:
                return None
            self._entries.move_to_end(name)
        return entry[1] if entry[0] == raw else None

    def find(self, name: str) -> Node | None:
        """The latest version of node ``name`` seen in a request, if still kept."""
        entry = self._entries.get(name)
        return entry[1].node if entry is not None else None

    def put(self, name: str, raw: Mapping[str, Any], info: NodeInfo) -> None:
        with self._lock:
            self._entries[name] = (raw, info)
            self._entries.move_to_end(name)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


def request_snapshot(base: Snapshot, infos: Sequence[NodeInfo]) -> tuple[Snapshot, int]:
    """The base cluster with the request's NodeInfos in place of (or beside) its own (``base`` if
    unchanged), and how many NodeInfos were made for it (image spread restated)."""
    if all(base.find(info.name) is info for info in infos):
        return base, 0
    replaced = {info.name: info for info in infos}
    listed = [replaced.pop(info.name, info) for info in base]
    listed.extend(replaced.values())
    made = 0
    if any(info.node is not None and info.node.images for info in listed):
        listed, made = _with_image_spread(listed)
    return Snapshot(listed, namespaces=base.namespaces), made


def _with_image_spread(infos: list[NodeInfo]) -> tuple[list[NodeInfo], int]:
    """Image states counting the nodes of this snapshot that hold each image (ImageLocality reads them)."""
    holders: dict[str, int] = {}
    for info in infos:
        for image in info.node.images if info.node is not None else ():
            for name in image.names:
                holders[name] = holders.get(name, 0) + 1
    out = []
    made = 0
    for info in infos:
        images = info.node.images if info.node is not None else ()
        if images:
            made += 1
            info = info.with_image_states(
                {name: ImageState(image.size_bytes, holders[name]) for image in images for name in image.names})
        out.append(info)
    return out, made


@final
class Worker:
    """A scheduler of its own whose plugins answer one request at a time.

    ``seen`` counts the NodeInfos made for its requests: the plugins memoize verdicts per NodeInfo,
    so a worker is retired once it has seen more than the pool allows, and its memory goes with it.
    """

    __slots__ = ("scheduler", "seen")

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.seen = 0


@final
class Workers:
    """At most ``size`` workers, built on first need; :meth:`acquire` waits no later than a deadline.

    A worker that has seen more than ``max_seen`` NodeInfos is dropped on release (built anew when needed).
    """

    __slots__ = ("_build", "_built", "_idle", "_ready", "max_seen", "size")

    def __init__(self, build: Callable[[], Worker], size: int, max_seen: int) -> None:
        self.size = size
        self.max_seen = max_seen
        self._build = build
        self._idle: list[Worker] = []
        self._built = 0
        self._ready = threading.Condition()

    def acquire(self, deadline: Deadline) -> Worker | None:
        """An idle worker (built when fewer than ``size`` exist), or ``None`` once ``deadline`` passes."""
        with self._ready:
            while not self._idle and self._built >= self.size:
                remaining = deadline.remaining()
                if remaining <= 0:
                    return None
                self._ready.wait(remaining)
            if self._idle:
                return self._idle.pop()
            self._built += 1
        try:
            return self._build()
        except BaseException:
            with self._ready:
                self._built -= 1
                self._ready.notify()
            raise

    def release(self, worker: Worker) -> None:
        with self._ready:
            if worker.seen > self.max_seen:
                self._built -= 1
            else:
                self._idle.append(worker)
            self._ready.notify()
