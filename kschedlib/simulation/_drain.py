"""Taking nodes away: cluster-autoscaler's drain simulation, and what a node deletion does to its pods.

A drain moves a node's pods as cluster-autoscaler's drain simulation would: DaemonSet pods and
mirror (static) pods are not moved (they go with the node); PodDisruptionBudgets are honoured (a node
whose drain would exceed a budget is not drained, and the violation is reported); pods with local
storage, without a controller or marked not safe to evict are flagged.  Moved pods become pending
under their own name, standing in for the replacement their controller would create.

A node deletion without a drain is what the pod garbage collector does: every pod on the node is
deleted; those a controller (other than a DaemonSet) owns come back as pending pods.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ManifestError
from kschedlib.model.objects import Pod, PodDisruptionBudget
from kschedlib.scheduler import Scheduler

__all__ = ["MIRROR_ANNOTATION", "NodeDrain", "delete_node", "drain_node", "pod_flags", "pod_is_left"]

MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"
SAFE_TO_EVICT: Final = "cluster-autoscaler.kubernetes.io/safe-to-evict"
_LOCAL_VOLUMES: Final = frozenset({"emptyDir", "hostPath"})


def _controller_kind(pod: Pod) -> str | None:
    for owner in pod.owner_references:
        if owner.controller:
            return owner.kind
    return None


def pod_is_left(pod: Pod) -> str | None:
    """Why a drain does not move ``pod`` (``DaemonSet pod``, ``mirror pod``), or ``None``."""
    if MIRROR_ANNOTATION in pod.annotations:
        return "mirror pod"
    if _controller_kind(pod) == "DaemonSet":
        return "DaemonSet pod"
    return None


def pod_flags(pod: Pod, pdbs: Sequence[PodDisruptionBudget]) -> list[str]:
    """What cluster-autoscaler would hold against moving ``pod``."""
    flags = []
    if any(volume.source_kind in _LOCAL_VOLUMES for volume in pod.volumes):
        flags.append("local storage")
    if _controller_kind(pod) is None:
        flags.append("no controller")
    if pod.annotations.get(SAFE_TO_EVICT) == "false":
        flags.append("not safe to evict")
    if pod.namespace == "kube-system" and not _budgets_of(pod, pdbs):
        flags.append("kube-system pod without a PodDisruptionBudget")
    return flags


def _budgets_of(pod: Pod, pdbs: Sequence[PodDisruptionBudget]) -> list[PodDisruptionBudget]:
    """The budgets covering ``pod`` (policy/v1: an empty selector covers every pod of the namespace)."""
    return [pdb for pdb in pdbs if pdb.namespace == pod.namespace and pdb.selector is not None
            and pdb.selector.matches(pod.labels)]


@final
@attrs.frozen(slots=True, repr=False)
class NodeDrain(FieldsRepr):
    """What draining one node did (or, when ``blocked``, would have done)."""

    node: str
    moved: tuple[str, ...] = ()
    """Pods taken off the node and queued again, in the node's order."""
    left: Mapping[str, str] = attrs.field(factory=dict)
    """Pods not moved (they go with the node) -> why."""
    flags: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    """Moved pods cluster-autoscaler would hold against draining -> what."""
    pdb_violations: tuple[Mapping[str, Any], ...] = ()
    """``{pod, pdb, disruptions_allowed}`` for each move a budget does not allow."""
    blocked: str | None = None
    """Why the node was not drained (a budget would be exceeded), else ``None``."""

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "blocked": self.blocked, "moved": list(self.moved), "left": dict(self.left),
                "flags": {pod: list(flags) for pod, flags in self.flags.items()},
                "pdb_violations": [dict(v) for v in self.pdb_violations]}


def _pods_on(scheduler: Scheduler, name: str) -> list[Pod]:
    if not scheduler.has_node(name):
        raise ManifestError("no such node", obj=f"Node {name}")
    info = scheduler.snapshot().find(name)
    assert info is not None
    pods = []
    for pod_info in info.pods:
        latest = scheduler.get_pod(pod_info.pod.key)
        pods.append(latest if latest is not None else pod_info.pod)
    return pods


def _pending(pod: Pod) -> Pod:
    """The pod as its replacement would arrive: not bound, not nominated, not started."""
    return attrs.evolve(pod, node_name="", nominated_node_name="", phase="Pending", conditions=(), start_time=None)


def _take_away(scheduler: Scheduler, name: str, pods: Sequence[Pod], back: Sequence[Pod]) -> None:
    for pod in pods:
        scheduler.remove_pod(pod.key)
    scheduler.remove_node(name)
    for pod in back:
        scheduler.add_pod(_pending(pod))


def drain_node(scheduler: Scheduler, name: str, pdbs: Sequence[PodDisruptionBudget],
               budgets: MutableMapping[str, int], *, respect_pdbs: bool = True) -> NodeDrain:
    """Drain node ``name`` (see the module docstring).

    ``budgets`` (PDB ``namespace/name`` -> disruptions still allowed) is shared by the drains of one
    plan and updated by every drain that happens.  With ``respect_pdbs=False`` the node is drained
    anyway and the violations are still reported.
    """
    pods = _pods_on(scheduler, name)
    left = {pod.key: reason for pod in pods if (reason := pod_is_left(pod)) is not None}
    moving = [pod for pod in pods if pod.key not in left]
    remaining = dict(budgets)
    violations = []
    for pod in moving:
        for pdb in _budgets_of(pod, pdbs):
            key = f"{pdb.namespace}/{pdb.name}"
            allowed = remaining.setdefault(key, pdb.disruptions_allowed)
            if allowed < 1:
                violations.append({"pod": pod.key, "pdb": key, "disruptions_allowed": allowed})
            remaining[key] = allowed - 1
    flags = {pod.key: tuple(found) for pod in moving if (found := pod_flags(pod, pdbs))}
    moved = tuple(pod.key for pod in moving)
    if violations and respect_pdbs:
        first = violations[0]
        reason = f"not enough pod disruption budget to move {first['pod']} ({first['pdb']})"
        return NodeDrain(name, (), left, flags, tuple(violations), blocked=reason)
    budgets.update(remaining)
    _take_away(scheduler, name, pods, moving)
    return NodeDrain(name, moved, left, flags, tuple(violations))


def delete_node(scheduler: Scheduler, name: str) -> tuple[list[str], list[str]]:
    """Delete node ``name`` and its pods; returns (pods queued again, pods deleted for good)."""
    pods = _pods_on(scheduler, name)
    back = [pod for pod in pods if _controller_kind(pod) not in (None, "DaemonSet")
            and MIRROR_ANNOTATION not in pod.annotations]
    _take_away(scheduler, name, pods, back)
    again = {pod.key for pod in back}
    return [pod.key for pod in back], [pod.key for pod in pods if pod.key not in again]
