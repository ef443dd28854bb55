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

from kschedlib.errors import ConfigError
from kschedlib.simulation.cluster import Cluster, load_cluster
from kschedlib.simulation.explain import explain
from kschedlib.simulation.simulate import simulate
from kschedlib.sweeps.scenario import Scenario

__all__ = ["QUESTIONS", "Ask", "ask", "question", "register_question"]

Question = Callable[..., Any]

QUESTIONS: Final[dict[str, str]] = {
    "simulate": "kschedlib.sweeps.questions:simulate_question",
    "explain": "kschedlib.sweeps.questions:explain_question",
}
"""Question name -> ``"module:function"``.  The capacity questions join with one entry each."""


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
@attrs.frozen(slots=True)
class Ask:
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
