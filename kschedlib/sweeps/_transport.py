"""How scenarios travel to workers: big inputs by content address, each sent once per worker process.

The driver replaces a scenario's cluster and workload with the SHA-256 of their pickled bytes and
attaches the bytes only to the first task that names them.  A worker keeps the inputs it has
unpickled in a small per-process cache; a task naming an input its worker has never seen comes
back as :class:`Missing`, and the driver sends it again with the bytes.  So a cluster crosses
the wire about once per worker, whatever the number of scenarios using it.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.sweeps.scenario import Scenario

__all__ = ["CACHE_SIZE", "UNPRINTABLE", "Missing", "Outcome", "Payloads", "Task", "describe", "evaluate", "run_here",
           "timed_out"]

CACHE_SIZE: Final = 8
"""Inputs a worker process keeps unpickled (least recently used go first; a miss only costs a resend)."""

SHIPPED_FIELDS: Final = ("cluster", "workload")

_cache: OrderedDict[str, Any] = OrderedDict()
_cache_lock = threading.Lock()  # Dask workers run tasks on threads


@final
@attrs.frozen(slots=True, repr=False)
class Outcome(FieldsRepr):
    """What one scenario gave: a value, or an error line and its traceback."""

    value: Any = None
    error: str | None = None
    traceback: str | None = None
    seconds: float = 0.0


@final
@attrs.frozen(slots=True, repr=False)
class Missing(FieldsRepr):
    """The worker does not hold these inputs yet: send the task again with their bytes."""

    digests: tuple[str, ...]


@final
@attrs.frozen(slots=True, repr=False)
class Task(FieldsRepr):
    """A scenario on the wire: the scenario without its big inputs, their addresses, maybe their bytes."""

    shell: Any
    refs: Mapping[str, str] = attrs.field(factory=dict)
    payloads: Mapping[str, bytes] = attrs.field(factory=dict)


@final
class Payloads:
    """The driver's side: each distinct input pickled and hashed once per sweep (found by identity)."""

    __slots__ = ("_by_id", "sent", "sent_bytes")

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[object, str, bytes]] = {}
        self.sent: dict[str, int] = {}
        """How many times each input's bytes went out."""
        self.sent_bytes = 0

    def address(self, obj: object) -> tuple[str, bytes]:
        entry = self._by_id.get(id(obj))
        if entry is None:
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
            entry = (obj, hashlib.sha256(data).hexdigest(), data)  # obj kept: its id stays unique
            self._by_id[id(obj)] = entry
        return entry[1], entry[2]

    def pack(self, scenario: object) -> Task:
        """The task for ``scenario``; a first use of an input carries its bytes."""
        if not isinstance(scenario, Scenario):
            return Task(scenario)
        refs: dict[str, str] = {}
        payloads: dict[str, bytes] = {}
        for name in SHIPPED_FIELDS:
            value = getattr(scenario, name)
            if value is None:
                continue
            digest, data = self.address(value)
            refs[name] = digest
            if digest not in self.sent:
                payloads[digest] = data
                self.sent[digest] = 1
                self.sent_bytes += len(data)
        shell = attrs.evolve(scenario, cluster=None, workload=None)
        return Task(shell, refs, payloads)

    def with_bytes(self, task: Task, digests: tuple[str, ...]) -> Task:
        """``task`` again, carrying the bytes of ``digests``."""
        by_digest = {digest: data for _, digest, data in self._by_id.values()}
        for digest in digests:
            self.sent[digest] = self.sent.get(digest, 0) + 1
            self.sent_bytes += len(by_digest[digest])
        return attrs.evolve(task, payloads={**task.payloads, **{d: by_digest[d] for d in digests}})


def _remember(digest: str, data: bytes) -> Any:
    with _cache_lock:
        if digest in _cache:
            _cache.move_to_end(digest)
            return _cache[digest]
    value = pickle.loads(data)  # outside the lock: unpickling a big cluster takes a while
    with _cache_lock:
        _cache[digest] = value
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return value


def _recall(digest: str) -> tuple[bool, Any]:
    with _cache_lock:
        if digest not in _cache:
            return False, None
        _cache.move_to_end(digest)
        return True, _cache[digest]


def _unpack(task: Task) -> Any:
    """The scenario back in full, or :class:`Missing` naming what this worker lacks."""
    if not task.refs:
        return task.shell
    values: dict[str, Any] = {}
    missing: list[str] = []
    for name, digest in task.refs.items():
        data = task.payloads.get(digest)
        if data is not None:
            values[name] = _remember(digest, data)
            continue
        found, value = _recall(digest)
        if found:
            values[name] = value
        else:
            missing.append(digest)
    if missing:
        return Missing(tuple(missing))
    return attrs.evolve(task.shell, **values)


def describe(exc: BaseException) -> str:
    """``"TypeName: message"`` (the type alone without a message); never raises, even when ``str(exc)`` does."""
    try:
        text = str(exc)
    except BaseException:  # a broken __str__ must not lose the scenario's result
        text = UNPRINTABLE
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


UNPRINTABLE: Final = "<exception str() failed>"
"""The message of an exception whose ``str()`` raised (Python's own traceback says the same)."""


def _call(run: Callable[[Any], Any], scenario: Any) -> Outcome:
    started = time.perf_counter()
    try:
        value = run(scenario)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, ...: the scenario's own, so its result
        try:
            trace = traceback.format_exc()
        except BaseException:  # pragma: no cover - traceback itself copes with a broken __str__
            trace = None
        return Outcome(error=describe(exc), traceback=trace, seconds=time.perf_counter() - started)
    return Outcome(value, seconds=time.perf_counter() - started)


def run_here(run: Callable[[Any], Any], scenario: Any, timeout: float | None = None) -> Outcome:
    """Call ``run(scenario)`` on a thread of its own; whatever it raises becomes an error outcome, and
    a call still running after ``timeout`` seconds a ``TimeoutError`` outcome.

    The thread (a daemon) is abandoned then, not stopped (Python cannot stop a thread): it runs on
    until ``run`` returns or the process ends, its result discarded, and this worker takes the next
    scenario.  Running off the calling thread also keeps the caller's Ctrl-C apart from a
    ``KeyboardInterrupt`` the scenario raises itself: the first stops the sweep, the second is the
    scenario's result.
    """
    box: list[Outcome] = []
    thread = threading.Thread(target=lambda: box.append(_call(run, scenario)), name="kschedlib-scenario",
                              daemon=True)
    thread.start()
    thread.join(timeout)
    if box:
        return box[0]
    assert timeout is not None  # join() without a timeout returns only once the thread has ended
    return Outcome(error=timed_out(timeout), seconds=timeout)


def timed_out(timeout: float) -> str:
    """The error of a scenario that gave no result in time."""
    return f"TimeoutError: no result within {timeout:g} s"


def evaluate(run: Callable[[Any], Any], task: Task, timeout: float | None = None) -> Outcome | Missing:
    """The worker's side of one task (a module-level function, so that every executor can pickle it):
    the scenario runs for at most ``timeout`` seconds, so a hung one frees its worker."""
    scenario = _unpack(task)
    if isinstance(scenario, Missing):
        return scenario
    return run_here(run, scenario, timeout)


def clear_cache() -> None:
    """Forget every input this process holds (tests use it to start cold)."""
    with _cache_lock:
        _cache.clear()
