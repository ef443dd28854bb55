"""Extended resources backed by DeviceClasses (DRAExtendedResource, beta and on in v1.36).

A DeviceClass with ``spec.extendedResourceName`` (and every class, through the implicit name
``deviceclass.resource.kubernetes.io/<class>``) provides that extended resource: on a node that does
not advertise it, NodeResourcesFit leaves it to DynamicResources, which allocates devices for it
through one claim per pod.  That claim has one request per container and resource, named
``container-<i>-request-<j>`` (``i``: the container's index among init containers then containers;
``j``: the resource's index among the container's sorted requests), as kube-scheduler v1.36 makes it
so that the kubelet can tell which container gets which devices.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from kschedlib.dra._store import DraStore
from kschedlib.model.objects import Container, ContainerExtendedResourceRequest, Pod

if TYPE_CHECKING:
    from kschedlib.model.dra import DeviceRequest

__all__ = ["dra_backed_resources", "extended_requests"]

def dra_backed_resources(handle: object, scalars: Iterable[tuple[str, int]]) -> frozenset[str]:
    """The requested scalar resources that some DeviceClass of the cluster provides."""
    store = getattr(handle, "dra", None)
    if not isinstance(store, DraStore) or not store.classes:
        return frozenset()
    classes = store.extended_resource_classes()
    return frozenset(name for name, _ in scalars if name in classes)


def _whole_request(container: Container, resource: str) -> int:
    """The container's request for ``resource`` as a whole number (0 if absent or not whole: kube skips those)."""
    quantity = container.requests.get(resource)
    if quantity is None or quantity.amount.denominator != 1:
        return 0
    return max(int(quantity.amount), 0)


def _container_request(index: int, container: Container, resource: str, class_name: str,
                       reusable: Sequence[DeviceRequest | None]) -> tuple[DeviceRequest | None,
                                                                           list[ContainerExtendedResourceRequest]]:
    """The request ``container`` needs for ``resource`` beyond the ``reusable`` ones it may share (an init
    container shares the devices of the sidecars and containers that start after it), and its mappings."""
    wanted = _whole_request(container, resource)
    if not wanted:
        return None, []
    mappings = []
    covered = 0
    for other in reusable:
        if other is None or other.exactly is None:
            continue
        covered += other.exactly.count
        mappings.append(ContainerExtendedResourceRequest(container.name, resource, other.name))
        if covered >= wanted:
            return None, mappings
    from kschedlib.model.dra import DeviceRequest, ExactRequest  # the first DRA-backed extended resource requested

    name = f"container-{index}-request-{sorted(container.requests).index(resource)}"
    mappings.append(ContainerExtendedResourceRequest(container.name, resource, name))
    return DeviceRequest(name, ExactRequest(name, class_name, count=wanted - covered)), mappings


def extended_requests(pod: Pod, classes: Mapping[str, str]) -> tuple[tuple[DeviceRequest, ...],
                                                                       tuple[ContainerExtendedResourceRequest, ...]]:
    """The requests of the pod's extended-resource claim for ``classes`` (resource -> DeviceClass name: the
    resources the node leaves to DRA), sorted by name, and the mapping of each container's resource to them.

    Containers that run for the pod's life (containers and sidecars) get a request each; an init container
    that runs to completion first reuses the devices of those starting after it, and all such init
    containers share one request, the largest, since they run one at a time.
    """
    containers = (*pod.init_containers, *pod.containers)
    first_regular = len(pod.init_containers)
    short_lived = [i for i, c in enumerate(containers) if i < first_regular and not c.is_sidecar]
    long_lived = [i for i, c in enumerate(containers) if i >= first_regular or c.is_sidecar]
    requests: list[DeviceRequest] = []
    mappings: list[ContainerExtendedResourceRequest] = []
    for resource in sorted(classes):
        class_name = classes[resource]
        kept: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[ContainerExtendedResourceRequest] = []
        for i in long_lived:
            kept[i], found = _container_request(i, containers[i], resource, class_name, ())
            long_mappings.extend(found)
        largest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[ContainerExtendedResourceRequest] = []
        for i in short_lived:
            request, found = _container_request(i, containers[i], resource, class_name, kept[i:])
            short_mappings.extend(found)
            if request is not None:
                short_names.add(request.name)
                if largest is None or _count(largest) < _count(request):
                    largest = request
        if largest is not None:
            requests.append(largest)
            if len(short_names) > 1:
                short_mappings = [m if m.request_name not in short_names else
                                  ContainerExtendedResourceRequest(m.container_name, m.resource_name, largest.name)
                                  for m in short_mappings]
        requests.extend(request for request in kept if request is not None)
        mappings.extend(long_mappings)
        mappings.extend(short_mappings)
    requests.sort(key=lambda request: request.name)
    return tuple(requests), tuple(mappings)


def _count(request: DeviceRequest) -> int:
    return request.exactly.count if request.exactly is not None else 0
