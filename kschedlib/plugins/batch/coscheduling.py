"""Coscheduling: all-or-nothing placement of a PodGroup's pods (gang scheduling).

scheduler-plugins' ``Coscheduling`` at d250c4b9 (not in the default profile).  A pod
joins a gang with the label ``scheduling.x-k8s.io/pod-group: NAME`` naming a
:class:`~kschedlib.model.PodGroup` of its namespace; a pod whose PodGroup does not
exist is scheduled like any other pod.

* **QueueSort**: priority, then the PodGroup's creation time (a pod outside a group:
  its first attempt; a group without ``creationTimestamp`` sorts first, as Go's zero
  time does), then ``namespace/name`` — a gang's pods queue together.
* **PreFilter** (``UnschedulableAndUnresolvable``, so no preemption): the group backed
  off recently; fewer than ``minMember`` pods exist; the cluster's free resources
  (the group's own pods counted as free) cannot cover ``minResources``.
* **PostFilter**: unless the group has (nearly: 90%) reached ``minMember``, reject its
  waiting pods, back the group off for ``podGroupBackoffSeconds`` and say so.
* **Permit**: wait (``scheduleTimeoutSeconds`` or ``permitWaitingTimeSeconds``) until
  ``minMember`` pods are assigned, then allow every waiting member.
* **Unreserve**: a member failing after Reserve (a Permit timeout included) rejects
  every waiting member, so the whole gang releases what it held.

The PodGroup's ``status`` is scheduler-plugins' PodGroup controller's job; the scheduler's object store
plays it (every member pod's change reconciles its group's phase and counts).

* **Permit** of a gang's first member also moves its siblings back to activeQ (PodsToActivate),
  except within a second of PostFilter rejecting the group's waiting pods (beyond scheduler-plugins, which
  can retry such a gang in a tight loop when ``podGroupBackoffSeconds`` is 0).

The ``resource gap`` message is Go's ``%v`` of the quantities left over (:mod:`._go_quantity`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import POD, ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import (
    PermitPlugin,
    PostFilterPlugin,
    PreFilterPlugin,
    QueueSortPlugin,
    ReservePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.plugin_state import KeepsState
from kschedlib.framework.pods_to_activate import request_activation
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.results import PostFilterResult, Wait
from kschedlib.framework.scheduling_objects import SchedulingObjectLister
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from kschedlib.model.scheduling_crds import POD_GROUP_LABEL, PodGroup
from kschedlib.plugins.batch._pod_group_manager import (
    DEFAULT_WAIT_SECONDS,
    ExpiringSet,
    assigned_members,
    cluster_resource_gap,
    format_gap,
    group_full_name,
    min_resources_needed,
    near_quorum,
    reconcile_status,
)

__all__ = ["Coscheduling", "CoschedulingArgs", "NAME", "POD_GROUP_GVK", "decode_args", "pod_group_statuses"]

NAME: Final = "Coscheduling"
POD_GROUP_GVK: Final = "podgroups.v1alpha1.scheduling.x-k8s.io"
REJECTED_IN_POST_FILTER: Final = "optimistic rejection in PostFilter"
REJECTED_IN_UNRESERVE: Final = "rejection in Unreserve"
NO_POD_GROUP: Final = "can not find pod group"
POD_GROUP_NOT_FOUND: Final = "PodGroup not found"
_ZERO_TIME: Final = float("-inf")
"""A PodGroup without ``creationTimestamp``: Go's zero ``time.Time``, earlier than every real time."""
ACTIVATION_PAUSE_SECONDS: Final = 1.0
"""After PostFilter rejects a group's waiting pods, Permit re-activates its siblings only this much later (kube's first
pod backoff): activation bypasses backoff, so without a pause a gang that cannot fit would be retried
in a tight loop when ``podGroupBackoffSeconds`` is 0."""


def pod_group_statuses(objects: SchedulingObjectLister) -> list[PodGroup]:
    """Every PodGroup with the status the PodGroup controller would give it for its pods now (those that
    ended included)."""
    return [reconcile_status(group, [*objects.group_pods(group.namespace, group.name),
                                     *objects.ended_group_pods(group.namespace, group.name)])
            for group in objects.pod_groups()]


@final
@attrs.frozen(slots=True, repr=False)
class CoschedulingArgs(FieldsRepr):
    """``permitWaitingTimeSeconds`` (default 60) and ``podGroupBackoffSeconds`` (default 0: no backoff)."""

    permit_waiting_time_seconds: int = 60
    pod_group_backoff_seconds: int = 0


def _seconds(raw: Mapping[str, Any], key: str, default: int) -> int:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError("must be an integer number of seconds", field=key, value=value)
    if value < 0:
        raise ConfigError("must not be negative", field=key, value=value)
    return value


def decode_args(raw: Mapping[str, Any] | None) -> CoschedulingArgs:
    """``CoschedulingArgs`` from ``pluginConfig[].args`` (JSON names); ``ConfigError`` naming a bad field."""
    if raw is None:
        return CoschedulingArgs()
    if not isinstance(raw, Mapping):
        raise ConfigError("must be an object", field="args", value=raw)
    return CoschedulingArgs(_seconds(raw, "permitWaitingTimeSeconds", 60),
                            _seconds(raw, "podGroupBackoffSeconds", 0))


@final
class Coscheduling(KeepsState, QueueSortPlugin, PreFilterPlugin, PostFilterPlugin, PermitPlugin, ReservePlugin,
                   EnqueueExtensions):
    """Gang scheduling of PodGroups (see the module docstring)."""

    name: ClassVar[str] = NAME
    __slots__ = ("_args", "_backed_off", "_handle", "_permitted", "_quiet")

    def __init__(self, args: CoschedulingArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else CoschedulingArgs()
        if self._args.pod_group_backoff_seconds < 0 or self._args.permit_waiting_time_seconds < 0:
            raise ConfigError("must not be negative", field="args", value=self._args)
        self._handle = handle
        self._permitted = ExpiringSet()
        self._backed_off = ExpiringSet()
        self._quiet = ExpiringSet()
        """Groups whose siblings Permit must not re-activate yet: PostFilter just rejected them."""

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A new pod (maybe the missing member) or a PodGroup added or changed."""
        return (ClusterEventWithHint(ClusterEvent(POD, ActionType.ADD)),
                ClusterEventWithHint(ClusterEvent(POD_GROUP_GVK, ActionType.ADD | ActionType.UPDATE)))

    # --- lookups ------------------------------------------------------------------------------

    def pod_group(self, pod: Pod) -> PodGroup | None:
        """The PodGroup the pod's label names, if it exists."""
        name = pod.labels.get(POD_GROUP_LABEL)
        if not name:
            return None
        return self._handle.scheduling_objects.get_pod_group(pod.namespace, name)

    def _creation_time(self, info: QueuedPodInfo) -> float:
        """The PodGroup's creation time (Go's zero time, before any other, when it has none); a pod whose
        group does not exist: its first attempt."""
        group = self.pod_group(info.pod)
        if group is not None:
            return group.creation_timestamp if group.creation_timestamp is not None else _ZERO_TIME
        first = info.initial_attempt_timestamp
        return first if first is not None else info.timestamp

    def wait_seconds(self, group: PodGroup | None) -> float:
        """``scheduleTimeoutSeconds`` of the group, else the plugin's wait, else 60 s."""
        if group is not None and group.schedule_timeout_seconds is not None:
            return float(group.schedule_timeout_seconds)
        return float(self._args.permit_waiting_time_seconds or DEFAULT_WAIT_SECONDS)

    # --- KeepsState: what a what-if cycle must leave as it was ---------------------------------

    def save_state(self) -> object:
        """The permitted, backed-off and quiet groups (PreFilter and PostFilter change them)."""
        return self._permitted.copy(), self._backed_off.copy(), self._quiet.copy()

    def restore_state(self, saved: object) -> None:
        assert isinstance(saved, tuple)
        self._permitted, self._backed_off, self._quiet = saved

    # --- QueueSort ----------------------------------------------------------------------------

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod.effective_priority, b.pod.effective_priority
        if pa != pb:
            return pa > pb
        ta, tb = self._creation_time(a), self._creation_time(b)
        if ta == tb:
            return a.pod.key < b.pod.key
        return ta < tb

    # --- PreFilter and PostFilter -------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        group = self.pod_group(pod)
        if group is None:
            return Status.success()
        full_name = group.key
        now = self._handle.clock.now()
        if self._backed_off.holds(full_name, now):
            return Status.unresolvable(f"podGroup {full_name} failed recently")
        members = self._handle.scheduling_objects.group_pods(pod.namespace, group.name)
        if len(members) < group.min_member:
            return Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {len(members)}, minMember of group: {group.min_member}")
        if group.min_resources is None or self._permitted.holds(full_name, now):
            return Status.success()
        gap = cluster_resource_gap(self._handle.snapshot.node_infos, min_resources_needed(group), full_name)
        if gap:
            return Status.unresolvable(f"resource gap: {format_gap(gap)}")
        self._permitted.add(full_name, now + self._args.permit_waiting_time_seconds)
        return Status.success()

    def post_filter(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> PostFilterResult:
        group = self.pod_group(pod)
        if group is None:
            return PostFilterResult(Status.unschedulable(NO_POD_GROUP))
        assigned = assigned_members(self._handle.snapshot, pod.namespace, group.name)
        if assigned >= group.min_member or near_quorum(group.min_member, assigned):
            return PostFilterResult(Status.unschedulable())
        if self._reject_waiting(group, REJECTED_IN_POST_FILTER):
            self._quiet.add(group.key, self._handle.clock.now() + ACTIVATION_PAUSE_SECONDS)
        backoff = self._args.pod_group_backoff_seconds
        if backoff > 0:
            members = self._handle.scheduling_objects.group_pods(pod.namespace, group.name)
            if len(members) >= group.min_member:
                self._backed_off.add(group.key, self._handle.clock.now() + backoff)
        self._permitted.discard(group.key)
        return PostFilterResult(Status.unschedulable(
            f"PodGroup {group.key} gets rejected due to Pod {pod.name} is unschedulable even after PostFilter"))

    # --- Permit, Reserve, Unreserve, PostBind -------------------------------------------------

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        if not group_full_name(pod):
            return Status.success()
        group = self.pod_group(pod)
        if group is None:
            return Status.unschedulable(POD_GROUP_NOT_FOUND)
        assigned = assigned_members(self._handle.snapshot, group.namespace, group.name)
        if assigned + 1 < group.min_member:
            if assigned == 0 and not self._quiet.holds(group.key, self._handle.clock.now()):
                # the gang's first member to get this far brings its siblings back to activeQ
                siblings = self._handle.scheduling_objects.group_pods(group.namespace, group.name)
                request_activation(state, (p.key for p in siblings if p.uid != pod.uid))
            return Wait(self.wait_seconds(group))
        for waiting in self._handle.iterate_waiting_pods():
            if group_full_name(waiting.pod) == group.key:
                waiting.allow(self.name)
        return Status.success()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        group = self.pod_group(pod)
        if group is None:
            return
        self._reject_waiting(group, REJECTED_IN_UNRESERVE)
        self._permitted.discard(group.key)

    def _reject_waiting(self, group: PodGroup, message: str) -> int:
        """Reject the group's pods waiting in Permit; how many there were."""
        count = 0
        for waiting in self._handle.iterate_waiting_pods():
            other = waiting.pod
            if other.namespace == group.namespace and other.labels.get(POD_GROUP_LABEL) == group.name:
                waiting.reject(self.name, message)
                count += 1
        return count

