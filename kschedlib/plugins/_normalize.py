"""Score normalization shared by several in-tree plugins."""

from __future__ import annotations

from kschedlib.framework.results import NodeScore

MAX_NODE_SCORE = 100


def default_normalize_score(scores: list[NodeScore], *, reverse: bool, max_score: int = MAX_NODE_SCORE) -> None:
    """kube-scheduler's DefaultNormalizeScore: scale to [0, max_score] by the maximum, optionally reversed.

    When every score is 0 they stay 0, or all become ``max_score`` when reversed.
    """
    highest = max((entry.score for entry in scores), default=0)
    if highest == 0:
        if reverse:
            for entry in scores:
                entry.score = max_score
        return
    for entry in scores:
        scaled = max_score * entry.score // highest
        entry.score = max_score - scaled if reverse else scaled
