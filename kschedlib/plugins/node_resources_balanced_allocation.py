"""NodeResourcesBalancedAllocation: prefer nodes whose resource usage stays even across resources.

The score is ``(1 - std) * 100`` (truncated), where ``std`` is the standard
deviation of the per-resource fractions ``requested / allocatable`` after
placing the pod (reference §9.9).  Unlike NodeResourcesFit's strategies it
counts ``requested`` (not the 100m/200Mi non-zero defaults) and the pod's plain
effective requests.  The float arithmetic follows kube's operation order so the
truncated result is identical.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final, Self, final

import attrs

from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.extension_points import PreScorePlugin, ScorePlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalScore
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from kschedlib.model.resources import pod_requests
from kschedlib.plugins.node_resources_fit import (
    DEFAULT_RESOURCES,
    ResourceEntry,
    ResourceSpec,
    decode_resources,
    node_amounts,
    pod_resource_entries,
)

__all__ = [
    "PRE_SCORE_KEY",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesBalancedAllocationArgs",
    "PreScoreState",
    "balanced_score",
    "decode_args",
    "validate_args",
]

MAX_NODE_SCORE: Final = 100


@final
@attrs.frozen(slots=True)
class NodeResourcesBalancedAllocationArgs:
    """The resources to balance (default cpu and memory); every weight must be 1."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


def validate_args(args: NodeResourcesBalancedAllocationArgs) -> None:
    """Raise :class:`ConfigError` for the first duplicate name or weight other than 1, in list order."""
    seen: set[str] = set()
    for i, (name, weight) in enumerate(args.resources):
        if name in seen:
            raise ConfigError("Duplicate value", field=f"resources[{i}].name", value=name)
        seen.add(name)
        if weight != 1:
            raise ConfigError("must be 1", field=f"resources[{i}].weight", value=weight)


def decode_args(raw: Mapping[str, Any] | None) -> NodeResourcesBalancedAllocationArgs:
    """Decode and validate the args: empty resources => cpu+memory; weight 0/missing => 1."""
    raw = raw if raw is not None else {}
    if not isinstance(raw, Mapping):
        raise ConfigError("must be of type Mapping", field="args", value=raw)
    args = NodeResourcesBalancedAllocationArgs(decode_resources(raw.get("resources"), "resources"))
    validate_args(args)
    return args


def balanced_score(fractions: Sequence[float]) -> int:
    """``int((1 - std) * 100)`` of the fractions, with kube's special cases for fewer than 3."""
    count = len(fractions)
    std = 0.0
    if count == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif count > 2:
        total = 0.0
        for fraction in fractions:
            total += fraction
        mean = total / count
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / count)
    return int((1 - std) * float(MAX_NODE_SCORE))


@final
@attrs.frozen(slots=True)
class PreScoreState:
    """The pod's effective requests for the configured resources it can be scored on."""

    entries: tuple[ResourceEntry, ...]

    def clone(self) -> Self:
        return self


PRE_SCORE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScoreNodeResourcesBalancedAllocation")


@final
class NodeResourcesBalancedAllocation(PreScorePlugin, ScorePlugin, NodeLocalScore):
    """Scores 100 for perfectly even usage across resources, less as usage diverges."""

    name: ClassVar[str] = "NodeResourcesBalancedAllocation"
    __slots__ = ("_handle", "_resources")

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: Handle) -> None:
        args = args if args is not None else NodeResourcesBalancedAllocationArgs()
        validate_args(args)
        self._handle = handle
        self._resources = args.resources

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Compute the pod's requests once (v1.30 never skips, even for pods requesting nothing)."""
        state.write(PRE_SCORE_KEY, PreScoreState(self._entries(pod)))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The balance score in [0, 100]; computes the requests itself if PreScore did not run."""
        if not self._resources:
            raise RuntimeError("resources not found")
        s = state.get(PRE_SCORE_KEY)
        entries = s.entries if s is not None else self._entries(pod)
        fractions = []
        for capacity, requested, _ in node_amounts(entries, node_info, True):
            fraction = float(requested) / float(capacity)
            fractions.append(1.0 if fraction > 1 else fraction)
        return balanced_score(fractions)

    def _entries(self, pod: Pod) -> tuple[ResourceEntry, ...]:
        return pod_resource_entries(self._resources, pod_requests(pod))

    def score_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """The score depends only on the pod's requests for the configured resources."""
        s = state.get(PRE_SCORE_KEY)
        return s.entries if s is not None else None
