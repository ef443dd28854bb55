"""NodeResourcesBalancedAllocation: prefer nodes whose resource usage stays even across resources.

The score is ``(1 - std) * 100`` (truncated), where ``std`` is the standard
deviation of the per-resource fractions ``requested / allocatable`` after
placing the pod (kube's ``balanced_allocation.go``).  Unlike NodeResourcesFit's strategies it
counts ``requested`` (not the 100m/200Mi non-zero defaults) and the pod's plain
effective requests.  The float arithmetic follows kube's operation order so the
truncated result is identical.

Two later kube-scheduler changes, each behind its switch: from v1.33 a pod that requests none of
the resources is skipped (``balanced_allocation_skips_best_effort``), and from v1.36 the score is
the *change* in balance the pod makes, ``50 + (50 + with_pod - without_pod) / 2`` in Go's
truncating integer division (``balanced_allocation_change_score``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final, Self, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.extension_points import MAX_NODE_SCORE, PreScorePlugin, ScorePlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalScore
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from kschedlib.model.resources import CPU, MEMORY, accounting_for
from kschedlib.plugins._helpers.normalize import truncating_div
from kschedlib.plugins.node_resources_fit.args import DEFAULT_RESOURCES, ResourceSpec, decode_resources
from kschedlib.plugins.node_resources_fit.scoring import ResourceEntry, node_amounts, pod_resource_entries

__all__ = [
    "NodeResourcesBalancedAllocation",
    "NodeResourcesBalancedAllocationArgs",
    "decode_args",
    "validate_args",
]

_HALF_SCORE: Final = MAX_NODE_SCORE // 2
_MAX_SCORE_F: Final = float(MAX_NODE_SCORE)


@final
@attrs.frozen(slots=True, repr=False)
class NodeResourcesBalancedAllocationArgs(FieldsRepr):
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


def _node_balance(entries: tuple[ResourceEntry, ...], node_info: NodeInfo) -> int:
    """:func:`balanced_score` of the node's fractions (capped at 1) with the entries' requests added."""
    fractions = []
    for capacity, requested, _ in node_amounts(entries, node_info, True):
        fraction = float(requested) / float(capacity)
        fractions.append(1.0 if fraction > 1 else fraction)
    return balanced_score(fractions)


def _node_balances(entries: tuple[ResourceEntry, ...], base: tuple[ResourceEntry, ...],
                   node_info: NodeInfo) -> tuple[int, int]:
    """``_node_balance`` of ``entries`` and of ``base`` (the same entries requesting nothing), from one
    pass over the node's amounts: the amount without the pod is the amount with it less its request."""
    amounts = node_amounts(entries, node_info, True)
    if len(amounts) != len(entries):  # the node lacks a resource: the entries and amounts do not pair up
        return _node_balance(entries, node_info), _node_balance(base, node_info)
    if len(amounts) == 2:  # cpu and memory (the default): balanced_score's two-fraction case, inline
        return _two_balances(amounts, entries)
    with_pod = []
    without_pod = []
    for (capacity, requested, _), entry in zip(amounts, entries, strict=True):
        fraction = float(requested) / float(capacity)
        with_pod.append(1.0 if fraction > 1 else fraction)
        fraction = float(requested - entry[3]) / float(capacity)
        without_pod.append(1.0 if fraction > 1 else fraction)
    return balanced_score(with_pod), balanced_score(without_pod)


def _two_balances(amounts: list[tuple[int, int, int]], entries: tuple[ResourceEntry, ...]) -> tuple[int, int]:
    """:func:`_node_balances` of two resources without the lists: the same float operations in the same
    order as :func:`balanced_score` (``int((1 - |f0 - f1| / 2) * 100)``), so the same results."""
    (capacity0, requested0, _), (capacity1, requested1, _) = amounts
    capacity0_f, capacity1_f = float(capacity0), float(capacity1)
    with0, with1 = float(requested0) / capacity0_f, float(requested1) / capacity1_f
    without0 = float(requested0 - entries[0][3]) / capacity0_f
    without1 = float(requested1 - entries[1][3]) / capacity1_f
    with0, with1 = 1.0 if with0 > 1 else with0, 1.0 if with1 > 1 else with1
    without0, without1 = 1.0 if without0 > 1 else without0, 1.0 if without1 > 1 else without1
    return (int((1 - abs((with0 - with1) / 2)) * _MAX_SCORE_F),
            int((1 - abs((without0 - without1) / 2)) * _MAX_SCORE_F))


def cpu_memory_request(entries: tuple[ResourceEntry, ...]) -> tuple[int, int] | None:
    """(cpu request, memory request) when ``entries`` are exactly cpu then memory (the default resources),
    which :func:`cpu_memory_balances` scores directly; else ``None``."""
    if len(entries) != 2:
        return None
    (_, name0, _, cpu), (_, name1, _, memory) = entries
    if (name0, name1) != (CPU, MEMORY):
        return None
    return cpu, memory


def cpu_memory_balances(request: tuple[int, int], node_info: NodeInfo) -> tuple[int, int] | None:
    """:func:`_node_balances` for a :func:`cpu_memory_request`, read straight off the node's numbers.

    The same float operations in the same order as :func:`_two_balances` on a node with non-zero cpu
    and memory allocatable (the plain path's amounts are then exactly these two), without building
    the per-resource list; ``None`` on any other node.
    """
    cpu, memory = request
    alloc = node_info.allocatable
    used = node_info.requested
    cpu_capacity, memory_capacity = alloc.milli_cpu, alloc.memory
    if cpu_capacity == 0 or memory_capacity == 0:
        return None
    cpu_requested = used.milli_cpu + cpu
    memory_requested = used.memory + memory
    capacity0_f, capacity1_f = float(cpu_capacity), float(memory_capacity)
    with0, with1 = float(cpu_requested) / capacity0_f, float(memory_requested) / capacity1_f
    without0 = float(cpu_requested - cpu) / capacity0_f
    without1 = float(memory_requested - memory) / capacity1_f
    with0, with1 = 1.0 if with0 > 1 else with0, 1.0 if with1 > 1 else with1
    without0, without1 = 1.0 if without0 > 1 else without0, 1.0 if without1 > 1 else without1
    return (int((1 - abs((with0 - with1) / 2)) * _MAX_SCORE_F),
            int((1 - abs((without0 - without1) / 2)) * _MAX_SCORE_F))


def balance_change_score(with_pod: int, without_pod: int) -> int:
    """v1.36's score: 75 when the pod leaves the balance as it was, 100 when it evens it out fully."""
    return _HALF_SCORE + truncating_div(_HALF_SCORE + with_pod - without_pod, 2)


def _best_effort(entries: tuple[ResourceEntry, ...]) -> bool:
    """kube's isBestEffortPod: no request for any configured resource (dropped entries request 0)."""
    return not any(amount for _, _, _, amount in entries)


@final
@attrs.frozen(slots=True, repr=False)
class PreScoreState(FieldsRepr):
    """The pod's effective requests for the configured resources it can be scored on."""

    entries: tuple[ResourceEntry, ...]
    base: tuple[ResourceEntry, ...] = ()
    """The same entries with a zero request: the node as it is, for the v1.36 change score."""
    cpu_memory: tuple[int, int] | None = None
    """The entries as :func:`cpu_memory_request` numbers (a pod requesting only cpu and memory, the
    common case), scored by :func:`cpu_memory_balances`."""

    def clone(self) -> Self:
        return self


PRE_SCORE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScoreNodeResourcesBalancedAllocation")


@final
class NodeResourcesBalancedAllocation(PreScorePlugin, ScorePlugin, NodeLocalScore):
    """Scores 100 for perfectly even usage across resources, less as usage diverges."""

    name: ClassVar[str] = "NodeResourcesBalancedAllocation"
    __slots__ = ("_change_score", "_handle", "_requests", "_resources", "_skip_best_effort")

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None, handle: Handle) -> None:
        args = args if args is not None else NodeResourcesBalancedAllocationArgs()
        validate_args(args)
        self._handle = handle
        self._resources = args.resources
        switches = handle.switches
        self._skip_best_effort = switches.balanced_allocation_skips_best_effort
        self._change_score = switches.balanced_allocation_change_score
        self._requests = accounting_for(switches).requests

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Compute the pod's requests once; Skip for a pod requesting none of the resources (v1.33)."""
        entries = self._entries(pod)
        if self._skip_best_effort and _best_effort(entries):
            return Status.skip()
        base = tuple((kind, name, weight, 0) for kind, name, weight, _ in entries) if self._change_score else ()
        state.write(PRE_SCORE_KEY, PreScoreState(entries, base, cpu_memory_request(entries)))
        return Status.success()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The balance score; computes the requests itself if PreScore did not run."""
        if not self._resources:
            raise RuntimeError("resources not found")
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            entries = self._entries(pod)
            if self._skip_best_effort and _best_effort(entries):
                return 0
            s = PreScoreState(entries, tuple((kind, name, weight, 0) for kind, name, weight, _ in entries))
        if s.cpu_memory is not None:
            direct = cpu_memory_balances(s.cpu_memory, node_info)
            if direct is not None:
                return balance_change_score(*direct) if self._change_score else direct[0]
        if not self._change_score:
            return _node_balance(s.entries, node_info)
        return balance_change_score(*_node_balances(s.entries, s.base, node_info))

    def _entries(self, pod: Pod) -> tuple[ResourceEntry, ...]:
        return pod_resource_entries(self._resources, self._requests(pod))

    def score_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """The score depends only on the pod's requests for the configured resources.

        v1.36's change score also reads the node's requests without the pod, which the NodeInfo holds.
        """
        s = state.get(PRE_SCORE_KEY)
        return s.entries if s is not None else None
