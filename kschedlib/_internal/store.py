"""The cluster objects besides nodes and pod placement that plugins read."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final, final

from kschedlib._internal.scheduling_store import PodTable, SchedulingStore
from kschedlib.dra._store import DraStore
from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.events import (
    CSI_DRIVER,
    CSI_NODE,
    CSI_STORAGE_CAPACITY,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    STORAGE_CLASS,
    VOLUME_ATTACHMENT,
)
from kschedlib.model._kinds import is_storage_object
from kschedlib.model.objects import Namespace, OwnerSelector, Pod, PodDisruptionBudget
from kschedlib.model.scheduling_crds import ElasticQuota, PodGroup

if TYPE_CHECKING:
    from kschedlib.model.storage import (
        CSIDriver,
        CSINode,
        CSIStorageCapacity,
        PersistentVolume,
        PersistentVolumeClaim,
        StorageClass,
        VolumeAttachment,
    )

__all__ = ["ObjectStore", "StorageStore"]

_BETA_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"


def _pv_class(pv: PersistentVolume) -> str:
    """The class a PersistentVolume is listed under: the beta annotation first, as kube's PV cache indexes it."""
    annotated = pv.annotations.get(_BETA_CLASS_ANNOTATION)
    return annotated if annotated is not None else pv.storage_class_name


@final
class StorageStore:
    """PersistentVolumes, claims, StorageClasses and CSI objects; implements
    :class:`kschedlib.framework.storage.StorageLister`.

    Volumes are also indexed by class, because VolumeBinding lists the volumes
    of a claim's class for every pod with a delayed-binding claim.
    """

    __slots__ = ("_by_class", "_sorted", "capacities", "classes", "csi_drivers", "csi_nodes", "pvcs", "pvs",
                 "volume_attachments_by_node")

    def __init__(self) -> None:
        self.pvs: dict[str, PersistentVolume] = {}
        self.pvcs: dict[str, PersistentVolumeClaim] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.capacities: dict[str, CSIStorageCapacity] = {}
        self._by_class: dict[str, dict[str, PersistentVolume]] = {}
        self.volume_attachments_by_node: dict[str, dict[str, VolumeAttachment]] = {}
        """node name -> VolumeAttachment name -> the attachment (an attachment is on one node)."""
        self._sorted: dict[str, tuple[PersistentVolume, ...]] = {}

    def replaced(self, obj: object) -> tuple[str, object | None] | None:
        """``(event resource, the stored object obj replaces or None)`` for a storage object, else ``None``."""
        if not is_storage_object(obj):
            return None
        from kschedlib.model import storage as model  # a storage object exists: its module is loaded

        if isinstance(obj, model.PersistentVolume):
            return PERSISTENT_VOLUME, self.pvs.get(obj.name)
        if isinstance(obj, model.PersistentVolumeClaim):
            return PERSISTENT_VOLUME_CLAIM, self.pvcs.get(obj.key)
        if isinstance(obj, model.StorageClass):
            return STORAGE_CLASS, self.classes.get(obj.name)
        if isinstance(obj, model.CSINode):
            return CSI_NODE, self.csi_nodes.get(obj.name)
        if isinstance(obj, model.CSIDriver):
            return CSI_DRIVER, self.csi_drivers.get(obj.name)
        if isinstance(obj, model.CSIStorageCapacity):
            return CSI_STORAGE_CAPACITY, self.capacities.get(f"{obj.namespace}/{obj.name}")
        if isinstance(obj, model.VolumeAttachment):
            found = (attachments.get(obj.name) for attachments in self.volume_attachments_by_node.values())
            return VOLUME_ATTACHMENT, next((a for a in found if a is not None), None)
        return None

    def add(self, obj: object) -> bool:
        """Record (or replace) ``obj`` if it is a storage object; returns whether it was one."""
        if not is_storage_object(obj):
            return False
        from kschedlib.model import storage as model  # a storage object exists: its module is loaded

        if isinstance(obj, model.PersistentVolume):
            self.put_pv(obj)
        elif isinstance(obj, model.PersistentVolumeClaim):
            self.pvcs[obj.key] = obj
        elif isinstance(obj, model.StorageClass):
            self.classes[obj.name] = obj
        elif isinstance(obj, model.CSINode):
            self.csi_nodes[obj.name] = obj
        elif isinstance(obj, model.CSIDriver):
            self.csi_drivers[obj.name] = obj
        elif isinstance(obj, model.CSIStorageCapacity):
            self.capacities[f"{obj.namespace}/{obj.name}"] = obj
        elif isinstance(obj, model.VolumeAttachment):
            for attachments in self.volume_attachments_by_node.values():
                attachments.pop(obj.name, None)
            self.volume_attachments_by_node.setdefault(obj.node_name, {})[obj.name] = obj
        else:
            return False
        return True

    def remove(self, obj: object) -> object | None:
        """Forget the stored storage object of ``obj``'s kind and name; returns it (``None``: unknown)."""
        replaced = self.replaced(obj)
        old = replaced[1] if replaced is not None else None
        if old is None:
            return None
        from kschedlib.model import storage as model  # a storage object exists: its module is loaded

        if isinstance(old, model.PersistentVolume):
            self.remove_pv(old.name)
        elif isinstance(old, model.VolumeAttachment):
            self.volume_attachments_by_node.get(old.node_name, {}).pop(old.name, None)
        else:
            tables: dict[type, dict[str, Any]] = {
                model.PersistentVolumeClaim: self.pvcs, model.StorageClass: self.classes, model.CSINode: self.csi_nodes,
                model.CSIDriver: self.csi_drivers, model.CSIStorageCapacity: self.capacities,
            }
            table = tables[type(old)]
            table.pop(next(key for key, value in table.items() if value is old))
        return old

    def put_pv(self, pv: PersistentVolume) -> None:
        """Record a PersistentVolume, keeping the class index right."""
        old = self.pvs.get(pv.name)
        if old is not None:
            old_class = _pv_class(old)
            self._by_class.get(old_class, {}).pop(pv.name, None)
            self._sorted.pop(old_class, None)
        self.pvs[pv.name] = pv
        new_class = _pv_class(pv)
        self._by_class.setdefault(new_class, {})[pv.name] = pv
        self._sorted.pop(new_class, None)

    def remove_pv(self, name: str) -> None:
        """Forget a PersistentVolume (nothing happens if it is unknown)."""
        old = self.pvs.pop(name, None)
        if old is not None:
            old_class = _pv_class(old)
            self._by_class.get(old_class, {}).pop(name, None)
            self._sorted.pop(old_class, None)

    # --- StorageLister ------------------------------------------------------------------------

    def get_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def get_pv(self, name: str) -> PersistentVolume | None:
        return self.pvs.get(name)

    def get_storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def get_csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def get_csi_driver(self, name: str) -> CSIDriver | None:
        return self.csi_drivers.get(name)

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        return list(self.capacities.values())

    def volume_attachments(self, node_name: str) -> Sequence[VolumeAttachment]:
        return tuple(self.volume_attachments_by_node.get(node_name, {}).values())

    def pvs_of_class(self, class_name: str) -> Sequence[PersistentVolume]:
        listed = self._sorted.get(class_name)
        if listed is None:
            members = self._by_class.get(class_name, {})
            listed = self._sorted[class_name] = tuple(members[name] for name in sorted(members))
        return listed

    # --- writing ------------------------------------------------------------------------------

    def write_volume_bindings(
        self, volumes: Sequence[PersistentVolume], claims: Sequence[PersistentVolumeClaim]
    ) -> None:
        """Store new versions of volumes and claims (VolumeBinding's simulated binding)."""
        for pv in volumes:
            self.put_pv(pv)
        for pvc in claims:
            self.pvcs[pvc.key] = pvc

    def copy(self) -> StorageStore:
        other = StorageStore()
        other.pvs = dict(self.pvs)
        other._by_class = {name: dict(volumes) for name, volumes in self._by_class.items()}
        other._sorted = dict(self._sorted)  # immutable tuples, dropped when their class changes
        other.pvcs = dict(self.pvcs)
        other.classes = dict(self.classes)
        other.csi_nodes = dict(self.csi_nodes)
        other.csi_drivers = dict(self.csi_drivers)
        other.capacities = dict(self.capacities)
        other.volume_attachments_by_node = {node: dict(attachments)
                                            for node, attachments in self.volume_attachments_by_node.items()}
        return other


@final
class ObjectStore:
    """Namespaces, PodDisruptionBudgets, owners' selectors, the latest version of every pod and
    the storage objects (:attr:`storage`), PodGroups and ElasticQuotas (:attr:`scheduling`).

    Pods are indexed by key (:attr:`pods`) and by uid: the scheduler's cache, nominator and waiting
    pods know a pod by its uid, so two known pods must never share one.  Add and remove pods with
    :meth:`put_pod` / :meth:`pop_pod` to keep the two in step (writing a new version under the same
    key and uid into :attr:`pods` is fine).
    """

    __slots__ = ("_uid_keys", "api", "dra", "namespaces", "owners", "pdbs", "pods", "scheduling", "storage")

    def __init__(self) -> None:
        self.api: ClusterApi | None = None
        """The API server the plugins write to (a live scheduler); ``None`` in a simulation (never copied)."""
        self.namespaces: dict[str, Namespace] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.owners: dict[str, OwnerSelector] = {}
        self.pods = PodTable()
        self._uid_keys: dict[str, str] = {}
        self.storage = StorageStore()
        self.scheduling = SchedulingStore(self.pods)
        self.dra = DraStore()

    def key_of_uid(self, uid: str) -> str | None:
        """The key of the known pod with this uid, if any."""
        return self._uid_keys.get(uid)

    def put_pod(self, pod: Pod) -> None:
        """Record a pod (new, or a new version of a known key with the same uid)."""
        self.pods[pod.key] = pod
        self._uid_keys[pod.uid] = pod.key

    def pop_pod(self, key: str) -> Pod | None:
        """Forget the pod with this key; returns it, or ``None`` if it was unknown."""
        pod = self.pods.pop(key, None)
        if pod is not None and self._uid_keys.get(pod.uid) == key:
            del self._uid_keys[pod.uid]
        return pod

    def add(self, objects: Iterable[object]) -> None:
        """Record namespaces, PDBs, owners and storage objects (pods are recorded by the scheduler as it
        places them)."""
        for obj in objects:
            if isinstance(obj, Namespace):
                self.namespaces[obj.name] = obj
            elif isinstance(obj, PodDisruptionBudget):
                self.pdbs[f"{obj.namespace}/{obj.name}"] = obj
            elif isinstance(obj, OwnerSelector):
                self.owners[f"{obj.kind}/{obj.namespace}/{obj.name}"] = obj
            elif not self.scheduling.add(obj) and not self.dra.add(obj):
                self.storage.add(obj)

    def remove(self, obj: object) -> object | None:
        """Forget the stored object of ``obj``'s kind and name (not pods); returns it (``None``: unknown)."""
        if isinstance(obj, Namespace):
            return self.namespaces.pop(obj.name, None)
        if isinstance(obj, PodDisruptionBudget):
            return self.pdbs.pop(f"{obj.namespace}/{obj.name}", None)
        if isinstance(obj, OwnerSelector):
            return self.owners.pop(f"{obj.kind}/{obj.namespace}/{obj.name}", None)
        if isinstance(obj, PodGroup):
            return self.scheduling.groups.pop(obj.key, None)
        if isinstance(obj, ElasticQuota):
            return self.scheduling.quotas.pop(obj.key, None)
        removed = self.dra.remove(obj)
        return removed if removed is not None else self.storage.remove(obj)

    def owner_selectors(self, namespace: str) -> Sequence[OwnerSelector]:
        return [owner for owner in self.owners.values() if owner.namespace == namespace]

    def pod_disruption_budgets(self) -> Sequence[PodDisruptionBudget]:
        return list(self.pdbs.values())

    def copy(self) -> ObjectStore:
        other = object.__new__(ObjectStore)  # every slot is set below: no empty stores built to be dropped
        other.namespaces = dict(self.namespaces)
        other.pdbs = dict(self.pdbs)
        other.owners = dict(self.owners)
        other.pods = pods = self.pods.copy()
        other._uid_keys = dict(self._uid_keys)
        other.storage = self.storage.copy()
        other.scheduling = self.scheduling.copy(pods)
        other.dra = self.dra.copy()
        return other
