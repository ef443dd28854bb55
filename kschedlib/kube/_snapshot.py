"""A consistent snapshot of a cluster: one list per kind, every list read at the same resourceVersion.

The first list (nodes) fixes a resourceVersion; every other kind is listed at exactly that version
(``resourceVersionMatch=Exact``), so the snapshot is the cluster as it was at one instant, as etcd keeps it.
When the API server cannot serve that version any more (compacted meanwhile), the whole snapshot is read again.
Objects are kept as the API server wrote them, less ``metadata.managedFields`` (as ``kubectl get`` shows them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.kube._resources import RESOURCES, Resource
from kschedlib.kube.client import KubeApiError, KubeClient

__all__ = ["PAGE", "Snapshot", "list_all", "read_snapshot", "snapshot_document"]

PAGE: Final = 500
"""Objects per page, client-go's reflector page size."""
_ATTEMPTS: Final = 3


def list_all(client: KubeClient, resource: Resource, *, resource_version: str | None = None,
             label_selector: str | None = None, field_selector: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """Every object of ``resource`` (pages of :data:`PAGE`), each with its kind and apiVersion, and the list's
    resourceVersion.  ``resource_version`` asks for exactly that version."""
    items: list[dict[str, Any]] = []
    query: dict[str, object] = {"limit": PAGE, "labelSelector": label_selector, "fieldSelector": field_selector}
    if resource_version is not None:
        query.update(resourceVersion=resource_version, resourceVersionMatch="Exact")
    while True:
        answer = client.request("GET", resource.path, query=query, timeout=120.0)
        for item in answer.get("items") or ():
            items.append(_typed(item, resource))
        meta = answer.get("metadata") or {}
        token = meta.get("continue")
        if not token:
            return items, str(meta.get("resourceVersion", ""))
        query = {"limit": PAGE, "continue": token, "labelSelector": label_selector, "fieldSelector": field_selector}


def _typed(item: dict[str, Any], resource: Resource) -> dict[str, Any]:
    """A list item as a whole object: list items carry no kind, and managed fields are noise here."""
    item["kind"] = resource.kind
    item["apiVersion"] = resource.api_version
    meta = item.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return item


def _served(error: KubeApiError) -> bool:
    """Whether a refused list still means the kind exists (404: no such API or CRD here; 403: not ours to read)."""
    return error.status not in (404, 403)


@final
@attrs.frozen(slots=True, repr=False)
class Snapshot(FieldsRepr):
    """The objects read (kinds in the order asked), the resourceVersion they were read at, and the resources
    the API server served to this user (the others are left out)."""

    objects: list[dict[str, Any]]
    version: str
    served: tuple[Resource, ...]


def read_snapshot(client: KubeClient, resources: Sequence[Resource] = RESOURCES) -> Snapshot:
    """Every object of ``resources`` at one resourceVersion.

    Kinds the API server does not serve (no DRA API, no PodGroup CRD) or does not let this user read are left out.
    """
    for attempt in range(_ATTEMPTS):
        try:
            return _read_once(client, resources)
        except KubeApiError as exc:
            if exc.status != 410 or attempt == _ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _read_once(client: KubeClient, resources: Sequence[Resource]) -> Snapshot:
    objects: list[dict[str, Any]] = []
    version: str | None = None
    served: list[Resource] = []
    for resource in resources:
        try:
            items, listed_at = list_all(client, resource, resource_version=version)
        except KubeApiError as exc:
            if _served(exc):
                raise
            continue
        if version is None:
            version = listed_at
        objects.extend(items)
        served.append(resource)
    return Snapshot(objects, version or "", tuple(served))


def snapshot_document(objects: Sequence[dict[str, Any]], resource_version: str) -> dict[str, Any]:
    """The snapshot as one v1 ``List`` (what ``kubectl get ... -o json`` writes, and every command reads)."""
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": resource_version},
            "items": list(objects)}

