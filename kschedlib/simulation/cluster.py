"""Cluster files: Kubernetes v1 objects read into the model."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from os import PathLike, fspath
from typing import Any, final

import attrs

from kschedlib._internal.documents import read_documents
from kschedlib.errors import ManifestError
from kschedlib.model.convert import objects_from_document, pod_from_dict
from kschedlib.model.objects import Namespace, Node, OwnerSelector, Pod, PodDisruptionBudget

__all__ = ["Cluster", "load_cluster", "resolve_pod"]


@final
@attrs.frozen(slots=True)
class Cluster:
    """The objects of a cluster dump, in file order."""

    objects: tuple[object, ...] = ()

    def __iter__(self) -> Iterator[object]:
        """The objects, in file order (so a Cluster can be passed to ``Scheduler.add_objects``)."""
        return iter(self.objects)

    def __len__(self) -> int:
        return len(self.objects)

    @property
    def nodes(self) -> list[Node]:
        """Every Node, in file order."""
        return [o for o in self.objects if isinstance(o, Node)]

    @property
    def pods(self) -> list[Pod]:
        """Every Pod (bound and pending), in file order."""
        return [o for o in self.objects if isinstance(o, Pod)]

    @property
    def pending_pods(self) -> list[Pod]:
        """Pods without ``spec.nodeName``, in file order."""
        return [o for o in self.objects if isinstance(o, Pod) and not o.node_name]

    @property
    def bound_pods(self) -> list[Pod]:
        """Pods with ``spec.nodeName``, in file order."""
        return [o for o in self.objects if isinstance(o, Pod) and o.node_name]

    @property
    def namespaces(self) -> list[Namespace]:
        """Every Namespace, in file order."""
        return [o for o in self.objects if isinstance(o, Namespace)]

    @property
    def pod_disruption_budgets(self) -> list[PodDisruptionBudget]:
        """Every PodDisruptionBudget, in file order."""
        return [o for o in self.objects if isinstance(o, PodDisruptionBudget)]

    @property
    def owners(self) -> list[OwnerSelector]:
        """Services, ReplicaSets, StatefulSets and ReplicationControllers, as selectors."""
        return [o for o in self.objects if isinstance(o, OwnerSelector)]

    def find_pod(self, ref: str) -> Pod | None:
        """The pod named ``namespace/name`` (or a bare name, when unique)."""
        if "/" in ref:
            return next((p for p in self.pods if p.key == ref), None)
        matches = [p for p in self.pods if p.name == ref]
        return matches[0] if len(matches) == 1 else None

    def without_pod(self, pod: Pod) -> Cluster:
        """The cluster minus the pod with ``pod``'s key."""
        return Cluster(tuple(o for o in self.objects if not (isinstance(o, Pod) and o.key == pod.key)))

    def with_objects(self, objects: Iterable[object]) -> Cluster:
        """The cluster plus ``objects`` (appended in order)."""
        return Cluster((*self.objects, *objects))


def load_cluster(source: str | PathLike[str] | Mapping[str, Any] | Sequence[Any] | Cluster) -> Cluster:
    """Read a cluster: a file (JSON, or YAML with the ``yaml`` extra), a v1 ``List`` dict, or a list of
    objects, dicts, files and clusters (concatenated in order).  Model objects are kept as they are.
    """
    if isinstance(source, Cluster):
        return source
    if isinstance(source, str | PathLike):
        docs = read_documents(source)
        return Cluster(tuple(obj for doc in docs for obj in objects_from_document(doc)))
    if isinstance(source, Mapping):
        return Cluster(tuple(objects_from_document(source)))
    out: list[object] = []
    for item in source:
        if isinstance(item, Mapping | list):
            out.extend(objects_from_document(item))
        elif isinstance(item, str | PathLike):
            out.extend(load_cluster(item).objects)
        elif isinstance(item, Cluster):
            out.extend(item.objects)
        else:
            out.append(item)
    return Cluster(tuple(out))


def resolve_pod(cluster: Cluster, pod: Pod | Mapping[str, Any] | str | PathLike[str]) -> Pod:
    """A pod given as a model Pod, a v1 dict, a ``namespace/name`` of the cluster, or a file."""
    if isinstance(pod, Pod):
        return pod
    if isinstance(pod, Mapping):
        return pod_from_dict(pod)
    text = fspath(pod)
    found = cluster.find_pod(text)
    if found is not None:
        return found
    try:
        docs = read_documents(text)
    except ManifestError:
        raise ManifestError("no such pod in the cluster, and not a readable pod file", obj=text) from None
    pods = [obj for doc in docs for obj in objects_from_document(doc) if isinstance(obj, Pod)]
    if len(pods) != 1:
        raise ManifestError(f"expected exactly one Pod, found {len(pods)}", obj=text)
    return pods[0]
