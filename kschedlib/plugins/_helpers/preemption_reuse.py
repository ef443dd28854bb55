"""Preemption's dry-run answers reused across preemptors while nothing they read has changed.

:func:`~kschedlib.plugins._helpers.preemption_victims.select_victims_on_node` reads the preemptor
through its priority, its uid (a pod is never its own nominated pod) and the Filter verdicts.  When
the handle gives a ``node_local_filter_key`` (every active Filter plugin node-local with a key, none
reading outside state, no PreFilter extension listening), those verdicts are a function of that key
and the NodeInfo, so a node's answer is a function of the key, its NodeInfo, the nominated pods the
two-pass rule adds there, the priority and the PodDisruptionBudgets.  Preemptors of one shape visit
the same nodes again and again (each node nominated to an earlier one is visited and refused by
every later one), and between two of them only the nodes that got a nomination or lost victims
change: those are the only ones worked out again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, NamedTuple, final

from kschedlib.framework._bounded import BoundedLRU
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo, nominated_that_count
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.plugins._helpers.preemption_victims import Budget, Victims, select_victims_on_node

__all__ = ["VictimsMemo", "victims_selector"]

_ERROR: Final = Code.ERROR
_NO_UIDS: Final[frozenset[str]] = frozenset()


class _Answer(NamedTuple):
    node_info: NodeInfo
    nominated: tuple[PodInfo, ...]
    priority: int
    outcome: Victims | Status
    source: tuple[PodInfo, ...] | None
    """The node's nominated pods as the handle gave them (only a tuple: it cannot change in place)."""
    uids: frozenset[str]
    """Their uids, when ``nominated`` left none out for being the preemptor (else empty, unused)."""


@final
class VictimsMemo:
    """Per filter key, each node's last dry-run answer and what it was worked out from.

    Errors are never kept.  A change of the budgets forgets everything; each key's table keeps one
    answer per node name and is emptied when it outgrows twice the snapshot's nodes (nodes gone).
    """

    __slots__ = ("_budgets", "_tables")
    MAX_KEYS: Final = 8

    def __init__(self) -> None:
        self._tables: BoundedLRU[object, dict[str, _Answer]] = BoundedLRU(self.MAX_KEYS)
        self._budgets: Sequence[Budget] = ()

    def table(
        self, handle: Handle, state: CycleState, pod: Pod, budgets: Sequence[Budget]
    ) -> dict[str, _Answer] | None:
        """The answers that may serve this cycle's dry run, or ``None`` when they may not be reused."""
        key_of = getattr(handle, "node_local_filter_key", None)  # handles written before it offer none
        key = key_of(state, pod) if key_of is not None else None
        if key is None:
            return None
        if budgets != self._budgets:
            self._tables = BoundedLRU(self.MAX_KEYS)
            self._budgets = budgets
        table = self._tables.get(key)
        if table is None:
            table = {}
            self._tables.put(key, table)
        elif len(table) > 2 * handle.snapshot.num_nodes:
            table.clear()
        return table


def victims_selector(
    handle: Handle, state: CycleState, pod: Pod, budgets: Sequence[Budget], answers: dict[str, _Answer] | None,
) -> Callable[[NodeInfo], Victims | Status]:
    """One dry run's ``select_victims_on_node`` per node, on a clone of ``state``, or the earlier
    answer when nothing it reads changed.

    What every node shares (the priority, the uid, the nominated-pods lookup) is read once here:
    a dry run asks hundreds of nodes, nearly all of them answered from ``answers``.  When the handle
    gives the very tuple of nominated pods the answer was worked out with, at the same priority, and
    neither that preemptor nor this one is among them, the pods that count are the same without
    sorting them out again.
    """
    if answers is None:
        return lambda node_info: select_victims_on_node(handle, state.clone(), pod, node_info, budgets)
    priority = pod.effective_priority
    uid = pod.uid
    nominated_for = handle.nominated_pods_for_node
    known_for = answers.get

    def select(node_info: NodeInfo) -> Victims | Status:
        name = node_info.name
        found = nominated_for(name)
        known = known_for(name)
        if known is not None and known.node_info is node_info and known.priority == priority:
            if found is known.source and uid not in known.uids and (known.uids or not found):
                return known.outcome
            nominated = nominated_that_count(found, priority, uid)
            if known.nominated == nominated:
                return known.outcome
        else:
            nominated = nominated_that_count(found, priority, uid)
        outcome = select_victims_on_node(handle, state.clone(), pod, node_info, budgets)
        if isinstance(outcome, Victims) or outcome.code is not _ERROR:
            source = found if type(found) is tuple else None
            uids = frozenset([info.pod.uid for info in found])
            answers[name] = _Answer(node_info, nominated, priority, outcome, source,
                                    _NO_UIDS if uid in uids else uids)
        return outcome

    return select
