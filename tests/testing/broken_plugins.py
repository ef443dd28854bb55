"""Deliberately broken plugins: each breaks one contract, and the contract kit must say so.

They are the proof that :mod:`kschedlib.testing.contracts` catches what it promises to catch;
``test_contracts.py`` asserts on the message each one gets.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, MutableMapping, Sequence
from typing import ClassVar, Final, cast

from kschedlib.framework import (
    BatchScore,
    CycleState,
    FilterPlugin,
    Handle,
    LabelKeyedFilter,
    NodeInfo,
    NodeLocalFilter,
    NodeLocalScore,
    PodInfo,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    PureNormalize,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    StateKey,
    Status,
)
from kschedlib.model import Pod
from kschedlib.model.resources import pod_requests


class MutatesNodeInfo(FilterPlugin):
    """Marks every node it sees by writing a label into the NodeInfo's node (NodeInfos are shared)."""

    name: ClassVar[str] = "MutatesNodeInfo"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is not None:
            cast(MutableMapping[str, str], node.labels)["seen-by"] = self.name
        return Status.success()


class MutatesPod(PreFilterPlugin):
    """Stamps the pod being scheduled with a label: the pod belongs to the cluster, not to the plugin."""

    name: ClassVar[str] = "MutatesPod"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        cast(MutableMapping[str, str], pod.labels)["considered-by"] = self.name
        return Status.success()


class ScoresOutOfRange(ScorePlugin):
    """Scores free milli-CPU divided by 10 and forgets to normalize: a node with 2 free CPUs scores 200."""

    name: ClassVar[str] = "ScoresOutOfRange"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        free = node_info.allocatable.milli_cpu - node_info.requested.milli_cpu
        return max(free, 0) // 10


class Nondeterministic(ScorePlugin):
    """Breaks ties with the process-wide random generator instead of the handle's seeded one."""

    name: ClassVar[str] = "Nondeterministic"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return random.randint(0, 100)  # the bug on display: the process-wide generator


class _PodsPerNode:
    """Pods per node; ``clone`` copies the object but shares the dict (the bug)."""

    __slots__ = ("counts",)

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def clone(self) -> _PodsPerNode:
        return _PodsPerNode(self.counts)


_COUNTS: Final[StateKey[_PodsPerNode]] = StateKey("PreFilterSharedClone")


class _CountingBase(PreFilterPlugin, PreFilterExtensions, FilterPlugin):
    """At most ``LIMIT`` pods per node, counted in PreFilter and kept up to date by AddPod/RemovePod."""

    LIMIT: ClassVar[int] = 3

    def __init__(self, args: None, handle: Handle) -> None:
        self._handle = handle

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        state.write(_COUNTS, _PodsPerNode({info.name: len(info.pods) for info in self._handle.snapshot}))
        return Status.success()

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        counts = state.read(_COUNTS).counts
        counts[node_info.name] = counts.get(node_info.name, 0) + 1
        return Status.success()

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        counts = state.read(_COUNTS).counts
        counts[node_info.name] = counts.get(node_info.name, 0) - 1
        return Status.success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if state.read(_COUNTS).counts.get(node_info.name, 0) >= self.LIMIT:
            return Status.unschedulable("node(s) had too many pods")
        return Status.success()


class SharedClone(_CountingBase):
    """Its PreFilter state's ``clone`` shares the counts: AddPod on a clone changes the original."""

    name: ClassVar[str] = "SharedClone"


class ForgetfulRemovePod(_CountingBase):
    """A correct clone, but RemovePod forgets to count down: AddPod then RemovePod leaves a pod counted."""

    name: ClassVar[str] = "ForgetfulRemovePod"
    LIMIT: ClassVar[int] = 1

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        counts = {info.name: len(info.pods) for info in self._handle.snapshot}
        state.write(_COUNTS, _CopiedCounts(counts))
        return Status.success()

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        return Status.success()


class _CopiedCounts(_PodsPerNode):
    """Counts whose clone copies the dict, as it should."""

    __slots__ = ()

    def clone(self) -> _CopiedCounts:
        return _CopiedCounts(dict(self.counts))


class LeakyReserve(ReservePlugin):
    """Reserves the pod's CPU on the node in its own ledger; Unreserve forgets to give it back."""

    name: ClassVar[str] = "LeakyReserve"

    def __init__(self, args: None, handle: Handle) -> None:
        self.reserved_milli_cpu: dict[str, int] = {}

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        cpu = pod_requests(pod).milli_cpu
        self.reserved_milli_cpu[node_name] = self.reserved_milli_cpu.get(node_name, 0) + cpu
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Should subtract what ``reserve`` added; does nothing."""


# --- smaller breakages of the score contract and friends, checked on a hand-written scenario -----------


class ScoresAFloat(ScorePlugin):
    """Returns a float score."""

    name: ClassVar[str] = "ScoresAFloat"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0.5  # type: ignore[return-value]  # the bug on display


class _Normalizing(ScorePlugin, ScoreExtensions):
    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 10


class NormalizesOutOfRange(_Normalizing):
    """Scales scores by 15 instead of to 100."""

    name: ClassVar[str] = "NormalizesOutOfRange"

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        return [score * 15 for score in scores]


class NormalizeDropsNodes(_Normalizing):
    """Returns fewer scores than it was given nodes."""

    name: ClassVar[str] = "NormalizeDropsNodes"

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        return []


class NormalizeFails(_Normalizing):
    """Fails to normalize."""

    name: ClassVar[str] = "NormalizeFails"

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        raise ValueError("no scores to normalize")


class NumberedInstances(ScorePlugin):
    """Each instance scores by its own serial number: the same instance agrees with itself, a second does not."""

    name: ClassVar[str] = "NumberedInstances"
    built: ClassVar[list[int]] = [0]

    def __init__(self, args: None, handle: Handle) -> None:
        self.built[0] += 1
        self.number = self.built[0]

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return self.number % 100


class AddPodFails(_CountingBase):
    """AddPod returns an error for every pod."""

    name: ClassVar[str] = "AddPodFails"

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        return Status.from_error("cannot count")


# --- memo keys and answers of the wrong type -----------------------------------------------------------


def _requests_cpu(pod: Pod) -> bool:
    return pod_requests(pod).milli_cpu > 0


class KeyMissesRequests(FilterPlugin, NodeLocalFilter):
    """Rejects pods that request CPU, but keys its verdicts by the pod's labels only."""

    name: ClassVar[str] = "KeyMissesRequests"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.unschedulable("no CPU here") if _requests_cpu(pod) else Status.success()

    def filter_key(self, state: CycleState, pod: Pod) -> Hashable:
        return frozenset(pod.labels.items())  # the bug on display: the verdict depends on the requests too


class LabelKeysMissTheHost(FilterPlugin, LabelKeyedFilter):
    """Rejects node-0 alone, but says its verdict reads the zone label only."""

    name: ClassVar[str] = "LabelKeysMissTheHost"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.unschedulable("not here") if node_info.name == "node-0" else Status.success()

    def filter_label_keys(self, state: CycleState, pod: Pod) -> tuple[str, ...]:
        return ("topology.kubernetes.io/zone",)  # the bug on display: the verdict reads the hostname


class BatchForgetsTheNode(ScorePlugin, BatchScore):
    """Scores node-0 higher one by one, but every node alike in a batch."""

    name: ClassVar[str] = "BatchForgetsTheNode"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 50 if node_info.name == "node-0" else 10

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        return [10] * len(nodes)  # the bug on display


class ScoreKeyMissesRequests(ScorePlugin, NodeLocalScore):
    """Scores pods that request CPU higher, but keys its scores by the pod's namespace only."""

    name: ClassVar[str] = "ScoreKeyMissesRequests"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 50 if _requests_cpu(pod) else 10

    def score_key(self, state: CycleState, pod: Pod) -> Hashable:
        return pod.namespace


class NormalizesByNodeName(ScorePlugin, ScoreExtensions, PureNormalize):
    """Claims its normalized scores depend on the raw scores alone, yet favours nodes by name."""

    name: ClassVar[str] = "NormalizesByNodeName"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        return [100 if node.name.endswith("0") else score for node, score in zip(nodes, scores, strict=True)]

    def normalize_key(self, state: CycleState, pod: Pod) -> Hashable:
        return ()


class NormalizeKeyMissesRequests(ScorePlugin, ScoreExtensions, PureNormalize):
    """Halves the scores of pods that request CPU, but gives every pod the same normalize key."""

    name: ClassVar[str] = "NormalizeKeyMissesRequests"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        return [score // 2 if _requests_cpu(pod) else score for score in scores]

    def normalize_key(self, state: CycleState, pod: Pod) -> Hashable:
        return ()


class UnhashableKey(FilterPlugin, NodeLocalFilter):
    """Returns a list as its memo key."""

    name: ClassVar[str] = "UnhashableKey"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.success()

    def filter_key(self, state: CycleState, pod: Pod) -> Hashable:
        return sorted(pod.labels)  # type: ignore[return-value]  # the bug on display


class FilterReturnsNone(FilterPlugin):
    """Returns ``None`` instead of a success status."""

    name: ClassVar[str] = "FilterReturnsNone"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return None  # type: ignore[return-value]  # the bug on display


class PreScoreReturnsNone(ScorePlugin, PreScorePlugin):
    """Returns ``None`` from PreScore and a bool from Score."""

    name: ClassVar[str] = "PreScoreReturnsNone"

    def __init__(self, args: None, handle: Handle) -> None:
        """No arguments."""

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return None  # type: ignore[return-value]  # the bug on display

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return True  # the bug on display: a bool is not a score
