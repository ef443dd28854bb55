"""cel-go's runtime cost of a CEL evaluation, with Kubernetes' library costs, and a static upper
bound of it.

kube gives a DRA selector evaluation a budget of :data:`COST_LIMIT` units and stops it with
``operation cancelled: actual cost limit exceeded`` once more is spent. cel-go charges 1 per
variable, field selection and indexing step, 10 per list and 30 per map built, and per call what
the function's cost says: 1 for most, and by size for the ones that walk strings and lists
(``ceil(0.1 * length)`` to compare or scan a string, ``0.2 * length`` to build one with ``replace``
or ``join``, the product of the sizes for ``sets.intersects``, ...). Comprehensions pay for their
loop condition and step at every element. Sizes are those of the values: characters of a string,
bytes, elements of a list or entries of a map.

Charging happens before the work where the cost is known from the inputs (``join`` computes its
result's length first), so a budget that runs out stops an expression before it builds a huge
string or list, where kube would build it and then stop.

:class:`Estimate` bounds the cost (and the sizes) of an expression from its parts, with the sizes
kube's validation allows for device data; a selector whose bound fits the budget runs without
tracking at all, as it cannot run out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final, NamedTuple

from kschedlib.dra._cel._values import COST_EXCEEDED, LIST_TYPES, Fault

__all__ = [
    "COST",
    "COST_LIMIT",
    "INFINITE",
    "MAX_BUILT",
    "MAX_WALKED",
    "UNKNOWN",
    "Estimate",
    "widest",
    "cost_of",
    "charge",
    "estimate_call",
    "join_cost",
    "size_of",
]

COST: Final = "#cost"
"""The activation key of the remaining budget, a one-element list."""
COST_LIMIT: Final = 1_000_000
"""``CELSelectorExpressionMaxCost``: the runtime budget of one evaluation."""
MAX_BUILT: Final = 1 << 26
"""The longest string or list one call may build; past it an evaluation stops with the cost-limit
error (kube builds it, as ``replace`` may for almost no cost, and usually runs out of budget on the
next step, if memory lasts)."""
MAX_WALKED: Final = 1 << 22
"""The most values one call may walk without being charged for each (``join`` of empty strings,
``isSorted`` of short ones); past it an evaluation stops with the cost-limit error."""

_TRAVERSAL: Final = 0.1
"""``StringTraversalCostFactor``."""
_REGEX: Final = 0.25
"""``RegexStringLengthCostFactor``."""

def charge(budget: list[int], cost: int) -> None:
    """Spend ``cost`` from the evaluation's budget; stop with kube's error once it is overdrawn."""
    budget[0] -= cost
    if budget[0] < 0:
        raise Fault(COST_EXCEEDED)


def size_of(value: object) -> int:
    """cel-go's ``actualSize``: the length of strings, bytes, lists and maps; 1 for the rest."""
    if isinstance(value, (str, bytes, dict, *LIST_TYPES)):
        return len(value)
    return 1


def _scan(size: int) -> int:
    return math.ceil(size * _TRAVERSAL)


def _traversal(value: object, budget: int) -> int:
    """Kubernetes' ``traversalCost``: a walk over a list or map, strings counted by UTF-8 bytes.

    Gives up (returning more than ``budget``) once the walk costs more than the budget or visits
    more than :data:`MAX_ELEMENTS` values.
    """
    total = visited = 0
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        visited += 1
        if visited > MAX_WALKED:
            return budget + 1
        if isinstance(item, str):
            total += int(len(item.encode("utf-8", "surrogatepass")) * _TRAVERSAL)
        elif isinstance(item, bytes):
            total += int(len(item) * _TRAVERSAL)
        elif isinstance(item, dict):
            for key, entry in item.items():
                stack.append(key)
                stack.append(entry)
        elif isinstance(item, LIST_TYPES):
            stack.extend(item)
        else:
            total += 1
        if total > budget:
            return total
    return total


CostFunction = Callable[[tuple[object, ...], int], int]
"""What a call costs given its arguments (the receiver first) and the budget left (for walks)."""


def _sets(factor: int) -> CostFunction:
    return lambda args, budget: 1 + factor * size_of(args[0]) * size_of(args[1])


def _scan_first(args: tuple[object, ...], budget: int) -> int:
    return _scan(size_of(args[0]))


def _build(args: tuple[object, ...], budget: int) -> int:
    return math.ceil(size_of(args[0]) * 2 * _TRAVERSAL)


def _regex(args: tuple[object, ...], budget: int) -> int:
    return math.ceil((1.0 + size_of(args[0])) * _TRAVERSAL) * math.ceil(size_of(args[1]) * _REGEX)


def _equality(args: tuple[object, ...], budget: int) -> int:
    return _scan(min(size_of(args[0]), size_of(args[1])))


def _ordering(args: tuple[object, ...], budget: int) -> int:
    left, right = args
    if isinstance(left, (str, bytes)) and type(left) is type(right):
        return _scan(min(len(left), len(right)))
    return 1


def _addition(args: tuple[object, ...], budget: int) -> int:
    left, right = args
    if isinstance(left, (str, bytes)) and type(left) is type(right):
        return _scan(len(left) + len(right))
    return 1


def _membership(args: tuple[object, ...], budget: int) -> int:
    return size_of(args[1]) if isinstance(args[1], LIST_TYPES) else 1


def _conversion(kind: type) -> CostFunction:
    return lambda args, budget: _scan(size_of(args[0])) if isinstance(args[0], kind) else 1


_COSTS: Final[dict[str, CostFunction]] = {
    "sets.contains": _sets(1), "sets.intersects": _sets(1), "sets.equivalent": _sets(2),
    **{name: (lambda args, budget: _traversal(args[0], budget))
       for name in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf")},
    **dict.fromkeys(("lowerAscii", "upperAscii", "substring", "trim", "quantity", "isQuantity", "startsWith",
                     "endsWith"), _scan_first),
    "replace": _build, "split": _build,
    "matches": _regex, "find": _regex, "findAll": _regex,
    "contains": lambda args, budget: _scan(size_of(args[0])) * _scan(size_of(args[1])),
    "_==_": _equality, "_!=_": _equality,
    "_<_": _ordering, "_<=_": _ordering, "_>_": _ordering, "_>=_": _ordering,
    "_+_": _addition, "@in": _membership,
    "bytes": _conversion(str), "string": _conversion(bytes),
}  # fmt: skip


def cost_of(function: str) -> CostFunction | int:
    """How cel-go (with Kubernetes' libraries) prices a call of ``function``: a function of the
    arguments, or a fixed cost (1 for most). ``join`` is priced by :func:`join_cost`."""
    return _COSTS.get(function, 1)


def join_cost(result_size: int) -> int:
    """``join``'s cost, from the length of the string it makes."""
    return math.ceil(result_size * 2 * _TRAVERSAL)


INFINITE: Final = math.inf


class Estimate(NamedTuple):
    """An upper bound of an expression's cost and of its value's sizes: ``sizes[0]`` for the value
    (length of a string, list or map; 1 for a scalar), ``sizes[1]`` for its elements (map keys and
    values alike), and so on; ``inf`` where unbounded or unknown."""

    cost: float
    sizes: tuple[float, ...] = (1,)

    @property
    def size(self) -> float:
        return self.sizes[0]

    @property
    def element(self) -> float:
        return self.sizes[1] if len(self.sizes) > 1 else INFINITE

    def inner(self, cost: float = 0) -> Estimate:
        """A value taken out of this one (an element, an entry), which costs ``cost``."""
        return Estimate(cost, self.sizes[1:] or (INFINITE,))


UNKNOWN: Final = Estimate(INFINITE, (INFINITE,))


def widest(sizes: list[tuple[float, ...]]) -> tuple[float, ...]:
    """The largest size at each level of several values (lists of mixed elements, branches)."""
    depth = max((len(s) for s in sizes), default=0)
    return tuple(max(s[i] if i < len(s) else 0 for s in sizes) for i in range(depth)) or (1,)


def estimate_call(function: str, args: list[Estimate], arg_types: list[str], result_type: str) -> Estimate:
    """The bound of a call from the bounds of its arguments (receiver first) and their types."""
    spent = sum(a.cost for a in args)
    sizes = [a.size for a in args]
    sized = result_type.split("(")[0] in ("string", "bytes", "list", "map", "dyn", "A", "V")
    size: float = INFINITE if sized else 1
    elements = INFINITE
    if function in ("sets.contains", "sets.intersects", "sets.equivalent"):
        cost = 1 + (2 if function == "sets.equivalent" else 1) * sizes[0] * sizes[1]
    elif function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        # a walk: strings cost a tenth of their UTF-8 bytes (at most 4 per character), others 1
        per_item = max(1.0, args[0].element * 4 * _TRAVERSAL)
        cost = sizes[0] * 4 * _TRAVERSAL if arg_types[0] == "string" else sizes[0] * per_item
        size = args[0].element
    elif function in ("lowerAscii", "upperAscii", "substring", "trim", "reverse", "charAt"):
        cost, size = _bound_scan(sizes[0]), sizes[0]
    elif function in ("quantity", "isQuantity", "startsWith", "endsWith"):
        cost = _bound_scan(sizes[0])
    elif function == "replace":
        cost = _bound(sizes[0] * 2 * _TRAVERSAL)
        size = sizes[0] + (sizes[0] + 1) * sizes[2]
    elif function == "split":
        cost = _bound(sizes[0] * 2 * _TRAVERSAL)
        size, elements = sizes[0] + 1, sizes[0]
    elif function == "join":
        separators = max(sizes[0] - 1, 0) * sizes[1] if len(sizes) > 1 else 0
        size = sizes[0] * args[0].element + separators
        cost = _bound(size * 2 * _TRAVERSAL) + sizes[0]  # plus the walk, even over empty strings
    elif function in ("matches", "find", "findAll"):
        cost = _bound((1.0 + sizes[0]) * _TRAVERSAL) * _bound(sizes[1] * _REGEX)
        size = sizes[0] + 1 if function == "findAll" else sizes[0]
        elements = sizes[0]
    elif function == "contains":
        cost = _bound_scan(sizes[0]) * _bound_scan(sizes[1])
    elif function in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_"):
        cost = max(1, _bound_scan(min(sizes)))
    elif function == "_+_":
        cost = max(1, _bound_scan(sizes[0] + sizes[1]))
        size, elements = sizes[0] + sizes[1], max(args[0].element, args[1].element)
    elif function == "@in":
        cost = max(1, sizes[1])
    elif function in ("bytes", "string", "dyn", "int", "uint", "double", "bool"):
        cost, size = max(1, _bound_scan(sizes[0])), sizes[0] * 4
        if function == "dyn":
            size, elements = sizes[0], args[0].element
    else:
        cost = 1
    return Estimate(spent + cost, (size, elements) if elements != INFINITE else (size,))


def _bound(value: float) -> float:
    return value if value == INFINITE else math.ceil(value)


def _bound_scan(size: float) -> float:
    return _bound(size * _TRAVERSAL)
