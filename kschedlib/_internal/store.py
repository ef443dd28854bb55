"""The cluster objects besides nodes and pod placement that plugins read."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import final

from kschedlib.model.objects import Namespace, OwnerSelector, Pod, PodDisruptionBudget

__all__ = ["ObjectStore"]


@final
class ObjectStore:
    """Namespaces, PodDisruptionBudgets, owners' selectors and the latest version of every pod."""

    __slots__ = ("namespaces", "owners", "pdbs", "pods")

    def __init__(self) -> None:
        self.namespaces: dict[str, Namespace] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.owners: dict[str, OwnerSelector] = {}
        self.pods: dict[str, Pod] = {}

    def add(self, objects: Iterable[object]) -> None:
        """Record namespaces, PDBs and owners (pods are recorded by the scheduler as it places them)."""
        for obj in objects:
            if isinstance(obj, Namespace):
                self.namespaces[obj.name] = obj
            elif isinstance(obj, PodDisruptionBudget):
                self.pdbs[f"{obj.namespace}/{obj.name}"] = obj
            elif isinstance(obj, OwnerSelector):
                self.owners[f"{obj.kind}/{obj.namespace}/{obj.name}"] = obj

    def owner_selectors(self, namespace: str) -> Sequence[OwnerSelector]:
        return [owner for owner in self.owners.values() if owner.namespace == namespace]

    def pod_disruption_budgets(self) -> Sequence[PodDisruptionBudget]:
        return list(self.pdbs.values())

    def copy(self) -> ObjectStore:
        other = ObjectStore()
        other.namespaces = dict(self.namespaces)
        other.pdbs = dict(self.pdbs)
        other.owners = dict(self.owners)
        other.pods = dict(self.pods)
        return other
