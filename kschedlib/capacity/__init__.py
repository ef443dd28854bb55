"""Capacity planning: how many more replicas fit, what a drain breaks, how many nodes pending pods
need, and what another scheduler config changes — with kube-scheduler's decisions and messages.

Every answer has ``to_dict()`` (the JSON of the ``kschedlib capacity``, ``drain``, ``nodes-needed``
and ``compare`` commands), ``rows()`` (their CSV) and ``text()``, plus per-node and per-zone
utilisation and a fragmentation figure before and after (:func:`utilisation`, :func:`fragmentation`).
"""

from kschedlib.capacity._compare import Comparison, compare
from kschedlib.capacity._controllers import expand_controllers
from kschedlib.capacity._drain_plan import DrainReport, drain
from kschedlib.capacity._nodes_needed import NodesNeededReport, nodes_needed
from kschedlib.capacity._replicas import ReplicaReport, max_replicas
from kschedlib.simulation._utilisation import fragmentation, shape_of, utilisation

__all__ = [
    "Comparison",
    "DrainReport",
    "NodesNeededReport",
    "ReplicaReport",
    "compare",
    "drain",
    "expand_controllers",
    "fragmentation",
    "max_replicas",
    "nodes_needed",
    "shape_of",
    "utilisation",
]
