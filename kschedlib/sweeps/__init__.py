"""Sweeps: many independent what-if scenarios on one machine or many (Dask, Ray), results in order.

:func:`sweep` runs any picklable function over scenarios; a grid file (:func:`load_grid`) names
clusters, workloads, configs and kube versions, and a question (:data:`QUESTIONS`) to ask each.
"""

from kschedlib.sweeps.driver import Sweep, sweep
from kschedlib.sweeps.executors import RayExecutor, dask_executor, open_executor
from kschedlib.sweeps.grid import Grid, load_grid
from kschedlib.sweeps.questions import QUESTIONS, Ask, ask, register_question
from kschedlib.sweeps.scenario import Scenario, SweepResult

__all__ = ["QUESTIONS", "Ask", "Grid", "RayExecutor", "Scenario", "Sweep", "SweepResult", "ask", "dask_executor",
           "load_grid", "open_executor", "register_question", "sweep"]
