"""Executors for sweeps: a local process pool, a Dask cluster (the ``dask`` extra), Ray (the ``ray`` extra).

Dask and Ray are imported only when asked for; without them the error names the extra to install.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from types import ModuleType
from typing import Any, ParamSpec, TypeVar, final

from kschedlib.errors import ConfigError, ExtraNotInstalledError

__all__ = ["RayExecutor", "dask_executor", "open_executor", "require"]

P = ParamSpec("P")
T = TypeVar("T")


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` or raise :class:`~kschedlib.errors.ExtraNotInstalledError` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ExtraNotInstalledError(feature, extra, module) from exc


def dask_executor(address: str | Any) -> Executor:
    """The ``concurrent.futures`` executor of a Dask cluster: ``address`` is a scheduler address
    (``tcp://host:8786``) or a ``distributed.Client`` (or ``LocalCluster``)."""
    distributed = require("distributed", "dask", "a Dask executor")
    client = address if isinstance(address, distributed.Client) else distributed.Client(address)
    executor: Executor = client.get_executor()
    return executor


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return fn(*args, **kwargs)  # pragma: no cover - runs in a Ray worker process


@final
class RayExecutor(Executor):
    """A ``concurrent.futures`` executor over Ray tasks (Ray has none of its own).

    Joins the running Ray runtime, or starts one (``ray.init(address, num_cpus=max_workers,
    **init_options)``, quiet: no dashboard, warnings only) and shuts it down with the executor.
    Each task asks for one CPU, so at most ``max_workers`` (or the runtime's CPUs) run at once.
    """

    def __init__(self, max_workers: int | None = None, *, address: str | None = None, **init_options: Any) -> None:
        self._ray = require("ray", "ray", "a Ray executor")
        self._owns_runtime = not self._ray.is_initialized()
        if self._owns_runtime:
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                       "logging_level": logging.WARNING, **init_options}
            if max_workers is not None and address is None:
                options.setdefault("num_cpus", max_workers)
            self._ray.init(address=address, **options)
        cpus = int(self._ray.available_resources().get("CPU", 1)) if max_workers is None else max_workers
        self.max_workers = max(1, cpus)
        self._remote = self._ray.remote(num_cpus=1, max_retries=0)(_call)
        self._shut = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` as a Ray task; its ``concurrent.futures.Future``."""
        if self._shut:
            raise RuntimeError("cannot schedule new futures after shutdown")
        future: Future[T] = self._remote.remote(fn, args, kwargs).future()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking tasks; shut Ray down if this executor started it."""
        if self._shut:
            return
        self._shut = True
        if self._owns_runtime:
            self._ray.shutdown()


@contextlib.contextmanager
def open_executor(spec: str | None, workers: int | None = None) -> Iterator[Executor | None]:
    """The executor a command line names, closed afterwards: ``serial`` (or None), ``process``,
    ``dask`` (a local Dask cluster of ``workers`` processes), ``dask://HOST:PORT`` (a running
    scheduler), ``ray`` (a local Ray runtime, or the one ``RAY_ADDRESS`` names) or ``ray://HOST:PORT``."""
    if spec in (None, "", "serial"):
        yield None
        return
    assert spec is not None
    if workers is not None and workers < 1:
        raise ConfigError("must be at least 1", field="--workers", value=workers)
    if spec == "process":
        pool = ProcessPoolExecutor(max_workers=workers)
        try:
            yield pool
        finally:
            _stop(pool)
        return
    if spec == "dask" or spec.startswith("dask://"):
        with _dask(spec, workers) as executor:
            yield executor
        return
    if spec == "ray" or spec.startswith("ray://"):
        executor = RayExecutor(workers, address=spec if spec.startswith("ray://") else None)
        try:
            yield executor
        finally:
            executor.shutdown()
        return
    raise ConfigError("expected serial, process, dask, dask://HOST:PORT, ray or ray://HOST:PORT",
                      field="--executor", value=spec)


def _stop(pool: ProcessPoolExecutor, grace: float = 2.0) -> None:
    """Shut the pool down; a worker still busy ``grace`` seconds later (a scenario that outlived its
    timeout, which may never end) is terminated rather than waited for."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # private, but the only handle
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.terminate()
            process.join()


@contextlib.contextmanager
def _dask(spec: str, workers: int | None) -> Iterator[Executor]:
    distributed = require("distributed", "dask", "a Dask executor")
    if spec == "dask":
        cluster = distributed.LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                                           dashboard_address="127.0.0.1:0", host="127.0.0.1")
        client = distributed.Client(cluster)
    else:
        cluster = None
        client = distributed.Client("tcp://" + spec.removeprefix("dask://"))
    try:
        yield dask_executor(client)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
