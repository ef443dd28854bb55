"""CallableExtender: an extender made of Python functions, run in the scheduler's process."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import final

from kschedlib.framework.extender import Extender, ExtenderFilterResult, ExtenderVictims, pod_uses_resources
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["CallableExtender", "NodeCheck", "NodeScorer"]

NodeCheck = Callable[[Pod, NodeInfo], "Status | str | None"]
"""Per node: ``None`` (or a success status) passes; a reason, or a rejecting status, fails it."""
NodeScorer = Callable[[Pod, NodeInfo], int]
"""Per node: a score, meant in 0..10 (the scheduler adds ``score x weight x 10``)."""
Binder = Callable[[Pod, str], None]
Preempter = Callable[[Pod, Mapping[str, ExtenderVictims]], Mapping[str, ExtenderVictims]]


@final
class CallableExtender(Extender):
    """An extender whose verbs are plain functions; a verb left out is not offered.

    ``filter`` is called per node and returns ``None`` to keep it, a reason
    string to reject it (``Unschedulable``) or a :class:`Status` (an
    ``UnschedulableAndUnresolvable`` one marks the node unresolvable).
    ``prioritize`` scores one node; ``bind`` binds or raises; ``preempt`` returns
    the candidate nodes it keeps, with their victims.  Exceptions are extender
    failures: skipped when ``ignorable``, else they fail the attempt.
    """

    __slots__ = ("_bind", "_filter", "_ignorable", "_managed", "_name", "_preempt", "_prioritize", "_weight")

    def __init__(
        self,
        name: str,
        *,
        filter: NodeCheck | None = None,
        prioritize: NodeScorer | None = None,
        bind: Binder | None = None,
        preempt: Preempter | None = None,
        weight: int = 1,
        managed_resources: Collection[str] = (),
        ignorable: bool = False,
    ) -> None:
        if prioritize is not None and weight <= 0:
            raise ValueError(f"extender {name!r}: must have a positive weight applied to it (got {weight})")
        self._name = name
        self._filter = filter
        self._prioritize = prioritize
        self._bind = bind
        self._preempt = preempt
        self._weight = weight
        self._managed = frozenset(managed_resources)
        self._ignorable = ignorable

    def __repr__(self) -> str:
        return f"CallableExtender({self._name!r})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def weight(self) -> int:
        return self._weight

    @property
    def is_ignorable(self) -> bool:
        return self._ignorable

    @property
    def is_filter(self) -> bool:
        return self._filter is not None

    @property
    def is_prioritizer(self) -> bool:
        return self._prioritize is not None

    @property
    def is_binder(self) -> bool:
        return self._bind is not None

    @property
    def supports_preemption(self) -> bool:
        return self._preempt is not None

    def is_interested(self, pod: Pod) -> bool:
        return not self._managed or pod_uses_resources(pod, self._managed)

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> ExtenderFilterResult:
        if self._filter is None:
            return ExtenderFilterResult(tuple(nodes))
        passed: list[NodeInfo] = []
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        for info in nodes:
            verdict = self._filter(pod, info)
            if verdict is None or (isinstance(verdict, Status) and verdict.is_success):
                passed.append(info)
            elif isinstance(verdict, str):
                failed[info.name] = verdict
            elif verdict.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                unresolvable[info.name] = verdict.message()
            elif verdict.is_rejected:
                failed[info.name] = verdict.message()
            else:
                raise RuntimeError(f"filter of extender {self._name!r} failed on node {info.name!r}: {verdict}")
        return ExtenderFilterResult(tuple(passed), failed, unresolvable)

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> list[tuple[str, int]]:
        if self._prioritize is None:
            return [(info.name, 0) for info in nodes]
        return [(info.name, int(self._prioritize(pod, info))) for info in nodes]

    def bind(self, pod: Pod, node_name: str) -> None:
        if self._bind is None:
            raise RuntimeError(f"extender {self._name!r} does not bind")
        self._bind(pod, node_name)

    def process_preemption(
        self, pod: Pod, victims: Mapping[str, ExtenderVictims], snapshot: Snapshot
    ) -> dict[str, ExtenderVictims]:
        if self._preempt is None:
            return dict(victims)
        return dict(self._preempt(pod, victims))
