"""What a scheduling attempt produced, and how an embedder is told about it.

Public types (re-exported by :mod:`kschedlib`); the engine in ``_internal`` builds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, Protocol, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, fit_error_message
from kschedlib.framework.results import PostFilterResult
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["CycleOutcome", "ScheduleResult", "SchedulerListener", "ScoreTable"]


class ScoreTable(NamedTuple):
    """Weighted scores: ``plugins[i]`` gave ``scores[i][j]`` to node ``j``; ``totals[j]`` sums them."""

    plugins: tuple[str, ...]
    scores: tuple[list[int], ...]
    totals: list[int]


@final
@attrs.frozen(slots=True, repr=False)
class CycleOutcome(FieldsRepr):
    """Everything one scheduling cycle decided and why (the raw material of ``explain``)."""

    pod: Pod
    state: CycleState
    num_all_nodes: int
    start_index: int
    next_start_index: int
    selected: str | None = None
    feasible: tuple[str, ...] = ()
    node_statuses: Mapping[str, Status] = attrs.field(factory=dict)
    pre_filter_status: Status | None = None
    pre_filter_nodes: frozenset[str] | None = None
    scores: ScoreTable | None = None
    scored_nodes: tuple[str, ...] = ()
    extender_scores: Mapping[str, tuple[tuple[str, int], ...]] = attrs.field(factory=dict)
    """Per scored node, the extenders' entries ``(extender name, score x weight x 10)`` (in ``totals``)."""
    evaluated_nodes: int = 0
    search_stopped_at: str | None = None
    diagnosis: Diagnosis | None = None
    post_filter: PostFilterResult | None = None
    error: Status | None = None

    @property
    def top(self) -> tuple[str, ...]:
        """The nodes with the top score, in scoring order (:attr:`best` sorts them); the selected node alone
        when it was not scored (the only feasible node).

        Derived from the scores when asked, so an outcome a long run keeps holds no second list of nodes
        (with equal nodes, most of them tie)."""
        if self.scores is not None and self.scores.totals:
            totals = self.scores.totals
            high = max(totals)
            return tuple([name for name, total in zip(self.scored_nodes, totals, strict=True) if total == high])
        return (self.selected,) if self.selected is not None else ()

    @property
    def best(self) -> tuple[str, ...]:
        """The nodes with the top score, sorted by name (sorted on demand: scheduling never asks)."""
        return tuple(sorted(self.top))

    @property
    def fit_error(self) -> str | None:
        """The FitError text without the PostFilter part, when no node fits."""
        if self.diagnosis is None:
            return None
        return fit_error_message(self.num_all_nodes, attrs.evolve(self.diagnosis, post_filter_message=""))

    @property
    def message(self) -> str | None:
        """What kube-scheduler writes into the pod's condition: the FitError with its PostFilter part, or the error."""
        if self.diagnosis is not None:
            return fit_error_message(self.num_all_nodes, self.diagnosis)
        if self.error is not None:
            return self.error.message()
        return None


@final
@attrs.frozen(slots=True, repr=False)
class ScheduleResult(FieldsRepr):
    """The outcome of one scheduling attempt.

    ``status`` is SUCCESS when the pod was bound to ``node_name``, WAIT when a
    Permit plugin parked it on ``node_name`` (its resources stay reserved),
    and otherwise says why it failed (``UNSCHEDULABLE`` with kube-scheduler's
    ``message``, or ``ERROR``).  A successful preemption sets
    ``nominated_node_name`` and lists the ``victims`` (``namespace/name``)
    that the embedder should evict.
    """

    pod: Pod
    node_name: str | None
    status: Status
    message: str | None = None
    nominated_node_name: str | None = None
    victims: tuple[str, ...] = ()
    attempts: int = 1
    outcome: CycleOutcome | None = attrs.field(default=None, repr=False, eq=False)

    @property
    def scheduled(self) -> bool:
        """Whether the pod was bound."""
        return self.status.code is Code.SUCCESS and self.node_name is not None

    @property
    def waiting(self) -> bool:
        """Whether the pod waits in Permit."""
        return self.status.code is Code.WAIT

    @property
    def diagnosis(self) -> Diagnosis | None:
        """Per-node statuses when no node fitted."""
        return self.outcome.diagnosis if self.outcome is not None else None


class SchedulerListener(Protocol):
    """Told of every decision the scheduler makes; implement all four methods (they may do nothing)."""

    def on_bound(self, result: ScheduleResult) -> None:
        """The pod was bound to ``result.node_name``."""

    def on_failed(self, result: ScheduleResult) -> None:
        """The attempt failed; the pod was requeued (see ``result.status``/``message``)."""

    def on_waiting(self, result: ScheduleResult) -> None:
        """A Permit plugin parked the pod on ``result.node_name``."""

    def on_preempting(self, result: ScheduleResult) -> None:
        """The pod was nominated; ``result.victims`` must be evicted to make room."""
