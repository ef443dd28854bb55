"""Exact resource arithmetic and the three ways kube-scheduler counts a pod's requests.

``Resources`` holds integers in scheduling units: milli-CPU, bytes, a pod
count and scalar (extended, hugepages, attachable-volume) amounts.  Quantities
are summed exactly (in units of 10^-9) and rounded up once at the end, as
Kubernetes sums ``resource.Quantity`` values before converting them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from functools import partial
from typing import Any, Final, Generic, TypeVar, final
from weakref import KeyedRef

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model._shared import EMPTY_MAP, ReadOnlyMap, share
from kschedlib.model.objects import Container, ContainerStatus, Pod, ResourceList
from kschedlib.model.quantity import Quantity
from kschedlib.versions import Switches

__all__ = [
    "Accounting",
    "CPU",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "RequestRules",
    "Resources",
    "accounting_for",
    "container_requests_sum",
    "is_extended_resource",
    "is_overcommit_allowed",
    "is_pod_level_resource",
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


def is_overcommit_allowed(name: str) -> bool:
    """kube's ``IsOvercommitAllowed``: a native resource other than hugepages.  The others (extended
    resources, hugepages) need a limit, and their request must equal it (the API server checks it)."""
    return _is_native(name) and not name.startswith("hugepages-")


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
@attrs.frozen(slots=True, repr=False)
class Resources(FieldsRepr):
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

    def subtract_all(self, others: Sequence[Resources]) -> Resources:
        """``subtract`` of each of ``others`` in turn, building one Resources."""
        scalar = dict(self.scalar)
        cpu, memory, storage, pods = self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number
        for other in others:
            cpu, memory = cpu - other.milli_cpu, memory - other.memory
            storage, pods = storage - other.ephemeral_storage, pods - other.allowed_pod_number
            for name, amount in other.scalar.items():
                scalar[name] = scalar.get(name, 0) - amount
        return Resources(cpu, memory, storage, pods, scalar)

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
    # pods of one template ask for the same amounts: one Resources serves them all
    return share(("Resources", milli_cpu, memory, ephemeral, pods, *scalar.items()),
                 lambda: Resources(milli_cpu, memory, ephemeral, pods, ReadOnlyMap(scalar) if scalar else EMPTY_MAP))


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


def _effective_nanos(pod: Pod, per_container: Iterable[_Nanos], per_init: Iterable[_Nanos],
                     pod_level: Mapping[str, int] | None = None) -> _Nanos:
    """Kubernetes' PodRequests: max(sum of containers + sidecars, each init container's peak) + overhead.

    ``pod_level`` amounts (pod-level resources, v1.34) replace the containers' total before the
    overhead is added.
    """
    total = _aggregate_nanos(pod, per_container, per_init)
    if pod_level:
        total.update(pod_level)
    if pod.overhead is not None:
        _add_into(total, _to_nanos(pod.overhead))
    return total


def _aggregate_nanos(pod: Pod, per_container: Iterable[_Nanos], per_init: Iterable[_Nanos]) -> _Nanos:
    """Kubernetes' AggregateContainerRequests (the containers' part of :func:`_effective_nanos`)."""
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
    return total


_T = TypeVar("_T")


@final
class _PerPod(Generic[_T]):
    """A computation from a pod, remembered by the pod object's identity (pods are immutable).

    Plugins receive the same Pod object in PreFilter, PreScore and the preemption dry run, so each
    computation runs once per pod instead of once per extension point.  Entries hold the pod weakly
    and leave with it, so a pod that was replaced (bound, updated, deleted) is not kept alive here;
    at most ``limit`` are kept.
    """

    __slots__ = ("_compute", "_entries", "_forget", "_limit")

    def __init__(self, compute: Callable[[Pod], _T], limit: int = 4096) -> None:
        self._compute = compute
        self._entries: dict[int, _Remembered[_T]] = {}
        self._forget = partial(_forget, self._entries)
        self._limit = limit

    def __call__(self, pod: Pod) -> _T:
        key = id(pod)
        entry = self._entries.get(key)
        if entry is not None and entry() is pod:
            return entry.value
        value = self._compute(pod)
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[key] = _Remembered(pod, self._forget, key, value)  # one int for the dict and the entry
        return value

    def __len__(self) -> int:
        return len(self._entries)


class _Remembered(KeyedRef[int, Pod], Generic[_T]):
    """A weak reference to a pod that carries the value computed from it (one object per entry)."""

    __slots__ = ("value",)

    def __new__(cls, pod: Pod, forget: Callable[[KeyedRef[int, Pod]], None], key: int,
                value: _T) -> _Remembered[_T]:
        return super().__new__(cls, pod, forget, key)

    def __init__(self, pod: Pod, forget: Callable[[KeyedRef[int, Pod]], None], key: int, value: _T) -> None:
        super().__init__(pod, forget, key)
        self.value = value


def _forget(entries: dict[int, Any], gone: KeyedRef[int, Pod]) -> None:
    """A remembered pod was freed: its entry goes (its id may now be given to another object)."""
    entries.pop(gone.key, None)


def pod_requests(pod: Pod) -> Resources:
    """The pod's effective requests (kube's ``resource.PodRequests``): what a node's ``requested`` counts."""
    return _REQUESTS(pod)


def _compute_pod_requests(pod: Pod) -> Resources:
    return _from_nanos(_effective_nanos(
        pod,
        (_to_nanos(c.requests) for c in pod.containers),
        [_to_nanos(c.requests) for c in pod.init_containers],
    ))


def pod_scoring_requests(pod: Pod) -> Resources:
    """Requests for scoring (kube's ``calculatePodResourceRequest``): a container's missing cpu/memory is 100m/200Mi."""
    return _SCORING_REQUESTS(pod)


def _compute_scoring_requests(pod: Pod) -> Resources:
    return _from_nanos(_effective_nanos(
        pod,
        (_defaulted(c) for c in pod.containers),
        [_defaulted(c) for c in pod.init_containers],
    ))


def _nothing_to_default(pod: Pod) -> bool:
    """Every container and init container requests cpu and memory and no status reports resources:
    the scoring requests' defaults then change nothing, and they are the pod's requests."""
    if pod.container_statuses or pod.init_container_statuses:
        return False
    for container in (*pod.containers, *pod.init_containers):
        requests = container.requests
        if CPU not in requests or MEMORY not in requests:
            return False
    return True


def _scoring(requests: Callable[[Pod], Resources], defaulted: Callable[[Pod], Resources]) -> Callable[[Pod], Resources]:
    """Scoring requests: the (memoised) requests when there is nothing to default, else ``defaulted``."""
    return lambda pod: requests(pod) if _nothing_to_default(pod) else defaulted(pod)


_REQUESTS: Final = _PerPod(_compute_pod_requests)
_SCORING_REQUESTS: Final = _scoring(_REQUESTS, _PerPod(_compute_scoring_requests))


def _non_zero(amounts: Mapping[str, int]) -> tuple[int, int]:
    cpu = amounts.get(CPU)
    memory = amounts.get(MEMORY)
    milli = DEFAULT_MILLI_CPU_REQUEST if cpu is None else _ceil_div(cpu * 1000, _NANO)
    mem = DEFAULT_MEMORY_REQUEST if memory is None else _ceil_div(memory, _NANO)
    return milli, mem


def pod_non_zero_requests(pod: Pod) -> tuple[int, int]:
    """(milli-CPU, memory bytes) for ``NodeInfo.non_zero_requested`` (kube's ``schedutil.GetNonzeroRequests``).

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


# --- the version-dependent ways to count (v1.32 sidecars, v1.33 in-place resize, v1.34 pod level) ----


def is_pod_level_resource(name: str) -> bool:
    """A resource pod-level ``spec.resources`` may set: cpu, memory and hugepages-*."""
    return name in (CPU, MEMORY) or name.startswith("hugepages-")


def container_requests_sum(pod: Pod) -> dict[str, Quantity]:
    """The containers' aggregated requests (sidecars and init peaks included, no overhead), exactly."""
    total = _aggregate_nanos(pod, (_to_nanos(c.requests) for c in pod.containers),
                             [_to_nanos(c.requests) for c in pod.init_containers])
    return {name: Quantity(Fraction(nanos, _NANO), "DecimalSI") for name, nanos in total.items()}


@final
@attrs.frozen(slots=True, repr=False)
class RequestRules(FieldsRepr):
    """Which later kube-scheduler ways of counting requests are in force (all off: v1.30)."""

    sidecar_non_zero: bool = False
    """v1.32: bound pods' non-zero requests default each container, sidecars summed like the kubelet."""
    status_resources: bool = False
    """v1.33 (InPlacePodVerticalScaling): a container's request is max(spec, status, allocated)."""
    pod_level: bool = False
    """v1.34 (PodLevelResources): ``spec.resources.requests`` replace the containers' total."""
    pod_level_status: bool = False
    """v1.36 (InPlacePodLevelResourcesVerticalScaling): with ``status_resources`` and ``pod_level``, a
    pod-level request is max(spec, ``status.resources``, ``status.allocatedResources``)."""


_DEFAULTS: Final[_Nanos] = {CPU: DEFAULT_MILLI_CPU_REQUEST * _NANO // 1000, MEMORY: DEFAULT_MEMORY_REQUEST * _NANO}


def _resize_infeasible(pod: Pod) -> bool:
    """The first ``PodResizePending`` condition says ``Infeasible``."""
    for condition in pod.conditions:
        if condition.type == "PodResizePending":
            return condition.reason == "Infeasible"
    return False


def _effective_nanos_of(pod: Pod, spec: ResourceList, actuated: ResourceList, allocated: ResourceList) -> _Nanos:
    """kube's determineEffectiveRequests: max(spec, actuated, allocated), or max(actuated, allocated)
    while the pod's resize is Infeasible."""
    amounts: _Nanos = {} if _resize_infeasible(pod) else _to_nanos(spec)
    _max_into(amounts, _to_nanos(actuated))
    _max_into(amounts, _to_nanos(allocated))
    return amounts


def _status_nanos(pod: Pod, container: Container, status: ContainerStatus) -> _Nanos:
    """A container's effective requests during an in-place resize (v1.33)."""
    return _effective_nanos_of(pod, container.requests, status.requests or {}, status.allocated)


class _Counter:
    """PodRequests with one set of options: in-place resize status, pod level, missing-request defaults."""

    __slots__ = ("_pod_level", "_pod_level_status", "_status")

    def __init__(self, rules: RequestRules) -> None:
        self._status = rules.status_resources
        self._pod_level = rules.pod_level
        self._pod_level_status = rules.pod_level_status and rules.status_resources

    def pod_level_amounts(self, pod: Pod) -> _Nanos | None:
        if not self._pod_level or not pod.pod_level_requests:
            return None
        amounts = {name: nanos for name, nanos in _to_nanos(pod.pod_level_requests).items()
                   if is_pod_level_resource(name)}
        if amounts and self._pod_level_status and pod.pod_level_status_requests is not None:
            # kube reads the effective amount of each spec resource; one the status and allocation
            # lack while an Infeasible resize drops the spec counts as zero.
            effective = _effective_nanos_of(pod, pod.pod_level_requests, pod.pod_level_status_requests,
                                            pod.pod_level_allocated)
            amounts = {name: effective.get(name, 0) for name in amounts}
        return amounts or None

    def nanos(self, pod: Pod, defaults: Mapping[str, int] | None = None,
              pod_level: Mapping[str, int] | None = None) -> _Nanos:
        statuses: dict[str, ContainerStatus] = {}
        if self._status:
            statuses = {s.name: s for s in (*pod.container_statuses, *pod.init_container_statuses)}

        def amounts(container: Container, uses_status: bool) -> _Nanos:
            status = statuses.get(container.name) if uses_status and statuses else None
            out = (_status_nanos(pod, container, status) if status is not None and status.requests is not None
                   else _to_nanos(container.requests))
            if defaults:
                for name, value in defaults.items():
                    out.setdefault(name, value)
            return out

        return _effective_nanos(pod, (amounts(c, True) for c in pod.containers),
                                [amounts(c, c.is_sidecar) for c in pod.init_containers], pod_level)


@final
class Accounting:
    """One kube-scheduler version's three ways of counting a pod's requests, each memoised per pod.

    Chosen once per scheduler (:func:`accounting_for`); with every rule off it is exactly
    :func:`pod_requests`, :func:`pod_scoring_requests` and :func:`pod_non_zero_requests`.
    """

    __slots__ = ("fit_requests", "non_zero_requests", "requests", "rules", "scoring_requests")

    def __init__(self, rules: RequestRules) -> None:
        self.rules = rules
        self.requests: Callable[[Pod], Resources]
        """What a node's ``requested`` counts for a bound pod (and BalancedAllocation scores)."""
        self.fit_requests: Callable[[Pod], Resources]
        """What NodeResourcesFit checks for the pod being scheduled (never its status resources)."""
        self.scoring_requests: Callable[[Pod], Resources]
        """NodeResourcesFit's scoring requests: missing cpu/memory default per container."""
        self.non_zero_requests: Callable[[Pod], tuple[int, int]]
        """(milli-CPU, memory) for ``NodeInfo.non_zero_requested``."""
        if rules == RequestRules():
            self.requests = self.fit_requests = _REQUESTS
            self.scoring_requests = _SCORING_REQUESTS
            self.non_zero_requests = pod_non_zero_requests
            return
        counter = _Counter(rules)
        spec_only = _Counter(attrs.evolve(rules, status_resources=False))
        self.requests = _PerPod(lambda pod: _from_nanos(counter.nanos(pod, None, counter.pod_level_amounts(pod))))
        spec_requests = _PerPod(lambda pod: _from_nanos(spec_only.nanos(pod, None, spec_only.pod_level_amounts(pod))))
        requests = self.requests
        self.fit_requests = (
            lambda pod: spec_requests(pod) if _reports_resources(pod) else requests(pod))
        self.scoring_requests = _scoring(requests, _PerPod(
            lambda pod: _from_nanos(counter.nanos(pod, _DEFAULTS, counter.pod_level_amounts(pod)))))
        self.non_zero_requests = (_PerPod(lambda pod: _non_zero_by_pod_requests(counter, pod))
                                  if rules.sidecar_non_zero else pod_non_zero_requests)


def _reports_resources(pod: Pod) -> bool:
    """Whether the pod's status reports resources (an in-place resize), at container or pod level."""
    return bool(pod.container_statuses or pod.init_container_statuses) or pod.pod_level_status_requests is not None


def _non_zero_by_pod_requests(counter: _Counter, pod: Pod) -> tuple[int, int]:
    """v1.32+: PodRequests with each container's missing cpu/memory defaulted (only where the pod
    level sets neither, when pod-level requests are in force)."""
    level = counter.pod_level_amounts(pod)
    requests = counter.nanos(pod, None, level)
    defaults = _DEFAULTS if level is None else {k: v for k, v in _DEFAULTS.items() if k not in requests}
    amounts = counter.nanos(pod, defaults, level) if defaults else requests
    cpu, memory = amounts.get(CPU), amounts.get(MEMORY)
    return (0 if cpu is None else _ceil_div(cpu * 1000, _NANO), 0 if memory is None else _ceil_div(memory, _NANO))


_ACCOUNTINGS: dict[RequestRules, Accounting] = {}


def accounting_for(switches: Switches) -> Accounting:
    """The :class:`Accounting` of a version's switches, shared by every scheduler of that version."""
    rules = RequestRules(switches.sidecar_nonzero_requests, switches.in_place_resize_requests,
                         switches.pod_level_resources, switches.pod_level_resize_requests)
    accounting = _ACCOUNTINGS.get(rules)
    if accounting is None:
        accounting = _ACCOUNTINGS[rules] = Accounting(rules)
    return accounting
