"""NodeInfos with their nominated pods added (the two-pass rule's first pass), kept while neither changes.

A pod that nominated pods may hold back is judged, on every node holding such pods, against a
NodeInfo with those pods added.  From one cycle to the next most of those nodes and nominations stay
as they were (preemptors nominated one after another leave hundreds of such nodes); handing out the
same composed NodeInfo again lets a memoized filter runner answer from its table instead of running
the plugins on a NodeInfo it has never seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, final

from kschedlib._internal.reuse.memo import MemoizedFilter
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["NominatedNodeInfos"]

_SUCCESS: Final = Code.SUCCESS


@final
class NominatedNodeInfos:
    """Per node name, the last NodeInfo composed with nominated pods, and what it was composed from."""

    __slots__ = ("_composed",)
    MAX_ENTRIES: Final = 50_000
    """Emptied whole beyond this many nodes (names of nodes gone linger until then)."""

    def __init__(self) -> None:
        self._composed: dict[str, tuple[NodeInfo, tuple[PodInfo, ...], NodeInfo]] = {}

    def judge(self, run: MemoizedFilter, state: CycleState, pod: Pod, pods: tuple[PodInfo, ...],
              node_info: NodeInfo) -> Status:
        """The two-pass rule by ``run`` (which reuses verdicts per NodeInfo): on ``node_info`` with
        ``pods`` added, then, if that passes, on ``node_info`` itself.

        The node search calls this for every node holding nominated pods, nearly always with the
        same composed NodeInfo and verdicts as last time: those are read here at once from ``run``'s
        table rather than through a call each (a holder of composed NodeInfos exists only for a
        verdict-reusing runner: :meth:`~kschedlib._internal.reuse.fast_path.Reuse.nominated_infos`).
        """
        name = node_info.name
        known = self._composed.get(name)
        composed = known[2] if known is not None and known[0] is node_info and known[1] == pods \
            else self.with_pods(node_info, pods)
        status = run.with_nominated(state, pod, composed)
        if status.code is not _SUCCESS:
            return status
        entry = run.table.get(name)
        return entry[1] if entry is not None and entry[0] is node_info else run(state, pod, node_info)

    def with_pods(self, node_info: NodeInfo, pods: Sequence[PodInfo]) -> NodeInfo:
        """``node_info`` with ``pods`` added in order: the same object as last time when both are the same."""
        added = tuple(pods)
        known = self._composed.get(node_info.name)
        if known is not None and known[0] is node_info and known[1] == added:
            return known[2]
        composed = node_info
        for info in added:
            composed = composed.with_pod(info)
        if len(self._composed) >= self.MAX_ENTRIES:
            self._composed.clear()
        self._composed[node_info.name] = (node_info, added, composed)
        return composed
