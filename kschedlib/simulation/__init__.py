"""Cluster files, ``explain`` and ``simulate``.

``simulate`` and :class:`SimulationReport` are imported on first use (from ``simulator``, a name no
function shadows), so that ``explain`` and ``load_cluster`` do not import the simulation's timeline.
"""

import typing

from kschedlib._lazy import lazy_exports as _lazy_exports
from kschedlib.simulation.cluster import Cluster, load_cluster
from kschedlib.simulation.explain import Explanation, explain

if typing.TYPE_CHECKING:
    from kschedlib.simulation.simulator import SimulationReport, simulate

__getattr__, __dir__ = _lazy_exports(globals(), {"kschedlib.simulation.simulator": ("SimulationReport", "simulate")})

__all__ = ["Cluster", "Explanation", "SimulationReport", "explain", "load_cluster", "simulate"]
