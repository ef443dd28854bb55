"""``kschedlib.sweep`` on one machine: input order, per-scenario errors, bounded waits, progress and
the transport of clusters (once per worker, not per scenario)."""

from __future__ import annotations

import io
import os
import pickle
import re
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import given, settings

import kschedlib
from kschedlib.cli import main
from kschedlib.errors import ConfigError, ScenarioError
from kschedlib.sweeps import Scenario, Sweep, SweepResult, sweep
from kschedlib.sweeps import _transport as transport
from kschedlib.sweeps.driver import parallelism
from tests.sweeps.runs import RAISES, RELEASE, behave, check_mix, cluster, mixes, pid_and_size, scheduled, square
from tests.sweeps.test_progress import Clock, Terminal


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    with ProcessPoolExecutor(max_workers=2) as executor:
        yield executor


@pytest.fixture(scope="module")
def threads() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield executor


@pytest.fixture(scope="module", autouse=True)
def release_hung_scenarios() -> Iterator[None]:
    """Scenarios left hanging in this process end with the module."""
    RELEASE.clear()
    yield
    RELEASE.set()


def drops(base: kschedlib.Cluster) -> list[Scenario]:
    """Every node of ``base`` taken out in turn, and none."""
    return [Scenario(base, params={"drop": names}, name=f"drop-{'-'.join(names) or 'none'}")
            for names in ([], *([node.name] for node in base.nodes))]


def values(results: Any) -> list[Any]:
    return [result.value for result in results]


def test_serial_runs_every_scenario_in_order() -> None:
    results = list(sweep([{"value": n} for n in range(5)], behave))
    assert [r.index for r in results] == list(range(5))
    assert values(results) == [0, 1, 2, 3, 4]
    assert all(r.ok and r.error is None and r.seconds >= 0 for r in results)


def test_a_process_pool_gives_the_serial_results(pool: ProcessPoolExecutor) -> None:
    scenarios = drops(cluster(nodes=3, pending=10))
    serial = values(sweep(scenarios, scheduled))
    parallel = values(sweep(scenarios, scheduled, pool))
    assert parallel == serial
    assert serial[0]["unschedulable"] == {}
    assert len(serial[1]["unschedulable"]) == 2  # 10 pods of 1 CPU on two 4-CPU nodes


def test_results_come_in_input_order_though_the_first_finishes_last(pool: ProcessPoolExecutor) -> None:
    scenarios = [{"value": 0, "sleep": 0.6}, {"value": 1}, {"value": 2}, {"value": 3}]
    assert [(r.index, r.value) for r in sweep(scenarios, behave, pool)] == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_an_error_is_that_scenarios_result_and_the_sweep_goes_on(pool: ProcessPoolExecutor) -> None:
    scenarios = [{"value": 0}, {"value": 1, "fail": True}, {"value": 2}]
    for results in (list(sweep(scenarios, behave)), list(sweep(scenarios, behave, pool))):
        assert [r.ok for r in results] == [True, False, True]
        assert results[1].error == "ValueError: scenario 1 fails"
        assert results[1].traceback is not None
        assert "ValueError" in results[1].traceback
        assert results[1].value is None
        assert results[2].value == 2


def test_unwrap_gives_the_value_or_raises_naming_the_scenario() -> None:
    good, bad = sweep([Scenario(params={"value": 1}, name="good"), Scenario(name="bad")], _params_value)
    assert good.unwrap() == 1
    with pytest.raises(ScenarioError, match=r"scenario bad failed: KeyError: 'value'"):
        bad.unwrap()
    assert SweepResult(7, {"x": 1}).name == "7"


def _params_value(scenario: Scenario) -> Any:
    return scenario.params["value"]


def test_a_worker_that_dies_fails_its_scenario_and_the_sweep_ends() -> None:
    scenarios = [{"value": 0}, {"value": 1, "exit": True, "sleep": 0.2}, {"value": 2}, {"value": 3}]
    with ProcessPoolExecutor(max_workers=2) as broken:
        results = list(sweep(scenarios, behave, broken, timeout=60))
    assert len(results) == 4
    assert results[1].error is not None
    assert results[1].error.startswith("BrokenProcessPool")
    assert all(r.ok or r.error for r in results)  # every scenario answered, none lost


def test_a_scenario_past_its_timeout_is_an_error_and_the_rest_continue(pool: ProcessPoolExecutor) -> None:
    scenarios = [{"value": 0, "sleep": 5}, {"value": 1}]
    results = list(sweep(scenarios, behave, pool, timeout=0.3))
    assert results[0].error == "TimeoutError: no result within 0.3 s"
    assert results[1].value == 1


def test_a_shut_down_executor_fails_every_scenario_instead_of_hanging() -> None:
    executor = ThreadPoolExecutor(max_workers=1)
    executor.shutdown()
    results = list(sweep([{"value": 0}, {"value": 1}], behave, executor))
    assert [r.error for r in results] == ["RuntimeError: cannot schedule new futures after shutdown"] * 2


def test_a_scenario_that_cannot_be_pickled_is_its_own_error(pool: ProcessPoolExecutor) -> None:
    results = list(sweep([Scenario(threading.Lock()), Scenario(params={"value": 2})], _params_value, pool))
    assert results[0].error is not None
    assert "pickle" in results[0].error
    assert results[1].value == 2


def test_a_thread_pool_runs_in_process_without_transport() -> None:
    base = cluster()
    with ThreadPoolExecutor(max_workers=2) as threads:
        run = sweep([Scenario(base, params={"drop": []})] * 3, scheduled, threads)
        assert len(list(run)) == 3
    assert run.shipped == {}


def test_a_generator_of_scenarios_is_read_a_window_at_a_time(pool: ProcessPoolExecutor) -> None:
    taken: list[int] = []

    def scenarios() -> Iterator[int]:
        for n in range(20):
            taken.append(n)
            yield n

    run = sweep(scenarios(), square, pool, max_in_flight=3)
    first = next(run)
    assert first.value == 0
    assert len(taken) <= 4  # three in flight, one more once the first came back
    assert values(run) == [n * n for n in range(1, 20)]


def test_closing_early_cancels_what_has_not_started(pool: ProcessPoolExecutor) -> None:
    with sweep([{"value": n, "sleep": 0.05} for n in range(40)], behave, pool, max_in_flight=4) as run:
        assert next(run).value == 0
    with pytest.raises(StopIteration):
        next(run)


def test_a_cluster_goes_to_each_worker_once_not_with_every_scenario(pool: ProcessPoolExecutor) -> None:
    base = cluster(nodes=50, pending=0)
    scenarios = [Scenario(base, params={"n": n}) for n in range(24)]
    run = sweep(scenarios, pid_and_size, pool)
    results = values(run)
    assert {size for _, size in results} == {50}
    workers = {pid for pid, _ in results}
    (sent,) = run.shipped.values()
    assert run.shipped_bytes == sent * len(pickle.dumps(base, protocol=pickle.HIGHEST_PROTOCOL))
    assert sent <= len(workers) + run.resent  # the first task, plus one resend per worker that lacked it
    assert run.resent <= parallelism(pool) * 2  # at most the first window of tasks comes back for it
    assert sent < len(scenarios)


def test_the_task_on_the_wire_carries_the_cluster_only_the_first_time() -> None:
    base = cluster(nodes=30, pending=0)
    payloads = transport.Payloads()
    first, second = payloads.pack(Scenario(base, name="a")), payloads.pack(Scenario(base, name="b"))
    assert len(pickle.dumps(second)) < len(pickle.dumps(first)) / 10
    assert first.refs == second.refs
    assert second.payloads == {}
    assert second.shell.cluster is None
    assert payloads.pack({"plain": 1}) == transport.Task({"plain": 1})


def test_a_worker_without_the_cluster_asks_for_it_and_then_keeps_it() -> None:
    base, workload = cluster(nodes=2, pending=0), cluster(nodes=0, pending=2)
    payloads = transport.Payloads()
    payloads.pack(Scenario(base, workload))  # the first task went to another worker
    task = payloads.pack(Scenario(base, workload, name="second"))
    transport.clear_cache()
    missing = transport.evaluate(_sizes, task)
    assert isinstance(missing, transport.Missing)
    assert len(missing.digests) == 2
    outcome = transport.evaluate(_sizes, payloads.with_bytes(task, missing.digests))
    assert isinstance(outcome, transport.Outcome)
    assert (outcome.value, outcome.error) == ((2, 2), None)
    again = transport.evaluate(_sizes, task)  # now cached: no bytes needed
    assert isinstance(again, transport.Outcome)
    assert again.value == (2, 2)
    assert set(payloads.sent.values()) == {2}


def _sizes(scenario: Scenario) -> tuple[int, int]:
    return len(scenario.cluster), len(scenario.workload)


def test_the_worker_cache_keeps_the_most_recently_used_inputs() -> None:
    transport.clear_cache()
    payloads = transport.Payloads()
    tasks = [payloads.pack(Scenario(cluster(nodes=n + 1, pending=0))) for n in range(transport.CACHE_SIZE + 1)]
    for task in tasks:
        transport.evaluate(_size, task)
    first_again = attrs_without_bytes(tasks[0])
    assert isinstance(transport.evaluate(_size, first_again), transport.Missing)  # evicted
    last_again = attrs_without_bytes(tasks[-1])
    outcome = transport.evaluate(_size, last_again)
    assert isinstance(outcome, transport.Outcome)
    assert outcome.value == transport.CACHE_SIZE + 1


def attrs_without_bytes(task: transport.Task) -> transport.Task:
    return transport.Task(task.shell, task.refs)


def _size(scenario: Scenario) -> int:
    return len(scenario.cluster)


def test_progress_counts_scenarios_on_a_terminal() -> None:
    stream, clock = Terminal(), Clock()
    results = list(sweep(range(4), square, progress=stream, clock=clock))
    assert len(results) == 4
    text = stream.getvalue()
    assert text.startswith("\rsweep: 1/4 scenarios (25%)")
    assert text.endswith("\rsweep: 4/4 scenarios (100%)\n")


def test_progress_without_a_length_counts_only(pool: ProcessPoolExecutor) -> None:
    stream = Terminal()
    assert values(sweep((n for n in range(3)), square, pool, progress=stream)) == [0, 1, 4]
    assert re.search(r"\rsweep: 3 scenarios(, [\d.]+/s)?\n$", stream.getvalue()), repr(stream.getvalue())


def test_no_progress_off_a_terminal(pool: ProcessPoolExecutor) -> None:
    stream = io.StringIO()
    assert values(sweep(range(3), square, pool, progress=stream)) == [0, 1, 4]
    assert stream.getvalue() == ""


class Plain(Executor):
    """An executor that tells nothing about its size."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


class Client:
    def __init__(self, threads: dict[str, int] | None) -> None:
        self.threads = threads

    def nthreads(self) -> dict[str, int]:
        if self.threads is None:
            raise OSError("scheduler gone")
        return self.threads


def test_parallelism_as_far_as_the_executor_tells(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 6)
    assert parallelism(ThreadPoolExecutor(max_workers=3)) == 3
    plain = Plain()
    assert parallelism(plain) == 6
    plain._client = Client({"a": 2, "b": 3})  # type: ignore[attr-defined]
    assert parallelism(plain) == 5
    plain._client = Client(None)  # type: ignore[attr-defined]
    assert parallelism(plain) == 6


def test_any_executor_works_and_a_sweep_is_its_own_iterator() -> None:
    run: Sweep[int] = sweep([1, 2, 3], square, Plain())
    assert iter(run) is run
    assert values(run) == [1, 4, 9]


class Failing(Executor):
    """An executor whose futures end in ``error``, as a worker can report."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_exception(self.error)
        return future


def test_a_future_without_a_message_is_named_by_its_type_and_ctrl_c_stops_the_sweep() -> None:
    assert [r.error for r in sweep([1], square, Failing(SystemExit()))] == ["SystemExit"]
    with pytest.raises(KeyboardInterrupt):
        list(sweep([1], square, Failing(KeyboardInterrupt())))


def test_bytes_for_an_input_the_worker_already_holds_are_not_unpickled_again() -> None:
    transport.clear_cache()
    task = transport.Payloads().pack(Scenario(cluster(nodes=2, pending=0)))
    first, again = transport.evaluate(_size, task), transport.evaluate(_size, task)
    assert isinstance(first, transport.Outcome)
    assert isinstance(again, transport.Outcome)
    assert (first.value, again.value) == (2, 2)


def test_the_serial_sweep_honours_its_timeout() -> None:
    started = time.monotonic()
    results = list(sweep([{"value": 0, "hang": 20}, {"value": 1}], behave, timeout=0.3))
    assert [(r.value, r.error) for r in results] == [(None, "TimeoutError: no result within 0.3 s"), (1, None)]
    assert time.monotonic() - started < 10  # the hung scenario was left behind, not waited for


@pytest.mark.parametrize("where", ["serial", "threads", "processes"])
def test_whatever_a_scenario_raises_is_its_result_alike_on_every_executor(
        where: str, threads: ThreadPoolExecutor, pool: ProcessPoolExecutor) -> None:
    executor = {"serial": None, "threads": threads, "processes": pool}[where]
    results = list(sweep([{"value": 0, "raise": kind} for kind in RAISES] + [{"value": 1}], behave, executor))
    assert [r.error for r in results] == [error for _, error in RAISES.values()] + [None]
    assert results[-1].value == 1
    assert all(r.traceback is not None for r in results[:-1])


def test_hung_scenarios_that_fill_every_worker_free_it_for_the_queued_ones(pool: ProcessPoolExecutor) -> None:
    hung = [{"value": n, "hang": 20} for n in range(parallelism(pool))]
    results = list(sweep([*hung, {"value": 7}, {"value": 8}], behave, pool, timeout=0.5))
    assert [r.error for r in results[:-2]] == ["TimeoutError: no result within 0.5 s"] * len(hung)
    assert [(r.value, r.error) for r in results[-2:]] == [(7, None), (8, None)]  # they ran


@pytest.mark.parametrize("timeout", [-1, 0, float("nan"), float("inf"), True])
def test_a_timeout_is_a_number_of_seconds_above_zero(timeout: float) -> None:
    with pytest.raises(ConfigError, match=r"^timeout: must be a number of seconds above 0"):
        sweep([1], square, timeout=timeout)
    if isinstance(timeout, bool):
        return
    out, err = io.StringIO(), io.StringIO()
    assert main(["sweep", "no-such-grid.yaml", "--timeout", str(timeout)], out=out, err=err) == 2
    assert err.getvalue().startswith("kschedlib: error: --timeout: must be a number of seconds above 0")


@pytest.mark.parametrize("where", ["serial", "threads", "processes"])
@settings(max_examples=6)
@given(kinds=mixes)
def test_any_mix_of_scenarios_ends_with_one_result_each_in_order(
        where: str, threads: ThreadPoolExecutor, pool: ProcessPoolExecutor, kinds: list[str]) -> None:
    check_mix({"serial": None, "threads": threads, "processes": pool}[where], kinds)


def test_ctrl_c_stops_a_serial_sweep_whose_scenario_hangs() -> None:
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            list(sweep([{"value": 0, "hang": 20}, {"value": 1}], behave))
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10
