"""DefaultPreemption: when no node fits, find pods of lower priority whose eviction would make room.

kube-scheduler v1.30's only in-tree PostFilter plugin (``defaultpreemption/default_preemption.go``).  It
never evicts anything itself: a success nominates the pod to a node and lists
the victims (``namespace/name``); the embedder evicts them and the pod is
retried on its nominated node.  Steps:

0. re-read the pod (it may have changed or gone since it was queued);
1. eligibility: ``preemptionPolicy: Never``, or an earlier preemption's
   victims still terminating on the pod's nominated node, rule it out;
2. potential nodes: those whose status is exactly ``Unschedulable``; every
   other node without a plain rejection is "not helpful";
3. dry run from a random offset on a copy of each potential node
   (:mod:`kschedlib.plugins._helpers.preemption_victims`), until enough candidates
   are found;
4. no candidate: a FitError of the dry run's statuses, and the pod's
   nomination is cleared;
5. pick the candidate with the fewest PDB violations, the least important
   victims, the fewest victims, the most recently started victims.

Between 4 and 5, extenders that support preemption may drop candidates or
change their victims (the Handle's ``extenders``).  Victims waiting in Permit are rejected here
(plugin ``DefaultPreemption``, message ``preempted``) and left out of the
returned victims; deleting the others is the embedder's job, and clearing the
nominations of lower-priority pods on the chosen node the Scheduler's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any, ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.diagnosis import Diagnosis, fit_error_message
from kschedlib.framework.extender import ExtenderVictims
from kschedlib.framework.extension_points import PostFilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PostFilterResult
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.plugins._helpers.preemption_reuse import VictimsMemo, victims_selector
from kschedlib.plugins._helpers.preemption_victims import Budget, Victims, budgets_of
from kschedlib.plugins.default_preemption.extenders import process_with_extenders

__all__ = [
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "ERR_NOT_ELIGIBLE_NEVER",
    "ERR_NOT_ELIGIBLE_TERMINATING",
    "ERR_NOT_HELPFUL",
    "ERR_NO_CANDIDATE",
    "MESSAGE_PREFIX",
    "calculate_num_candidates",
    "decode_args",
    "nodes_where_preemption_might_help",
    "pick_one_candidate",
    "pod_eligible_to_preempt_others",
    "terminating_by_preemption",
]

MESSAGE_PREFIX: Final = "preemption: "
ERR_NOT_ELIGIBLE_NEVER: Final = "not eligible due to preemptionPolicy=Never."
ERR_NOT_ELIGIBLE_TERMINATING: Final = "not eligible due to a terminating pod on the nominated node."
ERR_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
ERR_NO_CANDIDATE: Final = "no candidate node for preemption"
ERR_NO_NODES: Final = "no nodes available"
PREEMPT_NEVER: Final = "Never"
DISRUPTION_TARGET: Final = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"
PREEMPTED: Final = "preempted"

_NOT_HELPFUL: Final = Status.unresolvable(ERR_NOT_HELPFUL)
_ERROR: Final = Code.ERROR
_UNSCHEDULABLE: Final = Code.UNSCHEDULABLE
_UNRESOLVABLE: Final = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
_PRIORITY_OFFSET: Final = 2**31
_PERCENTAGE_FIELD: Final = "minCandidateNodesPercentage"
_ABSOLUTE_FIELD: Final = "minCandidateNodesAbsolute"


# --- args -----------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class DefaultPreemptionArgs(FieldsRepr):
    """How many candidate nodes the dry run must find before it may stop early.

    At least ``min_candidate_nodes_percentage`` % of the potential nodes and
    at least ``min_candidate_nodes_absolute`` nodes (capped at all of them).
    """

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


def _validate(args: DefaultPreemptionArgs) -> None:
    percentage, absolute = args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    if not 0 <= percentage <= 100:
        raise ConfigError("not in valid range [0, 100]", field=_PERCENTAGE_FIELD, value=percentage)
    if absolute < 0:
        raise ConfigError("not in valid range [0, inf)", field=_ABSOLUTE_FIELD, value=absolute)
    if percentage == 0 and absolute == 0:
        raise ConfigError("cannot be zero at the same time as minCandidateNodesAbsolute",
                          field=_PERCENTAGE_FIELD, value=percentage)


def _int_field(raw: Mapping[str, Any], name: str, default: int) -> int:
    value = raw.get(name)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError("must be an integer", field=name, value=value)
    return value


def decode_args(raw: Mapping[str, Any] | None) -> DefaultPreemptionArgs:
    """Decode ``pluginConfig[].args`` (JSON names), defaulting absent or null fields, and validate."""
    if raw is None:
        return DefaultPreemptionArgs()
    defaults = DefaultPreemptionArgs()
    args = DefaultPreemptionArgs(
        _int_field(raw, _PERCENTAGE_FIELD, defaults.min_candidate_nodes_percentage),
        _int_field(raw, _ABSOLUTE_FIELD, defaults.min_candidate_nodes_absolute),
    )
    _validate(args)
    return args


def calculate_num_candidates(args: DefaultPreemptionArgs, num_nodes: int) -> int:
    """The dry run may stop once this many candidates are found (never more than ``num_nodes``)."""
    wanted = max(num_nodes * args.min_candidate_nodes_percentage // 100, args.min_candidate_nodes_absolute)
    return min(wanted, num_nodes)


# --- eligibility and potential nodes --------------------------------------------------------


def terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted, and its first ``DisruptionTarget`` condition says the scheduler preempted it."""
    if pod.deletion_timestamp is None:
        return False
    for condition in pod.conditions:
        if condition.type == DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == REASON_PREEMPTION_BY_SCHEDULER
    return False


def pod_eligible_to_preempt_others(pod: Pod, snapshot: Snapshot, statuses: Mapping[str, Status]) -> str:
    """Why ``pod`` may not preempt now, or "" when it may.

    A pod whose nominated node still hosts a lower-priority pod terminating
    because of preemption waits for it, unless that node is now
    UnschedulableAndUnresolvable for it anyway.
    """
    if pod.preemption_policy == PREEMPT_NEVER:
        return ERR_NOT_ELIGIBLE_NEVER
    nominated = pod.nominated_node_name
    if not nominated:
        return ""
    status = statuses.get(nominated)
    if status is not None and status.code is _UNRESOLVABLE:
        return ""
    node_info = snapshot.find(nominated)
    if node_info is None:
        return ""
    priority = pod.effective_priority
    for info in node_info.pods:
        if info.pod.effective_priority < priority and terminating_by_preemption(info.pod):
            return ERR_NOT_ELIGIBLE_TERMINATING
    return ""


def nodes_where_preemption_might_help(
    nodes: Sequence[NodeInfo], statuses: Mapping[str, Status]
) -> tuple[list[NodeInfo], dict[str, Status]]:
    """(nodes rejected exactly ``Unschedulable``, "not helpful" statuses of absent and U&U nodes)."""
    potential: list[NodeInfo] = []
    not_helpful: dict[str, Status] = {}
    status_of = statuses.get
    for info in nodes:
        status = status_of(info.name)
        if status is None:
            not_helpful[info.name] = _NOT_HELPFUL
        elif (code := status.code) is _UNSCHEDULABLE:
            potential.append(info)
        elif code is _UNRESOLVABLE:
            not_helpful[info.name] = _NOT_HELPFUL
    return potential, not_helpful


# --- candidates -----------------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class Candidate(FieldsRepr):
    """A node where evicting ``victims`` (most important first) lets the pod fit."""

    name: str
    victims: tuple[Pod, ...]
    num_pdb_violations: int
    _rank: tuple[float, ...] | None = attrs.field(default=None, init=False, eq=False, repr=False)
    """The criteria's values, once :func:`pick_one_candidate` has worked them out."""


def _start_time(pod: Pod) -> float:
    """A missing start time is "now": later than every recorded one."""
    return pod.start_time if pod.start_time is not None else math.inf


def _earliest_start_of_top_victims(victims: Sequence[Pod]) -> float:
    earliest = _start_time(victims[0])
    top = victims[0].effective_priority
    for pod in victims:
        priority = pod.effective_priority
        if priority == top:
            earliest = min(earliest, _start_time(pod))
        elif priority > top:
            top, earliest = priority, _start_time(pod)
    return earliest


_CRITERIA: Final[tuple[Callable[[Candidate], float], ...]] = (
    lambda c: -c.num_pdb_violations,
    lambda c: -c.victims[0].effective_priority,
    lambda c: -sum(pod.effective_priority + _PRIORITY_OFFSET for pod in c.victims),
    lambda c: -len(c.victims),
    lambda c: _earliest_start_of_top_victims(c.victims),
)
"""Higher is better; applied in order to the candidates still tied (``preemption.go``: ``pickOneNodeForPreemption``)."""


class _Unranked(Exception):
    """A candidate without victims, or with a NaN start time: its criteria do not compare as a tuple."""


def _rank(candidate: Candidate) -> tuple[float, ...]:
    """Every criterion's value in order, kept on the candidate (the dry run hands the same one again
    while its node's answer stands)."""
    rank = candidate._rank
    if rank is None:
        if not candidate.victims:
            raise _Unranked
        rank = tuple([criterion(candidate) for criterion in _CRITERIA])
        if rank[-1] != rank[-1]:
            raise _Unranked
        object.__setattr__(candidate, "_rank", rank)
    return rank


def _pick_in_turn(candidates: Sequence[Candidate]) -> Candidate | None:
    """The criteria applied in turn to the candidates still tied (kube's loop)."""
    remaining = list(candidates)
    if len(remaining) <= 1:
        return remaining[0] if remaining else None
    for criterion in _CRITERIA:
        scores = [criterion(candidate) for candidate in remaining]
        best = max(scores)
        remaining = [candidate for candidate, score in zip(remaining, scores, strict=True) if score == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def pick_one_candidate(candidates: Sequence[Candidate]) -> Candidate | None:
    """The best candidate; a tie on every criterion goes to the first one found.

    kube breaks that last tie by Go map order (random); discovery order is the
    deterministic refinement.  Criterion 2 reads the *first* victim, which is
    a PDB-violating one when there are any, not necessarily the most important.

    Applying the criteria in turn keeps the candidates whose values are the greatest tuple, and
    ``max`` returns the first of those: ranks compared as tuples give the same pick without the
    rounds of lists (:func:`_pick_in_turn` remains for what tuples cannot rank).
    """
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    try:
        return max(candidates, key=_rank)
    except _Unranked:
        return _pick_in_turn(candidates)


def _aggregate(messages: Sequence[str]) -> str:
    """Go's ``utilerrors.NewAggregate(...).Error()``: one message, or the distinct ones in brackets."""
    distinct = list(dict.fromkeys(messages))
    if len(distinct) == 1:
        return distinct[0]
    return "[" + ", ".join(distinct) + "]"


# --- the plugin -----------------------------------------------------------------------------


@final
class DefaultPreemption(PostFilterPlugin):
    """Nominates the pod to the node where evicting the least important lower-priority pods lets it fit."""

    name: ClassVar[str] = "DefaultPreemption"
    __slots__ = ("_answers", "_candidates", "_counts_every_node", "_handle", "_skips_terminating", "args")

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle) -> None:
        self.args = args if args is not None else DefaultPreemptionArgs()
        _validate(self.args)
        self._handle = handle
        switches = handle.switches
        self._counts_every_node = switches.absent_nodes_in_fit_error
        self._skips_terminating = switches.terminating_victims_not_deleted
        self._answers = VictimsMemo()
        self._candidates: dict[str, Candidate] = {}

    def post_filter(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> PostFilterResult:
        """Preempt, with every non-empty message prefixed ``preemption: ``."""
        result = self._preempt(state, pod, node_statuses)
        message = result.status.message()
        if not message:
            return result
        status = Status(result.status.code, (MESSAGE_PREFIX + message,))
        return PostFilterResult(status, result.nominated_node_name, result.victims)

    def _preempt(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> PostFilterResult:
        latest = self._handle.get_pod(pod.namespace, pod.name)
        if latest is None:
            return PostFilterResult(Status.from_error(f'pod "{pod.name}" not found'))
        snapshot = self._handle.snapshot
        reason = pod_eligible_to_preempt_others(latest, snapshot, node_statuses)
        if reason:
            return PostFilterResult(Status.unschedulable(reason))
        found = self._find_candidates(state, latest, snapshot, node_statuses)
        if isinstance(found, Status):
            return PostFilterResult(found)
        candidates, statuses = found
        if not candidates:
            num_nodes = len(statuses)
            if self._counts_every_node:  # v1.32: every node counts, those without a status as not helpful
                num_nodes = snapshot.num_nodes
                for info in snapshot.node_infos:
                    statuses.setdefault(info.name, _NOT_HELPFUL)
            message = fit_error_message(num_nodes, Diagnosis(statuses))
            return PostFilterResult(Status.unschedulable(message), "")
        consulted = self._call_extenders(latest, candidates, snapshot)
        if isinstance(consulted, Status):
            return PostFilterResult(consulted)
        best = pick_one_candidate(consulted)
        if best is None:
            return PostFilterResult(Status.unschedulable(ERR_NO_CANDIDATE))
        return PostFilterResult(Status.success(), best.name, self._prepare(best))

    def _candidate(self, name: str, victims: Victims) -> Candidate:
        """The node's Candidate of the previous dry run while its victims are the same (with its rank)."""
        known = self._candidates.get(name)
        pods, violations = victims.pods, victims.num_pdb_violations
        if known is not None and known.victims is pods and known.num_pdb_violations == violations:
            return known
        candidate = self._candidates[name] = Candidate(name, pods, violations)
        return candidate

    def _call_extenders(self, pod: Pod, candidates: list[Candidate], snapshot: Snapshot) -> list[Candidate] | Status:
        """Extenders that support preemption replace the candidates (``preemption.go``: ``callExtenders``)."""
        extenders = getattr(self._handle, "extenders", ())  # handles written before extenders offer none
        if not extenders:
            return candidates
        victims = {c.name: ExtenderVictims(c.victims, c.num_pdb_violations) for c in candidates}
        result = process_with_extenders(extenders, pod, victims, snapshot)
        if isinstance(result, Status):
            return result
        return [Candidate(name, v.pods, v.num_pdb_violations) for name, v in result.items()]

    def _prepare(self, best: Candidate) -> tuple[str, ...]:
        """Reject victims waiting in Permit, as kube does instead of deleting them; list the rest to evict.

        From v1.35 (``terminating_victims_not_deleted``) a victim already terminating is not listed.
        """
        evict: list[str] = []
        for victim in best.victims:
            waiting = self._handle.get_waiting_pod(victim.uid)
            if waiting is not None:
                waiting.reject(self.name, PREEMPTED)
            elif not (self._skips_terminating and victim.deletion_timestamp is not None):
                evict.append(victim.key)  # v1.35 leaves a victim already being deleted alone
        return tuple(evict)

    def _find_candidates(
        self, state: CycleState, pod: Pod, snapshot: Snapshot, node_statuses: Mapping[str, Status]
    ) -> tuple[list[Candidate], dict[str, Status]] | Status:
        """Candidates and the statuses of the nodes that are none; an ERROR status when only errors came back."""
        nodes = snapshot.node_infos
        if not nodes:
            return Status.from_error(ERR_NO_NODES)
        potential, not_helpful = nodes_where_preemption_might_help(nodes, node_statuses)
        if not potential:
            return [], not_helpful
        budgets = budgets_of(self._handle.pod_disruption_budgets())
        offset = self._handle.rng.randrange(len(potential))
        wanted = calculate_num_candidates(self.args, len(potential))
        candidates, statuses, errors = self._dry_run(state, pod, potential, budgets, offset, wanted)
        if errors and not candidates:
            return Status.from_error(_aggregate(errors))
        statuses.update(not_helpful)
        return candidates, statuses

    def _dry_run(
        self,
        state: CycleState,
        pod: Pod,
        potential: Sequence[NodeInfo],
        budgets: Sequence[Budget],
        offset: int,
        wanted: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Visit the potential nodes from ``offset`` (sequentially: kube with parallelism 1).

        Each class of candidates (PDB-violating or not) keeps at most
        ``wanted`` entries; the run stops once a non-violating candidate exists
        and both classes together reach ``wanted``.  A node's answer is reused from an earlier
        preemptor's dry run when nothing it reads changed (:mod:`~kschedlib.plugins._helpers.preemption_reuse`).
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses: dict[str, Status] = {}
        errors: list[str] = []
        answers = self._answers.table(self._handle, state, pod, budgets)
        if len(self._candidates) > 2 * self._handle.snapshot.num_nodes:
            self._candidates.clear()  # names of nodes gone
        select = victims_selector(self._handle, state, pod, budgets, answers)
        candidate = self._candidate
        for node_info in chain(potential[offset:], potential[:offset]):
            outcome = select(node_info)
            if type(outcome) is Victims:
                if outcome.pods:
                    group = violating if outcome.num_pdb_violations else non_violating
                    if len(group) < wanted:
                        group.append(candidate(node_info.name, outcome))
                    if non_violating and len(non_violating) + len(violating) >= wanted:
                        break
                    continue
                outcome = Status.from_error(f'expected at least one victim pod on node "{node_info.name}"')
            if outcome.code is _ERROR:
                errors.append(outcome.message())
            statuses[node_info.name] = outcome
        return non_violating + violating, statuses, errors
