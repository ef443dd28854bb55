"""NodeAffinity: ``spec.nodeSelector``, required and preferred node affinity, and ``addedAffinity``.

Filter checks the profile's ``addedAffinity`` required selector first (``node(s)
didn't match scheduler-enforced node affinity``), then the pod's nodeSelector
AND required affinity (``node(s) didn't match Pod's node affinity/selector``);
both UnschedulableAndUnresolvable.  PreFilter narrows the candidates to the
names pinned by ``matchFields metadata.name In``.  Score sums the weights of
the matching preferred terms (the pod's and addedAffinity's) and normalizes by
the maximum.

kube parses requirements with apimachinery's ``labels.NewRequirement``, which
is stricter than the API server: keys must be qualified names, values label
values and ``Gt``/``Lt`` operands integers (so ``Gt -1`` is unparsable).  The
consequences are reproduced: an unparsable *required* term matches no node
(kube's "lazy" errors), an unparsable *preferred* term of the pod makes
PreScore fail with an ``Error``, and unparsable ``addedAffinity`` is refused
with a :class:`~kschedlib.errors.ConfigError`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError, SelectorError
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import (
    ActionType,
    ClusterEventWithHint,
    EnqueueExtensions,
    QueueingHint,
    hint_of,
    node_events,
)
from kschedlib.framework.extension_points import (
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalFilter, NodeLocalScore, PureNormalize
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.model import objects
from kschedlib.model.labels import NODE_OPERATORS, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.plugins._helpers.normalize import normalized_values
from kschedlib.plugins._helpers.validation import label_value_errors, qualified_name_errors

__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NodeAffinity",
    "NodeAffinityArgs",
    "RequiredNodeAffinity",
    "decode_args",
    "required_node_affinity_matches",
    "validate_args",
]

ERR_REASON_POD: Final = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED: Final = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT: Final = "pod affinity terms conflict"
_REQUIRED: Final = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED: Final = "preferredDuringSchedulingIgnoredDuringExecution"
_NO_NODE: Final = "node not found"

# --- kube's parse-time checks of node selector terms (labels.NewRequirement & co.) ---------------

_INT64: Final = re.compile(r"[+-]?[0-9]+")


@final
@attrs.frozen(slots=True, repr=False)
class _FieldError(FieldsRepr):
    """One ``field.Error``: path relative to its term, bad value, detail and kind."""

    path: str
    bad: str | tuple[str, ...]
    detail: str
    kind: str = "Invalid value"

    def text(self, prefix: str) -> str:
        """Go's ``<path>: <kind>: <value>: <detail>`` (``%q`` strings, ``%#v`` string slices)."""
        if isinstance(self.bad, str):
            value = json.dumps(self.bad, ensure_ascii=False)
        elif self.bad:
            value = "[]string{" + ", ".join(json.dumps(v, ensure_ascii=False) for v in self.bad) + "}"
        else:
            value = "[]string(nil)"
        return f"{prefix}.{self.path}: {self.kind}: {value}: {self.detail}"


def _expression_errors(req: NodeSelectorRequirement, path: str) -> list[_FieldError]:
    """``labels.NewRequirement``: key syntax, operator arity, integer operands, value syntax."""
    op, values, at = req.operator, req.values, f"{path}.values"
    if op not in NODE_OPERATORS:
        supported = 'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
        return [_FieldError(f"{path}.operator", op, supported, "Unsupported value")]
    key_errors = qualified_name_errors(req.key)
    errors = [_FieldError(f"{path}.key", req.key, "; ".join(key_errors))] if key_errors else []
    if op in ("In", "NotIn") and not values:
        errors.append(_FieldError(at, values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        errors.append(_FieldError(at, values, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errors.append(_FieldError(at, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        errors += [
            _FieldError(f"{at}[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
            for i, v in enumerate(values)
            if not _INT64.fullmatch(v) or not -(2**63) <= int(v) < 2**63
        ]
    for i, v in enumerate(values):
        value_errors = label_value_errors(v)
        if value_errors:
            errors.append(_FieldError(f"{at}[{i}][{req.key}]", v, "; ".join(value_errors)))
    return errors


def _field_errors(req: NodeSelectorRequirement, path: str) -> list[_FieldError]:
    """``matchFields``: In/NotIn with exactly one value (kube does not check the key here)."""
    if req.operator not in ("In", "NotIn"):
        supported = 'supported values: "In", "NotIn"'
        return [_FieldError(f"{path}.operator", req.operator, supported, "Unsupported value")]
    if len(req.values) != 1:
        return [_FieldError(f"{path}.values", req.values, "must have one element")]
    return []


@functools.lru_cache(maxsize=4096)
def _term_errors(term: NodeSelectorTerm) -> tuple[_FieldError, ...]:
    """Why kube cannot parse ``term`` (empty when it can); memoized, as pods repeat the same terms."""
    errors: list[_FieldError] = []
    for i, req in enumerate(term.match_expressions):
        errors += _expression_errors(req, f"matchExpressions[{i}]")
    for i, req in enumerate(term.match_fields):
        errors += _field_errors(req, f"matchFields[{i}]")
    return tuple(errors)


def _parsable(selector: NodeSelector) -> NodeSelector:
    """``selector`` without the terms kube cannot parse (it skips them when matching)."""
    if not any(_term_errors(term) for term in selector.terms):
        return selector
    return NodeSelector(tuple(term for term in selector.terms if not _term_errors(term)))


WeightedTerms = tuple[tuple[int, NodeSelectorTerm], ...]
"""Preferred terms ready for scoring: (weight, term); weight-0 and empty terms are left out."""


def _scoring_terms(preferred: Iterable[objects.PreferredSchedulingTerm]) -> WeightedTerms:
    """kube's ``NewPreferredSchedulingTerms``: ``SelectorError`` with kube's text if a term is unparsable."""
    terms: list[tuple[int, NodeSelectorTerm]] = []
    errors: list[str] = []
    for i, item in enumerate(preferred):
        term = item.preference
        if item.weight == 0 or not (term.match_expressions or term.match_fields):
            continue
        term_errors = _term_errors(term)
        errors += [error.text(f"[{i}]") for error in term_errors]
        if not term_errors:
            terms.append((item.weight, term))
    if errors:
        unique = list(dict.fromkeys(errors))  # apimachinery's aggregate: deduplicated, bracketed if several
        raise SelectorError(unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")
    return tuple(terms)


def _pod_node_affinity(pod: objects.Pod) -> objects.NodeAffinity | None:
    affinity = pod.affinity
    return affinity.node_affinity if affinity is not None else None


# --- required affinity, shared with PodTopologySpread and the queue's node pre-check ------------


@final
@attrs.frozen(slots=True, repr=False)
class RequiredNodeAffinity(FieldsRepr):
    """A pod's ``spec.nodeSelector`` AND required node affinity, parsed once.

    ``node_selector`` holds the nodeSelector's (key, value) pairs (none when nil
    or empty); ``affinity`` the required NodeSelector without unparsable terms,
    or ``None`` when the pod has none.  It is also NodeAffinity's PreFilter state.
    """

    node_selector: tuple[tuple[str, str], ...] = ()
    affinity: NodeSelector | None = None

    @classmethod
    def of(cls, pod: objects.Pod) -> RequiredNodeAffinity:
        """Parse ``pod``'s requirements (kube's ``GetRequiredNodeAffinity``); hoist out of per-node loops."""
        node_affinity = _pod_node_affinity(pod)
        required = node_affinity.required if node_affinity is not None else None
        pairs = tuple((pod.node_selector or {}).items())
        return cls(pairs, _parsable(required) if required is not None else None)

    def matches(self, node: objects.Node) -> bool:
        """Every nodeSelector pair equals a node label, and some required term matches."""
        labels = node.labels
        for key, value in self.node_selector:
            if labels.get(key) != value:
                return False
        return self.affinity is None or self.affinity.matches(node.name, labels)

    def clone(self) -> RequiredNodeAffinity:
        return self


def required_node_affinity_matches(pod: objects.Pod, node: objects.Node) -> bool:
    """Whether ``node`` satisfies the pod's nodeSelector and required node affinity (not addedAffinity)."""
    return RequiredNodeAffinity.of(pod).matches(node)


def _pinned_node_names(terms: Sequence[NodeSelectorTerm]) -> frozenset[str] | None:
    """Union over terms of the names each pins with ``metadata.name In`` (intersected within a term).

    ``None`` (every node) as soon as one term pins no name: terms are ORed.
    """
    names: set[str] = set()
    for term in terms:
        pinned: set[str] | None = None
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In":
                pinned = set(req.values) if pinned is None else pinned & set(req.values)
        if pinned is None:
            return None
        names |= pinned
    return frozenset(names)


# --- args ---------------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class NodeAffinityArgs(FieldsRepr):
    """``NodeAffinityArgs``: ``addedAffinity`` applies to every pod of the profile (default: none)."""

    added_affinity: objects.NodeAffinity | None = None


def validate_args(args: NodeAffinityArgs) -> None:
    """kube's ``ValidateNodeAffinityArgs``: every addedAffinity term must parse; the first error is raised."""
    added = args.added_affinity
    if added is None:
        return
    terms: list[tuple[str, NodeSelectorTerm]] = []
    if added.required is not None:
        at = f"addedAffinity.{_REQUIRED}.nodeSelectorTerms"
        terms += [(f"{at}[{i}]", term) for i, term in enumerate(added.required.terms)]
    at = f"addedAffinity.{_PREFERRED}"
    terms += [(f"{at}[{i}]", item.preference) for i, item in enumerate(added.preferred) if item.weight]
    for prefix, term in terms:
        for error in _term_errors(term):
            raise ConfigError(error.detail, field=f"{prefix}.{error.path}", value=error.bad)


_KINDS: Final[Mapping[type, str]] = {
    Mapping: "an object", list: "an array", str: "a string", int: "an integer"
}


def _expect(value: object, kind: type, path: str) -> Any:
    """``value`` if it is a ``kind`` (a bool is no integer), else ``ConfigError`` naming ``path``."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise ConfigError(f"expected {_KINDS[kind]}", field=path, value=value)
    return value


def _field(d: Mapping[str, Any], key: str, kind: type, path: str, default: object) -> Any:
    """``d[key]`` checked to be a ``kind``; ``default`` when absent or null."""
    value = d.get(key)
    return default if value is None else _expect(value, kind, f"{path}.{key}")


def _requirement(raw: object, path: str) -> NodeSelectorRequirement:
    d = _expect(raw, Mapping, path)
    values = _field(d, "values", list, path, [])
    return NodeSelectorRequirement(
        _field(d, "key", str, path, ""),
        _field(d, "operator", str, path, ""),
        tuple(_expect(v, str, f"{path}.values[{i}]") for i, v in enumerate(values)),
    )


def _term(raw: object, path: str) -> NodeSelectorTerm:
    """A NodeSelectorTerm read as is; :func:`validate_args` checks it with kube's rules."""
    d = {} if raw is None else _expect(raw, Mapping, path)
    expressions, fields = (
        tuple(_requirement(r, f"{path}.{key}[{i}]") for i, r in enumerate(_field(d, key, list, path, [])))
        for key in ("matchExpressions", "matchFields")
    )
    return NodeSelectorTerm(expressions, fields)


def _parse_added_affinity(raw: object) -> objects.NodeAffinity:
    """The v1 JSON ``addedAffinity`` (a core NodeAffinity), read without the API server's validation."""
    d = _expect(raw, Mapping, "addedAffinity")
    selector = None
    required = _field(d, _REQUIRED, Mapping, "addedAffinity", None)
    if required is not None:
        at = f"addedAffinity.{_REQUIRED}"
        terms = _field(required, "nodeSelectorTerms", list, at, [])
        selector = NodeSelector(tuple(_term(t, f"{at}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms)))
    preferred = []
    for i, raw_item in enumerate(_field(d, _PREFERRED, list, "addedAffinity", [])):
        at = f"addedAffinity.{_PREFERRED}[{i}]"
        item = _expect(raw_item, Mapping, at)
        weight = _field(item, "weight", int, at, 0)
        preference = _term(item.get("preference"), f"{at}.preference")
        preferred.append(objects.PreferredSchedulingTerm(weight, preference))
    return objects.NodeAffinity(selector, tuple(preferred))


def decode_args(raw: Mapping[str, Any] | None) -> NodeAffinityArgs:
    """``NodeAffinityArgs`` from its v1 JSON form (``None``: defaults); ``ConfigError`` when invalid."""
    if raw is None or raw.get("addedAffinity") is None:
        return NodeAffinityArgs()
    args = NodeAffinityArgs(_parse_added_affinity(raw["addedAffinity"]))
    validate_args(args)
    return args


# --- the plugin ---------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class _PreScoreState(FieldsRepr):
    """Every preferred term that scores for this pod: addedAffinity's, then the pod's."""

    terms: WeightedTerms

    def clone(self) -> _PreScoreState:
        return self


_PRE_FILTER_KEY: Final[StateKey[RequiredNodeAffinity]] = StateKey("PreFilterNodeAffinity")
_PRE_SCORE_KEY: Final[StateKey[_PreScoreState]] = StateKey("PreScoreNodeAffinity")
_ENFORCED: Final = Status.unresolvable(ERR_REASON_ENFORCED)
_POD: Final = Status.unresolvable(ERR_REASON_POD)
_CONFLICT: Final = Status.unresolvable(ERR_REASON_CONFLICT)


@final
class NodeAffinity(
    PreFilterPlugin,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    NodeLocalFilter,
    NodeLocalScore,
    PureNormalize,
    EnqueueExtensions,
):
    """Required node affinity filters (UnschedulableAndUnresolvable); preferred node affinity scores."""

    name: ClassVar[str] = "NodeAffinity"
    __slots__ = ("_added_preferred", "_added_required", "_has_added_preferred", "_narrow_hints")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (v1.30's or v1.36's)."""
        if not self._narrow_hints:
            return (node_events(ActionType.ADD | ActionType.UPDATE, self._after_node_change_v130),)
        return (node_events(ActionType.ADD | ActionType.UPDATE_NODE_LABEL, self._after_node_change),)

    def _after_node_change_v130(self, pod: objects.Pod, old: object, new: object) -> QueueingHint:
        """kube v1.30: Queue whenever the added or updated node matches (whether or not it did before)."""
        if not isinstance(new, objects.Node):
            return QueueingHint.QUEUE
        return hint_of(self._matches(pod, new))

    def _after_node_change(self, pod: objects.Pod, old: object, new: object) -> QueueingHint:
        """Queue when the node (added, or updated) now matches the pod's required affinity and did not."""
        if not isinstance(new, objects.Node):
            return QueueingHint.QUEUE
        if not self._matches(pod, new):
            return QueueingHint.QUEUE_SKIP
        return hint_of(not isinstance(old, objects.Node) or not RequiredNodeAffinity.of(pod).matches(old))

    def _matches(self, pod: objects.Pod, node: objects.Node) -> bool:
        """Whether ``node`` satisfies addedAffinity and the pod's required affinity (what Filter checks)."""
        added = self._added_required
        if added is not None and not added.matches(node.name, node.labels):
            return False
        return RequiredNodeAffinity.of(pod).matches(node)

    def __init__(self, args: NodeAffinityArgs | None, handle: Handle) -> None:
        """Validate ``args`` (kube's ``New`` does too) and pre-parse addedAffinity."""
        args = args if args is not None else NodeAffinityArgs()
        validate_args(args)
        added = args.added_affinity or objects.NodeAffinity()
        self._added_required: NodeSelector | None = added.required
        self._narrow_hints = handle.switches.narrow_queueing_hints
        self._has_added_preferred = bool(added.preferred)
        self._added_preferred = _scoring_terms(added.preferred)

    def pre_filter(self, state: CycleState, pod: objects.Pod) -> Status | PreFilterResult:
        """Skip pods with nothing required; narrow to pinned node names; conflict when none is left."""
        node_affinity = _pod_node_affinity(pod)
        required = node_affinity.required if node_affinity is not None else None
        if required is None and self._added_required is None and pod.node_selector is None:
            return Status.skip()
        state.write(_PRE_FILTER_KEY, RequiredNodeAffinity.of(pod))
        names = _pinned_node_names(required.terms) if required is not None and required.terms else None
        if names is None:
            return Status.success()
        return PreFilterResult(names) if names else _CONFLICT

    def filter(self, state: CycleState, pod: objects.Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status.from_error(_NO_NODE)
        added = self._added_required
        if added is not None and not added.matches(node.name, node.labels):
            return _ENFORCED
        required = state.get(_PRE_FILTER_KEY)
        if required is None:  # PreFilter disabled in the profile: kube parses here instead
            required = RequiredNodeAffinity.of(pod)
        return Status.SUCCESS if required.matches(node) else _POD

    def _terms_for(self, pod: objects.Pod) -> WeightedTerms:
        node_affinity = _pod_node_affinity(pod)
        return self._added_preferred + _scoring_terms(node_affinity.preferred if node_affinity else ())

    def pre_score(self, state: CycleState, pod: objects.Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Error when a preferred term of the pod is unparsable; Skip when nothing is preferred."""
        if not nodes:
            return Status.SUCCESS
        try:
            terms = self._terms_for(pod)
        except SelectorError as err:
            return Status.from_error(err)
        node_affinity = _pod_node_affinity(pod)
        if not self._has_added_preferred and (node_affinity is None or not node_affinity.preferred):
            return Status.skip()
        state.write(_PRE_SCORE_KEY, _PreScoreState(terms))
        return Status.SUCCESS

    def score(self, state: CycleState, pod: objects.Pod, node_info: NodeInfo) -> int:
        """The sum of the weights of the preferred terms the node matches."""
        node = node_info.node
        if node is None:
            raise LookupError(_NO_NODE)
        prescored = state.get(_PRE_SCORE_KEY)
        terms = prescored.terms if prescored is not None else self._terms_for(pod)
        name, labels = node.name, node.labels
        total = 0
        for weight, term in terms:
            if term.matches(name, labels):
                total += weight
        return total

    def normalize_score(
        self, state: CycleState, pod: objects.Pod, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> list[int]:
        """``100 * score // max`` (all stay 0 when the maximum is 0)."""
        return normalized_values(scores, reverse=False)

    def normalize_key(self, state: CycleState, pod: objects.Pod) -> Hashable:
        """Normalizing reads nothing but the scores."""
        return ()

    def filter_key(self, state: CycleState, pod: objects.Pod) -> Hashable | None:
        """The verdict depends only on the parsed nodeSelector and required affinity (and addedAffinity)."""
        return state.get(_PRE_FILTER_KEY)

    def score_key(self, state: CycleState, pod: objects.Pod) -> Hashable | None:
        """The score depends only on the preferred terms PreScore gathered."""
        prescored = state.get(_PRE_SCORE_KEY)
        return prescored.terms if prescored is not None else None
