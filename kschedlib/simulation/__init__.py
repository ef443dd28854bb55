"""Cluster files, ``explain`` and ``simulate``."""

from kschedlib.simulation.cluster import Cluster, load_cluster
from kschedlib.simulation.explain import Explanation, explain
from kschedlib.simulation.simulate import SimulationReport, simulate

__all__ = ["Cluster", "Explanation", "SimulationReport", "explain", "load_cluster", "simulate"]
