"""Score normalization shared by several in-tree plugins."""

from __future__ import annotations

MAX_NODE_SCORE = 100


def _truncating_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero (Python's ``//`` floors)."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def normalized_values(scores: list[int], *, reverse: bool, max_score: int = MAX_NODE_SCORE) -> list[int]:
    """kube-scheduler's DefaultNormalizeScore on plain integers.

    Scores are scaled to [0, max_score] by the maximum (Go integer division), optionally reversed;
    when the maximum is 0 they stay as they are, or all become ``max_score`` when reversed.
    """
    highest = max(scores, default=0)
    if highest == 0:
        return [max_score] * len(scores) if reverse else list(scores)
    scaled = [_truncating_div(max_score * score, highest) for score in scores]
    return [max_score - value for value in scaled] if reverse else scaled

