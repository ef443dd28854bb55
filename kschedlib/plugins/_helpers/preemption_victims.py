"""SelectVictimsOnNode: the fewest, least important pods whose eviction lets the preemptor fit one node.

kube-scheduler v1.30 (``default_preemption.go``: ``SelectVictimsOnNode``):

1. take every pod of lower priority off a copy of the node (telling the
   PreFilter extensions about each removal) — none means the node cannot help;
2. the preemptor must now pass the filters (with nominated pods), otherwise
   evicting cannot help either;
3. sort the removed pods by importance with Go's ``sort.Slice`` (the
   comparison's quirks for pods without ``startTime`` are part of the result);
4. split them, keeping that order, into pods whose eviction would break a
   PodDisruptionBudget and the others, spending a per-node working copy of
   each budget's ``disruptionsAllowed``;
5. reprieve: put each pod back (violating ones first) and keep it if the
   preemptor still fits; the ones that cannot stay are the victims.

NodeInfo is immutable, so "the node copy" is a local variable rebound to each
``with_pod``/``without_pod`` result; the CycleState passed in is the caller's
per-node clone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import CacheError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.status import Code, Status
from kschedlib.model.labels import LabelSelector
from kschedlib.model.objects import Pod, PodDisruptionBudget
from kschedlib.plugins._helpers.go_sort import go_sort_slice

__all__ = [
    "ERR_NO_VICTIMS",
    "Budget",
    "Victims",
    "budgets_of",
    "more_important",
    "select_victims_on_node",
    "sort_by_importance",
    "split_by_pdb_violation",
]

ERR_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
_NO_VICTIMS: Final = Status.unresolvable(ERR_NO_VICTIMS)
_SUCCESS: Final = Code.SUCCESS
_OK: Final = Status.success()


@final
@attrs.frozen(slots=True, repr=False)
class Victims(FieldsRepr):
    """The pods to evict on one node, most important first, and how many of them break a PDB."""

    pods: tuple[Pod, ...]
    num_pdb_violations: int


@final
@attrs.frozen(slots=True, repr=False)
class Budget(FieldsRepr):
    """What preemption reads of a PodDisruptionBudget; only budgets that can match a pod are kept."""

    namespace: str
    selector: LabelSelector
    disruptions_allowed: int
    disrupted_pods: frozenset[str]


def budgets_of(pdbs: Sequence[PodDisruptionBudget]) -> tuple[Budget, ...]:
    """The PDBs that can match anything: a missing or ``{}`` selector matches no pod at all."""
    return tuple(Budget(pdb.namespace, pdb.selector, pdb.disruptions_allowed, pdb.disrupted_pods)
                 for pdb in pdbs if pdb.selector is not None and not pdb.selector.is_empty())


def more_important(a: Pod, b: Pod) -> bool:
    """kube's ``MoreImportantPod`` as ``sort.Slice`` experiences it.

    Higher priority first; on equal priority the earlier ``startTime``.  A
    missing start time is "now", read afresh for each pod in argument order,
    so it is later than every recorded start time and, against another
    missing one, the first argument is the earlier: both orders compare true.
    """
    pa, pb = a.effective_priority, b.effective_priority
    if pa != pb:
        return pa > pb
    sa, sb = a.start_time, b.start_time
    if sa is None:
        return sb is None
    if sb is None:
        return True
    return sa < sb


def sort_by_importance(infos: list[PodInfo]) -> None:
    """Order potential victims most important first, with Go's unstable sort (``MoreImportantPod``, ``sort.Slice``)."""
    go_sort_slice(infos, lambda x, y: more_important(x.pod, y.pod))


def split_by_pdb_violation(
    infos: Sequence[PodInfo], budgets: Sequence[Budget]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """(violating, non-violating), each keeping the input order.

    Every matching budget not already counting the pod among its disrupted
    pods is charged one disruption; the pod violates when any such budget
    goes below zero.  The counters start fresh for every node.
    """
    allowed = [budget.disruptions_allowed for budget in budgets]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in infos:
        pod = info.pod
        violated = False
        labels = pod.labels
        if labels:
            for index, budget in enumerate(budgets):
                if budget.namespace != pod.namespace or not budget.selector.matches(labels):
                    continue
                if pod.name in budget.disrupted_pods:
                    continue
                allowed[index] -= 1
                if allowed[index] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating


@final
class _NodeCopy:
    """The node as the dry run changes it, with the PreFilter extensions kept in step.

    When no PreFilter extension listens in this cycle (``quiet``: every plugin with AddPod/RemovePod
    skipped PreFilter, as for a pod without spreading or pod affinity), nobody sees the copies in
    between: removing several pods builds one NodeInfo, and a pod that cannot be reprieved is taken
    off again by going back to the copy from before it was added.  Both give the NodeInfo the
    one-at-a-time path gives (tests/plugins/test_preemption_victims_fast.py compares them).
    """

    __slots__ = ("handle", "node_info", "pod", "quiet", "state")

    def __init__(self, handle: Handle, state: CycleState, pod: Pod, node_info: NodeInfo, quiet: bool = False) -> None:
        self.handle = handle
        self.state = state
        self.pod = pod
        self.node_info = node_info
        self.quiet = quiet

    def remove(self, info: PodInfo) -> Status:
        try:
            self.node_info = self.node_info.without_pod(info.pod)
        except CacheError as exc:
            return Status.from_error(str(exc))
        status = self.handle.run_pre_filter_extension_remove_pod(self.state, self.pod, info, self.node_info)
        return status if status.code is _SUCCESS else Status.from_error(status.message())

    def remove_all(self, infos: Sequence[PodInfo]) -> Status:
        """Take ``infos`` off one after another (the extensions hear of each)."""
        if self.quiet:
            try:
                self.node_info = self.node_info.without_pods([info.pod for info in infos])
            except CacheError as exc:
                return Status.from_error(str(exc))
            return _OK
        for info in infos:
            status = self.remove(info)
            if status.code is not _SUCCESS:
                return status
        return _OK

    def add(self, info: PodInfo) -> Status:
        self.node_info = self.node_info.with_pod(info)
        status = self.handle.run_pre_filter_extension_add_pod(self.state, self.pod, info, self.node_info)
        return status if status.code is _SUCCESS else Status.from_error(status.message())

    def reprieve(self, info: PodInfo) -> Status | bool:
        """Put ``info`` back; keep it if the preemptor still fits (True), else take it off again (False)."""
        before = self.node_info
        status = self.add(info)
        if status.code is not _SUCCESS:
            return status
        if self.fits().code is _SUCCESS:
            return True
        if self.quiet:
            self.node_info = before
            return False
        status = self.remove(info)
        return False if status.code is _SUCCESS else status

    def fits(self) -> Status:
        return self.handle.run_filter_plugins_with_nominated_pods(self.state, self.pod, self.node_info)


def _quiet(handle: Handle, state: CycleState) -> bool:
    """Whether no PreFilter extension listens to this cycle's AddPod/RemovePod (handles that cannot say: no)."""
    listening = getattr(handle, "pre_filter_extensions_listen", None)
    return listening is not None and not listening(state)


def select_victims_on_node(
    handle: Handle, state: CycleState, pod: Pod, node_info: NodeInfo, budgets: Sequence[Budget]
) -> Victims | Status:
    """The victims on ``node_info`` (a success may list none), or why the node cannot help.

    ``state`` must be a clone the caller can give away: the PreFilter
    extensions update it as pods are removed and added back.
    """
    priority = pod.effective_priority
    potential = [info for info in node_info.pods if info.pod.effective_priority < priority]
    if not potential:
        return _NO_VICTIMS
    node = _NodeCopy(handle, state, pod, node_info, _quiet(handle, state))
    status = node.remove_all(potential)
    if status.code is not _SUCCESS:
        return status
    status = node.fits()
    if status.code is not _SUCCESS:
        return status
    sort_by_importance(potential)
    violating, non_violating = split_by_pdb_violation(potential, budgets)
    victims: list[Pod] = []
    violations = 0
    for group, violates in ((violating, 1), (non_violating, 0)):
        for info in group:
            kept = node.reprieve(info)
            if isinstance(kept, Status):
                return kept
            if not kept:
                victims.append(info.pod)
                violations += violates
    if violating and non_violating and handle.switches.preemption_victims_resorted:
        go_sort_slice(victims, more_important)  # the reprieve loop put violating victims first
    return Victims(tuple(victims), violations)
