"""PodTopologySpread, shared half: which constraints apply and how matching pods are counted.

Part of the :mod:`kschedlib.plugins.pod_topology_spread` package; only the package itself is public.
Filtering and scoring both turn the pod's constraints (or the default ones,
with a selector deduced from the pod's owners) into :class:`SpreadConstraint`
and decide which nodes count for which constraint.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.labels import LabelSelector, Requirement
from kschedlib.model.objects import (
    NO_EXECUTE,
    NO_SCHEDULE,
    Node,
    OwnerSelector,
    Pod,
    TopologySpreadConstraint,
)
from kschedlib.plugins.node_affinity import RequiredNodeAffinity
from kschedlib.plugins.taint_toleration import find_untolerated_taint

__all__ = [
    "HOSTNAME_KEY",
    "NodeInclusion",
    "SpreadConstraint",
    "Standing",
    "counts_on",
    "default_selector",
    "has_all_keys",
    "spread_constraints",
    "with_selector",
]

HOSTNAME_KEY: Final = "kubernetes.io/hostname"
_HONOR: Final = "Honor"
_HARD_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})
_KINDS: Final = {
    ("", "v1", "ReplicationController"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "StatefulSet"),
}
"""The controllers whose selector joins the default selector, by (API group, version, kind)."""

@final
@attrs.frozen(slots=True, repr=False)
class SpreadConstraint(FieldsRepr):
    """A constraint as evaluated: its selector final (``None`` selects nothing), defaults applied."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False

    def selects(self, labels: Mapping[str, str]) -> bool:
        """Whether a pod with ``labels`` counts for this constraint (``{}`` selects every pod)."""
        return self.selector is not None and self.selector.matches(labels)


def spread_constraints(
    constraints: Iterable[TopologySpreadConstraint], pod_labels: Mapping[str, str], action: str
) -> tuple[SpreadConstraint, ...]:
    """The constraints whose ``whenUnsatisfiable`` is ``action``, in evaluated form.

    ``matchLabelKeys`` adds ``key = <pod's value>`` for each key the pod has; a
    missing selector stays "nothing" whatever the keys say.
    """
    return tuple(_evaluated(c, pod_labels) for c in constraints if c.when_unsatisfiable == action)


def _evaluated(c: TopologySpreadConstraint, pod_labels: Mapping[str, str]) -> SpreadConstraint:
    selector = c.label_selector
    if selector is not None and c.match_label_keys:
        keys = [key for key in c.match_label_keys if key in pod_labels]
        extra = [Requirement(key, "In", (pod_labels[key],)) for key in keys]
        if extra:
            selector = selector.with_requirements(extra)
    return SpreadConstraint(
        c.max_skew,
        c.topology_key,
        selector,
        c.min_domains if c.min_domains is not None else 1,
        c.node_affinity_policy is None or c.node_affinity_policy == _HONOR,
        c.node_taints_policy == _HONOR,
    )


def with_selector(
    constraints: Iterable[SpreadConstraint], selector: LabelSelector
) -> tuple[SpreadConstraint, ...]:
    """Default constraints made concrete for one pod: they all take the owners' selector."""
    return tuple(attrs.evolve(c, selector=selector) for c in constraints)


def default_selector(pod: Pod, owners: Sequence[OwnerSelector]) -> LabelSelector | None:
    """The selector default constraints use for ``pod``; ``None`` when it would have no requirement.

    It ANDs the selectors of the Services that select the pod with the selector of
    the pod's controller (first owner reference with ``controller: true``) when that
    is a ``v1`` ReplicationController or an ``apps/v1`` ReplicaSet or StatefulSet
    found among ``owners`` by name, whether or not it selects the pod.
    """
    labels: dict[str, str] = {}
    extra: list[Requirement] = []
    for owner in owners:
        if owner.kind == "Service" and owner.selector is not None and owner.selector.matches(pod.labels):
            labels.update(owner.selector.match_labels)
            extra.extend(owner.selector.match_expressions)
    controller = _controller(pod, owners)
    if controller is not None and controller.selector is not None:
        if controller.kind == "ReplicationController":
            labels.update(controller.selector.match_labels)
            extra.extend(controller.selector.match_expressions)
        else:
            extra.extend(controller.selector.requirements)
    if not labels and not extra:
        return None
    return LabelSelector(labels, tuple(extra))


def _controller(pod: Pod, owners: Sequence[OwnerSelector]) -> OwnerSelector | None:
    ref = next((r for r in pod.owner_references if r.controller), None)
    if ref is None or (*_group_version(ref.api_version), ref.kind) not in _KINDS:
        return None
    return next((o for o in owners if o.kind == ref.kind and o.name == ref.name), None)


def _group_version(api_version: str) -> tuple[str, str]:
    """apimachinery's ParseGroupVersion: ``apps/v1`` -> (apps, v1), ``v1`` -> ("", v1); bad -> no match."""
    if api_version in ("", "/"):
        return ("", "")
    parts = api_version.split("/")
    if len(parts) == 1:
        return ("", parts[0])
    if len(parts) == 2:
        return (parts[0], parts[1])
    return ("?", "?")


def has_all_keys(labels: Mapping[str, str], keys: Iterable[str]) -> bool:
    """Whether a node's ``labels`` carry every topology key (a plain loop: it runs per node)."""
    for key in keys:
        if key not in labels:
            return False
    return True


# --- node inclusion policies -----------------------------------------------------------------


def _has_required_affinity(pod: Pod) -> bool:
    """Whether ``pod`` restricts nodes by nodeSelector or required node affinity at all."""
    if pod.node_selector:
        return True
    node_affinity = pod.affinity.node_affinity if pod.affinity is not None else None
    return node_affinity is not None and node_affinity.required is not None


Standing = tuple[bool, bool]
"""A node's standing for a pod: (matches its required node affinity, has no untolerated hard taint)."""


def counts_on(c: SpreadConstraint, standing: Standing) -> bool:
    """Whether a node with ``standing`` counts for ``c``: it fails nothing that ``c`` honors."""
    affinity_ok, taints_ok = standing
    return (affinity_ok or not c.honor_node_affinity) and (taints_ok or not c.honor_node_taints)


def _untolerated_hard_taint(pod: Pod, node: Node) -> bool:
    return find_untolerated_taint(node.taints, pod.tolerations, _HARD_EFFECTS) is not None


@final
class NodeInclusion:
    """Which nodes count for which constraint, per ``nodeAffinityPolicy`` / ``nodeTaintsPolicy``.

    A node's :data:`Standing` is a pair (matches the pod's required node
    affinity, has no untolerated NoSchedule/NoExecute taint); only what some
    constraint honors is evaluated.
    """

    __slots__ = ("_affinity", "_check_taints", "_pod", "constraints")

    def __init__(self, pod: Pod, constraints: tuple[SpreadConstraint, ...]) -> None:
        self._pod = pod
        self.constraints = constraints
        honored = _has_required_affinity(pod) and any(c.honor_node_affinity for c in constraints)
        self._affinity = RequiredNodeAffinity.of(pod) if honored else None
        self._check_taints = any(c.honor_node_taints for c in constraints)

    @property
    def uniform(self) -> bool:
        """True when every node counts for every constraint (nothing needs checking)."""
        return self._affinity is None and not self._check_taints

    @property
    def key(self) -> Hashable:
        """What standings depend on: pods with equal keys give every node the same standing."""
        return (self._affinity, self._pod.tolerations if self._check_taints else None)

    def standing(self, node: Node) -> Standing:
        """(affinity satisfied, taints tolerated) for ``node``, evaluating only what matters."""
        affinity_ok = self._affinity is None or self._affinity.matches(node)
        taints_ok = not (self._check_taints and node.taints) or not _untolerated_hard_taint(self._pod, node)
        return (affinity_ok, taints_ok)

    def eligible(self, standing: Standing) -> tuple[int, ...]:
        """Indices of the constraints a node with ``standing`` counts for."""
        return tuple(i for i, c in enumerate(self.constraints) if counts_on(c, standing))
