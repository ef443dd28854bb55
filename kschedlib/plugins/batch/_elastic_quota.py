"""ElasticQuota accounting for CapacityScheduling: each namespace's min, max and what its pods use.

scheduler-plugins' ``ElasticQuotaInfo(s)`` at d250c4b9.  Amounts are in scheduling
units (:class:`~kschedlib.model.Resources`).  A quota without ``min`` has min 0,
one without ``max`` has max "unlimited" (2^63-1) for cpu, memory and
ephemeral-storage; a resource a present ``min``/``max`` does not list counts as 0
for those three, and as 0 (min) or unlimited (max) for extended resources.  Every
resource the pods request is counted, extended ones (``nvidia.com/gpu``) included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, final

from kschedlib.model.objects import Pod, ResourceList
from kschedlib.model.resources import Resources, pod_requests
from kschedlib.model.scheduling_crds import ElasticQuota

__all__ = ["LOWER_BOUND_OF_MIN", "UPPER_BOUND_OF_MAX", "QuotaInfo", "QuotaInfos", "exceeds", "quota_infos"]

UPPER_BOUND_OF_MAX: Final = 2**63 - 1
LOWER_BOUND_OF_MIN: Final = 0


def _bound(amount: int) -> Resources:
    return Resources(amount, amount, amount)


def exceeds(x1: Resources, x2: Resources, y: Resources, bound: int) -> bool:
    """Whether ``x1 + x2`` is above ``y`` in any resource; extended resources absent from ``y`` are ``bound``.

    Only the extended resources of ``x1`` are compared (as scheduler-plugins' ``cmp2``).
    """
    if (x1.milli_cpu + x2.milli_cpu > y.milli_cpu or x1.memory + x2.memory > y.memory
            or x1.ephemeral_storage + x2.ephemeral_storage > y.ephemeral_storage
            or x1.allowed_pod_number + x2.allowed_pod_number > y.allowed_pod_number):
        return True
    return any(amount + x2.scalar.get(name, 0) > y.scalar.get(name, bound) for name, amount in x1.scalar.items())


_ZERO: Final = Resources()


@final
class QuotaInfo:
    """One namespace's quota and the pods (by ``namespace/name``) counted in ``used``."""

    __slots__ = ("max", "min", "namespace", "pods", "used")

    def __init__(self, namespace: str, minimum: Resources, maximum: Resources, used: Resources = _ZERO,
                 pods: Iterable[str] = ()) -> None:
        self.namespace = namespace
        self.min = minimum
        self.max = maximum
        self.used = used
        self.pods: set[str] = set(pods)

    @classmethod
    def of(cls, quota: ElasticQuota) -> QuotaInfo:
        minimum, maximum = _resources(quota.min, LOWER_BOUND_OF_MIN), _resources(quota.max, UPPER_BOUND_OF_MAX)
        return cls(quota.namespace, minimum, maximum)

    def used_over_min_with(self, request: Resources) -> bool:
        return exceeds(request, self.used, self.min, LOWER_BOUND_OF_MIN)

    def used_over_max_with(self, request: Resources) -> bool:
        return exceeds(request, self.used, self.max, UPPER_BOUND_OF_MAX)

    def used_over_min(self) -> bool:
        return exceeds(self.used, _ZERO, self.min, LOWER_BOUND_OF_MIN)

    def add_pod_if_not_present(self, pod: Pod) -> None:
        if pod.key not in self.pods:
            self.pods.add(pod.key)
            self.used = self.used.add(pod_requests(pod))

    def delete_pod_if_present(self, pod: Pod) -> None:
        if pod.key in self.pods:
            self.pods.discard(pod.key)
            self.used = self.used.subtract(pod_requests(pod))

    def clone(self) -> QuotaInfo:
        return QuotaInfo(self.namespace, self.min, self.max, self.used, self.pods)


def _resources(resources: ResourceList | None, bound: int) -> Resources:
    return _bound(bound) if resources is None else Resources.from_resource_list(resources)


@final
class QuotaInfos(dict[str, QuotaInfo]):
    """namespace -> its QuotaInfo; a CycleState value (``clone`` copies every info)."""

    __slots__ = ()

    def clone(self) -> QuotaInfos:
        return QuotaInfos({namespace: info.clone() for namespace, info in self.items()})

    def aggregated_used_over_min_with(self, request: Resources) -> bool:
        """Whether all namespaces' use plus ``request`` is above the sum of their mins."""
        used, minimum = request, _ZERO
        for info in self.values():
            used = used.add(info.used)
            minimum = minimum.add(info.min)
        return exceeds(used, _ZERO, minimum, LOWER_BOUND_OF_MIN)


def quota_infos(quotas: Iterable[ElasticQuota], pods_by_namespace: Mapping[str, Iterable[Pod]]) -> QuotaInfos:
    """The first quota of each namespace, charged with that namespace's assigned pods."""
    infos = QuotaInfos()
    for quota in quotas:
        if quota.namespace in infos:
            continue
        info = infos[quota.namespace] = QuotaInfo.of(quota)
        for pod in pods_by_namespace.get(quota.namespace, ()):
            info.add_pod_if_not_present(pod)
    return infos
