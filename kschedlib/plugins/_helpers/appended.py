"""The pods a NodeInfo gained since an earlier one, when gaining is all that happened.

NodeInfo is immutable and a bind gives the node a new one with the pod appended to ``pods``;
plugins that keep per-node counts across cycles (InterPodAffinity's and PodTopologySpread's
tallies) then count the appended pods alone instead of every pod of the node again.
"""

from __future__ import annotations

from operator import is_

from kschedlib.framework.pod_info import PodInfo

__all__ = ["appended"]


def appended(before: tuple[PodInfo, ...], after: tuple[PodInfo, ...]) -> tuple[PodInfo, ...] | None:
    """The pods ``after`` adds behind ``before``, or ``None`` when it is not such an extension."""
    if len(after) < len(before) or not all(map(is_, before, after)):
        return None
    return after[len(before):]
