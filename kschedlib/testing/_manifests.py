"""Model objects as the Kubernetes YAML a person reads (JSON when PyYAML is not installed)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kschedlib.model.convert import object_to_dict
from kschedlib.simulation.cluster import Cluster

if TYPE_CHECKING:
    from kschedlib.model.convert import KubeObject

__all__ = ["to_documents", "to_yaml"]


def to_documents(objects: Cluster | KubeObject | Iterable[KubeObject]) -> list[dict[str, Any]]:
    """The v1 dicts of a cluster, one object or several, in order."""
    if isinstance(objects, Cluster):
        items: Iterable[object] = objects.objects
    elif isinstance(objects, Iterable):
        items = objects
    else:
        items = (objects,)
    return [object_to_dict(obj) for obj in items]  # type: ignore[arg-type]


def to_yaml(objects: Cluster | KubeObject | Iterable[KubeObject]) -> str:
    """Kubernetes-style multi-document YAML (``---`` between objects), readable by :func:`kschedlib.load_cluster`.

    Without PyYAML the same documents are written as one indented JSON array, which
    ``load_cluster`` reads too.
    """
    documents = to_documents(objects)
    try:
        import yaml
    except ImportError:  # pragma: no cover - depends on the installed extras
        return json.dumps(documents, indent=2) + "\n"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's when PyYAML was built with it
    return yaml.dump_all(documents, Dumper=dumper, sort_keys=False, default_flow_style=False, explicit_start=True)
