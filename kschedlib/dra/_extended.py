"""Extended resources backed by DeviceClasses (DRAExtendedResource, beta and on in v1.36).

A DeviceClass with ``spec.extendedResourceName`` (and every class, through the implicit name
``deviceclass.resource.kubernetes.io/<class>``) provides that extended resource: on a node that does
not advertise it, NodeResourcesFit leaves it to DynamicResources, which allocates devices for it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kschedlib.dra._store import DraStore

__all__ = ["dra_backed_resources"]


def dra_backed_resources(handle: object, scalars: Iterable[tuple[str, int]]) -> frozenset[str]:
    """The requested scalar resources that some DeviceClass of the cluster provides."""
    store = getattr(handle, "dra", None)
    if not isinstance(store, DraStore) or not store.classes:
        return frozenset()
    classes = store.extended_resource_classes()
    return frozenset(name for name, _ in scalars if name in classes)
