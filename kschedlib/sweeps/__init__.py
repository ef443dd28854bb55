"""Sweeps: many independent what-if scenarios on one machine or many (Dask, Ray), results in order."""

from kschedlib.sweeps.driver import Sweep, sweep
from kschedlib.sweeps.executors import RayExecutor, dask_executor, open_executor
from kschedlib.sweeps.scenario import Scenario, SweepResult

__all__ = ["RayExecutor", "Scenario", "Sweep", "SweepResult", "dask_executor", "open_executor", "sweep"]
