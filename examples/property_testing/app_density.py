"""AppDensity: cap how many pods of one app share a node, and prefer nodes where the app is sparse.

A complete plugin with every extension point the contract kit checks: PreFilter counts the pods of
the incoming pod's app (its ``app`` label, in its namespace) on each node; AddPod/RemovePod keep the
counts right when the framework adds nominated pods or removes preemption victims; Filter rejects
nodes already at ``maxPerNode``; Score and NormalizeScore turn "fewer of my app here" into [0, 100].

Its property tests are ``tests/examples/test_property_testing_example.py``; the how-to
``docs/how-to/property-test-your-plugin.md`` walks through both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from kschedlib.errors import ConfigError
from kschedlib.framework import (
    MAX_NODE_SCORE,
    CycleState,
    FilterPlugin,
    Handle,
    NodeInfo,
    PodInfo,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
    StateKey,
    Status,
)
from kschedlib.model import Pod

APP_LABEL: Final = "app"


@dataclasses.dataclass(frozen=True)
class AppDensityArgs:
    """``maxPerNode``: how many pods of one app a node may run (default 2)."""

    max_per_node: int = 2


def decode_args(raw: Mapping[str, Any] | None) -> AppDensityArgs:
    """``{"maxPerNode": int >= 1}``; ``None`` (no pluginConfig entry) gives the defaults."""
    if raw is None:
        return AppDensityArgs()
    unknown = sorted(set(raw) - {"apiVersion", "kind", "maxPerNode"})
    if unknown:
        raise ConfigError("unknown field", field=unknown[0])
    value = raw.get("maxPerNode", 2)
    if type(value) is not int or value < 1:
        raise ConfigError("must be an integer of at least 1", field="maxPerNode", value=value)
    return AppDensityArgs(value)


def same_app(pod: Pod, other: Pod) -> bool:
    """Whether ``other`` belongs to ``pod``'s app: same namespace, same ``app`` label."""
    app = pod.labels.get(APP_LABEL)
    return app is not None and other.namespace == pod.namespace and other.labels.get(APP_LABEL) == app


@dataclasses.dataclass
class AppCounts:
    """Pods of the incoming pod's app per node name. AddPod/RemovePod change it, so ``clone`` copies it."""

    counts: dict[str, int]

    def clone(self) -> AppCounts:
        return AppCounts(dict(self.counts))

    def on(self, node_name: str) -> int:
        return self.counts.get(node_name, 0)


COUNTS: Final[StateKey[AppCounts]] = StateKey("PreFilterAppDensity")


def count_app(pod: Pod, node_infos: Sequence[NodeInfo]) -> AppCounts:
    """The pure part of PreFilter: count ``pod``'s app on every node."""
    return AppCounts({info.name: sum(same_app(pod, p.pod) for p in info.pods) for info in node_infos})


def normalized(raw: Sequence[int]) -> list[int]:
    """Fewest pods of the app -> 100, most -> 0 (everything 100 when the app runs nowhere)."""
    highest = max(raw, default=0)
    if not highest:
        return [MAX_NODE_SCORE] * len(raw)
    return [MAX_NODE_SCORE - MAX_NODE_SCORE * count // highest for count in raw]


class AppDensity(PreFilterPlugin, PreFilterExtensions, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions):
    """At most ``maxPerNode`` pods of an app per node; among the nodes that fit, the app's emptiest win."""

    name: ClassVar[str] = "AppDensity"

    def __init__(self, args: AppDensityArgs | None, handle: Handle) -> None:
        self._max = (args or AppDensityArgs()).max_per_node
        self._handle = handle

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        if APP_LABEL not in pod.labels:
            return Status.skip()
        state.write(COUNTS, count_app(pod, self._handle.snapshot.node_infos))
        return Status.success()

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        return self._update(state, pod, pod_info_to_add, node_info, 1)

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        return self._update(state, pod, pod_info_to_remove, node_info, -1)

    def _update(self, state: CycleState, pod: Pod, other: PodInfo, node_info: NodeInfo, delta: int) -> Status:
        counts = state.get(COUNTS)
        if counts is None:
            return Status.from_error(f'reading "{COUNTS.name}" from cycleState: not found')
        if same_app(pod, other.pod):
            counts.counts[node_info.name] = counts.on(node_info.name) + delta
        return Status.success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        counts = state.get(COUNTS)
        if counts is None:
            return Status.from_error(f'reading "{COUNTS.name}" from cycleState: not found')
        if counts.on(node_info.name) >= self._max:
            return Status.unschedulable(f"node(s) already run {self._max} pods of app {pod.labels[APP_LABEL]}")
        return Status.success()

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return Status.success() if COUNTS in state else Status.skip()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The raw score: how many pods of the app the node runs (NormalizeScore turns it around)."""
        return state.read(COUNTS).on(node_info.name)

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        return normalized(scores)
