"""The API resources kschedlib reads, and which of them a scheduler of a given version and config watches."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr

__all__ = ["BATCH", "DRA", "RESOURCES", "Resource", "for_scheduler", "resource"]


@final
@attrs.frozen(slots=True, repr=False)
class Resource(FieldsRepr):
    """One API resource: its kind, group/version and plural (the URL's name)."""

    kind: str
    api_version: str
    plural: str
    namespaced: bool = True

    @property
    def path(self) -> str:
        """The collection's path across all namespaces (``/api/v1/pods``, ``/apis/policy/v1/poddisruptionbudgets``)."""
        prefix = "/api/" if "/" not in self.api_version else "/apis/"
        return f"{prefix}{self.api_version}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None) -> str:
        """One object's path."""
        prefix = "/api/" if "/" not in self.api_version else "/apis/"
        where = f"namespaces/{namespace}/" if self.namespaced else ""
        return f"{prefix}{self.api_version}/{where}{self.plural}/{name}"


CORE: Final = (
    Resource("Node", "v1", "nodes", namespaced=False),
    Resource("Pod", "v1", "pods"),
    Resource("Namespace", "v1", "namespaces", namespaced=False),
    Resource("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets"),
    Resource("PersistentVolume", "v1", "persistentvolumes", namespaced=False),
    Resource("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
    Resource("StorageClass", "storage.k8s.io/v1", "storageclasses", namespaced=False),
    Resource("CSINode", "storage.k8s.io/v1", "csinodes", namespaced=False),
    Resource("CSIDriver", "storage.k8s.io/v1", "csidrivers", namespaced=False),
    Resource("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
    Resource("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments", namespaced=False),
    # PodTopologySpread's default constraints select a pod's siblings through its owners
    Resource("Service", "v1", "services"),
    Resource("ReplicationController", "v1", "replicationcontrollers"),
    Resource("ReplicaSet", "apps/v1", "replicasets"),
    Resource("StatefulSet", "apps/v1", "statefulsets"),
)
DRA: Final = (
    Resource("DeviceClass", "resource.k8s.io/v1", "deviceclasses", namespaced=False),
    Resource("ResourceSlice", "resource.k8s.io/v1", "resourceslices", namespaced=False),
    Resource("ResourceClaim", "resource.k8s.io/v1", "resourceclaims"),
)
BATCH: Final = (
    Resource("PodGroup", "scheduling.x-k8s.io/v1alpha1", "podgroups"),
    Resource("ElasticQuota", "scheduling.x-k8s.io/v1alpha1", "elasticquotas"),
)
PRIORITY_CLASSES: Final = Resource("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", namespaced=False)
RESOURCES: Final = (*CORE, PRIORITY_CLASSES, *DRA, BATCH[0], BATCH[1])
"""Everything a dump holds (kinds the API server does not serve are left out)."""
_BY_KIND: Final = {r.kind: r for r in RESOURCES}


def resource(kind: str) -> Resource:
    """The resource of ``kind``."""
    return _BY_KIND[kind]


def for_scheduler(*, dynamic_resources: bool, batch: bool) -> tuple[Resource, ...]:
    """What a running scheduler lists and watches: the default profile's reads, DRA's from 1.34, the batch
    plugins' custom resources when a profile enables them (kube-scheduler reads no PriorityClass: the
    API server has set every pod's priority)."""
    chosen: Iterable[Resource] = CORE
    if dynamic_resources:
        chosen = (*chosen, *DRA)
    if batch:
        chosen = (*chosen, *BATCH)
    return tuple(chosen)
