"""Small builders, a recording listener and a recording ClusterApi shared by the unit tests (the fake Handle
is the public :class:`kschedlib.testing.FakeHandle`)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

import kschedlib
from kschedlib.cli import main
from kschedlib.errors import KubeApiError
from kschedlib.framework import NodeInfo, PodInfo
from kschedlib.model import Container, ContainerImage, Node, Pod, parse_quantity
from kschedlib.model.dra import ResourceClaim
from kschedlib.model.labels import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kschedlib.model.objects import ContainerExtendedResourceRequest, ContainerPort, Taint, Volume
from kschedlib.model.resources import is_overcommit_allowed
from kschedlib.model.storage import (
    ClaimRef,
    LocalVolumeSource,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSource,
    StorageClass,
)
from kschedlib.scheduler import ScheduleResult


def cli(*argv: object) -> tuple[int, str, str]:
    """Run ``python -m kschedlib ARGV`` in process: ``(status, stdout, stderr)``."""
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def resources(**amounts: str) -> dict[str, object]:
    """``resources(cpu="1", memory="1Gi")`` as a parsed resource list (``_`` in names becomes ``-``)."""
    return {name.replace("_", "-"): parse_quantity(value) for name, value in amounts.items()}


def make_node(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    unschedulable: bool = False,
    allocatable: Mapping[str, str] | None = None,
    images: Sequence[tuple[Sequence[str], int]] = (),
) -> Node:
    """A node with 4 CPU / 8Gi / 110 pods unless ``allocatable`` says otherwise."""
    alloc = allocatable if allocatable is not None else {"cpu": "4", "memory": "8Gi", "pods": "110"}
    parsed = {key: parse_quantity(value) for key, value in alloc.items()}
    return Node(
        name,
        labels=dict(labels or {"kubernetes.io/hostname": name}),
        taints=tuple(taints),
        unschedulable=unschedulable,
        allocatable=parsed,
        capacity=parsed,
        images=tuple(ContainerImage(tuple(names), size) for names, size in images),
    )


def make_pod(
    name: str,
    *,
    namespace: str = "default",
    requests: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    node_name: str = "",
    priority: int | None = None,
    host_ports: Iterable[int] = (),
    image: str = "",
    **fields: object,
) -> Pod:
    """A single-container pod; extra keyword arguments are passed to :class:`Pod`.

    An extended resource (or hugepages) requested is also its limit, as the API server requires.
    """
    amounts = {key: parse_quantity(value) for key, value in (requests or {}).items()}
    container = Container(
        "c",
        image=image,
        requests=amounts,
        limits={key: amount for key, amount in amounts.items() if not is_overcommit_allowed(key)},
        ports=tuple(ContainerPort(p, host_port=p) for p in host_ports),
    )
    return Pod(
        name,
        namespace=namespace,
        labels=dict(labels or {}),
        node_name=node_name,
        priority=priority,
        containers=(container,),
        **fields,  # type: ignore[arg-type]
    )


def node_info(node: Node, *pods: Pod) -> NodeInfo:
    """A NodeInfo for ``node`` holding ``pods``."""
    return NodeInfo.of(node, tuple(PodInfo.of(p) for p in pods))


# --- storage builders (volume plugins) --------------------------------------------------------


def hostname_affinity(*hostnames: str) -> NodeSelector:
    """A PersistentVolume node affinity: ``kubernetes.io/hostname In hostnames``."""
    return NodeSelector((NodeSelectorTerm((NodeSelectorRequirement("kubernetes.io/hostname", "In", hostnames),)),))


def make_pv(
    name: str,
    *,
    size: str = "10Gi",
    modes: Sequence[str] = ("ReadWriteOnce",),
    class_name: str = "",
    source: PersistentVolumeSource | None = None,
    affinity: NodeSelector | None = None,
    labels: Mapping[str, str] | None = None,
    claim: PersistentVolumeClaim | None = None,
    phase: str = "Available",
    **fields: object,
) -> PersistentVolume:
    """An Available PersistentVolume (``Bound`` to ``claim`` when given); extra fields go to the class."""
    ref = ClaimRef(claim.name, claim.namespace, claim.uid) if claim is not None else None
    return PersistentVolume(
        name,
        labels=dict(labels or {}),
        capacity={"storage": parse_quantity(size)},
        access_modes=tuple(modes),
        storage_class_name=class_name,
        node_affinity=affinity,
        claim_ref=ref,
        source=source if source is not None else LocalVolumeSource("/mnt"),
        phase="Bound" if claim is not None else phase,
        **fields,  # type: ignore[arg-type]
    )


def make_pvc(
    name: str,
    *,
    namespace: str = "default",
    size: str | None = "5Gi",
    modes: Sequence[str] = ("ReadWriteOnce",),
    class_name: str | None = None,
    volume_name: str = "",
    annotations: Mapping[str, str] | None = None,
    **fields: object,
) -> PersistentVolumeClaim:
    """A claim; naming ``volume_name`` makes it fully bound (``bind-completed`` annotation, ``Bound``)."""
    notes = dict(annotations or {})
    if volume_name:
        notes.setdefault("pv.kubernetes.io/bind-completed", "yes")
    fields.setdefault("phase", "Bound" if volume_name else "Pending")
    return PersistentVolumeClaim(
        name,
        namespace=namespace,
        uid=f"uid-{namespace}-{name}",
        annotations=notes,
        access_modes=tuple(modes),
        requests={"storage": parse_quantity(size)} if size is not None else {},
        storage_class_name=class_name,
        volume_name=volume_name,
        **fields,  # type: ignore[arg-type]
    )


def make_storage_class(
    name: str,
    *,
    provisioner: str = "kubernetes.io/no-provisioner",
    mode: str | None = "WaitForFirstConsumer",
    **fields: object,
) -> StorageClass:
    """A StorageClass (WaitForFirstConsumer, no provisioner, unless told otherwise)."""
    return StorageClass(name, provisioner=provisioner, volume_binding_mode=mode, **fields)  # type: ignore[arg-type]


def claim_volume(claim: str, name: str | None = None) -> Volume:
    """A ``persistentVolumeClaim`` pod volume."""
    return Volume(name or f"vol-{claim}", claim_name=claim, source_kind="persistentVolumeClaim",
                  source={"claimName": claim})


def inline_volume(name: str, kind: str, **source: object) -> Volume:
    """An inline pod volume of ``kind`` (``gcePersistentDisk``, ``awsElasticBlockStore``, ...)."""
    return Volume(name, source_kind=kind, source=dict(source))


class Recorder:
    """A scheduler listener keeping every notice, in order, with its kind."""

    def __init__(self) -> None:
        self.events: list[tuple[str, ScheduleResult]] = []

    def on_bound(self, result: ScheduleResult) -> None:
        self.events.append(("bound", result))

    def on_failed(self, result: ScheduleResult) -> None:
        self.events.append(("failed", result))

    def on_waiting(self, result: ScheduleResult) -> None:
        self.events.append(("waiting", result))

    def on_preempting(self, result: ScheduleResult) -> None:
        self.events.append(("preempting", result))

    def keys(self, kind: str) -> list[str]:
        """The keys of the pods notified as ``kind``."""
        return [result.pod.key for k, result in self.events if k == kind]


class RecordingApi:
    """Records the calls; claims come back as an API server would write them (a generated name, a uid)."""

    def __init__(self, *, fail: str | None = None) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fail = fail

    def _call(self, *entry: Any) -> None:
        self.calls.append(entry)
        if entry[0] == self.fail:
            raise KubeApiError(409, "Conflict", f"{entry[0]} refused")

    def nominate(self, pod: Pod, node_name: str) -> None:
        self.calls.append(("nominate", pod.name, node_name))

    def create_claim(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        self._call("create", claim.name, pod.name)
        return attrs.evolve(claim, name=f"{claim.name}-x1", uid="made")

    def reserve_claim(self, claim: ResourceClaim, pod: Pod, *, allocate: bool,
                      mappings: Sequence[ContainerExtendedResourceRequest] = ()) -> ResourceClaim:
        self._call("reserve", claim.name, pod.name, allocate, tuple(m.request_name for m in mappings))
        return claim

    def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        self._call("unreserve", claim.name, pod.name)
        return attrs.evolve(claim, reserved_for=tuple(c for c in claim.reserved_for if c.uid != pod.uid))

    def deallocate_claim(self, claim: ResourceClaim) -> ResourceClaim:
        self._call("deallocate", claim.name)
        return attrs.evolve(claim, allocation=None, reserved_for=())

    def delete_claim(self, claim: ResourceClaim) -> None:
        self._call("delete", claim.name)

    def record_event(self, pod: Pod, event_type: str, reason: str, action: str, note: str) -> None:
        self.calls.append(("event", pod.name, reason, note))

    def bind_volumes(self, pod: Pod, node_name: str, volumes: Sequence[PersistentVolume],
                     claims: Sequence[PersistentVolumeClaim], timeout: float) -> None:
        self._call("bind_volumes", pod.name, node_name, tuple((v.name, v.claim_ref.name if v.claim_ref else None,
                                                               v.phase) for v in volumes),
                   tuple((c.name, dict(c.annotations)) for c in claims), timeout)

    def latest_volumes(self, volumes: Sequence[str], claims: Sequence[str]) -> tuple[list[PersistentVolume],
                                                                                    list[PersistentVolumeClaim]]:
        self.calls.append(("latest", tuple(volumes), tuple(claims)))
        return [], []


def rebuilt(scheduler: kschedlib.Scheduler) -> kschedlib.Scheduler:
    """A fresh scheduler given ``scheduler``'s nodes and bound pods: what a long run must equal."""
    fresh = kschedlib.Scheduler(seed=0, clock=kschedlib.FakeClock())
    for info in scheduler.snapshot().node_infos:
        assert info.node is not None
        fresh.add_node(info.node)
    for pod in scheduler.pods().values():
        if pod.node_name:
            fresh.add_pod(pod)
    return fresh
