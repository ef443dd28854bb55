"""In-tree volume plugins seen as CSI drivers (kube's csi-translation-lib, as v1.30 uses it).

NodeVolumeLimits counts in-tree disks (EBS, GCE PD, Azure disk, Cinder) under
their CSI driver when migration is on for the node, and VolumeBinding checks
a migrated in-tree PersistentVolume's node affinity after rewriting its zone
keys to the driver's topology key.  Only the parts of the translation these
two plugins observe are reproduced: the driver name, the volume handle, the
node affinity and the error texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, cast

from kschedlib.model.labels import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.plugins._helpers.volumes import MIGRATED_PLUGINS_ANNOTATION

if TYPE_CHECKING:
    from kschedlib.model.storage import (
        AWSElasticBlockStoreVolumeSource,
        AzureDiskVolumeSource,
        CinderVolumeSource,
        CSINode,
        GCEPersistentDiskVolumeSource,
        PersistentVolume,
        PersistentVolumeSource,
    )

__all__ = [
    "CSI_DRIVERS",
    "IN_TREE_PLUGINS",
    "MIGRATION_ON",
    "TranslationError",
    "attach_limit_key",
    "inline_handle",
    "migrated_on_node",
    "pv_handle",
    "translated_node_affinity",
]

AWS_EBS: Final = "kubernetes.io/aws-ebs"
GCE_PD: Final = "kubernetes.io/gce-pd"
AZURE_DISK: Final = "kubernetes.io/azure-disk"
CINDER: Final = "kubernetes.io/cinder"

IN_TREE_PLUGINS: Final = {
    "awsElasticBlockStore": AWS_EBS,
    "gcePersistentDisk": GCE_PD,
    "azureDisk": AZURE_DISK,
    "azureFile": "kubernetes.io/azure-file",
    "cinder": CINDER,
    "vsphereVolume": "kubernetes.io/vsphere-volume",
    "portworxVolume": "kubernetes.io/portworx-volume",
    "rbd": "kubernetes.io/rbd",
}
"""Volume source kind -> in-tree plugin name, for every kind csi-translation-lib can migrate."""

CSI_DRIVERS: Final = {
    AWS_EBS: "ebs.csi.aws.com",
    GCE_PD: "pd.csi.storage.gke.io",
    AZURE_DISK: "disk.csi.azure.com",
    "kubernetes.io/azure-file": "file.csi.azure.com",
    CINDER: "cinder.csi.openstack.org",
    "kubernetes.io/vsphere-volume": "csi.vsphere.vmware.com",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
    "kubernetes.io/rbd": "rbd.csi.ceph.com",
}
"""In-tree plugin name -> the CSI driver it migrates to."""

MIGRATION_ON: Final = frozenset({AWS_EBS, GCE_PD, AZURE_DISK, CINDER})
"""Plugins whose CSI migration is on in v1.30 (Portworx and RBD are behind gates that are off)."""

_TOPOLOGY_KEYS: Final = {
    AWS_EBS: "topology.ebs.csi.aws.com/zone",
    GCE_PD: "topology.gke.io/zone",
    CINDER: "topology.cinder.csi.openstack.org/zone",
}
_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
_GA_ZONE: Final = "topology.kubernetes.io/zone"
_GA_REGION: Final = "topology.kubernetes.io/region"
_UNSPECIFIED: Final = "UNSPECIFIED"
_MULTI_ZONE_DELIMITER: Final = "__"
_GO_SPACE: Final = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
    "\u2028\u2029\u202f\u205f\u3000"
_CSI_LIMIT_PREFIX: Final = "attachable-volumes-csi-"
_RESOURCE_NAME_LENGTH_LIMIT: Final = 63


class TranslationError(Exception):
    """A volume csi-translation-lib refuses to translate; the message is kube's."""


def attach_limit_key(driver: str) -> str:
    """kube's ``GetCSIAttachLimitKey``: ``attachable-volumes-csi-<driver>``, shortened with a SHA-1
    when it would reach 63 bytes."""
    raw = driver.encode()
    if len(_CSI_LIMIT_PREFIX) + len(raw) < _RESOURCE_NAME_LENGTH_LIMIT:
        return _CSI_LIMIT_PREFIX + driver
    import hashlib  # here: only a driver name this long needs it, and hashlib is slow to import

    digest = hashlib.sha1(raw, usedforsecurity=False).hexdigest()[:16]
    return _CSI_LIMIT_PREFIX + raw[:23].decode(errors="replace") + digest


def migrated_on_node(csi_node: CSINode | None, plugin: str) -> bool:
    """VolumeBinding's test: migration is on for ``plugin`` and the node's CSINode lists it as migrated."""
    if csi_node is None or plugin not in MIGRATION_ON:
        return False
    listed = csi_node.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return plugin in listed.split(",") if listed else False


# --- volume handles -------------------------------------------------------------------------


def _ebs_volume_id(kubernetes_id: str) -> str:
    """``vol-...`` from ``vol-...`` or ``aws://<zone>/vol-...`` (kube's KubernetesVolumeIDToEBSVolumeID)."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    from urllib.parse import urlsplit  # only for in-tree AWS volumes: urllib.parse and ipaddress cost 0.4 MB

    aws_id = urlsplit(kubernetes_id).path.strip("/")
    if not aws_id.startswith("vol-") or "/" in aws_id:
        raise TranslationError("failed to translate Kubernetes ID to EBS Volume ID "
                               f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_region(zones: Sequence[str]) -> str:
    regions: set[str] = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError("failed to get region from zones: zone in unexpected format, expected: "
                                   f"{{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add(f"{parts[0]}-{parts[1]}")
    if len(regions) != 1:
        listed = " ".join(f"{region}:{{}}" for region in sorted(regions))
        raise TranslationError(f"failed to get region from zones: multiple or no regions gotten from zones, "
                               f"got: map[{listed}]")
    return regions.pop()


def _check_azure_kind(source: AzureDiskVolumeSource) -> None:
    if source.kind.lower() != "managed":
        raise TranslationError(f"kind({source.kind}) is not supported in csi migration")


def inline_handle(source: PersistentVolumeSource) -> str:
    """The CSI volume handle of a migratable inline pod volume (EBS, GCE PD, Azure disk, Cinder)."""
    kind = type(source).__name__  # the source classes are final: a name is a class, and no import per volume
    if kind == "AWSElasticBlockStoreVolumeSource":
        return _ebs_volume_id(cast("AWSElasticBlockStoreVolumeSource", source).volume_id)
    if kind == "GCEPersistentDiskVolumeSource":
        disk = cast("GCEPersistentDiskVolumeSource", source).pd_name
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{disk}"
    if kind == "AzureDiskVolumeSource":
        azure = cast("AzureDiskVolumeSource", source)
        _check_azure_kind(azure)
        return azure.disk_uri
    if kind == "CinderVolumeSource":
        return cast("CinderVolumeSource", source).volume_id
    raise TranslationError(f"could not find in-tree plugin translation logic for {source.source_kind}")


def pv_handle(pv: PersistentVolume) -> str:
    """The CSI volume handle of a migratable in-tree PersistentVolume.

    A GCE PD's handle names the zone (or region) of the PV's zone label.
    """
    source = pv.source
    if type(source).__name__ == "GCEPersistentDiskVolumeSource":
        source = cast("GCEPersistentDiskVolumeSource", source)
        zones_label = pv.labels.get(_BETA_ZONE, "") or pv.labels.get(_GA_ZONE, "")
        zones = zones_label.split(_MULTI_ZONE_DELIMITER)
        if len(zones) == 1 and zones[0]:
            return f"projects/{_UNSPECIFIED}/zones/{zones[0]}/disks/{source.pd_name}"
        if len(zones) > 1:
            return f"projects/{_UNSPECIFIED}/regions/{_gce_region(zones)}/disks/{source.pd_name}"
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{source.pd_name}"
    if source is None:
        raise TranslationError(f"could not find in-tree plugin translation logic for {pv.name}")
    return inline_handle(source)


# --- node affinity --------------------------------------------------------------------------


def _terms(selector: NodeSelector | None) -> tuple[NodeSelectorTerm, ...]:
    return selector.terms if selector is not None else ()


def _has_key(selector: NodeSelector | None, key: str) -> bool:
    return any(req.key == key for term in _terms(selector) for req in term.match_expressions)


def _values(selector: NodeSelector | None, key: str) -> list[str]:
    found = {value for term in _terms(selector) for req in term.match_expressions if req.key == key
             for value in req.values}
    return sorted(found)


def _renamed(selector: NodeSelector, old: str, new: str) -> NodeSelector:
    return NodeSelector(tuple(
        NodeSelectorTerm(
            tuple(NodeSelectorRequirement(new, r.operator, r.values) if r.key == old else r
                  for r in term.match_expressions),
            term.match_fields,
        )
        for term in selector.terms
    ))


def _with_zones(selector: NodeSelector | None, key: str, zones: Sequence[str]) -> NodeSelector | None:
    """``key In zones`` ANDed into every term (one new term when there is none); no valid zone: unchanged."""
    cleaned = sorted({zone.strip(_GO_SPACE) for zone in zones} - {""})
    if not cleaned:
        return selector
    requirement = NodeSelectorRequirement(key, "In", tuple(cleaned))
    terms = _terms(selector) or (NodeSelectorTerm(),)
    return NodeSelector(tuple(
        NodeSelectorTerm((*term.match_expressions, requirement), term.match_fields) for term in terms
    ))


def _zone_and_region_keys(pv: PersistentVolume) -> tuple[str, str]:
    affinity = pv.node_affinity
    if _has_key(affinity, _GA_ZONE):
        return _GA_ZONE, _GA_REGION
    if _has_key(affinity, _BETA_ZONE):
        return _BETA_ZONE, _BETA_REGION
    if _GA_ZONE in pv.labels:
        return _GA_ZONE, _GA_REGION
    if _BETA_ZONE in pv.labels:
        return _BETA_ZONE, _BETA_REGION
    return _GA_ZONE, _GA_REGION


def _translated_topology(pv: PersistentVolume, csi_key: str) -> NodeSelector | None:
    zone_key, region_key = _zone_and_region_keys(pv)
    selector = pv.node_affinity
    if _values(selector, zone_key):
        assert selector is not None
        selector = _renamed(selector, zone_key, csi_key)
    elif zone_key in pv.labels:
        selector = _with_zones(selector, csi_key, pv.labels[zone_key].split(_MULTI_ZONE_DELIMITER))
    if region_key == _BETA_REGION and _values(selector, _BETA_REGION):
        assert selector is not None
        selector = _renamed(selector, _BETA_REGION, _GA_REGION)
    return selector


def translated_node_affinity(pv: PersistentVolume) -> NodeSelector | None:
    """The node affinity of the PV once translated to CSI (EBS, GCE PD and Cinder rename their zone
    keys to the driver's; Azure disk keeps its own); ``TranslationError`` as kube fails."""
    source = pv.source
    plugin = IN_TREE_PLUGINS.get(source.source_kind, "") if source is not None else ""
    if plugin in (AWS_EBS, GCE_PD, AZURE_DISK):
        pv_handle(pv)
    csi_key = _TOPOLOGY_KEYS.get(plugin)
    return _translated_topology(pv, csi_key) if csi_key is not None else pv.node_affinity
