"""The scheduling algorithm of one cycle: PreFilter, the sampled node search, PostFilter, scoring, host choice.

Mirrors kube-scheduler v1.30's ``schedulePod`` (``schedule_one.go``) with
the deterministic, sequential reading of its parallel node search.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Final, NamedTuple, TypedDict, Unpack

import attrs

from kschedlib._internal.extenders import filter_with_extenders, has_filter_or_scoring, prioritize_with_extenders
from kschedlib._internal.nominator import Nominator
from kschedlib._internal.reuse.columns import SearchResult, search_nodes
from kschedlib._internal.reuse.memo import MemoizedFilter
from kschedlib._internal.reuse.nominated import NominatedNodeInfos
from kschedlib._internal.reuse.spans import take, take_names
from kschedlib._internal.runtime import FilterRunner, ProfileRuntime
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import NO_NODES_AVAILABLE, Diagnosis
from kschedlib.framework.extender import EXTENDER_PSEUDO_PLUGIN
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo, nominated_that_count
from kschedlib.framework.results import PostFilterResult
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.results import CycleOutcome, ScoreTable

# CycleOutcome is defined in kschedlib.results and re-exported here for the engine and the edges
__all__ = ["CycleOutcome", "filter_with_nominated", "num_feasible_nodes_to_find", "run_cycle"]

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
_SUCCESS: Final = Code.SUCCESS
_PENDING: Final = Code.PENDING
_ERROR: Final = Code.ERROR


def num_feasible_nodes_to_find(percentage: int, num_nodes: int) -> int:
    """How many feasible nodes the search keeps (``schedule_one.go``: ``numFeasibleNodesToFind``; 0 = adaptive)."""
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
    composed: NominatedNodeInfos | None = None,
) -> Status:
    """The two-pass rule: the pod must fit with and without equal/higher-priority nominated pods.

    ``composed`` is given only when no PreFilter extension listens and ``run`` reuses verdicts per
    NodeInfo (:meth:`~kschedlib._internal.reuse.fast_path.Reuse.nominated_infos`): the first pass
    then reads the cycle's state itself (nothing would change its clone) on a NodeInfo composed once
    for as long as the node and its nominated pods stay the same.
    """
    if not nominator:
        return run(state, pod, node_info)
    relevant = nominated_that_count(nominator.pods_for_node(node_info.name), pod.effective_priority, pod.uid)
    if not relevant:
        return run(state, pod, node_info)
    return _filter_with_pods(runtime, run, state, pod, composed, relevant, node_info)


def _filter_with_pods(
    runtime: ProfileRuntime,
    run: FilterRunner,
    state: CycleState,
    pod: Pod,
    composed: NominatedNodeInfos | None,
    relevant: tuple[PodInfo, ...],
    node_info: NodeInfo,
) -> Status:
    """The two-pass rule on a node where ``relevant`` (not empty) are the nominated pods that count
    (the node last: the node search judges it through a partial of everything else)."""
    if composed is not None and isinstance(run, MemoizedFilter):
        return composed.judge(run, state, pod, relevant, node_info)
    state_with = state.clone()
    info_with = node_info
    for pod_info in relevant:
        info_with = info_with.with_pod(pod_info)
        status = runtime.run_pre_filter_extension(state_with, pod, pod_info, info_with, add=True)
        if status.code is not _SUCCESS:
            return status
    # info_with is new each time: a verdict table would gain nothing and lose the node's own entry
    status = (run.run if isinstance(run, MemoizedFilter) else run)(state_with, pod, info_with)
    if status.code is not _SUCCESS:
        return status
    return run(state, pod, node_info)


def _nominated_positions(
    runtime: ProfileRuntime, run: FilterRunner, state: CycleState, pod: Pod, snapshot: Snapshot,
    nominator: Nominator, composed: NominatedNodeInfos | None,
) -> dict[int, Callable[[NodeInfo], Status]]:
    """Positions of the nodes where the two-pass rule applies to ``pod``, each with its judge: the
    rule given the nominated pods that count there (worked out once here, not again per node judged)."""
    special: dict[int, Callable[[NodeInfo], Status]] = {}
    position_of = snapshot.position_of
    for name, relevant in nominator.counted(pod.effective_priority, pod.uid):
        if (position := position_of(name)) is not None:
            special[position] = partial(composed.judge, run, state, pod, relevant) \
                if composed is not None and isinstance(run, MemoizedFilter) \
                else partial(_filter_with_pods, runtime, run, state, pod, None, relevant)
    return special


def _distinct(statuses: Mapping[str, Status]) -> Iterable[Status]:
    """Each status object once: rejected nodes mostly share them (:meth:`Status.with_plugin`)."""
    values = statuses.values()
    return dict(zip(map(id, values), values, strict=True)).values()


def _rejectors(statuses: Mapping[str, Status]) -> frozenset[str]:
    return frozenset(s.plugin for s in _distinct(statuses) if s.plugin and s.is_rejected)


def _absent_node_status(narrowing: Sequence[str]) -> Status:
    """The status of a node a PreFilterResult left out: it did not satisfy the plugins that narrowed."""
    return Status.unresolvable(f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowing))}]")


def _add_absent_statuses(statuses: dict[str, Status], snapshot: Snapshot, narrowing: Sequence[str]) -> None:
    """Give every node without a status the absent-node status (kube's NodeToStatus since v1.32)."""
    absent = _absent_node_status(narrowing)
    for info in snapshot.node_infos:
        statuses.setdefault(info.name, absent)


def _diagnosis(statuses: Mapping[str, Status], *, pre_filter_message: str = "",
               also: frozenset[str] = frozenset()) -> Diagnosis:
    unschedulable = _rejectors(statuses) | also
    pending = frozenset(s.plugin for s in _distinct(statuses) if s.plugin and s.code is _PENDING)
    return Diagnosis(dict(statuses), unschedulable, pending, pre_filter_message)


def select_host(names: Sequence[str], totals: Sequence[int], rng: random.Random) -> str:
    """A uniformly random node among those with the top total: the ``k``-th of them in ``names`` order,
    ``k`` drawn from the seeded generator (no draw when one node has the top total).

    kube-scheduler draws the same uniform choice by reservoir sampling with its own RNG; one draw
    from the seeded generator gives the same distribution.  :attr:`CycleOutcome.top` lists the ties.

    A cycle's totals hold a handful of distinct values, shared as one int object each (the
    runtime's ``_shared``): the top comes from their set (hashing an int it holds is cheaper than
    comparing it), the ties are counted by ``count`` and the ``k``-th is reached by ``index`` scans,
    which match the top by identity before comparing (C scans, no Python step per node or per tie
    past the ``k``-th).  Equal totals held by distinct objects still compare equal, only slower.
    """
    top = max(set(totals))
    find = totals.index
    at = find(top)
    ties = totals.count(top)
    if ties > 1:
        for _ in range(rng.randrange(ties)):
            at = find(top, at + 1)
    return names[at]


class _OutcomeFields(TypedDict, total=False):
    """The fields of a :class:`CycleOutcome` that the steps of a cycle fill in."""

    selected: str | None
    feasible: tuple[str, ...]
    node_statuses: Mapping[str, Status]
    pre_filter_status: Status | None
    scores: ScoreTable | None
    scored_nodes: tuple[str, ...]
    extender_scores: Mapping[str, tuple[tuple[str, int], ...]]
    evaluated_nodes: int
    search_stopped_at: str | None
    post_filter: PostFilterResult | None
    diagnosis: Diagnosis | None
    error: Status | None


class _Cycle(NamedTuple):
    """What every step of one cycle reads (kube's ``schedulePod`` arguments and its PreFilterResult)."""

    runtime: ProfileRuntime
    pod: Pod
    state: CycleState
    snapshot: Snapshot
    nominator: Nominator
    rng: random.Random
    names: frozenset[str] | None
    """The nodes a PreFilterResult kept (``None``: all)."""
    score_single_node: bool
    detail: bool
    outcome_state: CycleState
    """The state the outcome carries (an empty one when the caller keeps the cycle's own)."""
    start_index: int

    def outcome(self, next_start_index: int, **fields: Unpack[_OutcomeFields]) -> CycleOutcome:
        """The cycle's one way to build its outcome: the shared fields plus what the step decided."""
        return CycleOutcome(pod=self.pod, state=self.outcome_state, num_all_nodes=self.snapshot.num_nodes,
                            start_index=self.start_index, next_start_index=next_start_index,
                            pre_filter_nodes=self.names, **fields)


class _Found(NamedTuple):
    """What the node search and the extenders left: feasible nodes and the others' statuses."""

    feasible: Sequence[NodeInfo]
    statuses: dict[str, Status]
    next_start: int
    stopped_at: str | None
    also: frozenset[str]
    """Plugins counted among the rejectors besides those with a status (extenders, PreFilterResult)."""
    positions: Sequence[int] | None
    """Of ``feasible`` in the snapshot, when the column search found them (their scores can be reused)."""


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

    kube-scheduler's ``schedulePod``: PreFilter, :func:`_find_feasible` (``findNodesThatFitPod``),
    then PostFilter when nothing fits, else :func:`_prioritize` (``prioritizeNodes``) and
    :func:`select_host`.  The outcome carries the cycle's state unless the caller passes its own
    ``state`` (a scheduler keeps that for Reserve, Permit and binding; its results then hold an
    empty one).
    """
    kept = CycleState() if state is not None else None
    if state is None:
        state = CycleState()
    outcome_state = kept if kept is not None else state
    if snapshot.num_nodes == 0:
        return CycleOutcome(pod=pod, state=outcome_state, num_all_nodes=0, start_index=start_index,
                            next_start_index=start_index, error=Status.unresolvable(NO_NODES_AVAILABLE))
    pre = runtime.run_pre_filter(state, pod)
    status = pre.status
    names = pre.result.node_names if pre.result is not None else None
    cycle = _Cycle(runtime, pod, state, snapshot, nominator, rng, names, score_single_node, detail, outcome_state,
                   start_index)
    if status.code is not _SUCCESS:
        if not status.is_rejected:
            return cycle.outcome(start_index, error=status)
        everywhere = dict.fromkeys((info.name for info in snapshot.node_infos), status)
        narrowing = frozenset(pre.narrowing) if runtime.prefilter_narrowing_rejects else frozenset()
        diagnosis = _diagnosis(everywhere, pre_filter_message=status.message(), also=narrowing)
        return _no_fit(cycle, everywhere, diagnosis, start_index, len(everywhere), status)
    found = _find_feasible(cycle, start_index, percentage_of_nodes_to_score)
    if isinstance(found, CycleOutcome):
        return found
    if not found.feasible:
        statuses, also = found.statuses, found.also
        evaluated = len(statuses)
        if names is not None and runtime.absent_nodes_in_fit_error:
            _add_absent_statuses(statuses, snapshot, pre.narrowing)
        if names is not None and runtime.prefilter_narrowing_rejects:
            also |= frozenset(pre.narrowing)  # kube's RunPreFilterPlugins returns them as rejectors
        diagnosis = _diagnosis(statuses, also=also)
        return _no_fit(cycle, statuses, diagnosis, found.next_start, evaluated, None)
    return _prioritize(cycle, found.feasible, found.statuses, found.next_start, found.stopped_at, found.positions)


def _find_feasible(cycle: _Cycle, start_index: int, percentage_of_nodes_to_score: int) -> CycleOutcome | _Found:
    """kube's ``findNodesThatFitPod``: the nominated node first, else the sampled search, then the extenders.

    A finished outcome when the cycle ends here (an error, or the nominated node fits).
    """
    runtime, state, pod, snapshot, names = cycle.runtime, cycle.state, cycle.pod, cycle.snapshot, cycle.names
    nominator = cycle.nominator
    plan = runtime.reuse.filter_plan(state, pod)
    check = runtime.filter_runner(state, pod, plan)
    composed = runtime.reuse.nominated_infos(check, runtime.pre_filter_extensions_listen(state)) if nominator \
        else None

    def with_nominated(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return filter_with_nominated(runtime, check, state, pod, node_info, nominator, composed)

    check_nominated = with_nominated if nominator else check

    statuses: dict[str, Status] = {}
    if pod.nominated_node_name:
        done = _try_nominated_node(cycle, check_nominated, statuses, start_index)
        if done is not None:
            return done
    nodes: Sequence[NodeInfo] = snapshot._nodes
    if names is not None:
        nodes = [info for info in nodes if info.name in names]
    percentage = runtime.percentage_of_nodes_to_score
    to_find = num_feasible_nodes_to_find(
        percentage if percentage is not None else percentage_of_nodes_to_score, len(nodes))
    if not runtime.score and not has_filter_or_scoring(runtime.extenders):
        to_find = 1
    positions: Sequence[int] | None = None  # of the feasible nodes in the snapshot, when the column search found them
    by_column: SearchResult | None = None
    if runtime.filter and names is None and not statuses:
        special = _nominated_positions(runtime, check, state, pod, snapshot, nominator, composed) \
            if nominator else None
        by_column = runtime.reuse.search_columns(plan, state, pod, snapshot, start_index, to_find, special, check)
    if by_column is not None:
        found, positions = by_column, by_column.feasible
    elif runtime.filter:
        found = search_nodes(nodes, start_index, to_find, lambda info: check_nominated(state, pod, info))
    else:
        found = SearchResult()
        found.feasible.extend((start_index + i) % len(nodes) for i in range(min(to_find, len(nodes))))
    feasible: list[NodeInfo] = take(nodes, found.feasible)
    if statuses:
        statuses.update(found.statuses)  # a status already there (the nominated node's) keeps its place
    else:
        statuses = found.statuses  # the search's own dict, nobody else's: no copy
    processed = len(feasible) + len(statuses)
    next_start = (start_index + processed) % snapshot.num_nodes
    if found.error is not None:
        return cycle.outcome(next_start, error=found.error)
    also: frozenset[str] = frozenset()
    if runtime.extenders and feasible:  # findNodesThatPassExtenders
        also = _rejectors(statuses)
        passed = filter_with_extenders(runtime.extenders, pod, feasible, statuses, snapshot,
                                       replace_statuses=runtime.extender_status_replaces)
        if isinstance(passed, Status):
            return cycle.outcome(next_start, error=passed)
        if len(passed) != len(feasible):
            also |= {EXTENDER_PSEUDO_PLUGIN}
        feasible = passed
        positions = None
    return _Found(feasible, statuses, next_start, found.stopped_at, also, positions)


def _try_nominated_node(
    cycle: _Cycle, check: FilterRunner, statuses: dict[str, Status], start_index: int
) -> CycleOutcome | None:
    """kube's ``evaluateNominatedNode``: when the pod's nominated node passes, it is the only one scored.

    ``None`` to go on with the search (the node's rejection, if any, is kept in ``statuses``).
    """
    runtime, pod, snapshot, names = cycle.runtime, cycle.pod, cycle.snapshot, cycle.names
    assert pod.nominated_node_name is not None
    nominated = snapshot.find(pod.nominated_node_name)
    if nominated is None or (names is not None and nominated.name not in names):
        return None
    first = check(cycle.state, pod, nominated)
    if first.code is _SUCCESS and runtime.extenders:
        passed = filter_with_extenders(runtime.extenders, pod, [nominated], statuses, snapshot,
                                       replace_statuses=runtime.extender_status_replaces)
        if isinstance(passed, Status):
            return cycle.outcome(start_index, error=passed)
        if passed:
            return _prioritize(cycle, passed, statuses, start_index, None)
    elif first.code is _SUCCESS:
        return _prioritize(cycle, [nominated], {}, start_index, None)
    elif first.code is _ERROR:
        return cycle.outcome(start_index, error=first)
    else:
        statuses[nominated.name] = first
    return None


def _no_fit(
    cycle: _Cycle,
    statuses: dict[str, Status],
    diagnosis: Diagnosis,
    next_start: int,
    evaluated: int,
    pre_filter_status: Status | None,
) -> CycleOutcome:
    post = cycle.runtime.run_post_filter(cycle.state, cycle.pod, statuses)
    if post is not None and not post.status.is_success:
        diagnosis = attrs.evolve(diagnosis, post_filter_message=post.status.message())
    return cycle.outcome(
        next_start,
        node_statuses=statuses,
        pre_filter_status=pre_filter_status,
        evaluated_nodes=evaluated,
        diagnosis=diagnosis,
        post_filter=post,
    )


def _prioritize(
    cycle: _Cycle,
    feasible: Sequence[NodeInfo],
    statuses: dict[str, Status],
    next_start: int,
    stopped_at: str | None,
    positions: Sequence[int] | None = None,
) -> CycleOutcome:
    """kube's ``prioritizeNodes`` and ``selectHost``: scores (plugins, then extenders) and the chosen node."""
    runtime, pod = cycle.runtime, cycle.pod
    if positions is not None:
        scored = take_names(cycle.snapshot.node_names, positions)
    else:
        scored = tuple([info.name for info in feasible])  # faster than mapping an attrgetter
    fields: _OutcomeFields = {"feasible": scored, "node_statuses": statuses,
                              "evaluated_nodes": len(feasible) + len(statuses), "search_stopped_at": stopped_at}
    if len(feasible) == 1 and not cycle.score_single_node:
        fields["selected"] = feasible[0].name
        return cycle.outcome(next_start, **fields)
    table = _score(runtime, cycle.state, pod, feasible, cycle.detail, cycle.snapshot, positions)
    if isinstance(table, Status):
        fields["error"] = table
        return cycle.outcome(next_start, **fields)
    entries: dict[str, tuple[tuple[str, int], ...]] = {}
    if runtime.extenders and len(feasible) > 1:  # kube never asks extenders to score a lone node
        added, by_node = prioritize_with_extenders(runtime.extenders, pod, feasible)
        table = table._replace(totals=[total + extra for total, extra in zip(table.totals, added, strict=True)])
        entries = {name: tuple(values) for name, values in by_node.items()}
    selected = select_host(scored, table.totals, cycle.rng)  # a lone node is chosen without a draw
    fields.update({"selected": selected, "scores": table, "scored_nodes": scored,
                   "extender_scores": entries})
    return cycle.outcome(next_start, **fields)


def _score(
    runtime: ProfileRuntime, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], detail: bool,
    snapshot: Snapshot, positions: Sequence[int] | None,
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
