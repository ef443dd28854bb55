"""A user's plugin as the tutorial writes it: type-checked with ``mypy --strict`` in CI, never run.

It proves that the public surface is typed for plugin authors: the base classes, typed state keys
(``state.read`` returns the key's type), ``normalize_score`` on plain scores and the registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Self, assert_type

import attrs

import kschedlib
from kschedlib.framework import (
    CycleState,
    FilterPlugin,
    Handle,
    NodeInfo,
    PreFilterPlugin,
    PreFilterResult,
    ScoreExtensions,
    ScorePlugin,
    StateKey,
    Status,
)
from kschedlib.model import Pod


@attrs.frozen
class Wanted:
    """What PreFilter worked out once for the pod."""

    tiers: frozenset[str]

    def clone(self) -> Self:
        return self  # immutable


WANTED: StateKey[Wanted] = StateKey("MyFilter/wanted")


class MyFilter(PreFilterPlugin, FilterPlugin, ScorePlugin, ScoreExtensions):
    """Only nodes labelled ``tier`` as the pod asks; more pods scores lower."""

    name: ClassVar[str] = "MyFilter"

    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        state.write(WANTED, Wanted(frozenset({pod.labels.get("tier", "")})))
        return Status.success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        wanted = state.read(WANTED)
        assert_type(wanted, Wanted)
        if node_info.node is None or node_info.node.labels.get("tier", "") not in wanted.tiers:
            return Status.unschedulable("node(s) are of another tier")
        return Status.success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return len(node_info.pods)

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        most = max(scores, default=0)
        return [100 if most == 0 else 100 * (most - score) // most for score in scores]


def registry() -> kschedlib.Registry:
    reg = kschedlib.in_tree_registry()
    reg.register(MyFilter.name, MyFilter)
    return reg


def schedule(cluster: kschedlib.Cluster) -> list[str | None]:
    sched = kschedlib.Scheduler({"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "MyFilter"}]}}}]},
                                registry=registry(), seed=0)
    sched.add_objects(cluster)
    return [result.node_name for result in sched.run_until_idle()]
