"""Conversion between Kubernetes v1 objects (plain dicts from JSON or YAML) and the model.

Reading applies the defaults an API server would have applied before
kube-scheduler ever saw the object, so a cluster dump and a hand-written
scenario are read alike:

* a missing ``metadata.namespace`` is ``default``; a missing pod ``uid`` is ``namespace/name``;
* ``spec.schedulerName`` defaults to ``default-scheduler``; a missing ``spec.priority`` stays ``None``;
* a container (or init container) with a ``limits`` entry but no ``requests`` entry for a
  resource requests its limit;
* a port's ``protocol`` defaults to ``TCP``, and with ``spec.hostNetwork`` its ``hostPort`` to
  its ``containerPort``;
* a toleration's empty operator is ``Equal``; a volume without a source is an ``emptyDir``;
* a node without ``status.allocatable`` has allocatable = capacity;
* a namespace carries the label ``kubernetes.io/metadata.name: <name>``;
* a ReplicationController without a selector selects its template's labels;
* a pod without ``spec.priority`` gets it from its ``priorityClassName`` (or the global default
  class), as the Priority admission plugin sets it;
* items of a ``NodeList``, ``PodList``, ... without a ``kind`` take the list's.

Input the API server refuses is refused: negative resource quantities, ports outside 1-65535.
Unknown fields are ignored; malformed ones raise :class:`~kschedlib.errors.ManifestError`
naming the object, the field path and the value.  Writing (``*_to_dict``) produces the
v1 shape with defaults and empty fields left out, and ``x_from_dict(x_to_dict(obj)) == obj``
for every object as read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, NoReturn, cast, final

from kschedlib._lazy import lazy_exports
from kschedlib.errors import ManifestError
from kschedlib.model import _convert_spec as spec_
from kschedlib.model._convert_base import EMPTY, Json, Reader, label_selector, open_object, section
from kschedlib.model._convert_priority import PriorityClass, PriorityClasses, priority_class_from_dict
from kschedlib.model._convert_scheduling import (
    elastic_quota_from_dict,
    elastic_quota_to_dict,
    pod_group_from_dict,
    pod_group_to_dict,
    scheduling_object_to_dict,
)
from kschedlib.model._convert_write import (
    label_selector_to_dict,
    namespace_to_dict,
    node_to_dict,
    owner_selector_to_dict,
    pdb_to_dict,
    pod_to_dict,
)
from kschedlib.model._convert_write import object_to_dict as _core_object_to_dict
from kschedlib.model._kinds import is_dra_object
from kschedlib.model._shared import EMPTY_MAP, str_map
from kschedlib.model.labels import LabelSelector, selector_from_labels
from kschedlib.model.objects import (
    ContainerExtendedResourceRequest,
    ContainerImage,
    Namespace,
    Node,
    OwnerSelector,
    Pod,
    PodDisruptionBudget,
    PodExtendedResourceClaimStatus,
    PodResourceClaim,
)
from kschedlib.model.resources import container_requests_sum
from kschedlib.model.scheduling_crds import ElasticQuota, PodGroup

__all__ = [
    "KubeObject",
    "ObjectCollector",
    "PriorityClass",
    "allocation_to_dict",
    "csi_driver_from_dict",
    "csi_driver_to_dict",
    "csi_node_from_dict",
    "csi_node_to_dict",
    "csi_storage_capacity_from_dict",
    "csi_storage_capacity_to_dict",
    "device_class_to_dict",
    "device_request_to_dict",
    "elastic_quota_from_dict",
    "elastic_quota_to_dict",
    "is_custom_resource",
    "label_selector_from_dict",
    "label_selector_to_dict",
    "namespace_from_dict",
    "namespace_to_dict",
    "node_from_dict",
    "node_to_dict",
    "object_from_dict",
    "object_to_dict",
    "objects_from_document",
    "owner_selector_from_dict",
    "owner_selector_to_dict",
    "pdb_from_dict",
    "pdb_to_dict",
    "pod_from_dict",
    "pod_group_from_dict",
    "pod_group_to_dict",
    "pod_to_dict",
    "pv_from_dict",
    "pv_to_dict",
    "pvc_from_dict",
    "pvc_to_dict",
    "resource_claim_template_to_dict",
    "resource_claim_to_dict",
    "storage_class_from_dict",
    "storage_class_to_dict",
    "volume_source_from_dict",
    "volume_source_to_dict",
]

if TYPE_CHECKING:
    from kschedlib.model._convert_dra import device_class_from_dict as device_class_from_dict
    from kschedlib.model._convert_dra import resource_claim_from_dict as resource_claim_from_dict
    from kschedlib.model._convert_dra import resource_claim_template_from_dict as resource_claim_template_from_dict
    from kschedlib.model._convert_dra import resource_slice_from_dict as resource_slice_from_dict
    from kschedlib.model._convert_dra_write import allocation_to_dict as allocation_to_dict
    from kschedlib.model._convert_dra_write import device_class_to_dict as device_class_to_dict
    from kschedlib.model._convert_dra_write import device_request_to_dict as device_request_to_dict
    from kschedlib.model._convert_dra_write import resource_claim_template_to_dict as resource_claim_template_to_dict
    from kschedlib.model._convert_dra_write import resource_claim_to_dict as resource_claim_to_dict
    from kschedlib.model._convert_storage import csi_driver_from_dict as csi_driver_from_dict
    from kschedlib.model._convert_storage import csi_node_from_dict as csi_node_from_dict
    from kschedlib.model._convert_storage import csi_storage_capacity_from_dict as csi_storage_capacity_from_dict
    from kschedlib.model._convert_storage import pv_from_dict as pv_from_dict
    from kschedlib.model._convert_storage import pvc_from_dict as pvc_from_dict
    from kschedlib.model._convert_storage import storage_class_from_dict as storage_class_from_dict
    from kschedlib.model._convert_storage import volume_attachment_from_dict as volume_attachment_from_dict
    from kschedlib.model._convert_storage import volume_source_from_dict as volume_source_from_dict
    from kschedlib.model._convert_storage_write import csi_driver_to_dict as csi_driver_to_dict
    from kschedlib.model._convert_storage_write import csi_node_to_dict as csi_node_to_dict
    from kschedlib.model._convert_storage_write import csi_storage_capacity_to_dict as csi_storage_capacity_to_dict
    from kschedlib.model._convert_storage_write import pv_to_dict as pv_to_dict
    from kschedlib.model._convert_storage_write import pvc_to_dict as pvc_to_dict
    from kschedlib.model._convert_storage_write import storage_class_to_dict as storage_class_to_dict
    from kschedlib.model._convert_storage_write import storage_object_to_dict as storage_object_to_dict
    from kschedlib.model._convert_storage_write import volume_source_to_dict as volume_source_to_dict
    from kschedlib.model._kube_object import KubeObject

_LAZY_HOMES: Final = {
    "kschedlib.model._kube_object": ("KubeObject",),
    "kschedlib.model._convert_storage": (
        "csi_driver_from_dict", "csi_node_from_dict", "csi_storage_capacity_from_dict", "pv_from_dict",
        "pvc_from_dict", "storage_class_from_dict", "volume_attachment_from_dict", "volume_source_from_dict",
    ),
    "kschedlib.model._convert_storage_write": (
        "csi_driver_to_dict", "csi_node_to_dict", "csi_storage_capacity_to_dict", "pv_to_dict", "pvc_to_dict",
        "storage_class_to_dict", "storage_object_to_dict", "volume_source_to_dict",
    ),
    "kschedlib.model._convert_dra": (
        "device_class_from_dict", "resource_claim_from_dict", "resource_claim_template_from_dict",
        "resource_slice_from_dict",
    ),
    "kschedlib.model._convert_dra_write": (
        "allocation_to_dict", "device_class_to_dict", "device_request_to_dict", "resource_claim_template_to_dict",
        "resource_claim_to_dict",
    ),
}
"""The readers and writers of storage and DRA objects (and the union of every kind) this module offers,
imported with their model on first use (PEP 562): a process that reads no such object does not pay for the
model (:mod:`kschedlib.model._kinds`)."""

__getattr__, __dir__ = lazy_exports(globals(), _LAZY_HOMES)


def _read_lazily(name: str) -> Callable[[Mapping[str, Any]], KubeObject]:
    """The reader ``name`` of a storage or DRA kind, importing its model when the first object of the kind is read."""

    def read(d: Mapping[str, Any]) -> KubeObject:
        reader = globals().get(name) or __getattr__(name)  # kept in globals after the first
        return cast("Callable[[Mapping[str, Any]], KubeObject]", reader)(d)

    return read


NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"
_OWNER_KINDS: Final = frozenset({"Service", "ReplicaSet", "StatefulSet", "ReplicationController"})


def label_selector_from_dict(d: Mapping[str, Any] | None) -> LabelSelector | None:
    """A metav1.LabelSelector; ``None`` stays ``None`` (the nil selector, which matches nothing)."""
    return label_selector(Reader("LabelSelector"), d, "")


def _gate_name(r: Reader, raw: object, path: str) -> str:
    return r.reqstr(r.as_map(raw, path), "name", path)


def _resource_claim(r: Reader, raw: object, path: str) -> PodResourceClaim:
    claim = r.as_map(raw, path)
    return PodResourceClaim(r.reqstr(claim, "name", path), r.optstr(claim, "resourceClaimName", path),
                            r.optstr(claim, "resourceClaimTemplateName", path))


def _claim_status(r: Reader, raw: object, path: str) -> tuple[str, str | None]:
    status = r.as_map(raw, path)
    return r.reqstr(status, "name", path), r.optstr(status, "resourceClaimName", path)


def _request_mapping(r: Reader, raw: object, path: str) -> ContainerExtendedResourceRequest:
    mapping = r.as_map(raw, path)
    return ContainerExtendedResourceRequest(r.reqstr(mapping, "containerName", path),
                                            r.reqstr(mapping, "resourceName", path),
                                            r.reqstr(mapping, "requestName", path))


def _extended_claim_status(r: Reader, status: Mapping[str, Any]) -> PodExtendedResourceClaimStatus | None:
    """``status.extendedResourceClaimStatus``: the claim's name and at least one request mapping (as the API
    server requires)."""
    raw = r.getmap(status, "extendedResourceClaimStatus", "status")
    if raw is None:
        return None
    path = "status.extendedResourceClaimStatus"
    mappings = r.each(raw, "requestMappings", path, _request_mapping)
    if not mappings:
        r.fail(f"{path}.requestMappings", "is required")
    return PodExtendedResourceClaimStatus(r.reqstr(raw, "resourceClaimName", path), mappings)


def pod_from_dict(d: Mapping[str, Any]) -> Pod:
    """A v1 Pod, defaulted as an API server would (see the module docstring)."""
    r, meta, name, namespace = open_object(d, "Pod", namespaced=True)
    spec = section(r, d, "spec")
    status = section(r, d, "status")
    host_network = r.getbool(spec, "hostNetwork", "spec")
    containers = spec_.containers(r, spec, "containers", host_network)
    init_containers = spec_.containers(r, spec, "initContainers", host_network)
    level_status, level_allocated = spec_.pod_level_status(r, status)
    level_requests, level_limits = spec_.pod_level_resources(
        r, spec, lambda: container_requests_sum(Pod(name, containers=containers, init_containers=init_containers)))
    return Pod(
        name=name,
        namespace=namespace,
        uid=r.getstr(meta, "uid", "metadata"),
        labels=r.shared_strmap(meta, "labels", "metadata") or EMPTY_MAP,
        annotations=r.shared_strmap(meta, "annotations", "metadata") or EMPTY_MAP,
        owner_references=spec_.owner_references(r, meta),
        node_name=r.getstr(spec, "nodeName", "spec"),
        scheduler_name=r.getstr(spec, "schedulerName", "spec") or "default-scheduler",
        priority=r.optint(spec, "priority", "spec"),
        preemption_policy=r.optstr(spec, "preemptionPolicy", "spec"),
        containers=containers,
        init_containers=init_containers,
        overhead=r.resources(spec, "overhead", "spec"),
        node_selector=r.shared_strmap(spec, "nodeSelector", "spec"),
        affinity=spec_.affinity(r, spec),
        tolerations=spec_.tolerations(r, spec),
        topology_spread_constraints=spec_.topology_spread_constraints(r, spec),
        scheduling_gates=r.each(spec, "schedulingGates", "spec", _gate_name),
        host_network=host_network,
        volumes=spec_.volumes(r, spec),
        resource_claims=r.each(spec, "resourceClaims", "spec", _resource_claim),
        phase=r.getstr(status, "phase", "status") or "Pending",
        conditions=spec_.pod_conditions(r, status),
        nominated_node_name=r.getstr(status, "nominatedNodeName", "status"),
        creation_timestamp=r.timestamp(meta, "creationTimestamp", "metadata"),
        start_time=r.timestamp(status, "startTime", "status"),
        deletion_timestamp=r.timestamp(meta, "deletionTimestamp", "metadata"),
        pod_level_requests=level_requests,
        pod_level_limits=level_limits,
        container_statuses=spec_.container_statuses(r, status, "containerStatuses"),
        init_container_statuses=spec_.container_statuses(r, status, "initContainerStatuses"),
        resource_claim_statuses=r.each(status, "resourceClaimStatuses", "status", _claim_status),
        extended_resource_claim_status=_extended_claim_status(r, status),
        host_users=_optbool(r, spec, "hostUsers"),
        pod_level_status_requests=level_status,
        pod_level_allocated=level_allocated,
    )


def _optbool(r: Reader, d: Mapping[str, Any], key: str) -> bool | None:
    """A boolean field whose absence is meaningful (``None``)."""
    return None if d.get(key) is None else r.getbool(d, key, "spec")


def _image(r: Reader, raw: object, path: str) -> ContainerImage:
    image = r.as_map(raw, path)
    return ContainerImage(r.strlist(image, "names", path), r.getint(image, "sizeBytes", path))


def _node_condition(r: Reader, raw: object, path: str) -> tuple[str, str]:
    condition = r.as_map(raw, path)
    return r.reqstr(condition, "type", path), r.getstr(condition, "status", path)


def node_from_dict(d: Mapping[str, Any]) -> Node:
    """A v1 Node; without ``status.allocatable`` the capacity is allocatable (API server default)."""
    r, meta, name, _ = open_object(d, "Node", namespaced=False)
    spec = section(r, d, "spec")
    status = section(r, d, "status")
    capacity = r.resources(status, "capacity", "status") or EMPTY_MAP
    allocatable = r.resources(status, "allocatable", "status")
    return Node(
        name=name,
        labels=r.strmap(meta, "labels", "metadata") or EMPTY_MAP,  # unique: they name the host
        annotations=r.shared_strmap(meta, "annotations", "metadata") or EMPTY_MAP,
        taints=spec_.taints(r, spec),
        unschedulable=r.getbool(spec, "unschedulable", "spec"),
        allocatable=capacity if allocatable is None else allocatable,
        capacity=capacity,
        images=r.each(status, "images", "status", _image),
        conditions=str_map(dict(r.each(status, "conditions", "status", _node_condition))),
        uid=r.getstr(meta, "uid", "metadata"),
        declared_features=r.strlist(status, "declaredFeatures", "status"),
    )


def namespace_from_dict(d: Mapping[str, Any]) -> Namespace:
    """A v1 Namespace, labelled ``kubernetes.io/metadata.name: <name>`` as the API server does."""
    r, meta, name, _ = open_object(d, "Namespace", namespaced=False)
    labels = r.strmap(meta, "labels", "metadata") or {}
    labels[NAMESPACE_NAME_LABEL] = name
    return Namespace(name=name, labels=labels)


def pdb_from_dict(d: Mapping[str, Any]) -> PodDisruptionBudget:
    """A policy/v1 PodDisruptionBudget: its selector and the two status fields preemption reads."""
    r, _, name, namespace = open_object(d, "PodDisruptionBudget", namespaced=True)
    spec = section(r, d, "spec")
    status = section(r, d, "status")
    disrupted = r.getmap(status, "disruptedPods", "status") or EMPTY
    return PodDisruptionBudget(
        name=name,
        namespace=namespace,
        selector=label_selector(r, spec.get("selector"), "spec.selector"),
        disruptions_allowed=r.getint(status, "disruptionsAllowed", "status"),
        disrupted_pods=frozenset(disrupted),
    )


def _map_selector(r: Reader, spec: Json) -> LabelSelector | None:
    """A plain-map selector (Service, ReplicationController); absent or empty selects nothing."""
    labels = r.strmap(spec, "selector", "spec")
    return selector_from_labels(labels) if labels else None


def _template_labels(r: Reader, spec: Json) -> dict[str, str] | None:
    template = r.getmap(spec, "template", "spec") or EMPTY
    meta = r.getmap(template, "metadata", "spec.template") or EMPTY
    return r.strmap(meta, "labels", "spec.template.metadata")


def owner_selector_from_dict(d: Mapping[str, Any]) -> OwnerSelector:
    """A Service, ReplicaSet, StatefulSet or ReplicationController, reduced to its pod selector.

    A Service without a selector selects nothing (``None``).  A ReplicationController
    without one selects its pod template's labels, as the API server defaults it.
    """
    kind = d.get("kind") if isinstance(d, Mapping) else None
    if kind not in _OWNER_KINDS:
        raise ManifestError("kind must be Service, ReplicaSet, StatefulSet or ReplicationController",
                            field="kind", value=kind)
    r, _, name, namespace = open_object(d, kind, namespaced=True)
    spec = section(r, d, "spec")
    if kind in ("ReplicaSet", "StatefulSet"):
        selector = label_selector(r, spec.get("selector"), "spec.selector")
    else:
        selector = _map_selector(r, spec)
        if selector is None and kind == "ReplicationController":
            template_labels = _template_labels(r, spec)
            selector = selector_from_labels(template_labels) if template_labels else None
    return OwnerSelector(kind=kind, name=name, namespace=namespace, selector=selector)


_READERS: Final[dict[str, Callable[[Mapping[str, Any]], KubeObject]]] = {
    "Pod": pod_from_dict,
    "Node": node_from_dict,
    "Namespace": namespace_from_dict,
    "PodDisruptionBudget": pdb_from_dict,
    **dict.fromkeys(_OWNER_KINDS, owner_selector_from_dict),
    "PersistentVolume": _read_lazily("pv_from_dict"),
    "PersistentVolumeClaim": _read_lazily("pvc_from_dict"),
    "StorageClass": _read_lazily("storage_class_from_dict"),
    "CSINode": _read_lazily("csi_node_from_dict"),
    "CSIDriver": _read_lazily("csi_driver_from_dict"),
    "CSIStorageCapacity": _read_lazily("csi_storage_capacity_from_dict"),
    "PodGroup": pod_group_from_dict,
    "ElasticQuota": elastic_quota_from_dict,
    "VolumeAttachment": _read_lazily("volume_attachment_from_dict"),
    "DeviceClass": _read_lazily("device_class_from_dict"),
    "ResourceSlice": _read_lazily("resource_slice_from_dict"),
    "ResourceClaim": _read_lazily("resource_claim_from_dict"),
    "ResourceClaimTemplate": _read_lazily("resource_claim_template_from_dict"),
}


def object_to_dict(obj: KubeObject) -> dict[str, Any]:
    """Any model object as its v1 dict (the inverse of :func:`object_from_dict`)."""
    if isinstance(obj, Node | Pod | Namespace | PodDisruptionBudget | OwnerSelector):
        return _core_object_to_dict(obj)
    if isinstance(obj, PodGroup | ElasticQuota):
        return scheduling_object_to_dict(obj)
    if is_dra_object(obj):
        from kschedlib.model import _convert_dra_write as dra_write
        from kschedlib.model.dra import DeviceClass, ResourceClaim, ResourceClaimTemplate

        if isinstance(obj, DeviceClass):
            return dra_write.device_class_to_dict(obj)
        if isinstance(obj, ResourceClaim):
            return dra_write.resource_claim_to_dict(obj)
        if isinstance(obj, ResourceClaimTemplate):
            return dra_write.resource_claim_template_to_dict(obj)
        raise ManifestError("writing ResourceSlices back is not supported", obj=type(obj).__name__)
    from kschedlib.model._convert_storage_write import storage_object_to_dict

    return storage_object_to_dict(obj)  # type: ignore[arg-type]


def object_from_dict(d: Mapping[str, Any]) -> KubeObject | None:
    """The model object for ``d``, chosen by its ``kind``; ``None`` for kinds the model does not hold.

    Other kinds (ConfigMap, Deployment, ...) are ignored rather than rejected, so a
    whole-cluster dump can be loaded as it is (:class:`ObjectCollector` counts them).
    """
    if not isinstance(d, Mapping):
        raise ManifestError("a Kubernetes object must be a JSON object", value=type(d).__name__)
    kind = d.get("kind")
    if type(kind) is not str or not kind:
        _no_kind(d)
    reader = _READERS.get(kind)
    return None if reader is None else reader(d)


def _no_kind(d: Mapping[str, Any]) -> NoReturn:
    if "api_version" in d:
        raise ManifestError(_SNAKE_CASE, field="api_version", value=d.get("kind"))
    raise ManifestError("every object needs a kind", field="kind", value=d.get("kind"))


_SNAKE_CASE: Final = ("looks like the Python client's to_dict() output (snake_case keys such as api_version); "
                      "write the API's JSON instead: ApiClient().sanitize_for_serialization(obj)")
_BUILT_IN_GROUPS: Final = frozenset({
    "", "v1", "apps", "batch", "policy", "autoscaling", "extensions", "networking.k8s.io", "storage.k8s.io",
    "scheduling.k8s.io", "rbac.authorization.k8s.io", "coordination.k8s.io", "discovery.k8s.io",
    "events.k8s.io", "node.k8s.io", "certificates.k8s.io", "admissionregistration.k8s.io",
    "apiextensions.k8s.io", "apiregistration.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io",
    "authentication.k8s.io", "authorization.k8s.io", "internal.apiserver.k8s.io", "storagemigration.k8s.io",
    "metrics.k8s.io",
})


def is_custom_resource(d: Mapping[str, Any]) -> bool:
    """Whether ``d``'s apiVersion names an API group outside Kubernetes' own."""
    api_version = d.get("apiVersion")
    if not isinstance(api_version, str) or "/" not in api_version:
        return False
    return api_version.split("/", 1)[0] not in _BUILT_IN_GROUPS


@final
class ObjectCollector:
    """Reads documents into model objects, and remembers what it did not use.

    ``skipped`` counts the objects of kinds the model does not hold, by kind; ``custom_kinds``
    names those that are custom resources.  Pods read without ``spec.priority`` get it from
    their ``priorityClassName`` (see :mod:`kschedlib.model._convert_priority`) in :meth:`finish`,
    once every PriorityClass of the input has been seen.
    """

    __slots__ = ("_classes", "_unresolved", "custom_kinds", "kubelet_versions", "objects", "skipped")

    def __init__(self, priority_classes: Iterable[PriorityClass] = ()) -> None:
        self.objects: list[KubeObject] = []
        self.skipped: Counter[str] = Counter()
        self.custom_kinds: set[str] = set()
        self.kubelet_versions: set[str] = set()
        """``status.nodeInfo.kubeletVersion`` of the nodes read (to compare with the version in force)."""
        self._classes: list[PriorityClass] = list(priority_classes)
        self._unresolved: list[tuple[int, str]] = []

    def _note_kubelet(self, doc: Mapping[str, Any]) -> None:
        status = doc.get("status")
        info = status.get("nodeInfo") if isinstance(status, Mapping) else None
        version = info.get("kubeletVersion") if isinstance(info, Mapping) else None
        if isinstance(version, str) and version:
            self.kubelet_versions.add(version)

    def add(self, doc: object) -> None:
        """Every object of a document: one object, a ``List`` / ``PodList`` / ... (``items``, whose
        kind-less items take the list's kind), or a JSON array, nested to any depth."""
        self._collect(doc, None)

    def _collect(self, doc: object, item_kind: str | None) -> None:
        if doc is None:
            return
        if isinstance(doc, (list, tuple)):
            for item in doc:
                self._collect(item, item_kind)
            return
        if not isinstance(doc, Mapping):
            raise ManifestError("a document must hold objects or arrays of them", value=type(doc).__name__)
        if "api_version" in doc:
            _no_kind(doc)
        kind = doc.get("kind", item_kind)
        if type(kind) is not str or not kind:
            _no_kind(doc)
        if kind.endswith("List"):
            items = doc.get("items") or ()
            if not isinstance(items, (list, tuple)):
                raise ManifestError("a List's items must be an array", obj=kind, field="items",
                                    value=type(items).__name__)
            for item in items:
                self._collect(item, kind[:-4] or None)
            return
        if kind == "Node":
            self._note_kubelet(doc)
        reader = _READERS.get(kind)
        if reader is not None:
            obj = reader(doc)
            if type(obj) is Pod and obj.priority is None:
                self._note_unresolved(doc, obj)
            self.objects.append(obj)
        elif kind == "PriorityClass":
            self._classes.append(priority_class_from_dict(doc))
        else:
            self.skipped[kind] += 1
            if is_custom_resource(doc):
                self.custom_kinds.add(kind)

    def _note_unresolved(self, doc: Mapping[str, Any], pod: Pod) -> None:
        spec = doc.get("spec") or EMPTY
        name = spec.get("priorityClassName")
        if name is not None and not isinstance(name, str):
            raise ManifestError("expected a string", obj=f"Pod {pod.key}", field="spec.priorityClassName", value=name)
        self._unresolved.append((len(self.objects), name or ""))

    @property
    def classes_read(self) -> tuple[PriorityClass, ...]:
        """The PriorityClass objects read (and those given to the constructor)."""
        return tuple(self._classes)

    def finish(self) -> list[KubeObject]:
        """The objects read, in input order, with pod priorities resolved."""
        if self._unresolved:
            classes = PriorityClasses(self._classes)
            for index, class_name in self._unresolved:
                pod = self.objects[index]
                assert isinstance(pod, Pod)
                self.objects[index] = classes.resolve(pod, class_name)
            self._unresolved.clear()
        return self.objects


def objects_from_document(doc: object) -> list[KubeObject]:
    """Every object of a document (see :meth:`ObjectCollector.add`); ``None`` (an empty YAML
    document) holds nothing."""
    collector = ObjectCollector()
    collector.add(doc)
    return collector.finish()
