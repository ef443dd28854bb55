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


def normalized_values(scores: list[int], *, reverse: bool, max_score: int = MAX_NODE_SCORE) -> list[int]:
    """:func:`default_normalize_score` on plain integers (same results, no NodeScore objects)."""
    highest = max(scores, default=0)
    if highest == 0:
        return [max_score] * len(scores) if reverse else list(scores)
    if reverse:
        return [max_score - max_score * score // highest for score in scores]
    return [max_score * score // highest for score in scores]
