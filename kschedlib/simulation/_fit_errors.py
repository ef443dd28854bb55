"""The ``fit_errors`` section of ``simulate``: which plugin rejected each node, for the pods left unschedulable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedlib.framework.status import Status

__all__ = ["fit_error_groups"]

Rejections = tuple[tuple[str, str, tuple[str, ...]], ...]


def _rejections(statuses: Mapping[str, Status]) -> Rejections:
    """(plugin, reason, nodes) per distinct plugin and reason, in node order; most nodes first."""
    nodes: dict[tuple[str, str], list[str]] = {}
    for node, status in statuses.items():
        for reason in status.all_reasons() or ("",):
            nodes.setdefault((status.plugin or "", reason), []).append(node)
    ordered = sorted(nodes.items(), key=lambda item: (-len(item[1]), item[0]))
    return tuple((plugin, reason, tuple(names)) for (plugin, reason), names in ordered)


def fit_error_groups(unschedulable: Mapping[str, str],
                     statuses: Mapping[str, Mapping[str, Status]]) -> list[dict[str, Any]]:
    """The pods of ``unschedulable`` grouped by message and by the per-node verdicts of their last attempt
    (``statuses``: pod -> node -> status): ``[{"pods", "message", "rejections": [{plugin, reason, nodes}]}]``.

    Pods with the same verdicts share one entry, so the section grows with the distinct reasons, not
    with pods times nodes.
    """
    groups: dict[tuple[str, Rejections], list[str]] = {}
    for pod, message in unschedulable.items():
        if pod in statuses:
            groups.setdefault((message, _rejections(statuses[pod])), []).append(pod)
    return [{"pods": pods, "message": message,
             "rejections": [{"plugin": plugin, "reason": reason, "nodes": list(nodes)}
                            for plugin, reason, nodes in rejections]}
            for (message, rejections), pods in groups.items()]
