"""The defaults and building blocks of the strategies, and the quantity and resource-list strategies.

Defaults draw from small vocabularies (:data:`DEFAULT_POD_LABELS`, :data:`DEFAULT_NODE_LABELS`,
:data:`DEFAULT_TAINTS`) so that generated selectors, affinities and tolerations actually meet the
labels and taints they are about.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Final, TypeVar

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from kschedlib.model.quantity import Quantity, parse_quantity
from kschedlib.testing._validation import (
    QuantityLike,
    ResourceRanges,
    Vocabulary,
    as_quantity,
    check_bool,
    check_features,
    check_quantity_ranges,
    check_size,
)

__all__ = [
    "DEFAULT_NODE_LABELS",
    "DEFAULT_POD_LABELS",
    "DEFAULT_REQUESTS",
    "DEFAULT_TAINTS",
    "DEFAULT_ZONES",
    "HOSTNAME_LABEL",
    "LABEL_OPERATORS",
    "QUANTITY_FORMATS",
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "ZONE_LABEL",
    "optional_parts",
    "quantities",
    "quantities_for",
    "quantity_strings",
    "resource_lists",
    "sometimes",
    "subsets",
    "whole_only",
]

T = TypeVar("T")

HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
ZONE_LABEL: Final = "topology.kubernetes.io/zone"
DEFAULT_ZONES: Final = ("zone-a", "zone-b", "zone-c")
DEFAULT_POD_LABELS: Final[Vocabulary] = MappingProxyType({
    "app": ("web", "api", "db"),
    "tier": ("frontend", "backend"),
})
"""Pod label keys and values; pod (anti-)affinity and spread selectors draw from the same words."""
DEFAULT_NODE_LABELS: Final[Vocabulary] = MappingProxyType({
    "disktype": ("ssd", "hdd"),
    "cpu-generation": ("1", "2", "3"),
    ZONE_LABEL: DEFAULT_ZONES,
    HOSTNAME_LABEL: ("node-0", "node-1", "node-2"),
})
"""Node label keys and values: node affinity and nodeSelector draw from them, nodes carry them."""
DEFAULT_TAINTS: Final[Vocabulary] = MappingProxyType({
    "dedicated": ("gpu", "infra"),
    "maintenance": ("", "planned"),
})
"""Taint keys and values; tolerations draw from the same words."""
DEFAULT_REQUESTS: Final[ResourceRanges] = MappingProxyType({
    "cpu": ("0", "2"),
    "memory": ("0", "2Gi"),
    "ephemeral-storage": ("0", "4Gi"),
    "example.com/gpu": (0, 2),
})
"""Per-container request ranges: resource name -> (min_value, max_value)."""
QUANTITY_FORMATS: Final = ("DecimalSI", "BinarySI", "DecimalExponent")
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")
LABEL_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")
TOLERATION_OPERATORS: Final = ("Equal", "Exists")

_MAX_MANTISSA: Final = 10**4
_BINARY_CAP: Final = 2**63 - 1
_UNITS: Final = {
    "DecimalSI": tuple((Fraction(10) ** e, s) for e, s in (
        (18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""), (-3, "m"), (-6, "u"), (-9, "n"))),
    "BinarySI": tuple((Fraction(2**e), s) for e, s in ((60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"),
                                                       (10, "Ki"))),
    "DecimalExponent": tuple((Fraction(10) ** e, f"e{e}") for e in (9, 6, 3, -3)),
}


_CHANCES: dict[int, st.SearchStrategy[int]] = {}


def sometimes(draw: st.DrawFn, chance: int = 3) -> bool:
    """True about once in ``chance`` draws; shrinks to False (so optional parts vanish first).

    The draw counts from 1, not 0: Hypothesis' shrinker treats small integers from 0 as ``one_of``
    branch choices and re-randomises what follows each of them, which is slow and gains nothing
    for a yes/no flag.
    """
    strategy = _CHANCES.get(chance)
    if strategy is None:
        strategy = _CHANCES[chance] = st.integers(1, chance)
    return draw(strategy) == chance


def optional_parts(names: Sequence[str], *, requires: Mapping[str, str] | None = None
                   ) -> st.SearchStrategy[frozenset[str]]:
    """Which of ``names`` are present, each with a chance of 1 in 4; shrinks to none.

    A part listed in ``requires`` is only considered (and drawn) when the part it requires is present.
    One small draw per part: the shrinker zeroes each on its own, dropping exactly the part it controls
    (and the draws that part made), which is what keeps shrunk examples minimal.
    """
    return _optional_parts(tuple(names), dict(requires or {}))


@st.composite
def _optional_parts(draw: st.DrawFn, names: tuple[str, ...], requires: dict[str, str]) -> frozenset[str]:
    present: set[str] = set()
    for name in names:
        needed = requires.get(name)
        if (needed is None or needed in present) and sometimes(draw, 4):
            present.add(name)
    return frozenset(present)


def subsets(items: Sequence[T], *, min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[tuple[T, ...]]:
    """Sub-tuples of ``items`` (in their order) of ``min_size`` to ``max_size`` elements, in one draw."""
    pool = tuple(items)
    top = len(pool) if max_size is None else min(max_size, len(pool))

    def pick(mask: int) -> tuple[T, ...]:
        return tuple(item for i, item in enumerate(pool) if mask >> i & 1)

    masks = st.integers(1, 2 ** len(pool)).map(lambda n: n - 1)  # from 1: see sometimes()
    if min_size == 0 and top == len(pool):
        return masks.map(pick)
    return masks.filter(lambda mask: min_size <= mask.bit_count() <= top).map(pick)


# --- quantities ------------------------------------------------------------------------------


def _spellings(low: Fraction, high: Fraction, formats: Sequence[str], *, allow_fractions: bool
               ) -> list[tuple[str, int, int]]:
    """(suffix, lowest mantissa, highest mantissa) for every unit that can write a non-zero value in range.

    Units too fine for the range (over 10^4 steps) are left out, so ``memory`` reads ``1Gi`` or ``512Mi``
    rather than ``537919488``; the coarsest unit comes first, which is what shrinking moves toward.
    """
    out: list[tuple[Fraction, str, int, int]] = []
    for fmt in formats:
        for unit, suffix in _UNITS[fmt]:
            if unit < 1 and not allow_fractions:
                continue
            top = high if fmt != "BinarySI" else min(high, Fraction(_BINARY_CAP))
            lowest, highest = math.ceil(low / unit), math.floor(top / unit)
            if highest >= max(lowest, 1) and highest <= _MAX_MANTISSA:
                out.append((unit, suffix, lowest, highest))
    out.sort(key=lambda entry: -entry[0])
    return [(suffix, lowest, highest) for _, suffix, lowest, highest in out]


def _spelled(min_value: QuantityLike, max_value: QuantityLike | None, formats: Sequence[str],
             allow_fractions: bool, *, parse: bool = False) -> st.SearchStrategy[Any]:
    """Validate the arguments of :func:`quantities`; a strategy for texts such as ``1500m`` in range."""
    check_bool("allow_fractions", allow_fractions)
    low = as_quantity("min_value", min_value).amount
    high = as_quantity("max_value", max_value).amount if max_value is not None else Fraction(10**18)
    if high < low:
        raise InvalidArgument(f"max_value={max_value!r} is below min_value={min_value!r}")
    chosen = check_features("quantity", formats, QUANTITY_FORMATS)
    if not chosen:
        raise InvalidArgument("formats must name at least one of " + ", ".join(QUANTITY_FORMATS))
    spellings = _spellings(low, high, [f for f in QUANTITY_FORMATS if f in chosen], allow_fractions=allow_fractions)
    if high == 0:
        return st.just(parse_quantity("0") if parse else "0")
    if not spellings:
        raise InvalidArgument(f"no value between {min_value!r} and {max_value!r} can be written in {sorted(chosen)}"
                              + ("" if allow_fractions else " as a whole number"))
    starts: list[int] = []
    total = 0
    for _, lowest, highest in spellings:
        starts.append(total)
        total += highest - lowest + 1

    def text(index: int) -> str:  # one integer draw picks both the suffix and the mantissa
        segment = bisect.bisect_right(starts, index) - 1
        suffix, lowest, _ = spellings[segment]
        return f"{lowest + index - starts[segment]}{suffix}"

    return st.integers(0, total - 1).map(text if not parse else lambda index: parse_quantity(text(index)))


def quantities(
    *, min_value: QuantityLike = 0, max_value: QuantityLike | None = None, formats: Sequence[str] = QUANTITY_FORMATS,
    allow_fractions: bool = True,
) -> st.SearchStrategy[Quantity]:
    """Quantities between ``min_value`` and ``max_value`` (inclusive; ``None``: up to ``1E``).

    Bounds are Quantities, strings (``"100m"``, ``"1Gi"``) or whole units. Each value is parsed from
    a suffix a person would write (``2``, ``1500m``, ``512Mi``, ``3G``, ``5e3``), in one of ``formats``,
    so :attr:`Quantity.format` varies too. ``allow_fractions=False`` keeps to whole amounts (as
    extended resources and ``pods`` need). Shrinks toward ``min_value`` in the coarsest suffix.
    """
    strategy: st.SearchStrategy[Quantity] = _spelled(min_value, max_value, formats, allow_fractions, parse=True)
    return strategy


def _decimal_text(amount: Fraction) -> str:
    whole, rest = divmod(amount.numerator * 10**9 // amount.denominator, 10**9)
    return f"{whole}.{rest:09d}".rstrip("0").rstrip(".") if rest else f"{whole}"


def _exponent_text(amount: Fraction) -> str:
    if amount.denominator != 1:
        return f"{amount.numerator * 10**9 // amount.denominator}e-9"
    digits = str(amount.numerator)
    significant = digits.rstrip("0") or "0"
    return f"{significant}e{len(digits) - len(significant)}"


def _forms(text: str) -> tuple[str, ...]:
    """Spellings of the amount of ``text``: canonical first, then as drawn, decimal, exponent, signed, ``.0``."""
    quantity = parse_quantity(text)
    canonical = str(quantity)
    forms = [canonical, text, _decimal_text(quantity.amount), _exponent_text(quantity.amount), f"+{canonical}",
             f"{canonical}.0" if canonical.isdigit() else canonical]
    return tuple(dict.fromkeys(forms))


def quantity_strings(
    *, min_value: QuantityLike = 0, max_value: QuantityLike | None = None, formats: Sequence[str] = QUANTITY_FORMATS,
    allow_fractions: bool = True,
) -> st.SearchStrategy[str]:
    """Strings that :func:`~kschedlib.model.parse_quantity` reads as a quantity in the range.

    Each amount comes in one of several spellings: canonical (``1500m``), as drawn (``1500m`` or
    ``2000m``), plain decimal (``1.5``), exponent (``15e2``), signed (``+1500m``) or with a zero
    fraction (``2.0``). Shrinks toward the canonical form.
    """
    return _spelled(min_value, max_value, formats, allow_fractions).flatmap(lambda t: st.sampled_from(_forms(t)))


def whole_only(resource: str) -> bool:
    """Resources counted in whole units only: everything but ``cpu`` (bytes, pods, devices)."""
    return resource != "cpu"


def quantities_for(ranges: dict[str, tuple[Quantity, Quantity]]) -> dict[str, st.SearchStrategy[Quantity]]:
    """One :func:`quantities` strategy per resource range (whole amounts except for ``cpu``)."""
    return {name: quantities(min_value=low, max_value=high, allow_fractions=not whole_only(name))
            for name, (low, high) in ranges.items()}


@st.composite
def _resource_lists(draw: st.DrawFn, strategies: dict[str, st.SearchStrategy[Quantity]],
                    chosen: st.SearchStrategy[tuple[str, ...]]) -> dict[str, Quantity]:
    return {name: draw(strategies[name]) for name in draw(chosen)}


def resource_lists(
    *, resources: ResourceRanges = DEFAULT_REQUESTS, min_size: int = 0, max_size: int | None = None
) -> st.SearchStrategy[dict[str, Quantity]]:
    """Resource lists (``{"cpu": 500m, "memory": 1Gi}``) over some of the names of ``resources``.

    ``resources`` maps each resource name to its ``(min_value, max_value)``; ``min_size``/``max_size``
    bound how many names appear. Amounts are whole except for ``cpu``. Keys keep the order of
    ``resources``. Shrinks toward ``{}``.
    """
    ranges = check_quantity_ranges("resources", resources)
    check_size(min_size, max_size)
    if min_size > len(ranges):
        raise InvalidArgument(f"min_size={min_size} exceeds the {len(ranges)} resource names of resources")
    return _resource_lists(quantities_for(ranges), subsets(tuple(ranges), min_size=min_size, max_size=max_size))
