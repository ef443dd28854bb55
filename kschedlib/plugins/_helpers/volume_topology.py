"""A PersistentVolume's zone and region labels (kube's VolumeZone reading of them).

Shared by VolumeZone's PreFilter and its queueing hint (a volume whose labels changed may help).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr

if TYPE_CHECKING:
    from kschedlib.model.storage import PersistentVolume

__all__ = [
    "BETA_REGION",
    "BETA_ZONE",
    "GA_REGION",
    "GA_ZONE",
    "TOPOLOGY_LABELS",
    "PVTopology",
    "label_zones_to_set",
    "volume_topologies",
]

BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
GA_ZONE: Final = "topology.kubernetes.io/zone"
GA_REGION: Final = "topology.kubernetes.io/region"
TOPOLOGY_LABELS: Final = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
_GA_TWIN: Final = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION, GA_ZONE: GA_ZONE, GA_REGION: GA_REGION}
_GO_SPACE: Final = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
    "\u2028\u2029\u202f\u205f\u3000"


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """The zones of a (possibly multi-zone, ``__``-joined) label value; ``None`` if a part is blank."""
    zones = set()
    for part in value.split("__"):
        zone = part.strip(_GO_SPACE)
        if not zone:
            return None
        zones.add(zone)
    return frozenset(zones)


@final
@attrs.frozen(slots=True, repr=False)
class PVTopology(FieldsRepr):
    """One zone/region label of a bound volume: the key, the node key tried next, the allowed values."""

    key: str
    ga_key: str
    values: frozenset[str]


def volume_topologies(pv: PersistentVolume) -> tuple[PVTopology, ...]:
    """A volume's zone/region labels (a label whose value has a blank part is ignored)."""
    found = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = label_zones_to_set(value)
        if zones is not None:
            found.append(PVTopology(key, _GA_TWIN[key], zones))
    return tuple(found)
