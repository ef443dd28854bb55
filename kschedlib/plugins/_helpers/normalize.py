"""Score normalization shared by several in-tree plugins."""

from __future__ import annotations

from kschedlib.framework.extension_points import MAX_NODE_SCORE


def truncating_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero (Python's ``//`` floors)."""
    return a // b if (a >= 0) == (b > 0) else -(-a // b)


def normalized_values(scores: list[int], *, reverse: bool, max_score: int = MAX_NODE_SCORE) -> list[int]:
    """kube-scheduler's DefaultNormalizeScore on plain integers.

    Scores are scaled to [0, max_score] by the maximum (Go integer division), optionally reversed;
    when the maximum is 0 they stay as they are, or all become ``max_score`` when reversed.
    """
    highest = max(scores, default=0)
    if highest == 0:
        return [max_score] * len(scores) if reverse else list(scores)
    scaled = [truncating_div(max_score * score, highest) for score in scores]
    return [max_score - value for value in scaled] if reverse else scaled

