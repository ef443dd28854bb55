"""kschedlib: the Kubernetes scheduling framework as an embeddable, pure-Python library.

Feed nodes and pods to a :class:`Scheduler` and get placement decisions back,
with kube-scheduler v1.30's plugins, scores and messages; or ask
:func:`explain` where one pod would go and why not elsewhere.
"""

from kschedlib.clock import Clock, FakeClock, SystemClock
from kschedlib.errors import (
    CacheError,
    CelCompileError,
    CelError,
    CelRuntimeError,
    ConfigError,
    ExtraNotInstalledError,
    KschedError,
    ManifestError,
    ModelError,
    QuantityError,
    RegistryError,
    ReportError,
    ScenarioError,
    SelectorError,
)
from kschedlib.framework import (
    Code,
    CycleState,
    NodeInfo,
    PodInfo,
    Registry,
    SchedulerConfig,
    Snapshot,
    Status,
    parse_config,
)
from kschedlib.metrics import Metrics
from kschedlib.model import Node, Pod, parse_quantity
from kschedlib.plugins import default_plugin_sets, in_tree_registry
from kschedlib.results import CycleOutcome
from kschedlib.scheduler import Scheduler, ScheduleResult, SchedulerListener
from kschedlib.simulation import Cluster, Explanation, SimulationReport, explain, load_cluster, simulate
from kschedlib.sweeps import Scenario, SweepResult, sweep

__version__ = "0.1.0"

__all__ = [
    "CacheError",
    "CelCompileError",
    "CelError",
    "CelRuntimeError",
    "Clock",
    "Cluster",
    "Code",
    "ConfigError",
    "CycleOutcome",
    "CycleState",
    "Explanation",
    "ExtraNotInstalledError",
    "FakeClock",
    "KschedError",
    "ManifestError",
    "Metrics",
    "ModelError",
    "Node",
    "NodeInfo",
    "Pod",
    "PodInfo",
    "QuantityError",
    "Registry",
    "RegistryError",
    "ReportError",
    "Scenario",
    "ScenarioError",
    "ScheduleResult",
    "Scheduler",
    "SchedulerConfig",
    "SchedulerListener",
    "SelectorError",
    "SimulationReport",
    "Snapshot",
    "Status",
    "SweepResult",
    "SystemClock",
    "default_plugin_sets",
    "explain",
    "in_tree_registry",
    "load_cluster",
    "parse_config",
    "parse_quantity",
    "simulate",
    "sweep",
]
