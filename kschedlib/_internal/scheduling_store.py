"""PodGroups, ElasticQuotas and a by-group index of the known pods.

Gang plugins ask "which pods name this PodGroup?" on every cycle of a member;
:class:`PodTable` answers from an index kept in step with every write to the
scheduler's table of pods, instead of a scan of all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import final

from kschedlib.model.objects import Pod
from kschedlib.model.scheduling_crds import ElasticQuota, PodGroup, pod_group_name

__all__ = ["PodTable", "SchedulingStore"]

_Group = tuple[str, str]


@final
class PodTable(dict[str, Pod]):
    """``namespace/name`` -> latest pod, indexing pods by the PodGroup their label names."""

    __slots__ = ("_groups",)

    def __init__(self, pods: Mapping[str, Pod] | None = None) -> None:
        super().__init__()
        self._groups: dict[_Group, dict[str, Pod]] = {}
        for key, pod in (pods or {}).items():
            self[key] = pod

    def copy(self) -> PodTable:
        """An independent table (the pods are immutable and shared)."""
        other = PodTable()
        dict.update(other, self)
        other._groups = {group: dict(members) for group, members in self._groups.items()}
        return other

    def __setitem__(self, key: str, pod: Pod) -> None:
        self._unindex(key)
        super().__setitem__(key, pod)
        group = pod_group_name(pod.labels)
        if group:
            self._groups.setdefault((pod.namespace, group), {})[key] = pod

    def __delitem__(self, key: str) -> None:
        self._unindex(key)
        super().__delitem__(key)

    def pop(self, key: str, *default: Pod | None) -> Pod | None:  # type: ignore[override]
        self._unindex(key)
        return super().pop(key, *default)

    def _unindex(self, key: str) -> None:
        old = self.get(key)
        if old is None:
            return
        group = pod_group_name(old.labels)
        if group:
            members = self._groups.get((old.namespace, group))
            if members is not None:
                members.pop(key, None)

    def group(self, namespace: str, name: str) -> list[Pod]:
        """The pods labelled for PodGroup ``namespace/name``, in the order they were added."""
        return list(self._groups.get((namespace, name), {}).values())


@final
class SchedulingStore:
    """Implements :class:`kschedlib.framework.scheduling_objects.SchedulingObjectLister` over a PodTable."""

    __slots__ = ("groups", "pods", "quotas")

    def __init__(self, pods: PodTable) -> None:
        self.pods = pods
        self.groups: dict[str, PodGroup] = {}
        self.quotas: dict[str, ElasticQuota] = {}

    def add(self, obj: object) -> bool:
        """Record (or replace) a PodGroup or ElasticQuota; returns whether ``obj`` was one."""
        if isinstance(obj, PodGroup):
            self.groups[obj.key] = obj
        elif isinstance(obj, ElasticQuota):
            self.quotas[obj.key] = obj
        else:
            return False
        return True

    def add_all(self, objects: Iterable[object]) -> None:
        for obj in objects:
            self.add(obj)

    def get_pod_group(self, namespace: str, name: str) -> PodGroup | None:
        return self.groups.get(f"{namespace}/{name}")

    def pod_groups(self) -> Sequence[PodGroup]:
        return list(self.groups.values())

    def elastic_quotas(self) -> Sequence[ElasticQuota]:
        return list(self.quotas.values())

    def group_pods(self, namespace: str, name: str) -> Sequence[Pod]:
        return self.pods.group(namespace, name)

    def update_pod_group(self, group: PodGroup) -> None:
        self.groups[group.key] = group

    def copy(self, pods: PodTable) -> SchedulingStore:
        other = SchedulingStore(pods)
        other.groups = dict(self.groups)
        other.quotas = dict(self.quotas)
        return other
