"""ExtenderLimits: what one request may cost a served extender, so no pod can stall or grow it.

kube-scheduler gives up on an extender call after its ``httpTimeout`` (5 s by
default), so an answer computed later is useless: past ``work_timeout`` the
request is answered 503 with a JSON error instead.  Sizes that would make the
work itself too long are refused before any plugin runs: too many nodes (413),
a pod with too many affinity terms or spread constraints (422).
"""

from __future__ import annotations

import time
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.model.objects import Pod

__all__ = ["DEFAULT_LIMITS", "ExtenderLimits", "pod_terms"]


def _positive(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    wanted = int if attribute.type in (int, "int") else int | float
    if isinstance(value, bool) or not isinstance(value, wanted) or value <= 0:
        kind = "a positive integer" if wanted is int else "a positive number"
        raise ConfigError(f"must be {kind}", field=f"ExtenderLimits.{attribute.name}", value=value)


@final
@attrs.frozen(slots=True, repr=False)
class ExtenderLimits(FieldsRepr):
    """Per-request limits and the bounded state of an :class:`~kschedlib.extender.ExtenderService`."""

    max_nodes: int = attrs.field(default=5_000, validator=_positive)
    """Nodes one request may name (kube's largest supported cluster); more is a 413."""
    max_terms: int = attrs.field(default=32, validator=_positive)
    """Pod (anti-)affinity terms, node-affinity terms and topology spread constraints of the pod; more is a 422."""
    work_timeout: float = attrs.field(default=5.0, validator=_positive)
    """Seconds from a complete request body to the answer (waiting for a worker included); later is a 503."""
    workers: int = attrs.field(default=4, validator=_positive)
    """Requests computed at once, each with its own plugin instances; others wait, within ``work_timeout``."""
    node_cache_size: int = attrs.field(default=5_000, validator=_positive)
    """Parsed request nodes kept between requests (least recently used dropped; about 3 KB each)."""


DEFAULT_LIMITS: Final = ExtenderLimits()


def pod_terms(pod: Pod) -> int:
    """The pod's constraints whose cost grows with the cluster: affinity terms and spread constraints."""
    count = len(pod.topology_spread_constraints)
    affinity = pod.affinity
    if affinity is None:
        return count
    for part in (affinity.pod_affinity, affinity.pod_anti_affinity):
        if part is not None:
            count += len(part.required) + len(part.preferred)
    node = affinity.node_affinity
    if node is not None:
        count += len(node.preferred) + (len(node.required.terms) if node.required is not None else 0)
    return count


@final
class Deadline:
    """A point in ``time.monotonic()`` time by which a request's answer must be ready."""

    __slots__ = ("at", "seconds")

    def __init__(self, seconds: float, start: float | None = None) -> None:
        self.seconds = seconds
        self.at = (time.monotonic() if start is None else start) + seconds

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return time.monotonic() >= self.at
