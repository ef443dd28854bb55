"""The tree of a regular expression (see ``Node``), Go's error texts and Go's limits on trees."""

from __future__ import annotations

from typing import Final, NoReturn

__all__ = ["Node", "RegexSyntaxError", "check_limits", "children", "fail", "repeat_is_valid"]

_MAX_HEIGHT: Final = 1000
_MAX_SIZE: Final = (128 << 20) // 40

Node = tuple[object, ...]
"""``("lit", cp, fold)``, ``("class", items, negated, fold)``, ``("any",)``, ``("anynl",)``,
``("bot",)``, ``("eot",)``, ``("bol",)``, ``("eol",)``, ``("wb",)``, ``("nwb",)``, ``("empty",)``,
``("cap", sub)``, ``("star"|"plus"|"quest", sub, greedy)``, ``("repeat", sub, min, max, greedy)``
(max -1: unbounded), ``("cat", subs)``, ``("alt", subs)``."""

class RegexSyntaxError(Exception):
    """Go's ``error parsing regexp: <code>: `<fragment>``` text."""

    def __init__(self, code: str, fragment: str) -> None:
        self.message = f"error parsing regexp: {code}: `{fragment}`"
        super().__init__(self.message)


def fail(code: str, fragment: str) -> NoReturn:
    raise RegexSyntaxError(code, fragment)


def repeat_is_valid(node: Node, n: int) -> bool:
    if node[0] == "repeat":
        hi = node[3]
        assert isinstance(hi, int)
        if hi == 0:
            return True
        m = node[2] if hi < 0 else hi
        assert isinstance(m, int)
        if m > n:
            return False
        if m > 0:
            n //= m
    return all(repeat_is_valid(sub, n) for sub in children(node))


def children(node: Node) -> tuple[Node, ...]:
    """The sub-trees of ``node``."""
    kind = node[0]
    if kind in ("cat", "alt"):
        return node[1]  # type: ignore[return-value]
    if kind in ("cap", "star", "plus", "quest", "repeat"):
        return (node[1],)  # type: ignore[return-value]
    return ()


def check_limits(tree: Node, pattern: str) -> None:
    """Go's limits: nesting height 1000 and a compiled size of 128 MiB of instructions."""
    height: dict[int, int] = {}
    size: dict[int, int] = {}
    for node in _postorder(tree):
        subs = children(node)
        height[id(node)] = 1 + max((height[id(sub)] for sub in subs), default=0)
        size[id(node)] = _node_size(node, [size[id(sub)] for sub in subs])
    if height[id(tree)] > _MAX_HEIGHT:
        fail("expression nests too deeply", pattern)
    if size[id(tree)] > _MAX_SIZE:
        fail("expression too large", pattern)


def _postorder(tree: Node) -> list[Node]:
    out: list[Node] = []
    stack: list[tuple[Node, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            out.append(node)
            continue
        stack.append((node, True))
        stack.extend((sub, False) for sub in children(node))
    return out


def _node_size(node: Node, subs: list[int]) -> int:
    kind = node[0]
    if kind in ("cap", "star"):
        size = 2 + subs[0]
    elif kind in ("plus", "quest"):
        size = 1 + subs[0]
    elif kind == "cat":
        size = sum(subs)
    elif kind == "alt":
        size = sum(subs) + len(subs) - 1
    elif kind == "repeat":
        lo, hi = node[2], node[3]
        assert isinstance(lo, int)
        assert isinstance(hi, int)
        if hi == -1:
            size = 2 + subs[0] if lo == 0 else 1 + lo * subs[0]
        else:
            size = hi * subs[0] + hi - lo
    else:
        size = 1
    return max(1, size)
