"""Strategies for labels, label and node selectors, taints and tolerations.

Defaults draw from small vocabularies (:data:`DEFAULT_POD_LABELS`, :data:`DEFAULT_NODE_LABELS`,
:data:`DEFAULT_TAINTS`) so that selectors and tolerations meet the labels and taints they are about;
``labels=None`` gives arbitrary valid keys and values instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import attrs
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.labels import LabelSelector, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Requirement
from kschedlib.model.objects import Taint, Toleration
from kschedlib.testing._basics import (
    DEFAULT_NODE_LABELS,
    DEFAULT_POD_LABELS,
    DEFAULT_TAINTS,
    LABEL_OPERATORS,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    sometimes,
    subsets,
)
from kschedlib.testing._validation import Vocabulary, check_features, check_names, check_size, check_vocabulary

__all__ = [
    "label_keys",
    "label_selectors",
    "label_sets",
    "label_values",
    "node_selector_terms",
    "node_selectors",
    "taints",
    "tolerations",
]

# --- labels and selectors --------------------------------------------------------------------

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,6}[a-z0-9])?){0,2}/"


def label_keys() -> st.SearchStrategy[str]:
    """Arbitrary valid label keys: a name, optionally behind a DNS-subdomain prefix (``example.com/tier``)."""
    return st.from_regex(f"({_PREFIX})?{_NAME}", fullmatch=True)


def label_values() -> st.SearchStrategy[str]:
    """Arbitrary valid label values, the empty value included."""
    return st.one_of(st.just(""), st.from_regex(_NAME, fullmatch=True))


def _vocabulary_or_none(name: str, vocabulary: object) -> dict[str, tuple[str, ...]] | None:
    return None if vocabulary is None else check_vocabulary(name, vocabulary)


@st.composite
def _label_sets(draw: st.DrawFn, keys: st.SearchStrategy[tuple[str, ...]],
                values: dict[str, st.SearchStrategy[str]]) -> dict[str, str]:
    return {key: draw(values[key]) for key in draw(keys)}


def label_sets(
    *, labels: Vocabulary | None = DEFAULT_POD_LABELS, min_size: int = 0, max_size: int | None = None
) -> st.SearchStrategy[dict[str, str]]:
    """Label maps whose keys and values come from ``labels`` (``None``: arbitrary valid ones)."""
    vocabulary = _vocabulary_or_none("labels", labels)
    check_size(min_size, max_size)
    if vocabulary is None:
        return st.dictionaries(label_keys(), label_values(), min_size=min_size, max_size=max_size)
    if min_size > len(vocabulary):
        raise InvalidArgument(f"min_size={min_size} exceeds the {len(vocabulary)} keys of labels")
    keys = subsets(tuple(vocabulary), min_size=min_size, max_size=max_size)
    return _label_sets(keys, {key: st.sampled_from(values) for key, values in vocabulary.items()})


@attrs.frozen(repr=False)
class _Words(FieldsRepr):
    """Precomputed strategies over a vocabulary (or arbitrary words): keys, one value, some values."""

    keys: st.SearchStrategy[str]
    value: Callable[[str], st.SearchStrategy[str]]
    values: Callable[[str], st.SearchStrategy[tuple[str, ...]]]


def _words(vocabulary: dict[str, tuple[str, ...]] | None) -> _Words:
    if vocabulary is None:
        some = st.lists(label_values(), unique=True, min_size=1, max_size=2).map(tuple)
        return _Words(label_keys(), lambda key: label_values(), lambda key: some)
    one = {key: st.sampled_from(values) for key, values in vocabulary.items()}
    several = {key: subsets(values, min_size=1, max_size=2) for key, values in vocabulary.items()}
    return _Words(st.sampled_from(tuple(vocabulary)), one.__getitem__, several.__getitem__)


@st.composite
def _label_selectors(draw: st.DrawFn, words: _Words, count: st.SearchStrategy[int],
                     kinds: st.SearchStrategy[str]) -> LabelSelector:
    match_labels: dict[str, str] = {}
    expressions: list[Requirement] = []
    for _ in range(draw(count)):
        kind = draw(kinds)
        key = draw(words.keys)
        if kind == "matchLabels":
            match_labels[key] = draw(words.value(key))
        else:
            values = draw(words.values(key)) if kind in ("In", "NotIn") else ()
            expressions.append(Requirement(key, kind, values))
    return LabelSelector(match_labels, tuple(expressions))


def label_selectors(
    *, labels: Vocabulary | None = DEFAULT_POD_LABELS, min_size: int = 0, max_size: int | None = 2,
    operators: Sequence[str] = LABEL_OPERATORS,
) -> st.SearchStrategy[LabelSelector]:
    """Label selectors with ``min_size`` to ``max_size`` requirements (``matchLabels`` entries or expressions).

    Keys and values come from ``labels`` (``None``: arbitrary); expressions use ``operators``. A
    ``matchLabels`` entry drawn twice for one key keeps the last value. Shrinks toward ``{}``,
    the selector that matches everything.
    """
    vocabulary = _vocabulary_or_none("labels", labels)
    check_size(min_size, max_size)
    chosen = check_features("label selector operator", operators, LABEL_OPERATORS)
    kinds = st.sampled_from(("matchLabels", *(op for op in LABEL_OPERATORS if op in chosen)))
    count = st.integers(min_size, max_size if max_size is not None else min_size + 3)
    return _label_selectors(_words(vocabulary), count, kinds)


def _is_integer(text: str) -> bool:
    return text.lstrip("-").isdigit()


@st.composite
def _node_requirements(draw: st.DrawFn, words: _Words, operators: dict[str, st.SearchStrategy[str]]
                       ) -> NodeSelectorRequirement:
    key = draw(words.keys)
    operator = draw(operators[key])
    if operator in ("Exists", "DoesNotExist"):
        return NodeSelectorRequirement(key, operator)
    if operator in ("Gt", "Lt"):
        return NodeSelectorRequirement(key, operator, (draw(words.value(key)),))
    return NodeSelectorRequirement(key, operator, draw(words.values(key)))


@st.composite
def _node_selector_terms(draw: st.DrawFn, expressions: st.SearchStrategy[list[NodeSelectorRequirement]],
                         fields: st.SearchStrategy[NodeSelectorRequirement] | None) -> NodeSelectorTerm:
    found = tuple(draw(expressions))
    field = (draw(fields),) if fields is not None and sometimes(draw, 4) else ()
    return NodeSelectorTerm(found, field)


def node_selector_terms(
    *, labels: Vocabulary = DEFAULT_NODE_LABELS, node_names: Sequence[str] = (), min_size: int = 1,
    max_size: int | None = 2,
) -> st.SearchStrategy[NodeSelectorTerm]:
    """Node selector terms: ``min_size`` to ``max_size`` label expressions over ``labels``.

    ``Gt``/``Lt`` appear for keys whose values are all integers. With ``node_names``, a term
    sometimes also has a ``matchFields`` requirement on ``metadata.name``.
    """
    vocabulary = check_vocabulary("labels", labels)
    names = check_names("node_names", node_names, allow_empty=True)
    check_size(min_size, max_size)
    operators = {
        key: st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist",
                              *(("Gt", "Lt") if all(_is_integer(v) for v in values) else ())))
        for key, values in vocabulary.items()
    }
    top = max_size if max_size is not None else min_size + 2
    expressions = st.lists(_node_requirements(_words(vocabulary), operators), min_size=min_size, max_size=top)
    fields = st.builds(NodeSelectorRequirement, st.just("metadata.name"), st.sampled_from(("In", "NotIn")),
                       st.sampled_from(names).map(lambda name: (name,))) if names else None
    return _node_selector_terms(expressions, fields)


def node_selectors(
    *, labels: Vocabulary = DEFAULT_NODE_LABELS, node_names: Sequence[str] = (), min_size: int = 1,
    max_size: int | None = 2,
) -> st.SearchStrategy[NodeSelector]:
    """Node selectors (``requiredDuringScheduling...``) of ``min_size`` to ``max_size`` ORed terms."""
    terms = node_selector_terms(labels=labels, node_names=node_names)
    check_size(min_size, max_size)
    return st.lists(terms, min_size=min_size, max_size=max_size).map(lambda found: NodeSelector(tuple(found)))


# --- taints and tolerations ------------------------------------------------------------------


def _check_effects(effects: Sequence[str]) -> tuple[str, ...]:
    chosen = check_features("taint effect", effects, TAINT_EFFECTS)
    if not chosen:
        raise InvalidArgument("effects must name at least one of " + ", ".join(TAINT_EFFECTS))
    return tuple(effect for effect in TAINT_EFFECTS if effect in chosen)


@st.composite
def _taints(draw: st.DrawFn, words: _Words, effects: st.SearchStrategy[str]) -> Taint:
    key = draw(words.keys)
    return Taint(key, draw(effects), draw(words.value(key)))


def taints(*, keys: Vocabulary = DEFAULT_TAINTS, effects: Sequence[str] = TAINT_EFFECTS) -> st.SearchStrategy[Taint]:
    """Node taints with a key and value from ``keys`` and one of ``effects``."""
    return _taints(_words(check_vocabulary("keys", keys)), st.sampled_from(_check_effects(effects)))


_SECONDS: Final = st.one_of(st.none(), st.integers(0, 3600))


@st.composite
def _tolerations(draw: st.DrawFn, words: _Words, keys: st.SearchStrategy[str], operators: st.SearchStrategy[str],
                 effects: st.SearchStrategy[str]) -> Toleration:
    key = draw(keys)
    operator = "Exists" if not key else draw(operators)
    value = draw(words.value(key)) if operator == "Equal" else ""
    effect = draw(effects)
    seconds = draw(_SECONDS) if effect == "NoExecute" else None
    return Toleration(key, operator, value, effect, seconds)


def tolerations(
    *, keys: Vocabulary = DEFAULT_TAINTS, effects: Sequence[str] = TAINT_EFFECTS,
    operators: Sequence[str] = TOLERATION_OPERATORS,
) -> st.SearchStrategy[Toleration]:
    """Valid tolerations of the taints :func:`taints` draws from the same ``keys``.

    ``Exists`` tolerations carry no value, an empty key only comes with ``Exists`` (tolerate
    everything), an empty effect matches every effect, and ``tolerationSeconds`` only appears
    with ``NoExecute``.
    """
    chosen = check_features("toleration operator", operators, TOLERATION_OPERATORS)
    if not chosen:
        raise InvalidArgument("operators must name Equal, Exists or both")
    vocabulary = check_vocabulary("keys", keys)
    key_choices = (*vocabulary, "") if "Exists" in chosen else tuple(vocabulary)
    ordered = tuple(op for op in TOLERATION_OPERATORS if op in chosen)
    effects_ = st.sampled_from(("", *_check_effects(effects)))
    return _tolerations(_words(vocabulary), st.sampled_from(key_choices), st.sampled_from(ordered), effects_)
