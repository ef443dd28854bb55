"""Label selectors and node selectors, with Kubernetes' matching rules.

A *nil* label selector matches nothing and an *empty* one (``{}``) matches
everything; callers model the first as ``None``.  Requirements are validated
when built, so a selector that exists can always be evaluated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import SelectorError

__all__ = [
    "LABEL_OPERATORS",
    "NODE_OPERATORS",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "Requirement",
    "selector_from_labels",
]

LABEL_OPERATORS: Final = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
NODE_OPERATORS: Final = LABEL_OPERATORS | {"Gt", "Lt"}

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def _parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): None when it would fail."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


@final
@attrs.frozen(slots=True, repr=False)
class Requirement(FieldsRepr):
    """One ``key operator values`` requirement of a selector.

    ``In``/``NotIn`` need at least one value, ``Exists``/``DoesNotExist`` none,
    ``Gt``/``Lt`` (node selectors only) exactly one.
    """

    key: str
    operator: str
    values: tuple[str, ...] = ()
    _value_set: frozenset[str] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        if self.operator not in NODE_OPERATORS:
            raise SelectorError(f"{self.operator!r} is not a valid selector operator for key {self.key!r}")
        if self.operator in ("In", "NotIn") and not self.values:
            raise SelectorError(f"values must be non-empty for operator {self.operator} (key {self.key!r})")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise SelectorError(f"values must be empty for operator {self.operator} (key {self.key!r})")
        if self.operator in ("Gt", "Lt") and len(self.values) != 1:
            raise SelectorError(f"operator {self.operator} needs exactly one value (key {self.key!r})")
        object.__setattr__(self, "_value_set", frozenset(self.values))

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy this requirement (apimachinery semantics)."""
        op = self.operator
        if op == "In":
            value = labels.get(self.key)
            return value is not None and value in self._value_set
        if op == "NotIn":
            value = labels.get(self.key)
            return value is None or value not in self._value_set
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        value = labels.get(self.key)
        if value is None:
            return False
        have = _parse_int64(value)
        want = _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want


@final
@attrs.frozen(slots=True, repr=False)
class LabelSelector(FieldsRepr):
    """A ``metav1.LabelSelector``: ``matchLabels`` ANDed with ``matchExpressions``.

    Only ``In``, ``NotIn``, ``Exists`` and ``DoesNotExist`` are allowed.
    An empty selector matches every label set.
    """

    match_labels: Mapping[str, str] = attrs.field(factory=dict)
    match_expressions: tuple[Requirement, ...] = ()
    _requirements: tuple[Requirement, ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        for req in self.match_expressions:
            if req.operator not in LABEL_OPERATORS:
                raise SelectorError(f"{req.operator!r} is not a valid label selector operator")
        reqs = tuple(Requirement(k, "In", (v,)) for k, v in sorted(self.match_labels.items()))
        object.__setattr__(self, "_requirements", reqs + self.match_expressions)

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        """All requirements: ``matchLabels`` entries (as ``In``) then the expressions."""
        return self._requirements

    def is_empty(self) -> bool:
        """True for ``{}``, which matches everything."""
        return not self._requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether every requirement holds for ``labels``."""
        for req in self._requirements:
            if not req.matches(labels):
                return False
        return True

    def with_requirements(self, extra: Iterable[Requirement]) -> LabelSelector:
        """A copy with ``extra`` requirements ANDed in (used by ``matchLabelKeys``)."""
        return LabelSelector(dict(self.match_labels), self.match_expressions + tuple(extra))


def selector_from_labels(labels: Mapping[str, str]) -> LabelSelector:
    """The selector ``matchLabels: labels`` (a plain map selector such as a Service's)."""
    return LabelSelector(dict(labels))


@final
@attrs.frozen(slots=True, repr=False)
class NodeSelectorRequirement(FieldsRepr):
    """A requirement on node labels (``matchExpressions``) or fields (``matchFields``)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


def _compile_requirement(req: NodeSelectorRequirement, *, field: bool) -> Requirement | None:
    """A node requirement as a label requirement, or None when Kubernetes deems it invalid."""
    if field and (req.key != "metadata.name" or req.operator not in ("In", "NotIn") or len(req.values) != 1):
        return None
    try:
        compiled = Requirement(req.key, req.operator, req.values)
    except SelectorError:
        return None
    if req.operator in ("Gt", "Lt") and _parse_int64(req.values[0]) is None:
        return None
    return compiled


@final
@attrs.frozen(slots=True, repr=False)
class NodeSelectorTerm(FieldsRepr):
    """Requirements ANDed together; a term with none, or with an invalid one, matches no node."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()
    _compiled: tuple[tuple[Requirement, ...], tuple[Requirement, ...]] | None = attrs.field(
        init=False, repr=False, eq=False
    )

    def __attrs_post_init__(self) -> None:
        exprs = [_compile_requirement(r, field=False) for r in self.match_expressions]
        fields = [_compile_requirement(r, field=True) for r in self.match_fields]
        valid = (exprs or fields) and None not in exprs and None not in fields
        compiled = (tuple(e for e in exprs if e), tuple(f for f in fields if f)) if valid else None
        object.__setattr__(self, "_compiled", compiled)

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Whether the node satisfies every expression (labels) and field (its name)."""
        compiled = self._compiled
        if compiled is None:
            return False
        for req in compiled[0]:
            if not req.matches(labels):
                return False
        if compiled[1]:
            fields = {"metadata.name": node_name}
            for req in compiled[1]:
                if not req.matches(fields):
                    return False
        return True


@final
@attrs.frozen(slots=True, repr=False)
class NodeSelector(FieldsRepr):
    """Terms ORed together (``requiredDuringSchedulingIgnoredDuringExecution``).

    A selector whose terms are all empty or invalid matches no node.
    """

    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Whether any term matches the node."""
        for term in self.terms:
            if term.matches(node_name, labels):
                return True
        return False
