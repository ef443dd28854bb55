"""``sweep``: many independent scenarios on any ``concurrent.futures.Executor``, results in input order."""

from __future__ import annotations

import concurrent.futures as cf
import math
import os
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sized
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, Final, Generic, TextIO, TypeVar, final

from kschedlib.errors import ConfigError
from kschedlib.progress import Progress
from kschedlib.sweeps._transport import Missing, Outcome, Payloads, Task, describe, evaluate, run_here, timed_out
from kschedlib.sweeps.scenario import SweepResult

__all__ = ["Sweep", "sweep"]

R = TypeVar("R")

POLL: Final = 0.5
"""Longest single wait (seconds): progress redraws and timeouts are checked at least this often."""

GRACE: Final = 10.0
"""Seconds the driver waits beyond a worker's own timeouts before it gives up on the worker."""


def check_timeout(timeout: float | None, field: str = "timeout") -> float | None:
    """``timeout`` if it is None or a finite number of seconds above 0; else :class:`ConfigError`."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise ConfigError("must be a number of seconds above 0", field=field, value=timeout)
    return float(timeout)


def backstop(timeout: float) -> float:
    """How long the head of the stream may go unanswered once it is the head: a worker ends every
    scenario within ``timeout``, so the head waits for at most a worker to free up (behind the window
    of scenarios submitted before it, or a resend) and its own run.  Only a worker that cannot answer at
    all (lost, or wedged in native code that holds the interpreter lock) reaches it."""
    return 3 * timeout + GRACE


def parallelism(executor: Executor) -> int:
    """How many scenarios ``executor`` runs at once, as far as it tells (else the CPU count)."""
    for attribute in ("max_workers", "_max_workers"):
        value = getattr(executor, attribute, None)
        if isinstance(value, int) and value > 0:
            return value
    client = getattr(executor, "_client", None)  # a distributed.Client's executor
    if client is not None:
        try:
            return max(1, int(sum(client.nthreads().values())))
        except Exception:  # a client that cannot answer: fall back on the CPU count
            pass
    return os.cpu_count() or 1


@final
class _Slot:
    """One scenario in flight."""

    __slots__ = ("deadline", "future", "index", "outcome", "scenario", "task")

    def __init__(self, index: int, scenario: Any, task: Task | None) -> None:
        self.index = index
        self.scenario = scenario
        self.task = task
        self.future: Future[Any] | None = None
        self.outcome: Outcome | None = None
        self.deadline: float | None = None


@final
class Sweep(Generic[R], Iterator[SweepResult[R]]):
    """The stream of a sweep's results, in input order (returned by :func:`sweep`).

    Iterate it (or use it as a context manager: leaving it early cancels what has not started).
    ``shipped`` counts how many times each input's bytes were sent (by content address),
    ``shipped_bytes`` their total size, and ``resent`` the tasks sent again because their worker
    lacked an input.
    """

    def __init__(self, scenarios: Iterable[Any], run: Callable[[Any], R], executor: Executor | None, *,
                 timeout: float | None, max_in_flight: int | None, progress: Progress) -> None:
        self._scenarios = iter(enumerate(scenarios))
        self._run = run
        self._executor = executor
        self._timeout = check_timeout(timeout)
        self._progress = progress
        self._payloads = Payloads()
        self._local = executor is None or isinstance(executor, ThreadPoolExecutor)  # one process: no transport
        self._window = max_in_flight or (2 * parallelism(executor) if executor is not None else 1)
        self._pending: deque[_Slot] = deque()
        self._exhausted = False
        self.resent = 0
        self._results = self._generate()

    @property
    def shipped(self) -> dict[str, int]:
        """How many times the bytes of each shipped input (by SHA-256) went out."""
        return dict(self._payloads.sent)

    @property
    def shipped_bytes(self) -> int:
        """The bytes of shipped inputs sent so far."""
        return self._payloads.sent_bytes

    def __iter__(self) -> Sweep[R]:
        return self

    def __next__(self) -> SweepResult[R]:
        return next(self._results)

    def __enter__(self) -> Sweep[R]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop: cancel the scenarios not started and end the progress line."""
        self._results.close()

    # -- the driver loop -------------------------------------------------------------------------

    def _generate(self) -> Generator[SweepResult[R], None, None]:
        try:
            if self._executor is None:
                yield from self._serial()
            else:
                yield from self._parallel(self._executor)
        finally:
            for future in [slot.future for slot in self._pending if slot.future is not None]:
                future.cancel()
            self._pending.clear()
            self._progress.close()

    def _serial(self) -> Iterator[SweepResult[R]]:
        for index, scenario in self._scenarios:
            result = self._result(_Slot(index, scenario, None), run_here(self._run, scenario, self._timeout))
            self._progress.advance()
            yield result

    def _parallel(self, executor: Executor) -> Iterator[SweepResult[R]]:
        self._fill(executor)
        while self._pending:
            waiting = [slot.future for slot in self._pending if slot.outcome is None and slot.future is not None]
            head = self._pending[0]
            if head.deadline is None and self._timeout is not None:
                head.deadline = self._progress.clock() + backstop(self._timeout)
            slice_ = POLL if head.deadline is None else max(0.0, min(POLL, head.deadline - self._progress.clock()))
            if waiting:
                cf.wait(waiting, timeout=slice_, return_when=cf.FIRST_COMPLETED)
            for slot in self._pending:
                if slot.outcome is None and slot.future is not None and slot.future.done():
                    self._collect(executor, slot)
            if head.outcome is None and head.deadline is not None and self._progress.clock() >= head.deadline:
                assert head.future is not None  # no outcome yet: it was submitted
                assert self._timeout is not None  # only then has the head a deadline
                head.future.cancel()
                head.outcome = Outcome(error=f"{timed_out(self._timeout)}; its worker did not answer for "
                                             f"{backstop(self._timeout):g} s")
            while self._pending and self._pending[0].outcome is not None:
                slot = self._pending.popleft()
                assert slot.outcome is not None
                self._fill(executor)
                self._progress.advance()
                yield self._result(slot, slot.outcome)
            self._progress.update(self._progress.done)  # redraw the rate and ETA while waiting

    def _fill(self, executor: Executor) -> None:
        while not self._exhausted and len(self._pending) < self._window:
            try:
                index, scenario = next(self._scenarios)
            except StopIteration:
                self._exhausted = True
                return
            slot = _Slot(index, scenario, None)
            self._pending.append(slot)
            try:
                slot.task = Task(scenario) if self._local else self._payloads.pack(scenario)
            except Exception as exc:  # an input that cannot be pickled is that scenario's error
                slot.outcome = Outcome(error=describe(exc))
                continue
            self._submit(executor, slot, slot.task)

    def _submit(self, executor: Executor, slot: _Slot, task: Task) -> None:
        try:
            slot.future = executor.submit(evaluate, self._run, task, self._timeout)
        except Exception as exc:  # a shut-down or broken executor: every scenario still to come says so
            slot.outcome = Outcome(error=describe(exc))

    def _collect(self, executor: Executor, slot: _Slot) -> None:
        assert slot.future is not None
        try:
            outcome = slot.future.result(timeout=0)
        except BaseException as exc:  # a dead worker, a result that did not unpickle, ...
            if isinstance(exc, KeyboardInterrupt):  # the worker itself interrupted (a scenario's own is an Outcome)
                raise
            slot.outcome = Outcome(error=describe(exc))
            return
        if isinstance(outcome, Missing):
            assert slot.task is not None
            self.resent += 1
            slot.task = self._payloads.with_bytes(slot.task, outcome.digests)
            slot.future = None
            self._submit(executor, slot, slot.task)
            return
        slot.outcome = outcome

    def _result(self, slot: _Slot, outcome: Outcome) -> SweepResult[R]:
        return SweepResult(slot.index, slot.scenario, outcome.value, outcome.error, outcome.traceback,
                           outcome.seconds)


def sweep(scenarios: Iterable[Any], run: Callable[[Any], R], executor: Executor | None = None, *,
          timeout: float | None = None, max_in_flight: int | None = None, progress: TextIO | None = None,
          clock: Callable[[], float] = time.monotonic) -> Sweep[R]:
    """Evaluate ``run(scenario)`` for every scenario; the results stream back in input order.

    ``executor`` is any :class:`concurrent.futures.Executor` (a process pool, a
    ``distributed.Client``'s executor, :class:`~kschedlib.sweeps.RayExecutor`); ``None`` runs the
    scenarios one after the other in this process.  ``run`` must be picklable (a module-level
    function) for an executor in other processes.  A :class:`~kschedlib.sweeps.Scenario`'s
    ``cluster`` and ``workload`` are sent to each worker process once, not with every scenario.

    Whatever ``run`` raises (any exception, ``SystemExit``, a ``KeyboardInterrupt`` of its own, a
    ``BaseException``), a worker that dies, or a run still going ``timeout`` seconds after it started
    becomes that scenario's error result, worded alike on every executor; the sweep goes on.  A
    scenario past its timeout is abandoned on a thread of its own and its worker takes the next one;
    ``timeout`` must be above 0 (:class:`~kschedlib.errors.ConfigError` otherwise).  Interrupting the
    sweep itself (Ctrl-C where it is iterated) stops it.  At most
    ``max_in_flight`` scenarios (default: twice the executor's workers) are submitted ahead, so
    ``scenarios`` may be a long generator.  Count, rate and ETA go to ``progress`` (default
    ``sys.stderr``) when it is a terminal; ``clock`` times them and the timeouts.
    """
    total = len(scenarios) if isinstance(scenarios, Sized) else None
    meter = Progress(total, unit="scenarios", label="sweep", stream=progress, clock=clock)
    return Sweep(scenarios, run, executor, timeout=timeout, max_in_flight=max_in_flight, progress=meter)
