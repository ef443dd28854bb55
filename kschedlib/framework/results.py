"""Small result types that extension points return besides a Status."""

from __future__ import annotations

from collections.abc import Iterable
from typing import final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.status import Status

__all__ = ["PostFilterResult", "PreFilterResult", "Wait"]


@final
@attrs.frozen(slots=True, repr=False)
class PreFilterResult(FieldsRepr):
    """A PreFilter's narrowing of the candidate nodes; ``None`` means every node."""

    node_names: frozenset[str] | None = None

    @classmethod
    def of(cls, names: Iterable[str]) -> PreFilterResult:
        return cls(frozenset(names))

    @property
    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult) -> PreFilterResult:
        """The intersection of two narrowings ("all" is the identity)."""
        if self.node_names is None:
            return other
        if other.node_names is None:
            return self
        return PreFilterResult(self.node_names & other.node_names)


@final
@attrs.frozen(slots=True, repr=False)
class PostFilterResult(FieldsRepr):
    """What a PostFilter (preemption) achieved.

    ``nominated_node_name`` of ``None`` leaves the pod's nomination as it is;
    ``""`` clears it; a node name nominates the pod there.  ``victims`` are
    the pods (``namespace/name``) the embedder should evict.
    """

    status: Status
    nominated_node_name: str | None = None
    victims: tuple[str, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class Wait(FieldsRepr):
    """Permit's answer "hold the pod before binding", for at most ``timeout`` seconds."""

    timeout: float
