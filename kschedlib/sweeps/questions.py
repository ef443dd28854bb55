"""The questions a grid sweep can ask of each scenario, by name.

A question is a module-level function ``question(cluster, *, config, kube_version, **params)``
returning JSON-ready data; ``cluster`` is the scenario's cluster with its workload added.  Entries
are ``"module:function"`` paths, imported where the scenario runs, so a question registered here
works on every worker, and a module that is not installed fails only the scenarios that ask it.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.simulation.cluster import Cluster, load_cluster
from kschedlib.simulation.explain import explain
from kschedlib.simulation.simulator import simulate
from kschedlib.sweeps.scenario import Scenario

__all__ = ["QUESTIONS", "Ask", "ask", "question", "register_question"]

Question = Callable[..., Any]

QUESTIONS: Final[dict[str, str]] = {
    "simulate": "kschedlib.sweeps.questions:simulate_question",
    "explain": "kschedlib.sweeps.questions:explain_question",
    "max_replicas": "kschedlib.sweeps.questions:max_replicas_question",
    "drain": "kschedlib.sweeps.questions:drain_question",
    "nodes_needed": "kschedlib.sweeps.questions:nodes_needed_question",
    "compare": "kschedlib.sweeps.questions:compare_question",
}
"""Question name -> ``"module:function"``."""


def register_question(name: str, target: str) -> None:
    """Make ``name`` ask ``target`` (``"package.module:function"``); refused if the name is taken."""
    module, _, function = target.partition(":")
    if not module or not function:
        raise ConfigError("expected 'package.module:function'", field="question", value=target)
    if name in QUESTIONS and QUESTIONS[name] != target:
        raise ConfigError(f"already asks {QUESTIONS[name]}", field="question", value=name)
    QUESTIONS[name] = target


def question(name: str) -> Question:
    """The function behind question ``name``."""
    target = QUESTIONS.get(name)
    if target is None:
        raise ConfigError(f"unknown question; known: {', '.join(sorted(QUESTIONS))}", field="question", value=name)
    module, _, function = target.partition(":")
    found: Question = getattr(importlib.import_module(module), function)
    return found


def _whole(scenario: Scenario) -> Cluster:
    cluster = load_cluster(scenario.cluster if scenario.cluster is not None else [])
    return cluster if scenario.workload is None else load_cluster([cluster, scenario.workload])


@final
@attrs.frozen(slots=True, repr=False)
class Ask(FieldsRepr):
    """The ``run`` of a grid sweep: ask the question named ``question`` of each scenario."""

    question: str

    def __call__(self, scenario: Scenario) -> Any:
        return ask(self.question, scenario)


def ask(name: str, scenario: Scenario) -> Any:
    """Answer question ``name`` for ``scenario`` (its params are the question's keyword arguments)."""
    return question(name)(_whole(scenario), **scenario.params)


def simulate_question(cluster: Cluster, *, config: Any = None, kube_version: str | None = None,
                      full: bool = False, **options: Any) -> dict[str, Any]:
    """``simulate``: the summary, pods per node and unschedulable pods per message (``full``: the
    whole report)."""
    report = simulate(cluster, config, kube_version=kube_version, **options)
    if full:
        return report.to_dict()
    summary = report.summary()
    del summary["seconds"], summary["pods_per_second"]  # timings vary run to run; answers do not
    return {
        "kube_version": report.kube.version,
        "summary": summary,
        "pods_per_node": dict(sorted(Counter(n for n in report.placements.values() if n is not None).items())),
        "unschedulable": dict(report.unschedulable_reasons().most_common()),
    }


def explain_question(cluster: Cluster, *, pod: str, config: Any = None, kube_version: str | None = None,
                     **options: Any) -> Mapping[str, Any]:
    """``explain``: where one pod would go and why not elsewhere."""
    return explain(cluster, pod, config, kube_version=kube_version, **options).to_dict()


def _capacity(function: str, cluster: Cluster, subject: Any, config: Any, kube_version: str | None,
              options: Mapping[str, Any]) -> Any:
    """A :mod:`kschedlib.capacity` answer as its JSON (imported here: only capacity scenarios need it)."""
    capacity = importlib.import_module("kschedlib.capacity")
    return getattr(capacity, function)(cluster, subject, config, kube_version=kube_version, **options).to_dict()


def max_replicas_question(cluster: Cluster, *, pod: Any, config: Any = None, kube_version: str | None = None,
                          **options: Any) -> Any:
    """``max_replicas``: how many more copies of ``pod`` (a ``namespace/name``, a v1 dict, or a list
    of them for round robin) fit."""
    return _capacity("max_replicas", cluster, pod, config, kube_version, options)


def drain_question(cluster: Cluster, *, node: str | list[str], config: Any = None, kube_version: str | None = None,
                   **options: Any) -> Any:
    """``drain``: remove ``node`` (a name or a list of names) and reschedule its pods."""
    return _capacity("drain", cluster, [node] if isinstance(node, str) else list(node), config, kube_version,
                     options)


def nodes_needed_question(cluster: Cluster, *, node_template: Any, config: Any = None,
                          kube_version: str | None = None, **options: Any) -> Any:
    """``nodes_needed``: how many nodes like ``node_template`` (a v1 Node dict) the pending pods need."""
    return _capacity("nodes_needed", cluster, node_template, config, kube_version, options)


def compare_question(cluster: Cluster, *, configs: list[Any], config: Any = None, kube_version: str | None = None,
                     **options: Any) -> Any:
    """``compare``: the cluster under each of ``configs`` side by side (the grid's ``configs`` axis
    is for other questions; ``compare`` takes its configs as a parameter)."""
    if config is not None:
        raise ConfigError("compare takes its configs in params or matrix ('configs'), not the configs axis",
                          field="configs")
    capacity = importlib.import_module("kschedlib.capacity")
    return capacity.compare(cluster, configs, kube_version=kube_version, **options).to_dict()
