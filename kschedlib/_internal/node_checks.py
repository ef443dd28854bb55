"""One profile's Filter or Score plugins run on given nodes alone: the extender protocol's two verbs.

Unlike a scheduling cycle these run no node search, sampling, nomination or PostFilter: the
caller names the nodes, as kube-scheduler names them to an extender.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.handle import FrameworkHandle
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = ["NodeScores", "filter_nodes", "score_nodes"]

Progress = Callable[[str], None]
"""Told what is next (``filtering (3 of 10 nodes done)``, ``running PreScore``, ``scoring``); may raise to stop."""

_EMPTY = Snapshot(())
_MAX_NODE_SCORE = 100


@final
@attrs.frozen(slots=True, repr=False)
class NodeScores(FieldsRepr):
    """Each node's total score, in the order asked, and the highest total the active plugins could give."""

    totals: tuple[int, ...]
    max_total: int


def filter_nodes(runtime: ProfileRuntime, handle: FrameworkHandle, pod: Pod, snapshot: Snapshot,
                 nodes: Sequence[NodeInfo], progress: Progress | None = None) -> dict[str, Status] | Status:
    handle.set_snapshot(snapshot)
    try:
        state = CycleState()
        pre = runtime.run_pre_filter(state, pod)
        if pre.status.code is Code.ERROR:
            return pre.status
        allowed = pre.result.node_names if pre.result is not None else None
        check = runtime.filter_runner(state, pod)
        rejected = pre.status.is_rejected  # then every node carries PreFilter's status
        verdicts: dict[str, Status] = {}
        for done, info in enumerate(nodes):
            if progress is not None:
                progress(f"filtering ({done} of {len(nodes)} nodes done)")
            if not rejected and allowed is not None and info.name not in allowed:
                continue  # as in kube-scheduler: excluded by PreFilter, with no status
            status = pre.status if rejected else check(state, pod, info)
            if status.code is Code.ERROR:
                return status
            verdicts[info.name] = status
        return verdicts
    finally:
        handle.set_snapshot(_EMPTY)


def score_nodes(runtime: ProfileRuntime, handle: FrameworkHandle, pod: Pod, snapshot: Snapshot,
                nodes: Sequence[NodeInfo], progress: Progress | None = None) -> NodeScores | Status:
    handle.set_snapshot(snapshot)
    try:
        state = CycleState()
        runtime.run_pre_filter(state, pod)
        if not runtime.score:
            return NodeScores((0,) * len(nodes), 0)
        status = runtime.run_pre_score(state, pod, nodes)
        if progress is not None:
            progress("running PreScore")
        table = runtime.run_score(state, pod, nodes, detail=False) if status.is_success else status
        if isinstance(table, Status):
            return table
        if progress is not None:
            progress("scoring")
        active = [name for name, _ in runtime.score if name not in state.skip_score_plugins]
        top = _MAX_NODE_SCORE * sum(runtime.weights[name] for name in active)
        return NodeScores(tuple(table.totals), top)
    finally:
        handle.set_snapshot(_EMPTY)
