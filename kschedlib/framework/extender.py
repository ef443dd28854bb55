"""Extender: a scheduling service outside the profile, consulted where kube-scheduler consults extenders.

kube-scheduler's oldest extension route.  An extender is shared by all
profiles and runs at four places of a pod's attempt (kube's ``schedule_one.go``:
``findNodesThatPassExtenders``, ``prioritizeNodes``, ``extendersBinding``; ``preemption.go``: ``callExtenders``)::

    Filter plugins -> extender filters (in order, each on the previous one's survivors)
      -> Score plugins + extender prioritize (score x weight x 10 added to the totals)
      -> ... -> extender bind (instead of the Bind plugins) ...
    no node fits -> DefaultPreemption -> extender preemption (may drop candidates or change victims)

Extenders are used in configured order, except that every ignorable extender
comes after every non-ignorable one.  An extender is skipped for pods it is not
interested in (:meth:`Extender.is_interested`).  A failure of an ignorable
extender is skipped; any other failure fails the attempt with the error's text.

Implement :class:`Extender` directly, wrap Python callables with
:class:`kschedlib.extender.CallableExtender`, or reach a real HTTP extender with
:class:`kschedlib.extender.HTTPExtender`.  Methods signal failure by raising
:class:`ExtenderError` (any other exception is treated the same way).
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Mapping, Sequence
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ExtenderError
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.model.objects import Pod

__all__ = [
    "EXTENDER_PSEUDO_PLUGIN",
    "MAX_EXTENDER_PRIORITY",
    "Extender",
    "ExtenderError",
    "ExtenderFilterResult",
    "ExtenderVictims",
    "pod_uses_resources",
]

MAX_EXTENDER_PRIORITY: Final = 10
"""The score range extenders are meant to use (0..10); the scheduler multiplies by ``weight x 10``."""
EXTENDER_PSEUDO_PLUGIN: Final = "Extender"
"""Recorded among a pod's rejecting plugins when extenders removed nodes (any cluster event requeues it)."""


def _empty_reasons() -> Mapping[str, str]:
    return {}


@final
@attrs.frozen(slots=True, repr=False)
class ExtenderFilterResult(FieldsRepr):
    """What an extender's filter decided.

    ``nodes`` pass (in the extender's order; they need not be a subset of the
    nodes it was sent).  ``failed`` nodes become ``Unschedulable`` with the
    reason, ``failed_and_unresolvable`` ones ``UnschedulableAndUnresolvable``
    (which wins when a node is in both).  A node that is neither returned nor
    listed simply drops out, with no status.
    """

    nodes: tuple[NodeInfo, ...] = ()
    failed: Mapping[str, str] = attrs.field(factory=_empty_reasons)
    failed_and_unresolvable: Mapping[str, str] = attrs.field(factory=_empty_reasons)


@final
@attrs.frozen(slots=True, repr=False)
class ExtenderVictims(FieldsRepr):
    """Pods to evict on one node (most important first) and how many PodDisruptionBudgets that violates."""

    pods: tuple[Pod, ...]
    num_pdb_violations: int = 0


def pod_uses_resources(pod: Pod, names: Collection[str]) -> bool:
    """Whether a container or init container of ``pod`` requests or limits one of ``names``."""
    for container in (*pod.containers, *pod.init_containers):
        for resources in (container.requests, container.limits):
            if any(name in resources for name in names):
                return True
    return False


class Extender(abc.ABC):
    """A scheduling service consulted after the profile's plugins (kube-scheduler's ``framework.Extender``)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Names the extender in score entries and errors (an HTTP extender's ``urlPrefix``)."""

    @property
    @abc.abstractmethod
    def weight(self) -> int:
        """Multiplies the prioritize scores (then x 10 to reach the plugins' 0..100 range)."""

    @property
    @abc.abstractmethod
    def is_ignorable(self) -> bool:
        """Whether a failure of this extender is skipped instead of failing the attempt."""

    @property
    @abc.abstractmethod
    def is_filter(self) -> bool:
        """Whether :meth:`filter` does anything (affects how many feasible nodes the search keeps)."""

    @property
    @abc.abstractmethod
    def is_prioritizer(self) -> bool:
        """Whether :meth:`prioritize` calls out (one that does not still adds a 0 entry per node)."""

    @property
    @abc.abstractmethod
    def is_binder(self) -> bool:
        """Whether this extender binds the pods it is interested in instead of the Bind plugins."""

    @property
    @abc.abstractmethod
    def supports_preemption(self) -> bool:
        """Whether preemption consults :meth:`process_preemption`."""

    @abc.abstractmethod
    def is_interested(self, pod: Pod) -> bool:
        """Whether this extender handles ``pod`` at all (by the extended resources it manages)."""

    @abc.abstractmethod
    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> ExtenderFilterResult:
        """Which of ``nodes`` fit ``pod``; raise :class:`ExtenderError` on failure."""

    @abc.abstractmethod
    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> list[tuple[str, int]]:
        """``(node name, score)`` pairs, scores meant in 0..10; raise :class:`ExtenderError` on failure."""

    @abc.abstractmethod
    def bind(self, pod: Pod, node_name: str) -> None:
        """Bind ``pod`` to ``node_name``; raise :class:`ExtenderError` on failure."""

    @abc.abstractmethod
    def process_preemption(
        self, pod: Pod, victims: Mapping[str, ExtenderVictims], snapshot: Snapshot
    ) -> dict[str, ExtenderVictims]:
        """The candidate nodes that remain and their victims (pods of those nodes in ``snapshot``)."""
