"""Strategies for what a pod says about placement: node affinity, pod (anti-)affinity, topology spread."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Final

import attrs
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.labels import LabelSelector
from kschedlib.model.objects import (
    Affinity,
    NodeAffinity,
    PodAffinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from kschedlib.testing._basics import (
    DEFAULT_NODE_LABELS,
    DEFAULT_POD_LABELS,
    HOSTNAME_LABEL,
    ZONE_LABEL,
    sometimes,
)
from kschedlib.testing._labels import (
    label_selectors,
    node_selector_terms,
    node_selectors,
)
from kschedlib.testing._validation import (
    Vocabulary,
    check_bool,
    check_features,
    check_int_range,
    check_names,
    check_vocabulary,
)

__all__ = [
    "DEFAULT_NAMESPACES",
    "DEFAULT_NAMESPACE_LABELS",
    "DEFAULT_TOPOLOGY_KEYS",
    "SPREAD_FEATURES",
    "affinities",
    "node_affinities",
    "pod_affinities",
    "pod_affinity_terms",
    "topology_spread_constraints",
]

DEFAULT_NAMESPACES: Final = ("default", "team-a")
DEFAULT_NAMESPACE_LABELS: Final[Vocabulary] = MappingProxyType({"env": ("prod", "dev")})
"""Namespace labels besides ``kubernetes.io/metadata.name``; namespace selectors draw from them."""
DEFAULT_TOPOLOGY_KEYS: Final = (HOSTNAME_LABEL, ZONE_LABEL)
SPREAD_FEATURES: Final = ("min_domains", "inclusion_policies", "match_label_keys")
WHEN_UNSATISFIABLE: Final = ("DoNotSchedule", "ScheduleAnyway")
_NAMESPACE_NAME: Final = "kubernetes.io/metadata.name"


def _weights() -> st.SearchStrategy[int]:
    return st.integers(1, 100)


def node_affinities(
    *, labels: Vocabulary = DEFAULT_NODE_LABELS, node_names: Sequence[str] = (), required: bool = True,
    preferred: bool = True, max_terms: int = 2,
) -> st.SearchStrategy[NodeAffinity]:
    """Node affinities over node ``labels``: a required selector and/or up to ``max_terms`` weighted preferences.

    ``required=False`` or ``preferred=False`` leaves that half out; ``node_names`` lets terms use
    ``matchFields`` on ``metadata.name``. Shrinks toward an affinity with neither.
    """
    check_bool("required", required)
    check_bool("preferred", preferred)
    check_int_range("min_terms", 1, "max_terms", max_terms)
    selectors = node_selectors(labels=labels, node_names=node_names, max_size=max_terms)
    terms = node_selector_terms(labels=labels, node_names=node_names)
    preferences = st.builds(PreferredSchedulingTerm, _weights(), terms)
    return st.builds(
        NodeAffinity,
        required=st.one_of(st.none(), selectors) if required else st.none(),
        preferred=st.lists(preferences, max_size=max_terms if preferred else 0).map(tuple),
    )


def _namespace_vocabulary(namespaces: tuple[str, ...], namespace_labels: Vocabulary) -> dict[str, tuple[str, ...]]:
    return {_NAMESPACE_NAME: namespaces, **check_vocabulary("namespace_labels", namespace_labels)}


def pod_affinity_terms(
    *, labels: Vocabulary = DEFAULT_POD_LABELS, namespaces: Sequence[str] = DEFAULT_NAMESPACES,
    namespace_labels: Vocabulary = DEFAULT_NAMESPACE_LABELS, topology_keys: Sequence[str] = DEFAULT_TOPOLOGY_KEYS,
) -> st.SearchStrategy[PodAffinityTerm]:
    """Pod (anti-)affinity terms: a selector over pod ``labels`` in some ``namespaces``, per topology key.

    The label selector is sometimes nil (matching nothing); the term sometimes lists namespaces or
    selects them by their labels (``kubernetes.io/metadata.name`` and ``namespace_labels``); without
    either it means the pod's own namespace.
    """
    names = check_names("namespaces", namespaces)
    keys = check_names("topology_keys", topology_keys)
    selectors = label_selectors(labels=labels, max_size=2)
    namespace_selectors = label_selectors(labels=_namespace_vocabulary(names, namespace_labels), max_size=1)
    return st.builds(
        PodAffinityTerm,
        topology_key=st.sampled_from(keys),
        label_selector=st.one_of(selectors, st.none()),
        namespaces=st.lists(st.sampled_from(names), unique=True, max_size=2).map(tuple),
        namespace_selector=st.one_of(st.none(), namespace_selectors),
    )


def pod_affinities(
    *, required: bool = True, preferred: bool = True, max_terms: int = 2, labels: Vocabulary = DEFAULT_POD_LABELS,
    namespaces: Sequence[str] = DEFAULT_NAMESPACES, namespace_labels: Vocabulary = DEFAULT_NAMESPACE_LABELS,
    topology_keys: Sequence[str] = DEFAULT_TOPOLOGY_KEYS,
) -> st.SearchStrategy[PodAffinity]:
    """Pod affinities (or anti-affinities: the shape is the same) of up to ``max_terms`` required and
    ``max_terms`` weighted preferred terms from :func:`pod_affinity_terms`."""
    check_bool("required", required)
    check_bool("preferred", preferred)
    check_int_range("min_terms", 1, "max_terms", max_terms)
    terms = pod_affinity_terms(labels=labels, namespaces=namespaces, namespace_labels=namespace_labels,
                               topology_keys=topology_keys)
    weighted = st.builds(WeightedPodAffinityTerm, _weights(), terms)
    return st.builds(
        PodAffinity,
        st.lists(terms, max_size=max_terms if required else 0).map(tuple),
        st.lists(weighted, max_size=max_terms if preferred else 0).map(tuple),
    )


def affinities(
    *, node_affinity: bool = True, pod_affinity: bool = True, pod_anti_affinity: bool = True,
    labels: Vocabulary = DEFAULT_POD_LABELS, node_labels: Vocabulary = DEFAULT_NODE_LABELS,
    namespaces: Sequence[str] = DEFAULT_NAMESPACES, topology_keys: Sequence[str] = DEFAULT_TOPOLOGY_KEYS,
) -> st.SearchStrategy[Affinity]:
    """A pod's ``spec.affinity``: each enabled part is sometimes present, each disabled one always absent."""
    for name, flag in (("node_affinity", node_affinity), ("pod_affinity", pod_affinity),
                       ("pod_anti_affinity", pod_anti_affinity)):
        check_bool(name, flag)
    hostnames = check_vocabulary("node_labels", node_labels).get(HOSTNAME_LABEL, ())
    nodes = node_affinities(labels=node_labels, node_names=hostnames)
    pods = pod_affinities(labels=labels, namespaces=namespaces, topology_keys=topology_keys)
    return st.builds(
        Affinity,
        node_affinity=st.one_of(st.none(), nodes) if node_affinity else st.none(),
        pod_affinity=st.one_of(st.none(), pods) if pod_affinity else st.none(),
        pod_anti_affinity=st.one_of(st.none(), pods) if pod_anti_affinity else st.none(),
    )


@attrs.frozen(repr=False)
class _SpreadParts(FieldsRepr):
    keys: tuple[str, ...]
    labels: tuple[str, ...]
    selectors: st.SearchStrategy[LabelSelector | None]
    skews: st.SearchStrategy[int]
    when: st.SearchStrategy[str]
    features: frozenset[str]


_MIN_DOMAINS: Final = st.integers(1, 3)
_POLICIES: Final = st.sampled_from((None, "Honor", "Ignore"))


@st.composite
def _spread(draw: st.DrawFn, parts: _SpreadParts) -> TopologySpreadConstraint:
    unsatisfiable = draw(parts.when)
    selector = draw(parts.selectors)
    match_label_keys: tuple[str, ...] = ()
    if selector is not None and "match_label_keys" in parts.features and sometimes(draw, 4):
        used = {req.key for req in selector.requirements}
        free = tuple(key for key in parts.labels if key not in used)
        match_label_keys = (draw(st.sampled_from(free)),) if free else ()
    min_domains = None
    if unsatisfiable == "DoNotSchedule" and "min_domains" in parts.features and sometimes(draw, 4):
        min_domains = draw(_MIN_DOMAINS)
    policies: tuple[str | None, str | None] = (None, None)
    if "inclusion_policies" in parts.features and sometimes(draw, 4):
        policies = (draw(_POLICIES), draw(_POLICIES))
    return TopologySpreadConstraint(
        max_skew=draw(parts.skews),
        topology_key=draw(st.sampled_from(parts.keys)),
        when_unsatisfiable=unsatisfiable,
        label_selector=selector,
        min_domains=min_domains,
        node_affinity_policy=policies[0],
        node_taints_policy=policies[1],
        match_label_keys=match_label_keys,
    )


def topology_spread_constraints(
    *, labels: Vocabulary = DEFAULT_POD_LABELS, topology_keys: Sequence[str] = DEFAULT_TOPOLOGY_KEYS,
    min_skew: int = 1, max_skew: int = 3, when_unsatisfiable: Sequence[str] = WHEN_UNSATISFIABLE,
    features: Sequence[str] = SPREAD_FEATURES,
) -> st.SearchStrategy[TopologySpreadConstraint]:
    """Valid topology spread constraints over pod ``labels`` and ``topology_keys``.

    ``maxSkew`` lies in ``[min_skew, max_skew]``. ``features`` picks the optional fields that may
    appear: ``min_domains`` (only with ``DoNotSchedule``), ``inclusion_policies``
    (``nodeAffinityPolicy``/``nodeTaintsPolicy``) and ``match_label_keys`` (keys the selector does
    not already use).
    """
    vocabulary = check_vocabulary("labels", labels)
    keys = check_names("topology_keys", topology_keys)
    check_int_range("min_skew", min_skew, "max_skew", max_skew, lowest=1)
    chosen = check_features("when_unsatisfiable", when_unsatisfiable, WHEN_UNSATISFIABLE)
    if not chosen:
        raise InvalidArgument("when_unsatisfiable must name DoNotSchedule, ScheduleAnyway or both")
    parts = _SpreadParts(
        keys=keys,
        labels=tuple(vocabulary),
        selectors=st.one_of(label_selectors(labels=vocabulary, max_size=2), st.none()),
        skews=st.integers(min_skew, max_skew),
        when=st.sampled_from(tuple(w for w in WHEN_UNSATISFIABLE if w in chosen)),
        features=check_features("topology spread", features, SPREAD_FEATURES),
    )
    return _spread(parts)
