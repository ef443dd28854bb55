"""The nouns of scheduling: nodes, pods and what they say about placement.

Plain frozen data with no scheduling logic beyond what a noun knows about
itself (a toleration knows which taints it tolerates).  Conversion from
Kubernetes v1 dicts lives in :mod:`kschedlib.model.convert`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.model import _checks as check
from kschedlib.model.labels import LabelSelector, NodeSelector, NodeSelectorTerm
from kschedlib.model.quantity import Quantity

__all__ = [
    "Affinity",
    "Container",
    "ContainerImage",
    "ContainerPort",
    "ContainerRestartRule",
    "ContainerStatus",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "Namespace",
    "Node",
    "NodeAffinity",
    "OwnerReference",
    "OwnerSelector",
    "PREFER_NO_SCHEDULE",
    "Pod",
    "PodAffinity",
    "PodAffinityTerm",
    "PodCondition",
    "PodDisruptionBudget",
    "PodResourceClaim",
    "PreferredSchedulingTerm",
    "ResourceList",
    "Taint",
    "TaintEffect",
    "Toleration",
    "TopologySpreadConstraint",
    "Volume",
    "WeightedPodAffinityTerm",
]

ResourceList = Mapping[str, Quantity]
"""Resource name -> quantity, as in a container's ``requests`` or a node's ``allocatable``."""

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
NO_SCHEDULE: Final = "NoSchedule"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
NO_EXECUTE: Final = "NoExecute"
TAINT_EFFECTS: Final = frozenset({NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE})


def _empty_map() -> Mapping[str, str]:
    return {}


def _empty_resources() -> ResourceList:
    return {}


@final
@attrs.frozen(slots=True, repr=False)
class Taint(FieldsRepr):
    """A node taint: pods that do not tolerate it are repelled according to ``effect``."""

    key: str
    effect: str
    value: str = ""

    __attrs_post_init__ = check.checker({"key": check.TEXT, "effect": check.TEXT, "value": check.TEXT})


@final
@attrs.frozen(slots=True, repr=False)
class Toleration(FieldsRepr):
    """Lets a pod land on nodes with matching taints.

    An empty ``key`` with operator ``Exists`` tolerates everything; an empty
    ``effect`` matches every effect.
    """

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    __attrs_post_init__ = check.checker({"key": check.TEXT, "operator": check.TEXT, "value": check.TEXT,
                                         "effect": check.TEXT, "toleration_seconds": check.INT_OR_NONE})

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes' ``ToleratesTaint``: effect, key and value (or ``Exists``) must agree."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


@final
@attrs.frozen(slots=True, repr=False)
class ContainerPort(FieldsRepr):
    """A container port; only ``host_port > 0`` entries occupy the node."""

    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""
    name: str = ""

    __attrs_post_init__ = check.checker({"container_port": check.INT, "host_port": check.INT,
                                         "protocol": check.TEXT, "host_ip": check.TEXT, "name": check.TEXT})


@final
@attrs.frozen(slots=True, repr=False)
class ContainerRestartRule(FieldsRepr):
    """A ``restartPolicyRules`` entry: what the kubelet does when the container exits with given codes.

    The scheduler reads only ``action`` (``RestartAllContainers`` needs a node that declares it).
    """

    action: str
    operator: str = ""
    """``exitCodes.operator`` (``In`` / ``NotIn``)."""
    values: tuple[int, ...] = ()
    """``exitCodes.values``."""

    __attrs_post_init__ = check.checker({"action": check.TEXT, "operator": check.TEXT,
                                         "values": check.tuple_of(int)})


@final
@attrs.frozen(slots=True, repr=False)
class Container(FieldsRepr):
    """A container (regular or init) as far as scheduling reads it.

    ``restart_policy == "Always"`` on an init container makes it a sidecar.
    """

    name: str
    image: str = ""
    requests: ResourceList = attrs.field(factory=_empty_resources)
    limits: ResourceList = attrs.field(factory=_empty_resources)
    ports: tuple[ContainerPort, ...] = ()
    restart_policy: str | None = None
    restart_policy_rules: tuple[ContainerRestartRule, ...] = ()

    __attrs_post_init__ = check.checker({
        "name": check.TEXT, "image": check.TEXT, "requests": check.RESOURCES, "limits": check.RESOURCES,
        "ports": check.tuple_of(ContainerPort), "restart_policy": check.TEXT_OR_NONE,
        "restart_policy_rules": check.tuple_of(ContainerRestartRule)})

    @property
    def is_sidecar(self) -> bool:
        """A restartable init container (``restartPolicy: Always``)."""
        return self.restart_policy == "Always"


@final
@attrs.frozen(slots=True, repr=False)
class PreferredSchedulingTerm(FieldsRepr):
    """A weighted node-affinity preference."""

    weight: int
    preference: NodeSelectorTerm

    __attrs_post_init__ = check.checker({"weight": check.INT})


@final
@attrs.frozen(slots=True, repr=False)
class NodeAffinity(FieldsRepr):
    """Hard (``required``) and soft (``preferred``) constraints on node labels."""

    required: NodeSelector | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class PodAffinityTerm(FieldsRepr):
    """Pods matching ``label_selector`` in the given namespaces, grouped by ``topology_key``.

    ``label_selector`` / ``namespace_selector`` of ``None`` match nothing; ``{}`` matches all.
    """

    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class WeightedPodAffinityTerm(FieldsRepr):
    """A weighted inter-pod (anti-)affinity preference."""

    weight: int
    term: PodAffinityTerm

    __attrs_post_init__ = check.checker({"weight": check.INT})


@final
@attrs.frozen(slots=True, repr=False)
class PodAffinity(FieldsRepr):
    """Required and preferred terms; used for both affinity and anti-affinity."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@final
@attrs.frozen(slots=True, repr=False)
class Affinity(FieldsRepr):
    """A pod's ``spec.affinity``; ``None`` parts were absent."""

    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


@final
@attrs.frozen(slots=True, repr=False)
class TopologySpreadConstraint(FieldsRepr):
    """How evenly matching pods must (``DoNotSchedule``) or should (``ScheduleAnyway``) spread."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()

    __attrs_post_init__ = check.checker({"max_skew": check.INT, "topology_key": check.TEXT,
                                         "when_unsatisfiable": check.TEXT, "min_domains": check.INT_OR_NONE})


@final
@attrs.frozen(slots=True, repr=False)
class OwnerReference(FieldsRepr):
    """A ``metadata.ownerReferences`` entry."""

    kind: str
    name: str
    uid: str = ""
    api_version: str = ""
    controller: bool = False


@final
@attrs.frozen(slots=True, repr=False)
class Volume(FieldsRepr):
    """A pod volume; ``source`` keeps the Kubernetes volume source as read.

    ``claim_name`` is set for ``persistentVolumeClaim`` volumes; ``ephemeral``
    for generic ephemeral volumes (whose claim is ``<pod>-<volume>``).
    """

    name: str
    claim_name: str | None = None
    ephemeral: bool = False
    read_only: bool = False
    source_kind: str = ""
    source: Mapping[str, object] = attrs.field(factory=dict)


@final
@attrs.frozen(slots=True, repr=False)
class ContainerStatus(FieldsRepr):
    """A ``status.containerStatuses`` (or ``initContainerStatuses``) entry: the resources of an in-place resize.

    ``requests`` is ``resources.requests`` (``None`` when ``resources`` is absent, which tells
    kube-scheduler to ignore the status); ``allocated`` is ``allocatedResources``.
    """

    name: str
    requests: ResourceList | None = None
    allocated: ResourceList = attrs.field(factory=_empty_resources)

    __attrs_post_init__ = check.checker({"name": check.TEXT, "requests": check.RESOURCES_OR_NONE,
                                         "allocated": check.RESOURCES})


@final
@attrs.frozen(slots=True, repr=False)
class PodCondition(FieldsRepr):
    """A ``status.conditions`` entry (preemption reads ``DisruptionTarget``)."""

    type: str
    status: str
    reason: str = ""
    message: str = ""

    __attrs_post_init__ = check.checker({"type": check.TEXT, "status": check.TEXT, "reason": check.TEXT,
                                         "message": check.TEXT})


@final
@attrs.frozen(slots=True, repr=False)
class PodResourceClaim(FieldsRepr):
    """A ``spec.resourceClaims`` entry: the pod's name for a ResourceClaim, made directly or from a template.

    Read so that a pod using Dynamic Resource Allocation is recognised (and refused until DRA is
    supported), never scheduled as if it claimed nothing.
    """

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None

    __attrs_post_init__ = check.checker({"name": check.TEXT, "resource_claim_name": check.TEXT_OR_NONE,
                                         "resource_claim_template_name": check.TEXT_OR_NONE})


@final
@attrs.frozen(slots=True, repr=False)
class ContainerExtendedResourceRequest(FieldsRepr):
    """A ``status.extendedResourceClaimStatus.requestMappings`` entry: which request of the pod's
    extended-resource claim serves a container's extended resource."""

    container_name: str
    resource_name: str
    request_name: str

    __attrs_post_init__ = check.checker({"container_name": check.TEXT, "resource_name": check.TEXT,
                                         "request_name": check.TEXT})


@final
@attrs.frozen(slots=True, repr=False)
class PodExtendedResourceClaimStatus(FieldsRepr):
    """``status.extendedResourceClaimStatus``: the claim kube-scheduler made for the pod's extended resources
    that DeviceClasses provide (DRAExtendedResource), and its request per container and resource."""

    resource_claim_name: str
    request_mappings: tuple[ContainerExtendedResourceRequest, ...] = ()

    __attrs_post_init__ = check.checker({"resource_claim_name": check.TEXT,
                                         "request_mappings": check.tuple_of(ContainerExtendedResourceRequest)})


_check_pod = check.checker({
    "name": check.TEXT, "namespace": check.TEXT, "uid": check.TEXT, "labels": check.MAP, "annotations": check.MAP,
    "owner_references": check.tuple_of(OwnerReference), "node_name": check.TEXT, "scheduler_name": check.TEXT,
    "priority": check.INT_OR_NONE, "preemption_policy": check.TEXT_OR_NONE,
    "containers": check.tuple_of(Container), "init_containers": check.tuple_of(Container),
    "overhead": check.RESOURCES_OR_NONE, "node_selector": check.MAP_OR_NONE, "affinity": check.one_of(Affinity),
    "tolerations": check.tuple_of(Toleration), "topology_spread_constraints": check.tuple_of(TopologySpreadConstraint),
    "scheduling_gates": check.tuple_of(str), "host_network": check.FLAG, "volumes": check.tuple_of(Volume),
    "resource_claims": check.tuple_of(PodResourceClaim),
    "phase": check.TEXT, "conditions": check.tuple_of(PodCondition), "nominated_node_name": check.TEXT,
    "creation_timestamp": check.SECONDS_OR_NONE, "start_time": check.SECONDS_OR_NONE,
    "deletion_timestamp": check.SECONDS_OR_NONE, "pod_level_requests": check.RESOURCES_OR_NONE,
    "pod_level_limits": check.RESOURCES_OR_NONE, "container_statuses": check.tuple_of(ContainerStatus),
    "resource_claim_statuses": check.tuple_of(tuple),
    "extended_resource_claim_status": check.one_of(PodExtendedResourceClaimStatus),
    "init_container_statuses": check.tuple_of(ContainerStatus), "host_users": check.FLAG_OR_NONE,
    "pod_level_status_requests": check.RESOURCES_OR_NONE, "pod_level_allocated": check.RESOURCES,
})


@final
@attrs.frozen(slots=True, repr=False)
class Pod(FieldsRepr):
    """A pod, pending (``node_name == ""``) or bound.

    Defaults are those an API server applies.  ``priority`` of ``None`` reads
    as 0.  Times (``creation_timestamp``, ``start_time``,
    ``deletion_timestamp``) are seconds since the epoch, or ``None``.
    """

    name: str
    namespace: str = "default"
    uid: str = ""
    labels: Mapping[str, str] = attrs.field(factory=_empty_map)
    annotations: Mapping[str, str] = attrs.field(factory=_empty_map)
    owner_references: tuple[OwnerReference, ...] = ()
    node_name: str = ""
    scheduler_name: str = "default-scheduler"
    priority: int | None = None
    preemption_policy: str | None = None
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList | None = None
    node_selector: Mapping[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    host_network: bool = False
    volumes: tuple[Volume, ...] = ()
    resource_claims: tuple[PodResourceClaim, ...] = ()
    phase: str = "Pending"
    conditions: tuple[PodCondition, ...] = ()
    nominated_node_name: str = ""
    creation_timestamp: float | None = None
    start_time: float | None = None
    deletion_timestamp: float | None = None
    pod_level_requests: ResourceList | None = None
    """``spec.resources.requests`` (pod-level resources, read from v1.34 with PodLevelResources)."""
    pod_level_limits: ResourceList | None = None
    """``spec.resources.limits``."""
    container_statuses: tuple[ContainerStatus, ...] = ()
    """``status.containerStatuses`` that report resources (in-place resize, read from v1.33)."""
    init_container_statuses: tuple[ContainerStatus, ...] = ()
    """``status.initContainerStatuses`` that report resources."""
    resource_claim_statuses: tuple[tuple[str, str | None], ...] = ()
    """``status.resourceClaimStatuses``: (pod claim name, generated ResourceClaim name or ``None``)."""
    extended_resource_claim_status: PodExtendedResourceClaimStatus | None = None
    """``status.extendedResourceClaimStatus`` (DRA-backed extended resources, read from v1.36)."""
    host_users: bool | None = None
    """``spec.hostUsers`` (``False``: the pod runs in a user namespace)."""
    pod_level_status_requests: ResourceList | None = None
    """``status.resources.requests`` (pod-level in-place resize, read from v1.36); ``None`` when
    ``status.resources`` is absent, which tells kube-scheduler to ignore the pod-level status."""
    pod_level_allocated: ResourceList = attrs.field(factory=_empty_resources)
    """``status.allocatedResources`` (pod level)."""
    _key: str = attrs.field(init=False, repr=False, eq=False)
    """:attr:`key`, built once: the store, the queue and the uid index each keep it, and one string serves
    all three (and a defaulted ``uid``) instead of a copy each."""

    def __attrs_post_init__(self) -> None:
        _check_pod(self)
        key = f"{self.namespace}/{self.name}"
        object.__setattr__(self, "_key", key)
        if not self.uid:
            object.__setattr__(self, "uid", key)

    @property
    def key(self) -> str:
        """``namespace/name``, the pod's identity in queues and reports."""
        return self._key

    @property
    def effective_priority(self) -> int:
        """``spec.priority``, with a missing priority read as 0."""
        return self.priority if self.priority is not None else 0


@final
@attrs.frozen(slots=True, repr=False)
class ContainerImage(FieldsRepr):
    """An image present on a node: every name it is known by, and its size."""

    names: tuple[str, ...]
    size_bytes: int = 0

    __attrs_post_init__ = check.checker({"names": check.tuple_of(str), "size_bytes": check.INT})


@final
@attrs.frozen(slots=True, repr=False)
class Node(FieldsRepr):
    """A node as far as scheduling reads it."""

    name: str
    labels: Mapping[str, str] = attrs.field(factory=_empty_map)
    annotations: Mapping[str, str] = attrs.field(factory=_empty_map)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    allocatable: ResourceList = attrs.field(factory=_empty_resources)
    capacity: ResourceList = attrs.field(factory=_empty_resources)
    images: tuple[ContainerImage, ...] = ()
    conditions: Mapping[str, str] = attrs.field(factory=_empty_map)
    uid: str = ""
    declared_features: tuple[str, ...] = ()
    """``status.declaredFeatures``, in the order the node reports them (NodeDeclaredFeatures, v1.36)."""

    __attrs_post_init__ = check.checker({
        "name": check.TEXT, "labels": check.MAP, "annotations": check.MAP, "taints": check.tuple_of(Taint),
        "unschedulable": check.FLAG, "allocatable": check.RESOURCES, "capacity": check.RESOURCES,
        "images": check.tuple_of(ContainerImage), "conditions": check.MAP, "uid": check.TEXT,
        "declared_features": check.tuple_of(str)})


@final
@attrs.frozen(slots=True, repr=False)
class Namespace(FieldsRepr):
    """A namespace; its labels feed ``namespaceSelector`` in pod affinity."""

    name: str
    labels: Mapping[str, str] = attrs.field(factory=_empty_map)

    __attrs_post_init__ = check.checker({"name": check.TEXT, "labels": check.MAP})


@final
@attrs.frozen(slots=True, repr=False)
class PodDisruptionBudget(FieldsRepr):
    """A PodDisruptionBudget as preemption reads it (only its status counts)."""

    name: str
    namespace: str = "default"
    selector: LabelSelector | None = None
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = frozenset()


@final
@attrs.frozen(slots=True, repr=False)
class OwnerSelector(FieldsRepr):
    """A Service, ReplicaSet, StatefulSet or ReplicationController, reduced to its pod selector.

    PodTopologySpread's system default constraints apply to pods such objects select.
    """

    kind: str
    name: str
    namespace: str = "default"
    selector: LabelSelector | None = None
