"""Gang scheduling with kschedlib: a Coscheduling plugin binds all of a group's pods, or none of them.

A *gang* (pod group) is a set of pods that only make progress together — the
workers of a distributed training job, say.  Binding some of them and leaving
the rest pending wastes the resources of the bound ones, and two half-placed
gangs can deadlock each other.  The ``Coscheduling`` plugin below follows the
Kubernetes scheduler-plugins project of the same name:

- **pod groups**: a pod belongs to the group named by its ``pod-group`` label;
  the group's ``minMember`` comes from the plugin's ``podGroups`` argument or,
  failing that, from the pod's ``min-member`` annotation;
- **PreEnqueue** records every member that enters the active queue (its group's
  first arrival orders the queue);
- **QueueSort** keeps a group's pods adjacent: pods are ordered by their group's
  priority and first arrival, then by group name; pods without a group keep
  PrioritySort's order (priority, then queue time);
- **PreFilter** rejects, as ``UnschedulableAndUnresolvable`` (no preemption), the
  pods of a group that cannot reach ``minMember``: fewer than ``minMember`` pods
  known, too little free CPU/memory left in the cluster for the members still
  to place, or a group that timed out less than ``podGroupBackoffSeconds`` ago;
- **Reserve / Unreserve** track the group's assumed members; Unreserve (any
  failure of a member after Reserve, a Permit timeout included) rejects the
  group's other waiting pods, so everything the gang held is released at once;
- **Permit** returns ``Wait(permitWaitingTimeSeconds)`` until ``minMember`` pods
  of the group are assumed or bound, then allows every waiting sibling through
  the handle and lets the last member through.

Running this file schedules two competing gangs on a two-node cluster with a
fake clock and prints what happens; ``gang_scheduling.out`` holds its output.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final, final

import attrs

from kschedlib import ConfigError, FakeClock, Scheduler, ScheduleResult, parse_quantity
from kschedlib.framework import (
    CycleState,
    Handle,
    PermitPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    QueuedPodInfo,
    QueueSortPlugin,
    Registry,
    ReservePlugin,
    Status,
    Wait,
)
from kschedlib.framework.events import NODE, POD, ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions
from kschedlib.model import Container, Node, Pod, Resources, pod_requests
from kschedlib.plugins import in_tree_registry
from kschedlib.scheduler import SchedulerListener

__all__ = [
    "MIN_MEMBER_ANNOTATION",
    "POD_GROUP_LABEL",
    "Coscheduling",
    "CoschedulingArgs",
    "PodGroup",
    "config",
    "decode_args",
    "drive",
    "gang",
    "main",
    "make_node",
    "new_scheduler",
    "registry",
]

POD_GROUP_LABEL: Final = "pod-group"
"""The label naming a pod's group (in the pod's namespace)."""
MIN_MEMBER_ANNOTATION: Final = "min-member"
"""The annotation giving a group's minMember when ``podGroups`` does not declare the group."""


# --- arguments ------------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True)
class PodGroup:
    """A declared pod group: ``namespace/name`` needs at least ``min_member`` pods running together."""

    namespace: str
    name: str
    min_member: int


@final
@attrs.frozen(slots=True)
class CoschedulingArgs:
    """``pluginConfig`` args: ``permitWaitingTimeSeconds``, ``podGroupBackoffSeconds``, ``podGroups``."""

    permit_waiting_time_seconds: float = 60.0
    pod_group_backoff_seconds: float = 0.0
    pod_groups: tuple[PodGroup, ...] = ()


def _seconds(raw: Mapping[str, Any], key: str, default: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError("must be a non-negative number of seconds", field=key, value=value)
    return float(value)


def decode_args(raw: Mapping[str, Any] | None) -> CoschedulingArgs:
    """``CoschedulingArgs`` from the profile's ``pluginConfig`` (``None``: defaults); ``ConfigError`` if invalid."""
    if raw is None:
        return CoschedulingArgs()
    groups: list[PodGroup] = []
    entries = raw.get("podGroups") or []
    if not isinstance(entries, list):
        raise ConfigError("must be a list", field="podGroups", value=entries)
    for index, entry in enumerate(entries):
        where = f"podGroups[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ConfigError("must be an object with a name", field=where, value=entry)
        minimum = entry.get("minMember")
        if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1:
            raise ConfigError("must be a positive integer", field=f"{where}.minMember", value=minimum)
        groups.append(PodGroup(str(entry.get("namespace", "default")), entry["name"], minimum))
    return CoschedulingArgs(
        _seconds(raw, "permitWaitingTimeSeconds", 60.0),
        _seconds(raw, "podGroupBackoffSeconds", 0.0),
        tuple(groups),
    )


# --- the plugin -----------------------------------------------------------------------------------


def group_of(pod: Pod) -> str | None:
    """``namespace/group`` of a member pod, or ``None`` for a pod outside any group."""
    name = pod.labels.get(POD_GROUP_LABEL)
    return f"{pod.namespace}/{name}" if name else None


@final
@attrs.frozen(slots=True)
class _Arrival:
    """When a group first entered the active queue, and with which priority."""

    priority: int
    time: float
    order: int


SortKey = tuple[int, float, int, str, float, int]


@final
class Coscheduling(QueueSortPlugin, PreEnqueuePlugin, PreFilterPlugin, ReservePlugin, PermitPlugin,
                   EnqueueExtensions):
    """All-or-nothing scheduling of pod groups (see the module docstring)."""

    name: ClassVar[str] = "Coscheduling"

    def __init__(self, args: CoschedulingArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else CoschedulingArgs()
        self._handle = handle
        self._declared = {f"{g.namespace}/{g.name}": g.min_member for g in self._args.pod_groups}
        self._arrivals: dict[str, _Arrival] = {}
        self._order = itertools.count()
        self._members: dict[str, set[str]] = {}
        """group -> keys of the pending members seen by PreEnqueue."""
        self._assumed: dict[str, set[str]] = {}
        """group -> uids of the members reserved (assumed) and not un-reserved."""
        self._denied_until: dict[str, float] = {}

    # --- which events can help a rejected member -----------------------------------------------

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Freed resources (a pod deleted, a node added or grown) or a pod added can let a group through."""
        return (
            ClusterEventWithHint(ClusterEvent(POD, ActionType.ADD | ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(NODE, ActionType.ADD | ActionType.UPDATE)),
        )

    # --- group bookkeeping -------------------------------------------------------------------

    def min_member(self, pod: Pod) -> int | None:
        """The group's minMember: declared in ``podGroups``, else the pod's annotation."""
        group = group_of(pod)
        if group is None:
            return None
        if group in self._declared:
            return self._declared[group]
        raw = pod.annotations.get(MIN_MEMBER_ANNOTATION, "")
        return int(raw) if raw.isdigit() and int(raw) > 0 else None

    def _arrival(self, group: str, pod: Pod) -> _Arrival:
        arrival = self._arrivals.get(group)
        if arrival is None:
            arrival = _Arrival(pod.effective_priority, self._handle.clock.now(), next(self._order))
            self._arrivals[group] = arrival
        return arrival

    def _placed(self, group: str) -> dict[str, Pod]:
        """Members the cycle's snapshot holds on a node (bound, or assumed and maybe waiting), by key."""
        placed: dict[str, Pod] = {}
        for node_info in self._handle.snapshot:
            for pod_info in node_info.pods:
                if group_of(pod_info.pod) == group:
                    placed[pod_info.pod.key] = pod_info.pod
        return placed

    def _pending(self, group: str, pod: Pod, placed: Mapping[str, Pod]) -> dict[str, Pod]:
        """Members that still exist, are not placed yet and are not bound elsewhere (``pod`` included)."""
        pending: dict[str, Pod] = {pod.key: pod}
        keys = self._members.setdefault(group, set())
        for key in sorted(keys):
            if key in placed or key == pod.key:
                continue
            namespace, name = key.split("/", 1)
            current = self._handle.get_pod(namespace, name)
            if current is None or group_of(current) != group:
                keys.discard(key)  # deleted, or moved to another group
            elif not current.node_name:
                pending[key] = current
        return pending

    # --- QueueSort and PreEnqueue ------------------------------------------------------------

    def _sort_key(self, info: QueuedPodInfo) -> SortKey:
        pod = info.pod
        group = group_of(pod)
        if group is None:  # PrioritySort: priority, then queue time (arrival order breaks ties)
            return (-pod.effective_priority, info.timestamp, info.sequence, "", info.timestamp, info.sequence)
        arrival = self._arrival(group, pod)
        return (-arrival.priority, arrival.time, arrival.order, group, info.timestamp, info.sequence)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return self._sort_key(a) < self._sort_key(b)

    def pre_enqueue(self, pod: Pod) -> Status:
        group = group_of(pod)
        if group is not None:
            self._members.setdefault(group, set()).add(pod.key)
            self._arrival(group, pod)
        return Status.success()

    # --- PreFilter ---------------------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        group = group_of(pod)
        if group is None:
            return Status.success()
        minimum = self.min_member(pod)
        if minimum is None:
            return Status.unresolvable(f"pod group {group} has no minMember (podGroups or {MIN_MEMBER_ANNOTATION})")
        now = self._handle.clock.now()
        denied_until = self._denied_until.get(group)
        if denied_until is not None and now < denied_until:
            return Status.unresolvable(f"pod group {group} failed recently, retrying after t={denied_until:g}s")
        placed = self._placed(group)
        pending = self._pending(group, pod, placed)
        if len(placed) + len(pending) < minimum:
            return Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, "
                f"current pods number: {len(placed) + len(pending)}, minMember of group: {minimum}")
        needed = minimum - len(placed)
        if needed <= 0:
            return Status.success()
        members = [pod, *(p for key, p in sorted(pending.items()) if key != pod.key)][:needed]
        demand = Resources()
        for member in members:
            demand = demand.add(pod_requests(member))
        free_cpu = free_memory = 0
        for node_info in self._handle.snapshot:
            free_cpu += max(0, node_info.allocatable.milli_cpu - node_info.requested.milli_cpu)
            free_memory += max(0, node_info.allocatable.memory - node_info.requested.memory)
        if demand.milli_cpu > free_cpu or demand.memory > free_memory:
            return Status.unresolvable(
                f"pod group {group} needs {needed} more member(s) with {demand.milli_cpu}m CPU, "
                f"the cluster has {free_cpu}m CPU free")
        return Status.success()

    # --- Reserve, Unreserve, Permit ----------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        group = group_of(pod)
        if group is not None:
            self._assumed.setdefault(group, set()).add(pod.uid)
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """A member failed after Reserve: release the whole gang (its waiting siblings are rejected)."""
        group = group_of(pod)
        if group is None:
            return
        self._assumed.get(group, set()).discard(pod.uid)
        for waiting in self._handle.iterate_waiting_pods():
            if waiting.pod.uid != pod.uid and group_of(waiting.pod) == group:
                waiting.reject(self.name, f"rejection in Unreserve: {pod.key} of pod group {group} failed")
        if self._args.pod_group_backoff_seconds > 0:
            self._denied_until[group] = self._handle.clock.now() + self._args.pod_group_backoff_seconds

    def assumed_members(self, group: str) -> int:
        """How many members of ``group`` are reserved and not yet un-reserved (bound ones included)."""
        return len(self._assumed.get(group, ()))

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        group = group_of(pod)
        minimum = self.min_member(pod)
        if group is None or minimum is None:
            return Status.success()
        placed = {p.uid for p in self._placed(group).values()}
        assumed = self._assumed.setdefault(group, set())
        assumed &= placed | {pod.uid}  # forget members that were bound and are gone since
        if len(placed | assumed) < minimum:
            return Wait(self._args.permit_waiting_time_seconds)
        for waiting in self._handle.iterate_waiting_pods():
            if group_of(waiting.pod) == group:
                waiting.allow(self.name)
        return Status.success()


def registry() -> Registry:
    """The in-tree plugins plus Coscheduling."""
    extra = Registry()
    extra.register(Coscheduling.name, Coscheduling, args=decode_args)
    return in_tree_registry().merge(extra)


def config(args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The default profile with Coscheduling everywhere it applies and PrioritySort replaced."""
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": Coscheduling.name}],
                                   "disabled": [{"name": "PrioritySort"}]}},
    }
    if args is not None:
        profile["pluginConfig"] = [{"name": Coscheduling.name, "args": dict(args)}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}


def new_scheduler(clock: FakeClock, *, args: Mapping[str, Any] | None = None,
                  listeners: Sequence[SchedulerListener] = ()) -> Scheduler:
    """A scheduler running Coscheduling on ``clock``."""
    return Scheduler(config(args), seed=0, clock=clock, registry=registry(), listeners=listeners)


# --- a small cluster ------------------------------------------------------------------------------


def make_node(name: str, cpu: str = "4", *, labels: Mapping[str, str] | None = None) -> Node:
    """A node with ``cpu`` cores, 16Gi of memory and room for 110 pods."""
    allocatable = {"cpu": parse_quantity(cpu), "memory": parse_quantity("16Gi"), "pods": parse_quantity("110")}
    return Node(name, labels={"kubernetes.io/hostname": name, **(labels or {})},
                allocatable=allocatable, capacity=allocatable)


def gang(group: str, size: int, cpu: str, *, min_member: int | None = None,
         node_selector: Mapping[str, str] | None = None, namespace: str = "default") -> list[Pod]:
    """``size`` pods ``<group>-<i>`` requesting ``cpu`` each; ``min_member`` (default ``size``) as annotation."""
    requests = {"cpu": parse_quantity(cpu), "memory": parse_quantity("1Gi")}
    annotations = {MIN_MEMBER_ANNOTATION: str(min_member if min_member is not None else size)}
    return [Pod(f"{group}-{i}", namespace=namespace, labels={POD_GROUP_LABEL: group}, annotations=annotations,
                containers=(Container("worker", requests=requests),),
                node_selector=dict(node_selector) if node_selector is not None else None)
            for i in range(size)]


def drive(scheduler: Scheduler, clock: FakeClock, *, until: float) -> list[ScheduleResult]:
    """Schedule until idle, then jump the clock to each wake-up (backoff, Permit timeout) up to ``until``."""
    results = scheduler.run_until_idle()
    while (wakeup := scheduler.next_wakeup()) is not None and wakeup <= until:
        clock.set(max(wakeup, clock.now()))
        results.extend(scheduler.tick())
        results.extend(scheduler.run_until_idle())
    return results


# --- the narrated run -----------------------------------------------------------------------------


@final
class _Narrator:
    """A listener printing each decision with the clock time."""

    def __init__(self, clock: FakeClock) -> None:
        self._clock = clock

    def _say(self, verb: str, text: str) -> None:
        print(f"  t={self._clock.now():5.1f}s  {verb:<8} {text}")

    def on_bound(self, result: ScheduleResult) -> None:
        self._say("bound", f"{result.pod.key} on {result.node_name}")

    def on_failed(self, result: ScheduleResult) -> None:
        self._say("failed", f"{result.pod.key}: {result.message or result.status.message()}")

    def on_waiting(self, result: ScheduleResult) -> None:
        self._say("waiting", f"{result.pod.key} on {result.node_name} (Permit)")

    def on_preempting(self, result: ScheduleResult) -> None:
        self._say("preempts", f"{result.pod.key} on {result.nominated_node_name}: evict {list(result.victims)}")


def _summary(scheduler: Scheduler, title: str, clock: FakeClock) -> None:
    print(f"-- {title} (t={clock.now():g}s)")
    bound = scheduler.bound_pods()
    dump = scheduler.cache_dump()
    assumed = dump["assumed"]
    assert isinstance(assumed, list)
    waiting = set(scheduler.waiting_pods())
    placed = [f"{key}@{node}" for key, node in sorted(bound.items()) if key not in assumed]
    print(f"   bound:   {', '.join(placed) or '-'}")
    print(f"   waiting: {', '.join(sorted(waiting)) or '-'}")
    print(f"   assumed: {', '.join(sorted(str(a) for a in assumed)) or '-'}")
    pending = scheduler.pending()
    print(f"   pending: {', '.join(f'{key} ({where})' for key, (where, _) in sorted(pending.items())) or '-'}")
    snapshot = scheduler.snapshot()
    usage = [f"{info.name} {info.requested.milli_cpu}m/{info.allocatable.milli_cpu}m" for info in snapshot]
    print(f"   cpu:     {', '.join(usage)}")


def _add(scheduler: Scheduler, pods: Iterable[Pod]) -> None:
    for pod in pods:
        scheduler.add_pod(pod)


def _interleave(*gangs: Sequence[Pod]) -> list[Pod]:
    return [pod for members in itertools.zip_longest(*gangs) for pod in members if pod is not None]


def main() -> None:
    clock = FakeClock()
    scheduler = new_scheduler(clock, args={"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 30},
                              listeners=[_Narrator(clock)])
    for name in ("n1", "n2"):
        scheduler.add_node(make_node(name, "4"))

    print("== 1. two gangs of 3 x 2 CPU compete for 8 CPU; their pods arrive interleaved")
    alpha, beta = gang("alpha", 3, "2"), gang("beta", 3, "2")
    _add(scheduler, _interleave(alpha, beta))
    drive(scheduler, clock, until=60)
    _summary(scheduler, "alpha holds 6 CPU; beta waits for room instead of half-binding", clock)

    print("== 2. alpha finishes: its pods are deleted and beta gets the room")
    clock.advance(5)
    for pod in alpha:
        scheduler.remove_pod(pod)
    drive(scheduler, clock, until=60)
    _summary(scheduler, "beta bound", clock)

    print("== 3. gamma (2 x 3 CPU, ssd only) fits the free CPU in total but not on the one ssd node")
    clock.advance(5)
    scheduler.add_node(make_node("n3", "4", labels={"disk": "ssd"}))
    _add(scheduler, gang("gamma", 2, "3", node_selector={"disk": "ssd"}))
    drive(scheduler, clock, until=60)
    _summary(scheduler, "gamma timed out in Permit and released n3; the group backs off", clock)

    print("== 4. a second ssd node joins after the group's backoff: gamma schedules")
    clock.set(70)
    scheduler.add_node(make_node("n4", "4", labels={"disk": "ssd"}))
    drive(scheduler, clock, until=120)
    _summary(scheduler, "every gang placed, nothing assumed", clock)
    attempts = scheduler.metrics.to_dict()["scheduler_schedule_attempts_total"]
    for sample in attempts:
        labels = sample["labels"]
        assert isinstance(labels, dict)
        print(f"   scheduler_schedule_attempts_total{{result={labels['result']}}} = {sample['value']:g}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
