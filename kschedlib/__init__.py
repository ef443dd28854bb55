"""kschedlib: the Kubernetes scheduling framework as an embeddable, pure-Python library.

Feed nodes and pods to a :class:`Scheduler` and get placement decisions back,
with kube-scheduler's plugins, scores and messages (v1.30 to v1.36); or ask
:func:`explain` where one pod would go and why not elsewhere.

The names below are imported on first use, so that ``python -m kschedlib --help`` and a
program that needs one corner of the library do not pay for all of it.
"""

import typing

from kschedlib._lazy import lazy_exports as _lazy_exports

if typing.TYPE_CHECKING:
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

_HOMES: dict[str, tuple[str, ...]] = {
    "kschedlib.clock": ("Clock", "FakeClock", "SystemClock"),
    "kschedlib.errors": ("CacheError", "CelCompileError", "CelError", "CelRuntimeError", "ConfigError",
                         "ExtraNotInstalledError", "KschedError", "ManifestError", "ModelError", "QuantityError",
                         "RegistryError", "ReportError", "ScenarioError", "SelectorError"),
    "kschedlib.framework": ("Code", "CycleState", "NodeInfo", "PodInfo", "Registry", "SchedulerConfig", "Snapshot",
                            "Status", "parse_config"),
    "kschedlib.metrics": ("Metrics",),
    "kschedlib.model": ("Node", "Pod", "parse_quantity"),
    "kschedlib.plugins": ("default_plugin_sets", "in_tree_registry"),
    "kschedlib.results": ("CycleOutcome",),
    "kschedlib.scheduler": ("Scheduler", "ScheduleResult", "SchedulerListener"),
    "kschedlib.simulation": ("Cluster", "Explanation", "SimulationReport", "explain", "load_cluster", "simulate"),
    "kschedlib.sweeps": ("Scenario", "SweepResult", "sweep"),
}
"""Where each public name is defined (the ``TYPE_CHECKING`` imports above say the same to type checkers)."""

__getattr__, __dir__ = _lazy_exports(globals(), _HOMES)

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
