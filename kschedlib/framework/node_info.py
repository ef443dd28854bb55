"""NodeInfo: one node and the pods on it, aggregated for fast filtering.

NodeInfo is immutable.  Adding or removing a pod returns a new NodeInfo with a
new ``generation`` (from one process-wide counter, so generations are never
reused); the cache swaps it in and the next snapshot picks it up.  Filters
therefore compare a few integers instead of walking the node's pods.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import CacheError
from kschedlib.framework._slots import builder
from kschedlib.framework.pod_info import HostPort, PodInfo
from kschedlib.model.objects import Node, Pod
from kschedlib.model.resources import Resources

__all__ = ["ImageState", "NodeInfo", "next_generation", "ports_conflict"]

_generations = itertools.count(1)
_EMPTY = Resources()
_ANY_IP: Final = "0.0.0.0"


def next_generation() -> int:
    """A fresh, process-wide, increasing generation number."""
    return next(_generations)


@final
@attrs.frozen(slots=True, repr=False)
class ImageState(FieldsRepr):
    """An image on a node: its size and how many nodes of the cluster have it."""

    size: int
    num_nodes: int


UsedPorts = Mapping[str, frozenset[tuple[str, int]]]
"""host IP -> {(protocol, port)} in use on the node."""


def ports_conflict(used: UsedPorts, ip: str, protocol: str, port: int) -> bool:
    """Whether (ip, protocol, port) clashes with ``used``; ``0.0.0.0`` clashes with every IP."""
    key = (protocol, port)
    if ip == _ANY_IP:
        return any(key in ports for ports in used.values())
    return key in used.get(ip, ()) or key in used.get(_ANY_IP, ())


def _with_ports(used: UsedPorts, ports: tuple[HostPort, ...], add: bool) -> UsedPorts:
    out = {ip: set(entries) for ip, entries in used.items()}
    for ip, protocol, port in ports:
        entries = out.setdefault(ip, set())
        if add:
            entries.add((protocol, port))
        else:
            entries.discard((protocol, port))
    return {ip: frozenset(entries) for ip, entries in out.items() if entries}


def _empty_images() -> Mapping[str, ImageState]:
    return {}


def _empty_ports() -> UsedPorts:
    return {}


def _empty_counts() -> Mapping[str, int]:
    return {}


def _with_claims(counts: Mapping[str, int], pod: Pod, delta: int) -> Mapping[str, int]:
    """``counts`` with ``delta`` added for each ``persistentVolumeClaim`` volume of ``pod`` (zeros dropped).

    Ephemeral volumes are not counted, as in kube-scheduler.
    """
    out: dict[str, int] | None = None
    for volume in pod.volumes:
        claim = volume.claim_name
        if claim is None:
            continue
        if out is None:
            out = dict(counts)
        key = f"{pod.namespace}/{claim}"
        count = out.get(key, 0) + delta
        if count > 0:
            out[key] = count
        else:
            out.pop(key, None)
    return counts if out is None else out


@final
@attrs.frozen(slots=True, repr=False)
class NodeInfo(FieldsRepr):
    """A node with its pods (assumed ones included) and their aggregates.

    ``node`` is ``None`` for a "ghost": pods known on a node the cache has not
    seen (or no longer sees); ghosts never appear in a snapshot.
    """

    node: Node | None
    pods: tuple[PodInfo, ...] = ()
    pods_with_affinity: tuple[PodInfo, ...] = ()
    pods_with_required_anti_affinity: tuple[PodInfo, ...] = ()
    used_ports: UsedPorts = attrs.field(factory=_empty_ports)
    requested: Resources = _EMPTY
    non_zero_requested: Resources = _EMPTY
    allocatable: Resources = _EMPTY
    image_states: Mapping[str, ImageState] = attrs.field(factory=_empty_images)
    generation: int = attrs.field(factory=next_generation)
    pvc_ref_counts: Mapping[str, int] = attrs.field(factory=_empty_counts)
    """``namespace/claim`` -> how many ``persistentVolumeClaim`` volumes of the node's pods name it."""
    name: str = attrs.field(init=False, eq=False, repr=False)
    """The node's name ("" for a ghost); read in every per-node loop, so stored rather than derived."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "name", self.node.name if self.node is not None else "")

    @classmethod
    def of(cls, node: Node | None, pods: tuple[PodInfo, ...] = ()) -> NodeInfo:
        """A NodeInfo for ``node`` holding ``pods``."""
        info = cls(node, allocatable=Resources.from_resource_list(node.allocatable) if node else _EMPTY)
        for pod in pods:
            info = info.with_pod(pod)
        return info

    def with_node(self, node: Node | None) -> NodeInfo:
        """This NodeInfo for a new version of its node (or a ghost when ``None``)."""
        allocatable = Resources.from_resource_list(node.allocatable) if node is not None else _EMPTY
        return attrs.evolve(self, node=node, allocatable=allocatable, generation=next_generation())

    def with_image_states(self, image_states: Mapping[str, ImageState]) -> NodeInfo:
        """This NodeInfo with image spread counts as of now (same generation)."""
        return attrs.evolve(self, image_states=image_states)

    def with_pod(self, pod_info: PodInfo) -> NodeInfo:
        """A new NodeInfo with ``pod_info`` added."""
        with_affinity = self.pods_with_affinity
        if pod_info.has_affinity:
            with_affinity = (*with_affinity, pod_info)
        with_anti = self.pods_with_required_anti_affinity
        if pod_info.has_required_anti_affinity:
            with_anti = (*with_anti, pod_info)
        ports = _with_ports(self.used_ports, pod_info.host_ports, True) if pod_info.host_ports else self.used_ports
        non_zero = self.non_zero_requested
        pod = pod_info.pod
        return _build(
            self.node,
            (*self.pods, pod_info),
            with_affinity,
            with_anti,
            ports,
            self.requested.add(pod_info.requests),
            Resources(non_zero.milli_cpu + pod_info.non_zero_cpu, non_zero.memory + pod_info.non_zero_memory),
            self.allocatable,
            self.image_states,
            next_generation(),
            _with_claims(self.pvc_ref_counts, pod, 1) if pod.volumes else self.pvc_ref_counts,
            self.name,  # what __attrs_post_init__ derives from the same node
        )

    def without_pod(self, pod: Pod) -> NodeInfo:
        """A new NodeInfo with the pod of ``pod.uid`` removed; ``CacheError`` if it is not here.

        Like kube-scheduler, the node's last pod takes the removed pod's place.
        """
        index = next((i for i, candidate in enumerate(self.pods) if candidate.pod.uid == pod.uid), -1)
        if index < 0:
            raise CacheError(f"no corresponding pod {pod.name} in pods of node {self.name}")
        info = self.pods[index]
        pods = list(self.pods)
        pods[index] = pods[-1]
        pods.pop()
        uid = pod.uid
        non_zero = self.non_zero_requested
        return NodeInfo(
            self.node,
            tuple(pods),
            _drop(self.pods_with_affinity, uid),
            _drop(self.pods_with_required_anti_affinity, uid),
            _with_ports(self.used_ports, info.host_ports, False) if info.host_ports else self.used_ports,
            self.requested.subtract(info.requests),
            Resources(non_zero.milli_cpu - info.non_zero_cpu, non_zero.memory - info.non_zero_memory),
            self.allocatable,
            self.image_states,
            pvc_ref_counts=(_with_claims(self.pvc_ref_counts, info.pod, -1) if info.pod.volumes
                            else self.pvc_ref_counts),
        )

    def without_pods(self, pods: Sequence[Pod]) -> NodeInfo:
        """``without_pod`` for each of ``pods`` in turn, as one new NodeInfo (the same pods, in the same
        order, and the same aggregates); ``CacheError`` if one is not here."""
        if len(pods) == 1:
            return self.without_pod(pods[0])
        infos = list(self.pods)
        removed = []
        for pod in pods:
            index = next((i for i, candidate in enumerate(infos) if candidate.pod.uid == pod.uid), -1)
            if index < 0:
                raise CacheError(f"no corresponding pod {pod.name} in pods of node {self.name}")
            removed.append(infos[index])
            infos[index] = infos[-1]
            infos.pop()
        with_affinity, with_anti = self.pods_with_affinity, self.pods_with_required_anti_affinity
        ports, claims = self.used_ports, self.pvc_ref_counts
        cpu, memory = self.non_zero_requested.milli_cpu, self.non_zero_requested.memory
        for info in removed:
            uid = info.pod.uid
            if with_affinity:
                with_affinity = _drop(with_affinity, uid)
            if with_anti:
                with_anti = _drop(with_anti, uid)
            ports = _with_ports(ports, info.host_ports, False) if info.host_ports else ports
            claims = _with_claims(claims, info.pod, -1) if info.pod.volumes else claims
            cpu, memory = cpu - info.non_zero_cpu, memory - info.non_zero_memory
        return NodeInfo(self.node, tuple(infos), with_affinity, with_anti, ports,
                        self.requested.subtract_all([info.requests for info in removed]), Resources(cpu, memory),
                        self.allocatable, self.image_states, pvc_ref_counts=claims)

    def has_pod(self, uid: str) -> bool:
        """Whether a pod with ``uid`` is on this node."""
        return any(info.pod.uid == uid for info in self.pods)


_build = builder(NodeInfo, caller_derives=True)  # with_pod passes the name __attrs_post_init__ sets
"""``NodeInfo(...)`` with every field given, ``name`` included (a pod added, once per cycle)."""


def _drop(infos: tuple[PodInfo, ...], uid: str) -> tuple[PodInfo, ...]:
    """Remove ``uid`` the way kube-scheduler does: the last entry fills the hole."""
    for index, info in enumerate(infos):
        if info.pod.uid == uid:
            items = list(infos)
            items[index] = items[-1]
            items.pop()
            return tuple(items)
    return infos
