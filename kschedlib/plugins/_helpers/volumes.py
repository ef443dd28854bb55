"""What the volume plugins share: claim lookup rules, kube's annotation names and error texts.

The rules are those of Kubernetes' storage helpers (component-helpers
``storage/volume`` and ``storage/ephemeral``) as kube-scheduler v1.30 uses
them: a claim's class is the beta annotation before ``spec.storageClassName``;
a claim is fully bound once it names a volume *and* carries the
``bind-completed`` annotation; a generic ephemeral volume's claim is
``<pod>-<volume>`` and must be controlled by the pod.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

from kschedlib.errors import ManifestError
from kschedlib.model.labels import NodeSelector
from kschedlib.model.objects import Pod, Volume

if TYPE_CHECKING:
    from kschedlib.model.storage import PersistentVolume, PersistentVolumeClaim, PersistentVolumeSource

__all__ = [
    "BETA_STORAGE_CLASS_ANNOTATION",
    "BIND_COMPLETED_ANNOTATION",
    "BOUND_BY_CONTROLLER_ANNOTATION",
    "MIGRATED_PLUGINS_ANNOTATION",
    "NO_PROVISIONER",
    "READ_WRITE_ONCE_POD",
    "SELECTED_NODE_ANNOTATION",
    "WAIT_FOR_FIRST_CONSUMER",
    "claim_class",
    "claim_of",
    "ephemeral_claim_name",
    "inline_source",
    "is_fully_bound",
    "not_owner_error",
    "pv_class",
    "pv_node_affinity_matches",
    "pvc_not_found",
    "pv_not_found",
    "storage_class_not_found",
]

BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
BIND_COMPLETED_ANNOTATION: Final = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER_ANNOTATION: Final = "pv.kubernetes.io/bound-by-controller"
SELECTED_NODE_ANNOTATION: Final = "volume.kubernetes.io/selected-node"
MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
NO_PROVISIONER: Final = "kubernetes.io/no-provisioner"
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"


def pvc_not_found(name: str) -> str:
    """The API's NotFound text for a claim."""
    return f'persistentvolumeclaim "{name}" not found'


def pv_not_found(name: str) -> str:
    """The API's NotFound text for a PersistentVolume."""
    return f'persistentvolume "{name}" not found'


def storage_class_not_found(name: str) -> str:
    """The API's NotFound text for a StorageClass."""
    return f'storageclass.storage.k8s.io "{name}" not found'


def claim_class(pvc: PersistentVolumeClaim) -> str:
    """The claim's class: the beta annotation (even ``""``), else ``spec.storageClassName``, else ``""``."""
    annotated = pvc.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    if annotated is not None:
        return annotated
    return pvc.storage_class_name or ""


def pv_class(pv: PersistentVolume) -> str:
    """The volume's class: the beta annotation, else ``spec.storageClassName``."""
    annotated = pv.annotations.get(BETA_STORAGE_CLASS_ANNOTATION)
    return annotated if annotated is not None else pv.storage_class_name


def is_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    """A volume is named and the PV controller finished binding (annotation present, any value)."""
    return bool(pvc.volume_name) and BIND_COMPLETED_ANNOTATION in pvc.annotations


def ephemeral_claim_name(pod: Pod, volume: Volume) -> str:
    """The claim a generic ephemeral volume uses: ``<pod name>-<volume name>``."""
    return f"{pod.name}-{volume.name}"


def claim_of(pod: Pod, volume: Volume) -> tuple[str, bool] | None:
    """``(claim name, is ephemeral)`` of a claim-backed volume; ``None`` for other volumes."""
    if volume.claim_name is not None:
        return volume.claim_name, False
    if volume.ephemeral:
        return ephemeral_claim_name(pod, volume), True
    return None


def not_owner_error(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """kube's ``VolumeIsForPod``: the error text when the pod does not control ``pvc``, else ``None``."""
    if pvc.namespace == pod.namespace:
        controller = next((ref for ref in pvc.owner_references if ref.controller), None)
        if controller is not None and controller.uid == pod.uid:
            return None
    return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} "
            "(pod is not owner)")


@functools.cache
def _source_reader() -> Callable[..., PersistentVolumeSource]:
    """The storage model's volume-source reader, imported by the first inline disk (then kept: no import per call)."""
    from kschedlib.model._convert_storage import volume_source_from_dict

    return volume_source_from_dict


def inline_source(volume: Volume) -> PersistentVolumeSource | None:
    """A pod volume's source as a typed source (``None`` when its fields are malformed).

    Pod volumes keep their source as read; the plugins only ask for the disk
    kinds whose fields they compare, so the cost (and the storage model's import) is paid by pods that have them.
    """
    try:
        return _source_reader()(volume.source_kind, volume.source, obj=f"volume {volume.name}")
    except ManifestError:
        return None


def pv_node_affinity_matches(selector: NodeSelector | None, labels: Mapping[str, str]) -> bool:
    """kube's ``CheckNodeAffinity``: no required selector matches; otherwise a term must match the labels.

    kube evaluates it against a node object carrying only the labels, so a
    ``matchFields`` term on the node name never matches an ``In``.
    """
    return selector is None or selector.matches("", labels)
