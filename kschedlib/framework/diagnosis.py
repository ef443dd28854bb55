"""Why a pod fits nowhere: per-node statuses and the FitError sentence users read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.status import Status

__all__ = ["NO_NODES_AVAILABLE", "Diagnosis", "fit_error_message"]

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def _empty_statuses() -> Mapping[str, Status]:
    return {}


@final
@attrs.frozen(slots=True, repr=False)
class Diagnosis(FieldsRepr):
    """Rejected nodes with their statuses, the plugins that rejected, and PreFilter/PostFilter messages."""

    node_statuses: Mapping[str, Status] = attrs.field(factory=_empty_statuses)
    unschedulable_plugins: frozenset[str] = frozenset()
    pending_plugins: frozenset[str] = frozenset()
    pre_filter_message: str = ""
    post_filter_message: str = ""


def _reason_counts(node_statuses: Mapping[str, Status]) -> dict[str, int]:
    """How many nodes gave each reason (a node counts once per reason its status lists).

    Nodes rejected for the same cause usually share one Status object (the node search hands out
    one per distinct verdict), so the statuses are counted by identity first and each distinct
    one's reasons are expanded once: a failed cycle over thousands of nodes then costs a C-level
    count instead of a ``Counter.update`` call per node.
    """
    statuses = node_statuses.values()
    distinct = {id(status): status for status in statuses}
    histogram: dict[str, int] = {}
    for key, nodes in Counter(map(id, statuses)).items():
        for reason in distinct[key].all_reasons():
            histogram[reason] = histogram.get(reason, 0) + nodes
    return histogram


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """kube-scheduler's ``0/N nodes are available: ...`` text (kube's ``framework/types.go``: ``FitError.Error``)."""
    message = f"0/{num_all_nodes} nodes are available:"
    if diagnosis.pre_filter_message:
        message += f" {diagnosis.pre_filter_message}."
    else:
        items = sorted(f"{count} {reason}" for reason, count in _reason_counts(diagnosis.node_statuses).items())
        if items:
            message += " " + ", ".join(items) + "."
    if diagnosis.post_filter_message:
        message += " " + diagnosis.post_filter_message
    return message
