"""Scheduler.explain and feasible_nodes change nothing, for every plugin kschedlib ships (a property).

One profile runs them all: the default plugins (DynamicResources included), Coscheduling,
CapacityScheduling and the non-CSI volume limits.  A drawn cluster -- nodes with GPUs, a device class
backing an extended resource, pods with claims or extended resources, a gang, a quota, priorities --
is scheduled for a few cycles (so that pods wait in Permit, are nominated or hold devices); then a
pod, queued, bound or new, is explained.  The scheduler's whole state must be as before the call, and
the next cycles must decide as those of a twin that was never asked.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Scheduler, load_cluster
from kschedlib.framework.plugin_state import KeepsState
from kschedlib.model.convert import pod_from_dict
from kschedlib.model.objects import Pod
from kschedlib.model.quantity import parse_quantity
from kschedlib.model.scheduling_crds import POD_GROUP_LABEL, ElasticQuota, PodGroup
from kschedlib.results import ScheduleResult
from kschedlib.testing._fingerprint import freeze

DRIVER = "gpu.example.com"
GPU = "example.com/gpu"
LEGACY_VOLUME_LIMITS = ("EBSLimits", "GCEPDLimits", "AzureDiskLimits", "CinderLimits")


def every_plugin(kube_version: str) -> dict[str, Any]:
    """One profile with every plugin kschedlib ships for ``kube_version`` (the legacy volume limits up to 1.30)."""
    extra = ("Coscheduling", "CapacityScheduling", *(LEGACY_VOLUME_LIMITS if kube_version == "1.30" else ()))
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
                "enabled": [{"name": name} for name in extra], "disabled": [{"name": "PrioritySort"}]}},
                "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 10,
                                                                   "podGroupBackoffSeconds": 5}}]}]}


KINDS = ("plain", "big", "urgent", "gang", "team", "gpu", "claim")


def _node(name: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": f"z{name[-1]}"}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _slice(node: str, count: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                   "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(count)]}}


DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                "spec": {"extendedResourceName": GPU,
                         "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def _claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def _pod(name: str, kind: str, node: str = "") -> dict[str, Any]:
    """A pod of a kind: its namespace, requests, priority, gang label or devices."""
    namespace = {"gang": "batch", "team": "team"}.get(kind, "default")
    cpu = {"big": "64", "urgent": "2"}.get(kind, "1")
    requests: dict[str, str] = {"cpu": cpu, "memory": "256Mi"}
    if kind == "gpu":
        requests[GPU] = "1"
    resources = {"requests": requests, "limits": {GPU: "1"}} if kind == "gpu" else {"requests": requests}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": resources}],
                            "priority": 1000 if kind == "urgent" else 0}
    if kind == "claim":
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]
        spec["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    if node:
        spec["nodeName"] = node
    labels = {POD_GROUP_LABEL: "job"} if kind == "gang" else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                                                            "labels": labels}, "spec": spec}


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    nodes = draw(st.lists(st.sampled_from(["2", "4"]), min_size=1, max_size=3))
    gpus = draw(st.lists(st.integers(0, 2), min_size=len(nodes), max_size=len(nodes)))
    pods = draw(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(-1, len(nodes) - 1)), min_size=1,
                         max_size=7))
    return {"nodes": nodes, "gpus": gpus, "pods": pods, "min_member": draw(st.integers(2, 3)),
            "steps": draw(st.integers(0, 8)), "kube_version": draw(st.sampled_from(["1.36", "1.36", "1.30"]))}


def _scheduler(cluster: dict[str, Any]) -> Scheduler:
    version = cluster["kube_version"]
    sched = Scheduler(every_plugin(version), seed=1, clock=FakeClock(), kube_version=version)
    objects: list[Any] = [DEVICE_CLASS, PodGroup("job", "batch", min_member=cluster["min_member"]),
                          ElasticQuota("quota", "team", min={"cpu": parse_quantity("1")},
                                       max={"cpu": parse_quantity("3")})]
    for i, (cpu, count) in enumerate(zip(cluster["nodes"], cluster["gpus"], strict=True)):
        objects += [_node(f"n{i}", cpu), *([_slice(f"n{i}", count)] if count else [])]
    for i, (kind, where) in enumerate(cluster["pods"]):
        bound = where >= 0 and kind in ("plain", "team")
        objects.append(_pod(f"p{i}", kind, f"n{where}" if bound else ""))
        if kind == "claim":
            objects.append(_claim(f"p{i}-gpu"))
    sched.add_objects(load_cluster(objects).objects)
    return sched


def _advance(sched: Scheduler, steps: int) -> list[tuple[Any, ...]]:
    """``steps`` turns of the loop: a cycle, else time moved to the next wake-up; what they decided."""
    decided: list[ScheduleResult] = []
    for _ in range(steps):
        result = sched.schedule_one()
        if result is not None:
            decided.append(result)
        else:
            wakeup = sched.next_wakeup()
            if wakeup is None:
                break
            clock = sched.clock
            assert isinstance(clock, FakeClock)
            clock.set(max(clock.now(), wakeup))
        decided += sched.tick()
    return [(r.pod.key, r.node_name, r.status.code, r.message, r.nominated_node_name, tuple(r.victims))
            for r in decided]


def state(sched: Scheduler) -> Any:
    """Everything a decision can depend on (caches left out: a what-if cycle may fill them)."""
    engine = sched._engine
    dra = engine.store.dra
    plugins = {name: plugin.save_state() for runtime in engine.profiles.values()
               for name, plugin in runtime.profile.plugins.items() if isinstance(plugin, KeepsState)}
    return freeze({
        "pods": sched.pods(), "bound": sched.bound_pods(), "nominations": sched.nominations(),
        "pending": {key: (queue, info.attempts, info.timestamp, sorted(info.unschedulable_plugins),
                          sorted(info.pending_plugins)) for key, (queue, info) in sched.pending().items()},
        "waiting": {w.pod.key: (w.node_name, w.pending_plugins, w.outcome(sched.clock.now()))
                    for w in engine.waiting},
        "claims": dict(dra.claims), "in_flight": dict(dra.in_flight), "slices": dict(dra.slices),
        "held": dict(dra._held.allocations), "written": list(dra.pending_writes),
        "groups": dict(engine.store.scheduling.groups), "quotas": dict(engine.store.scheduling.quotas),
        "infos": {info.name: (info.node, sorted(p.pod.key for p in info.pods), info.requested)
                  for info in sched.snapshot().node_infos},
        "rng": engine.rng.getstate(), "start": engine.next_start_index, "now": sched.clock.now(),
        "wakeup": sched.next_wakeup(), "plugins": plugins,
    })


def _what_if(cluster: dict[str, Any], sched: Scheduler, choice: int, kind: str) -> Pod:
    """A pod the scheduler knows (queued or bound), or a new one of ``kind``."""
    known = sorted(sched.pods().values(), key=lambda pod: pod.key)
    if choice < len(known):
        return known[choice]
    return pod_from_dict(_pod("whatif", kind))


def _case(nodes: list[str], gpus: list[int], pods: list[tuple[str, int]], *, min_member: int = 2, steps: int,
          version: str = "1.36") -> dict[str, Any]:
    return {"nodes": nodes, "gpus": gpus, "pods": pods, "min_member": min_member, "steps": steps,
            "kube_version": version}


GANG_WAITING = _case(["2"], [0], [("gang", -1)] * 3, min_member=3, steps=2)  # two members wait for a third


@settings(max_examples=200)
@example(cluster=_case(["2"], [1], [("gpu", 0)], steps=1), choice=0, kind="plain", feasible=False, after=2)
@example(cluster=GANG_WAITING, choice=9, kind="gang", feasible=False, after=4)  # fits nowhere: PostFilter
@example(cluster=GANG_WAITING, choice=9, kind="urgent", feasible=True, after=4)  # would preempt the waiting
@example(cluster=_case(["4"], [0], [("gang", -1)], steps=1), choice=9, kind="gang", feasible=False, after=3)
@given(cluster=clusters(), choice=st.integers(0, 9), kind=st.sampled_from(KINDS), feasible=st.booleans(),
       after=st.integers(1, 10))
def test_explain_changes_nothing_and_later_cycles_decide_as_without_it(
        cluster: dict[str, Any], choice: int, kind: str, feasible: bool, after: int) -> None:
    sched, twin = _scheduler(cluster), _scheduler(cluster)
    assert _advance(sched, cluster["steps"]) == _advance(twin, cluster["steps"])
    before = state(sched)
    pod = _what_if(cluster, sched, choice, kind)
    if feasible:
        sched.feasible_nodes(pod)
    else:
        sched.explain(pod)
    assert state(sched) == before
    assert _advance(sched, after) == _advance(twin, after)
    assert state(sched) == state(twin)
