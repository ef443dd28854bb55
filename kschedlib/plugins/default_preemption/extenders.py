"""Preemption's consultation of extenders (kube's ``preemption.go``: ``callExtenders``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kschedlib.framework.extender import Extender, ExtenderVictims
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["process_with_extenders"]


def process_with_extenders(
    extenders: Sequence[Extender], pod: Pod, victims: Mapping[str, ExtenderVictims], snapshot: Snapshot
) -> dict[str, ExtenderVictims] | Status:
    """The candidate map after every interested extender that supports preemption has replaced it.

    Each extender gets the previous one's map; an empty map stops the chain.  A
    failure, or a node left without victims, is an ``ERROR`` status unless the
    extender is ignorable (then the extender, or that node, is skipped).  Nodes
    keep the order they came in (kube's is Go map order); new ones follow, sorted.
    """
    current = dict(victims)
    for extender in extenders:
        if not extender.supports_preemption or not extender.is_interested(pod):
            continue
        try:
            replied = dict(extender.process_preemption(pod, current, snapshot))
        except Exception as exc:
            if extender.is_ignorable:
                continue
            return Status.from_error(str(exc) or type(exc).__name__)
        for node in sorted(replied):
            if not replied[node].pods:
                if not extender.is_ignorable:
                    return Status.from_error(f'expected at least one victim pod on node "{node}"')
                del replied[node]
        order = [node for node in current if node in replied] + sorted(set(replied) - set(current))
        current = {node: replied[node] for node in order}
        if not current:
            break
    return current
