"""Small builders and fakes shared by the unit tests."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

from kschedlib.clock import Clock, FakeClock
from kschedlib.framework import CycleState, NodeInfo, PodInfo, Snapshot, Status
from kschedlib.model import Container, ContainerImage, Namespace, Node, Pod, parse_quantity
from kschedlib.model.objects import ContainerPort, OwnerSelector, PodDisruptionBudget, Taint


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
    """A single-container pod; extra keyword arguments are passed to :class:`Pod`."""
    container = Container(
        "c",
        image=image,
        requests={key: parse_quantity(value) for key, value in (requests or {}).items()},
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


class FakeHandle:
    """A Handle over a fixed snapshot, for plugin unit tests."""

    def __init__(
        self,
        node_infos: Sequence[NodeInfo] = (),
        *,
        namespaces: Iterable[Namespace] = (),
        pdbs: Sequence[PodDisruptionBudget] = (),
        owners: Sequence[OwnerSelector] = (),
        nominated: Mapping[str, Sequence[PodInfo]] | None = None,
        seed: int = 0,
    ) -> None:
        self._snapshot = Snapshot(node_infos, namespaces={ns.name: ns for ns in namespaces})
        self._pdbs = list(pdbs)
        self._owners = list(owners)
        self._nominated = dict(nominated or {})
        self._clock = FakeClock()
        self._rng = random.Random(seed)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def rng(self) -> random.Random:
        return self._rng

    def nominated_pods_for_node(self, node_name: str) -> Sequence[PodInfo]:
        return self._nominated.get(node_name, ())

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        for info in self._snapshot:
            for pod_info in info.pods:
                if pod_info.pod.namespace == namespace and pod_info.pod.name == name:
                    return pod_info.pod
        return None

    def pod_disruption_budgets(self) -> Sequence[PodDisruptionBudget]:
        return self._pdbs

    def owner_selectors(self, namespace: str) -> Sequence[OwnerSelector]:
        return [o for o in self._owners if o.namespace == namespace]

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        raise NotImplementedError("FakeHandle runs no plugins")

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo
    ) -> Status:
        raise NotImplementedError("FakeHandle runs no plugins")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo
    ) -> Status:
        raise NotImplementedError("FakeHandle runs no plugins")
