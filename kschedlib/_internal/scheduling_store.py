"""PodGroups, ElasticQuotas and a by-group index of the known pods.

Gang plugins ask "which pods name this PodGroup?" on every cycle of a member;
:class:`PodTable` answers from an index kept in step with every write to the
scheduler's table of pods, instead of a scan of all of them.

The store also plays scheduler-plugins' PodGroup controller: every write of a pod that names a PodGroup
(added, bound, its phase changed, gone) reconciles that group's ``status`` the way the controller would,
counting the group's pods that ended (Succeeded or Failed) too, which the scheduler itself no longer
holds.  A PodGroup is stored as given (a cluster dump holds the status the controller wrote).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import final

from kschedlib.model.objects import Pod
from kschedlib.model.scheduling_crds import ElasticQuota, PodGroup, pod_group_name

__all__ = ["PodTable", "SchedulingStore"]

_Group = tuple[str, str]


@final
class PodTable(dict[str, Pod]):
    """``namespace/name`` -> latest pod, indexing pods by the PodGroup their label names."""

    __slots__ = ("_groups", "on_group_change")

    def __init__(self, pods: Mapping[str, Pod] | None = None) -> None:
        super().__init__()
        self._groups: dict[_Group, dict[str, Pod]] = {}
        self.on_group_change: Callable[[str, str], None] | None = None
        """Called with (namespace, group) after a write of a pod that names a PodGroup."""
        for key, pod in (pods or {}).items():
            self[key] = pod

    def copy(self) -> PodTable:
        """An independent table (the pods are immutable and shared)."""
        other = PodTable()
        dict.update(other, self)
        other._groups = {group: dict(members) for group, members in self._groups.items()}
        return other

    def __setitem__(self, key: str, pod: Pod) -> None:
        old = self.get(key)
        if old is not None and old.labels is pod.labels and not pod_group_name(pod.labels):
            super().__setitem__(key, pod)  # a new version of a pod in no group (a binding): nothing indexed
            return
        self._unindex(key)
        super().__setitem__(key, pod)
        group = pod_group_name(pod.labels)
        if group:
            self._groups.setdefault((pod.namespace, group), {})[key] = pod
            if self.on_group_change is not None:
                self.on_group_change(pod.namespace, group)

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
            if self.on_group_change is not None:
                self.on_group_change(old.namespace, group)

    def group(self, namespace: str, name: str) -> list[Pod]:
        """The pods labelled for PodGroup ``namespace/name``, in the order they were added."""
        return list(self._groups.get((namespace, name), {}).values())


@final
class SchedulingStore:
    """Implements :class:`kschedlib.framework.scheduling_objects.SchedulingObjectLister` over a PodTable."""

    __slots__ = ("ended", "groups", "pods", "quotas")

    def __init__(self, pods: PodTable) -> None:
        self.pods = pods
        self.groups: dict[str, PodGroup] = {}
        self.quotas: dict[str, ElasticQuota] = {}
        self.ended: dict[_Group, dict[str, Pod]] = {}
        """Pods of a group that ended (Succeeded or Failed), until they are deleted: the controller counts them."""
        pods.on_group_change = self._reconcile

    def add(self, obj: object) -> bool:
        """Record (or replace) a PodGroup or ElasticQuota; returns whether ``obj`` was one."""
        if isinstance(obj, PodGroup):
            self.groups[obj.key] = obj  # as written: a dump holds the status the controller wrote
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

    def ended_group_pods(self, namespace: str, name: str) -> Sequence[Pod]:
        return list(self.ended.get((namespace, name), {}).values())

    def update_pod_group(self, group: PodGroup) -> None:
        self.groups[group.key] = group

    def pod_ended(self, pod: Pod) -> None:
        """``pod`` ended (Succeeded or Failed): the scheduler lets it go, the PodGroup controller still counts it."""
        group = pod_group_name(pod.labels)
        if group:
            self.ended.setdefault((pod.namespace, group), {})[pod.key] = pod
            self._reconcile(pod.namespace, group)

    def pod_deleted(self, key: str) -> None:
        """A pod that ended was deleted: no longer counted."""
        for (namespace, group), pods in self.ended.items():
            if pods.pop(key, None) is not None:
                self._reconcile(namespace, group)
                return

    def _reconcile(self, namespace: str, name: str) -> None:
        group = self.groups.get(f"{namespace}/{name}")
        if group is None:
            return
        # imported here: only a cluster with PodGroups needs Coscheduling's bookkeeping
        from kschedlib.plugins.batch._pod_group_manager import reconcile_status

        pods = self.pods.group(namespace, name)
        held = {pod.key for pod in pods}  # a pod ending is still held until the scheduler lets it go
        pods += [pod for key, pod in self.ended.get((namespace, name), {}).items() if key not in held]
        updated = reconcile_status(group, pods)
        if updated != group:
            self.groups[group.key] = updated

    def copy(self, pods: PodTable) -> SchedulingStore:
        other = SchedulingStore(pods)
        other.groups = dict(self.groups)
        other.quotas = dict(self.quotas)
        other.ended = {group: dict(ended) for group, ended in self.ended.items()}
        return other
