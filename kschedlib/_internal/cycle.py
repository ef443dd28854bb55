"""The scheduling algorithm of one cycle: PreFilter, the sampled node search, PostFilter, scoring, host choice.

Mirrors kube-scheduler v1.30's ``schedulePod`` (reference §3 steps 4-12) with
the deterministic, sequential reading of its parallel node search.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from itertools import compress
from operator import attrgetter
from typing import Any, Final, final

import attrs

from kschedlib._internal.extenders import filter_with_extenders, has_filter_or_scoring, prioritize_with_extenders
from kschedlib._internal.nominator import Nominator
from kschedlib._internal.reuse.columns import SearchResult, search_nodes
from kschedlib._internal.runtime import FilterRunner, ProfileRuntime, ScoreTable
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import NO_NODES_AVAILABLE, Diagnosis, fit_error_message
from kschedlib.framework.extender import EXTENDER_PSEUDO_PLUGIN
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PostFilterResult
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["CycleOutcome", "filter_with_nominated", "num_feasible_nodes_to_find", "run_cycle"]

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
_SUCCESS: Final = Code.SUCCESS
_NAME: Final = attrgetter("name")


@final
@attrs.frozen(slots=True)
class CycleOutcome:
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
    top: tuple[str, ...] = ()
    """The nodes with the top score, in scoring order (:attr:`best` sorts them)."""
    evaluated_nodes: int = 0
    search_stopped_at: str | None = None
    diagnosis: Diagnosis | None = None
    post_filter: PostFilterResult | None = None
    error: Status | None = None

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


def num_feasible_nodes_to_find(percentage: int, num_nodes: int) -> int:
    """How many feasible nodes the search keeps (reference §3 step 8; 0 = adaptive)."""
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    if percentage == 0:
        percentage = max(50 - num_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def filter_with_nominated(
    runtime: ProfileRuntime,
    run: FilterRunner,
    state: CycleState,
    pod: Pod,
    node_info: NodeInfo,
    nominator: Nominator,
) -> Status:
    """The two-pass rule: the pod must fit with and without equal/higher-priority nominated pods."""
    if not nominator:
        return run(state, pod, node_info)
    priority = pod.effective_priority
    relevant = [info for info in nominator.pods_for_node(node_info.name)
                if info.pod.effective_priority >= priority and info.pod.uid != pod.uid]
    if not relevant:
        return run(state, pod, node_info)
    state_with = state.clone()
    info_with = node_info
    for pod_info in relevant:
        info_with = info_with.with_pod(pod_info)
        status = runtime.run_pre_filter_extension(state_with, pod, pod_info, info_with, add=True)
        if status.code is not _SUCCESS:
            return status
    status = run(state_with, pod, info_with)
    if status.code is not _SUCCESS:
        return status
    return run(state, pod, node_info)


def _nominated_positions(
    snapshot: Snapshot, pod: Pod, nominator: Nominator, check: Callable[[NodeInfo], Status]
) -> dict[int, Callable[[NodeInfo], Status]]:
    """Positions of the nodes where the two-pass rule applies to ``pod``, each with ``check``."""
    priority = pod.effective_priority
    special: dict[int, Callable[[NodeInfo], Status]] = {}
    for name in nominator.node_names():
        position = snapshot.position_of(name)
        if position is not None and any(info.pod.effective_priority >= priority and info.pod.uid != pod.uid
                                        for info in nominator.pods_for_node(name)):
            special[position] = check
    return special


def _rejectors(statuses: Mapping[str, Status]) -> frozenset[str]:
    return frozenset(s.plugin for s in statuses.values() if s.plugin and s.is_rejected)


def _absent_node_status(narrowing: Sequence[str]) -> Status:
    """The status of a node a PreFilterResult left out: it did not satisfy the plugins that narrowed."""
    return Status.unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]")


def _add_absent_statuses(statuses: dict[str, Status], snapshot: Snapshot, narrowing: Sequence[str]) -> frozenset[str]:
    """Give every node without a status the absent-node status (kube's NodeToStatus since v1.32).

    Returns the narrowing plugins, which kube counts among the plugins that rejected the pod.
    """
    absent = _absent_node_status(narrowing)
    for info in snapshot.node_infos:
        statuses.setdefault(info.name, absent)
    return frozenset(narrowing)


def _diagnosis(statuses: Mapping[str, Status], *, pre_filter_message: str = "",
               also: frozenset[str] = frozenset()) -> Diagnosis:
    unschedulable = _rejectors(statuses) | also
    pending = frozenset(s.plugin for s in statuses.values() if s.plugin and s.code is Code.PENDING)
    return Diagnosis(dict(statuses), unschedulable, pending, pre_filter_message)


def select_host(names: Sequence[str], totals: Sequence[int], rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """A uniformly random node among those with the top total, and all of them (in ``names`` order).

    kube-scheduler draws the same uniform choice by reservoir sampling with its own RNG; one draw
    from the seeded generator gives the same distribution.
    """
    top = max(totals)
    if totals.count(top) == 1:
        chosen = names[totals.index(top)]
        return chosen, (chosen,)
    best = tuple(compress(names, map(top.__eq__, totals)))
    return best[rng.randrange(len(best))], best


def run_cycle(
    runtime: ProfileRuntime,
    pod: Pod,
    snapshot: Snapshot,
    *,
    start_index: int,
    percentage_of_nodes_to_score: int,
    rng: random.Random,
    nominator: Nominator,
    score_single_node: bool = False,
    detail: bool = True,
    state: CycleState | None = None,
) -> CycleOutcome:
    """One scheduling cycle for ``pod`` on ``snapshot`` (no side effects besides plugin state).

    The outcome carries the cycle's state unless the caller passes its own ``state`` (a scheduler
    keeps that for Reserve, Permit and binding; its results then hold an empty one).
    """
    kept = CycleState() if state is not None else None
    if state is None:
        state = CycleState()
    num_all = snapshot.num_nodes
    base: dict[str, Any] = {"pod": pod, "state": kept if kept is not None else state, "num_all_nodes": num_all,
                            "start_index": start_index}
    if num_all == 0:
        return CycleOutcome(next_start_index=start_index, error=Status.unresolvable(NO_NODES_AVAILABLE), **base)
    pre = runtime.run_pre_filter(state, pod)
    status = pre.status
    names = pre.result.node_names if pre.result is not None else None
    if status.code is not _SUCCESS:
        if not status.is_rejected:
            return CycleOutcome(next_start_index=start_index, error=status, pre_filter_nodes=names, **base)
        everywhere = dict.fromkeys((info.name for info in snapshot.node_infos), status)
        narrowing = frozenset(pre.narrowing) if runtime.absent_nodes_in_fit_error else frozenset()
        diagnosis = _diagnosis(everywhere, pre_filter_message=status.message(), also=narrowing)
        return _no_fit(runtime, base, state, pod, everywhere, diagnosis, start_index, len(everywhere), status, names)
    plan = runtime.reuse.filter_plan(state, pod)
    check = runtime.filter_runner(state, pod, plan)

    def with_nominated(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return filter_with_nominated(runtime, check, state, pod, node_info, nominator)

    check_nominated = with_nominated if nominator else check

    statuses: dict[str, Status] = {}
    if pod.nominated_node_name:
        nominated = snapshot.find(pod.nominated_node_name)
        if nominated is not None and (names is None or nominated.name in names):
            first = check_nominated(state, pod, nominated)
            if first.code is _SUCCESS and runtime.extenders:
                passed = filter_with_extenders(runtime.extenders, pod, [nominated], statuses, snapshot,
                                               replace_statuses=runtime.extender_status_replaces)
                if isinstance(passed, Status):
                    return CycleOutcome(next_start_index=start_index, error=passed, pre_filter_nodes=names, **base)
                if passed:
                    return _scored(runtime, base, state, pod, passed, statuses, snapshot, rng, start_index,
                                   start_index, None, names, score_single_node, detail)
            elif first.code is _SUCCESS:
                return _scored(runtime, base, state, pod, [nominated], {}, snapshot, rng, start_index,
                               start_index, None, names, score_single_node, detail)
            elif first.code is Code.ERROR:
                return CycleOutcome(next_start_index=start_index, error=first, pre_filter_nodes=names, **base)
            else:
                statuses[nominated.name] = first
    nodes: Sequence[NodeInfo] = snapshot.node_infos
    if names is not None:
        nodes = [info for info in nodes if info.name in names]
    percentage = runtime.percentage_of_nodes_to_score
    to_find = num_feasible_nodes_to_find(
        percentage if percentage is not None else percentage_of_nodes_to_score, len(nodes))
    if not runtime.score and not has_filter_or_scoring(runtime.extenders):
        to_find = 1
    positions: list[int] | None = None  # of the feasible nodes in the snapshot, when the column search found them
    by_column: SearchResult | None = None
    if runtime.filter and names is None and not statuses:
        special = _nominated_positions(snapshot, pod, nominator, lambda info: with_nominated(state, pod, info)) \
            if nominator else None
        by_column = runtime.reuse.search_columns(plan, state, pod, snapshot, start_index, to_find, special, check)
    if by_column is not None:
        found, positions = by_column, by_column.feasible
    elif runtime.filter:
        found = search_nodes(nodes, start_index, to_find, lambda info: check_nominated(state, pod, info))
    else:
        found = SearchResult()
        found.feasible.extend((start_index + i) % len(nodes) for i in range(min(to_find, len(nodes))))
    feasible: list[NodeInfo] = list(map(nodes.__getitem__, found.feasible))
    statuses.update(found.statuses)  # a status already there (the nominated node's) keeps its place
    processed = len(feasible) + len(statuses)
    next_start = (start_index + processed) % num_all
    if found.error is not None:
        return CycleOutcome(next_start_index=next_start, error=found.error, pre_filter_nodes=names, **base)
    also: frozenset[str] = frozenset()
    if runtime.extenders and feasible:  # reference §3 step 8b
        also = _rejectors(statuses)
        passed = filter_with_extenders(runtime.extenders, pod, feasible, statuses, snapshot,
                                       replace_statuses=runtime.extender_status_replaces)
        if isinstance(passed, Status):
            return CycleOutcome(next_start_index=next_start, error=passed, pre_filter_nodes=names, **base)
        if len(passed) != len(feasible):
            also |= {EXTENDER_PSEUDO_PLUGIN}
        feasible = passed
        positions = None
    if not feasible:
        evaluated = len(statuses)
        if names is not None and runtime.absent_nodes_in_fit_error:
            also |= _add_absent_statuses(statuses, snapshot, pre.narrowing)
        diagnosis = _diagnosis(statuses, also=also)
        return _no_fit(runtime, base, state, pod, statuses, diagnosis, next_start, evaluated, None, names)
    return _scored(runtime, base, state, pod, feasible, statuses, snapshot, rng, next_start,
                   processed, found.stopped_at, names, score_single_node, detail, positions)


def _no_fit(
    runtime: ProfileRuntime,
    base: dict[str, Any],
    state: CycleState,
    pod: Pod,
    statuses: dict[str, Status],
    diagnosis: Diagnosis,
    next_start: int,
    evaluated: int,
    pre_filter_status: Status | None,
    names: frozenset[str] | None,
) -> CycleOutcome:
    post = runtime.run_post_filter(state, pod, statuses)
    if post is not None and not post.status.is_success:
        diagnosis = attrs.evolve(diagnosis, post_filter_message=post.status.message())
    return CycleOutcome(
        next_start_index=next_start,
        node_statuses=statuses,
        pre_filter_status=pre_filter_status,
        pre_filter_nodes=names,
        evaluated_nodes=evaluated,
        diagnosis=diagnosis,
        post_filter=post,
        **base,
    )


def _scored(
    runtime: ProfileRuntime,
    base: dict[str, Any],
    state: CycleState,
    pod: Pod,
    feasible: Sequence[NodeInfo],
    statuses: dict[str, Status],
    snapshot: Snapshot,
    rng: random.Random,
    next_start: int,
    processed: int,
    stopped_at: str | None,
    names: frozenset[str] | None,
    score_single_node: bool,
    detail: bool = True,
    positions: list[int] | None = None,
) -> CycleOutcome:
    scored = tuple(map(_NAME, feasible))
    common: dict[str, Any] = {
        "next_start_index": next_start,
        "feasible": scored,
        "node_statuses": statuses,
        "pre_filter_nodes": names,
        "evaluated_nodes": len(feasible) + len(statuses),
        "search_stopped_at": stopped_at,
        **base,
    }
    if len(feasible) == 1 and not score_single_node:
        only = feasible[0].name
        return CycleOutcome(selected=only, top=(only,), **common)
    table = _score(runtime, state, pod, feasible, detail, snapshot, positions)
    if isinstance(table, Status):
        return CycleOutcome(error=table, **common)
    entries: dict[str, tuple[tuple[str, int], ...]] = {}
    if runtime.extenders and len(feasible) > 1:  # reference §3 step 11 (kube never scores a lone node)
        added, by_node = prioritize_with_extenders(runtime.extenders, pod, feasible)
        table = table._replace(totals=[total + extra for total, extra in zip(table.totals, added, strict=True)])
        entries = {name: tuple(values) for name, values in by_node.items()}
    selected, best = select_host(scored, table.totals, rng)
    if len(feasible) == 1:
        selected = scored[0]
    return CycleOutcome(selected=selected, top=best, scores=table, scored_nodes=scored,
                        extender_scores=entries, **common)


def _score(
    runtime: ProfileRuntime, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], detail: bool,
    snapshot: Snapshot, positions: list[int] | None,
) -> ScoreTable | Status:
    if not runtime.score and not runtime.extenders:
        return ScoreTable((), (), [1] * len(nodes))
    status = runtime.run_pre_score(state, pod, nodes)
    if status.code is not _SUCCESS:
        return status
    if not runtime.score:
        return ScoreTable((), (), [0] * len(nodes))
    if runtime.extenders and len(nodes) > 1:
        unknown = next((info.name for info in nodes if snapshot.find(info.name) is None), None)
        active = [name for name, _ in runtime.score if name not in state.skip_score_plugins]
        if unknown is not None and active:  # a node an extender made up: kube's Score plugins fail on it
            return Status.from_error(f'running Score plugins: plugin "{active[0]}" failed with: getting node '
                                     f'"{unknown}" from Snapshot: nodeinfo not found for node name "{unknown}"',
                                     plugin=active[0])
    return runtime.run_score(state, pod, nodes, detail=detail, positions=positions, snapshot=snapshot)
