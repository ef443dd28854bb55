"""Exact resource arithmetic and the three ways kube-scheduler counts a pod's requests.

``Resources`` holds integers in scheduling units: milli-CPU, bytes, a pod
count and scalar (extended, hugepages, attachable-volume) amounts.  Quantities
are summed exactly (in units of 10^-9) and rounded up once at the end, as
Kubernetes sums ``resource.Quantity`` values before converting them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Final, final

import attrs

from kschedlib.model.objects import Container, Pod, ResourceList
from kschedlib.model.quantity import Quantity

__all__ = [
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "Resources",
    "is_extended_resource",
    "is_scalar_resource",
    "pod_non_zero_requests",
    "pod_requests",
    "pod_scoring_requests",
]

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024

_NANO: Final = 10**9
_QUALIFIED_NAME = re.compile(r"^(([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)/)?"
                             r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """An extended resource such as ``nvidia.com/gpu`` (not native, a valid qualified name)."""
    if _is_native(name) or name.startswith("requests."):
        return False
    qualified = "requests." + name
    prefix, _, short = qualified.rpartition("/")
    return len(short) <= 63 and len(prefix) <= 253 and bool(_QUALIFIED_NAME.match(qualified))


def is_scalar_resource(name: str) -> bool:
    """Resources kube-scheduler tracks in ``Resource.ScalarResources``."""
    return (
        name.startswith(("hugepages-", "attachable-volumes-"))
        or "kubernetes.io/" in name
        or is_extended_resource(name)
    )


def _empty_scalars() -> Mapping[str, int]:
    return {}


@final
@attrs.frozen(slots=True)
class Resources:
    """Amounts in scheduling units; immutable, so sums return new objects."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar: Mapping[str, int] = attrs.field(factory=_empty_scalars)

    @classmethod
    def from_resource_list(cls, resources: ResourceList) -> Resources:
        """Read ``cpu`` as milli-units, every other known resource as whole units."""
        return _from_nanos(_to_nanos(resources))

    def add(self, other: Resources) -> Resources:
        """The per-resource sum."""
        scalar = dict(self.scalar)
        for name, amount in other.scalar.items():
            scalar[name] = scalar.get(name, 0) + amount
        return Resources(
            self.milli_cpu + other.milli_cpu,
            self.memory + other.memory,
            self.ephemeral_storage + other.ephemeral_storage,
            self.allowed_pod_number + other.allowed_pod_number,
            scalar,
        )

    def subtract(self, other: Resources) -> Resources:
        """The per-resource difference (used when a pod leaves a node)."""
        scalar = dict(self.scalar)
        for name, amount in other.scalar.items():
            scalar[name] = scalar.get(name, 0) - amount
        return Resources(
            self.milli_cpu - other.milli_cpu,
            self.memory - other.memory,
            self.ephemeral_storage - other.ephemeral_storage,
            self.allowed_pod_number - other.allowed_pod_number,
            scalar,
        )

    def get(self, name: str) -> int:
        """The amount of ``name`` (``cpu`` in milli-units); 0 when absent."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def is_zero(self) -> bool:
        """True when nothing at all is requested (scalars included)."""
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or any(self.scalar.values()))

    def to_dict(self) -> dict[str, int]:
        """Non-zero amounts by resource name, for reports."""
        out = {CPU: self.milli_cpu, MEMORY: self.memory, EPHEMERAL_STORAGE: self.ephemeral_storage,
               PODS: self.allowed_pod_number}
        out.update(self.scalar)
        return {name: amount for name, amount in out.items() if amount}


# --- exact sums of resource lists ------------------------------------------------------------

_Nanos = dict[str, int]
"""Resource name -> amount in units of 10^-9 (exact; quantities are multiples of 10^-9)."""


def _nanos(quantity: Quantity) -> int:
    amount = quantity.amount
    return amount.numerator * _NANO // amount.denominator


def _to_nanos(resources: ResourceList) -> _Nanos:
    return {name: _nanos(q) for name, q in resources.items()}


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _from_nanos(amounts: _Nanos) -> Resources:
    milli_cpu = memory = ephemeral = pods = 0
    scalar: dict[str, int] = {}
    for name, nanos in amounts.items():
        if name == CPU:
            milli_cpu = _ceil_div(nanos * 1000, _NANO)
        elif name == MEMORY:
            memory = _ceil_div(nanos, _NANO)
        elif name == EPHEMERAL_STORAGE:
            ephemeral = _ceil_div(nanos, _NANO)
        elif name == PODS:
            pods = _ceil_div(nanos, _NANO)
        elif is_scalar_resource(name):
            scalar[name] = _ceil_div(nanos, _NANO)
    return Resources(milli_cpu, memory, ephemeral, pods, scalar)


def _add_into(total: _Nanos, amounts: Mapping[str, int]) -> None:
    for name, value in amounts.items():
        total[name] = total.get(name, 0) + value


def _max_into(total: _Nanos, amounts: Mapping[str, int]) -> None:
    for name, value in amounts.items():
        current = total.get(name)
        if current is None or value > current:
            total[name] = value


def _defaulted(container: Container) -> _Nanos:
    """A container's requests with 100m CPU / 200Mi memory filled in when the key is missing."""
    amounts = _to_nanos(container.requests)
    amounts.setdefault(CPU, DEFAULT_MILLI_CPU_REQUEST * _NANO // 1000)
    amounts.setdefault(MEMORY, DEFAULT_MEMORY_REQUEST * _NANO)
    return amounts


def _effective_nanos(pod: Pod, per_container: Iterable[_Nanos], per_init: Iterable[_Nanos]) -> _Nanos:
    """Kubernetes' PodRequests: max(sum of containers + sidecars, each init container's peak) + overhead."""
    total: _Nanos = {}
    for amounts in per_container:
        _add_into(total, amounts)
    sidecars: _Nanos = {}
    init_peak: _Nanos = {}
    for container, amounts in zip(pod.init_containers, per_init, strict=True):
        if container.is_sidecar:
            _add_into(total, amounts)
            _add_into(sidecars, amounts)
            effective = dict(sidecars)
        else:
            effective = dict(amounts)
            _add_into(effective, sidecars)
        _max_into(init_peak, effective)
    _max_into(total, init_peak)
    if pod.overhead is not None:
        _add_into(total, _to_nanos(pod.overhead))
    return total


@final
class _PerPod:
    """A computation from a pod, remembered by the pod object's identity (pods are immutable).

    Plugins receive the same Pod object in PreFilter, PreScore and the preemption dry run, so each
    computation runs once per pod instead of once per extension point.
    """

    __slots__ = ("_compute", "_entries", "_limit")

    def __init__(self, compute: Callable[[Pod], Resources], limit: int = 4096) -> None:
        self._compute = compute
        self._entries: dict[int, tuple[Pod, Resources]] = {}
        self._limit = limit

    def __call__(self, pod: Pod) -> Resources:
        entry = self._entries.get(id(pod))
        if entry is not None and entry[0] is pod:
            return entry[1]
        value = self._compute(pod)
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[id(pod)] = (pod, value)
        return value


def pod_requests(pod: Pod) -> Resources:
    """The pod's effective requests (reference §1.4a): what a node's ``requested`` counts."""
    return _REQUESTS(pod)


def _compute_pod_requests(pod: Pod) -> Resources:
    return _from_nanos(_effective_nanos(
        pod,
        (_to_nanos(c.requests) for c in pod.containers),
        [_to_nanos(c.requests) for c in pod.init_containers],
    ))


def pod_scoring_requests(pod: Pod) -> Resources:
    """Requests for resource scoring (§1.4c): missing cpu/memory default to 100m/200Mi per container."""
    return _SCORING_REQUESTS(pod)


def _compute_scoring_requests(pod: Pod) -> Resources:
    return _from_nanos(_effective_nanos(
        pod,
        (_defaulted(c) for c in pod.containers),
        [_defaulted(c) for c in pod.init_containers],
    ))


_REQUESTS: Final = _PerPod(_compute_pod_requests)
_SCORING_REQUESTS: Final = _PerPod(_compute_scoring_requests)


def _non_zero(amounts: Mapping[str, int]) -> tuple[int, int]:
    cpu = amounts.get(CPU)
    memory = amounts.get(MEMORY)
    milli = DEFAULT_MILLI_CPU_REQUEST if cpu is None else _ceil_div(cpu * 1000, _NANO)
    mem = DEFAULT_MEMORY_REQUEST if memory is None else _ceil_div(memory, _NANO)
    return milli, mem


def pod_non_zero_requests(pod: Pod) -> tuple[int, int]:
    """(milli-CPU, memory bytes) for ``NodeInfo.non_zero_requested`` (§1.4b).

    Sidecars are not added to the regular containers' sum here, unlike :func:`pod_requests`.
    """
    cpu = memory = 0
    for container in pod.containers:
        c, m = _non_zero(_to_nanos(container.requests))
        cpu += c
        memory += m
    sidecars: _Nanos = {}
    init_cpu = init_mem = 0
    for container in pod.init_containers:
        amounts = _to_nanos(container.requests)
        if container.is_sidecar:
            _add_into(sidecars, amounts)
            effective = dict(sidecars)
        else:
            effective = dict(amounts)
            _add_into(effective, sidecars)
        c, m = _non_zero(effective)
        init_cpu = max(init_cpu, c)
        init_mem = max(init_mem, m)
    cpu = max(cpu, init_cpu)
    memory = max(memory, init_mem)
    if pod.overhead is not None:
        overhead = _to_nanos(pod.overhead)
        if CPU in overhead:
            cpu += _ceil_div(overhead[CPU] * 1000, _NANO)
        if MEMORY in overhead:
            memory += _ceil_div(overhead[MEMORY], _NANO)
    return cpu, memory
