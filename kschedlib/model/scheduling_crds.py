"""The batch-scheduling custom resources of ``scheduling.x-k8s.io/v1alpha1``: PodGroup and ElasticQuota.

They are what the ``Coscheduling`` and ``CapacityScheduling`` plugins read (the
scheduler-plugins project defines them).  A pod joins a group through the label
``scheduling.x-k8s.io/pod-group`` naming a PodGroup of its own namespace; a
namespace has at most one ElasticQuota that counts.  Times are seconds since
the epoch, or ``None``, as on :class:`~kschedlib.model.Pod`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model.quantity import Quantity

__all__ = [
    "POD_GROUP_LABEL",
    "POD_GROUP_PHASES",
    "SCHEDULING_API_VERSION",
    "ElasticQuota",
    "PodGroup",
    "pod_group_name",
]

SCHEDULING_API_VERSION: Final = "scheduling.x-k8s.io/v1alpha1"
POD_GROUP_LABEL: Final = "scheduling.x-k8s.io/pod-group"
"""The pod label naming the pod's PodGroup (in the pod's namespace)."""
POD_GROUP_PHASES: Final = frozenset({"", "Pending", "Scheduling", "Running", "Finished", "Failed", "Unknown"})


def _empty_resources() -> Mapping[str, Quantity]:
    return {}


def pod_group_name(labels: Mapping[str, str]) -> str:
    """The PodGroup a pod's labels name, or ``""`` for a pod outside any group."""
    return labels.get(POD_GROUP_LABEL, "")


@final
@attrs.frozen(slots=True, repr=False)
class PodGroup(FieldsRepr):
    """A gang: at least ``min_member`` of its pods must be placed together, or none.

    ``min_resources`` (optional) is what the whole group needs; the scheduler checks
    the cluster has it free before placing any member.  ``schedule_timeout_seconds``
    overrides the plugin's ``permitWaitingTimeSeconds``.  The status fields are
    those the PodGroup controller writes (``phase`` is ``""`` until it first runs).
    """

    name: str
    namespace: str = "default"
    min_member: int = 0
    min_resources: Mapping[str, Quantity] | None = None
    schedule_timeout_seconds: int | None = None
    creation_timestamp: float | None = None
    phase: str = ""
    occupied_by: str = ""
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    schedule_start_time: float | None = None

    @property
    def key(self) -> str:
        """``namespace/name``: the group's full name in messages and reports."""
        return f"{self.namespace}/{self.name}"


@final
@attrs.frozen(slots=True, repr=False)
class ElasticQuota(FieldsRepr):
    """A namespace's quota: ``min`` is guaranteed, up to ``max`` may be borrowed from others' unused min.

    ``None`` means the field is absent: no max is unlimited, no min is zero.  A field
    that is present bounds only the resources it lists for extended resources; its
    missing ``cpu``, ``memory`` and ``ephemeral-storage`` count as 0 (as in scheduler-plugins).
    ``used`` is the status the ElasticQuota controller writes (informational).
    """

    name: str
    namespace: str = "default"
    min: Mapping[str, Quantity] | None = None
    max: Mapping[str, Quantity] | None = None
    used: Mapping[str, Quantity] = attrs.field(factory=_empty_resources)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
