"""NodeVolumeLimits: a node attaches at most so many volumes of each CSI driver (kube-scheduler v1.30).

A volume is known by ``<driver>/<handle>``: a claim bound to a CSI volume
gives its driver and handle, an unbound claim the provisioner of its class and
a handle unique to the claim, and in-tree disks (EBS, GCE PD, Azure disk,
Cinder) count under the CSI driver they migrate to once the node has a
CSINode object.  The limit per driver comes from the node's allocatable
``attachable-volumes-csi-<driver>``, overridden by the CSINode's
``allocatable.count``; from v1.32 (``csi_limits_from_csinode``) only the
CSINode's count limits a driver.  Volumes already attached to the node (used
by one of its pods) cost nothing; the pod fails when the new ones would
overflow a limit.

From v1.32 (``volume_attachments_counted``) the node's VolumeAttachments of CSI volumes count as
attached too, once each, unless a pod on the node already uses the volume: a volume still detaching
from a deleted pod keeps its slot.  They never make a new volume free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, cast, final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import FilterPlugin, PreFilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.framework.storage import StorageLister
from kschedlib.model.objects import Pod, Volume
from kschedlib.plugins._helpers import volume_hints as _volume_hints
from kschedlib.plugins._helpers.csi_translation import (
    CSI_DRIVERS,
    IN_TREE_PLUGINS,
    MIGRATION_ON,
    TranslationError,
    attach_limit_key,
    inline_handle,
    pv_handle,
)
from kschedlib.plugins._helpers.volumes import claim_class, claim_of, inline_source, not_owner_error, pvc_not_found

if TYPE_CHECKING:
    from kschedlib.model.storage import CSINode, CSIVolumeSource, PersistentVolumeClaim

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NodeVolumeLimits", "VolumeLookupError"]

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
_RANDOM_VOLUME_ID_PREFIX: Final = "kschedlib-unbound-claim-7d1f0b4c2e9a"
_EXCEEDED: Final = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


class VolumeLookupError(Exception):
    """The pod's volumes cannot be counted; ``unresolvable`` for a missing claim, else an Error."""

    def __init__(self, message: str, *, unresolvable: bool = False) -> None:
        super().__init__(message)
        self.unresolvable = unresolvable


def _migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """kube's ``isCSIMigrationOn`` for these plugins: on for EBS, GCE PD, Azure disk and Cinder once the
    node has a CSINode (its migrated-plugins annotation is not consulted for them)."""
    return csi_node is not None and plugin in MIGRATION_ON


def lookup_claim(
    storage: StorageLister, pod: Pod, claim: tuple[str, bool], *, new_pod: bool
) -> PersistentVolumeClaim | None:
    """The claim ``(name, ephemeral)`` of ``pod``, or ``None`` when a pod already on the node lacks it.

    For the pod being scheduled a missing claim is unresolvable; a nameless claim, or an ephemeral
    claim the pod does not own, is an error either way (kube's volume-limit plugins agree on this).
    """
    name, ephemeral = claim
    if not name:
        raise VolumeLookupError("PersistentVolumeClaim had no name")
    pvc = storage.get_pvc(pod.namespace, name)
    if pvc is None:
        if new_pod:
            raise VolumeLookupError(f"looking up PVC {pod.namespace}/{name}: {pvc_not_found(name)}",
                                    unresolvable=True)
        return None
    if ephemeral:
        problem = not_owner_error(pod, pvc)
        if problem is not None:
            raise VolumeLookupError(problem)
    return pvc


def _claim_driver(storage: StorageLister, csi_node: CSINode | None, pvc: PersistentVolumeClaim) -> tuple[str, str]:
    """``(driver, handle)`` of a claim; ``("", "")`` when it does not count against CSI limits."""
    pv = storage.get_pv(pvc.volume_name) if pvc.volume_name else None
    if pv is not None:
        source = pv.source
        if type(source).__name__ == "CSIVolumeSource":  # by name: no import per claim per node
            csi = cast("CSIVolumeSource", source)
            return csi.driver, csi.volume_handle
        plugin = IN_TREE_PLUGINS.get(source.source_kind, "") if source is not None else ""
        if not plugin or not _migration_on(csi_node, plugin):
            return "", ""
        try:
            return CSI_DRIVERS[plugin], pv_handle(pv)
        except TranslationError:
            return "", ""
    class_name = claim_class(pvc)
    storage_class = storage.get_storage_class(class_name) if class_name else None
    if storage_class is None:
        return "", ""
    handle = f"{_RANDOM_VOLUME_ID_PREFIX}-{pvc.namespace}/{pvc.name}"
    provisioner = storage_class.provisioner
    if provisioner in CSI_DRIVERS:
        return (CSI_DRIVERS[provisioner], handle) if _migration_on(csi_node, provisioner) else ("", "")
    return provisioner, handle


def _inline_volume(volume: Volume, csi_node: CSINode | None, result: dict[str, str]) -> None:
    plugin = IN_TREE_PLUGINS.get(volume.source_kind)
    if plugin is None or not _migration_on(csi_node, plugin):
        return
    source = inline_source(volume)
    try:
        if source is None:
            raise TranslationError(f"volume {volume.name} has a malformed {volume.source_kind} source")
        handle = inline_handle(source)
    except TranslationError as exc:
        raise VolumeLookupError(f"converting volume({volume.name}) from inline to csi: {exc}") from None
    driver = CSI_DRIVERS[plugin]
    result[f"{driver}/{handle}"] = attach_limit_key(driver)


def attachable_volumes(
    pod: Pod, storage: StorageLister, csi_node: CSINode | None, *, new_pod: bool, result: dict[str, str]
) -> None:
    """Add ``<driver>/<handle>`` -> limit key for each of ``pod``'s CSI-counted volumes to ``result``.

    For the pod being scheduled a missing claim is a :class:`VolumeLookupError`
    (unresolvable); for pods already on the node it is skipped.
    """
    for volume in pod.volumes:
        claim = claim_of(pod, volume)
        if claim is None:
            _inline_volume(volume, csi_node, result)
            continue
        pvc = lookup_claim(storage, pod, claim, new_pod=new_pod)
        if pvc is None:
            continue
        driver, handle = _claim_driver(storage, csi_node, pvc)
        if driver and handle:
            result[f"{driver}/{handle}"] = attach_limit_key(driver)


def volume_limits(allocatable_scalars: Mapping[str, int], csi_node: CSINode | None) -> dict[str, int]:
    """Limit per key: allocatable ``attachable-volumes-*`` entries, overridden by the CSINode's counts."""
    limits = {name: value for name, value in allocatable_scalars.items() if name.startswith(ATTACHABLE_VOLUMES_PREFIX)}
    if csi_node is not None:
        for driver in csi_node.drivers:
            if driver.allocatable_count is not None:
                limits[attach_limit_key(driver.name)] = driver.allocatable_count
    return limits


def exceeds_limits(new: Mapping[str, str], attached: Mapping[str, str], limits: Mapping[str, int],
                   also_attached: Mapping[str, str] | None = None) -> bool:
    """Whether the volumes not yet attached push a limited key over its limit.

    ``also_attached`` (VolumeAttachments no pod on the node uses) count against the limits but, unlike
    ``attached``, do not make the pod's own volumes free.
    """
    attached_count: dict[str, int] = {}
    for key in attached.values():
        attached_count[key] = attached_count.get(key, 0) + 1
    for unique, key in (also_attached or {}).items():
        if unique not in attached:
            attached_count[key] = attached_count.get(key, 0) + 1
    new_count: dict[str, int] = {}
    for unique, key in new.items():
        if unique not in attached:
            new_count[key] = new_count.get(key, 0) + 1
    for key, count in new_count.items():
        limit = limits.get(key)
        if limit is not None and attached_count.get(key, 0) + count > limit:
            return True
    return False


def attached_by_volume_attachments(storage: StorageLister, node_name: str) -> dict[str, str]:
    """``<attacher>/<handle>`` -> limit key of the node's VolumeAttachments of CSI PersistentVolumes
    (attachments without an attacher or a PersistentVolume, or of a missing or non-CSI volume, are skipped)."""
    out: dict[str, str] = {}
    for attachment in storage.volume_attachments(node_name):
        if not attachment.attacher or attachment.persistent_volume_name is None:
            continue
        pv = storage.get_pv(attachment.persistent_volume_name)
        if pv is None or type(pv.source).__name__ != "CSIVolumeSource":
            continue
        handle = cast("CSIVolumeSource", pv.source).volume_handle
        out[f"{attachment.attacher}/{handle}"] = attach_limit_key(attachment.attacher)
    return out


def _has_counted_volume(volume: Volume) -> bool:
    return volume.claim_name is not None or volume.ephemeral or volume.source_kind in IN_TREE_PLUGINS


@final
class NodeVolumeLimits(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    """Rejects nodes where the pod's new CSI volumes exceed a driver's attach limit (Unschedulable)."""

    name: ClassVar[str] = "NodeVolumeLimits"
    __slots__ = ("_count_attachments", "_csi_node_only", "_handle")

    def __init__(self, args: None, handle: Handle) -> None:
        """No args; claims, volumes, classes and CSINodes come from ``handle.storage``."""
        self._handle = handle
        self._count_attachments = handle.switches.volume_attachments_counted
        self._csi_node_only = handle.switches.csi_limits_from_csinode

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Every event with hints off (v1.30); v1.36's registrations and hints with them on."""
        return _volume_hints.watched(self._handle, _volume_hints.limits_events)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Skip pods without a claim, an ephemeral volume or an inline volume of a migratable kind."""
        volumes = pod.volumes
        if volumes and any(_has_counted_volume(v) for v in volumes):
            return Status.SUCCESS
        return Status.SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Count the pod's new volumes and the node's attached ones per limit key."""
        if not pod.volumes:
            return Status.SUCCESS
        storage = self._handle.storage
        csi_node = storage.get_csi_node(node_info.name)
        new: dict[str, str] = {}
        try:
            attachable_volumes(pod, storage, csi_node, new_pod=True, result=new)
        except VolumeLookupError as exc:
            return Status.unresolvable(str(exc)) if exc.unresolvable else Status.from_error(str(exc))
        if not new:
            return Status.SUCCESS
        limits = volume_limits({} if self._csi_node_only else node_info.allocatable.scalar, csi_node)
        if not limits:
            return Status.SUCCESS
        attached: dict[str, str] = {}
        try:
            for existing in node_info.pods:
                if existing.pod.volumes:
                    attachable_volumes(existing.pod, storage, csi_node, new_pod=False, result=attached)
        except VolumeLookupError as exc:
            return Status.from_error(str(exc))
        also = attached_by_volume_attachments(storage, node_info.name) if self._count_attachments else None
        return _EXCEEDED if exceeds_limits(new, attached, limits, also) else Status.SUCCESS
