"""kube-scheduler's node order: zones interleaved round-robin, nodes of a zone in arrival order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, final

__all__ = ["NodeTree", "zone_key"]

_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
_ZONE: Final = "topology.kubernetes.io/zone"
_BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
_REGION: Final = "topology.kubernetes.io/region"


def zone_key(labels: Mapping[str, str]) -> str:
    """``region:\\x00:zone`` from the (beta, else GA) topology labels; "" when both are missing."""
    zone = labels.get(_BETA_ZONE, labels.get(_ZONE, ""))
    region = labels.get(_BETA_REGION, labels.get(_REGION, ""))
    if not zone and not region:
        return ""
    return f"{region}:\x00:{zone}"


@final
class NodeTree:
    """Zones in order of first appearance, each a list of node names in insertion order."""

    __slots__ = ("_zone_of", "_zones")

    def __init__(self) -> None:
        self._zones: dict[str, list[str]] = {}
        self._zone_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._zone_of)

    def __contains__(self, name: object) -> bool:
        return name in self._zone_of

    def add(self, name: str, labels: Mapping[str, str]) -> bool:
        """Add a node (or move it when its zone changed); returns whether the order changed."""
        zone = zone_key(labels)
        current = self._zone_of.get(name)
        if current == zone:
            return False
        if current is not None:
            self.remove(name)
        self._zones.setdefault(zone, []).append(name)
        self._zone_of[name] = zone
        return True

    def remove(self, name: str) -> None:
        """Remove a node; an emptied zone disappears (re-adding appends it at the end)."""
        zone = self._zone_of.pop(name, None)
        if zone is None:
            return
        members = self._zones[zone]
        members.remove(name)
        if not members:
            del self._zones[zone]

    def copy(self) -> NodeTree:
        other = NodeTree()
        other._zones = {zone: list(members) for zone, members in self._zones.items()}
        other._zone_of = dict(self._zone_of)
        return other

    def ordered(self) -> list[str]:
        """All node names, one per zone in turn."""
        zones = list(self._zones.values())
        out: list[str] = []
        depth = 0
        while len(out) < len(self._zone_of):
            for members in zones:
                if depth < len(members):
                    out.append(members[depth])
            depth += 1
        return out
