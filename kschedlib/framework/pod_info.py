"""PodInfo: a pod with everything scheduling derives from it, computed once.

Requests, non-zero requests, host ports and parsed inter-pod affinity terms
are read in every cycle for every node; computing them when the pod enters
the cluster keeps the per-node hot path to a few attribute reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework._slots import builder
from kschedlib.model._shared import share
from kschedlib.model.labels import LabelSelector
from kschedlib.model.objects import Pod, PodAffinity, PodAffinityTerm
from kschedlib.model.resources import Accounting, Resources, pod_non_zero_requests, pod_requests

__all__ = ["AffinityTerm", "HostPort", "PodInfo", "WeightedAffinityTerm", "nominated_that_count"]

HostPort = tuple[str, str, int]
"""(host IP, protocol, host port) with Kubernetes' defaults applied (``0.0.0.0``, ``TCP``)."""


@final
@attrs.frozen(slots=True, repr=False)
class AffinityTerm(FieldsRepr):
    """A parsed pod (anti-)affinity term.

    ``namespaces`` is the pod's own namespace when the term names none and has
    no namespace selector.  ``selector``/``namespace_selector`` of ``None``
    match nothing; an empty selector matches everything.
    """

    topology_key: str
    selector: LabelSelector | None
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None

    @classmethod
    def parse(cls, term: PodAffinityTerm, pod_namespace: str) -> AffinityTerm:
        namespaces = frozenset(term.namespaces)
        if not namespaces and term.namespace_selector is None:
            namespaces = frozenset((pod_namespace,))
        return cls(term.topology_key, term.label_selector, namespaces, term.namespace_selector)

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str]) -> bool:
        """Whether ``pod`` (whose namespace has ``namespace_labels``) is selected by this term."""
        if pod.namespace not in self.namespaces and not (
            self.namespace_selector is not None and self.namespace_selector.matches(namespace_labels)
        ):
            return False
        return self.selector is not None and self.selector.matches(pod.labels)


@final
@attrs.frozen(slots=True, repr=False)
class WeightedAffinityTerm(FieldsRepr):
    """A preferred term with its weight."""

    weight: int
    term: AffinityTerm


_Terms = tuple[tuple[AffinityTerm, ...], tuple[WeightedAffinityTerm, ...]]


def _parse_terms(affinity: PodAffinity, namespace: str) -> _Terms:
    return (tuple(AffinityTerm.parse(t, namespace) for t in affinity.required),
            tuple(WeightedAffinityTerm(w.weight, AffinityTerm.parse(w.term, namespace)) for w in affinity.preferred))


def _terms(affinity: PodAffinity | None, namespace: str) -> _Terms:
    """The parsed (required, preferred) terms, shared by pods in one namespace whose (equally
    shared, see :mod:`kschedlib.model._shared`) PodAffinity is the same object."""
    if affinity is None:
        return (), ()
    # the entry holds its PodAffinity, keeping it alive: no other object can carry that id meanwhile
    return share(("affinity terms", id(affinity), namespace), lambda: (affinity, _parse_terms(affinity, namespace)))[1]


def _host_ports(pod: Pod) -> tuple[HostPort, ...]:
    ports: list[HostPort] = []
    for container in pod.containers:
        for port in container.ports:
            if port.host_port > 0:
                ports.append((port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port))
    return tuple(ports)


@final
@attrs.frozen(slots=True, repr=False)
class PodInfo(FieldsRepr):
    """A pod plus its precomputed requests, host ports and affinity terms."""

    pod: Pod
    requests: Resources
    non_zero_cpu: int
    non_zero_memory: int
    host_ports: tuple[HostPort, ...]
    required_affinity_terms: tuple[AffinityTerm, ...]
    required_anti_affinity_terms: tuple[AffinityTerm, ...]
    preferred_affinity_terms: tuple[WeightedAffinityTerm, ...]
    preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...]

    @classmethod
    def of(cls, pod: Pod, accounting: Accounting | None = None) -> PodInfo:
        """Derive everything scheduling needs from ``pod``; requests are counted by ``accounting``
        (a kube version's way, :func:`~kschedlib.model.resources.accounting_for`; default v1.30's)."""
        affinity = pod.affinity
        pod_affinity = affinity.pod_affinity if affinity else None
        anti = affinity.pod_anti_affinity if affinity else None
        ns = pod.namespace
        required, preferred = _terms(pod_affinity, ns)
        required_anti, preferred_anti = _terms(anti, ns)
        if accounting is None:
            cpu, memory = pod_non_zero_requests(pod)
            requests = pod_requests(pod)
        else:
            cpu, memory = accounting.non_zero_requests(pod)
            requests = accounting.requests(pod)
        return cls(
            pod,
            requests,
            cpu,
            memory,
            _host_ports(pod),
            required,
            required_anti,
            preferred,
            preferred_anti,
        )

    def with_pod(self, pod: Pod) -> PodInfo:
        """The same derived data for a copy of the pod whose scheduling fields are unchanged."""
        return _build(pod, self.requests, self.non_zero_cpu, self.non_zero_memory, self.host_ports,
                       self.required_affinity_terms, self.required_anti_affinity_terms,
                       self.preferred_affinity_terms, self.preferred_anti_affinity_terms)

    @property
    def has_affinity(self) -> bool:
        """Whether the pod declares any pod affinity or anti-affinity (required or preferred)."""
        affinity = self.pod.affinity
        return affinity is not None and (affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None)

    @property
    def has_required_anti_affinity(self) -> bool:
        """Whether the pod has at least one required anti-affinity term."""
        return bool(self.required_anti_affinity_terms)


_build = builder(PodInfo)
"""``PodInfo(...)`` with every field given (the assumed pod's copy, once per cycle)."""


def nominated_that_count(nominated: Sequence[PodInfo], priority: int, uid: str) -> tuple[PodInfo, ...]:
    """The nominated pods kube's two-pass filter rule counts for a pod of ``priority`` and ``uid``: those of
    equal or higher priority, the pod itself excepted."""
    if not nominated:
        return ()
    return tuple([info for info in nominated if info.pod.effective_priority >= priority and info.pod.uid != uid])
