"""Cluster files: Kubernetes v1 objects read into the model."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from os import PathLike, fspath
from pathlib import Path
from typing import Any, Final, final

import attrs

from kschedlib._internal.documents import read_documents
from kschedlib.errors import ManifestError
from kschedlib.model.convert import ObjectCollector, PriorityClass
from kschedlib.model.objects import Namespace, Node, OwnerSelector, Pod, PodDisruptionBudget

__all__ = ["CONTROLLER_KINDS", "Cluster", "load_cluster", "resolve_pod"]

CONTROLLER_KINDS: Final = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet",
                                     "ReplicationController"})
"""Controllers: their pods exist only once the controller creates them, which kschedlib does not do."""


def _no_counts() -> Mapping[str, int]:
    return {}


@final
@attrs.frozen(slots=True)
class Cluster:
    """The objects of a cluster dump, in file order, and what the dump held that was not used.

    ``skipped`` counts objects of kinds kschedlib does not read (Deployments, ConfigMaps, custom
    resources, ...) by kind; ``custom_kinds`` names the custom resources among them.
    ``priority_classes`` are the PriorityClass objects read (they gave pods without
    ``spec.priority`` theirs, and do the same for a pod file given to ``explain``).
    """

    objects: tuple[object, ...] = ()
    skipped: Mapping[str, int] = attrs.field(factory=_no_counts, eq=False)
    custom_kinds: frozenset[str] = frozenset()
    priority_classes: tuple[PriorityClass, ...] = ()
    kubelet_versions: frozenset[str] = frozenset()
    """The nodes' ``status.nodeInfo.kubeletVersion`` values (``v1.33.2``), as read."""

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
        return attrs.evolve(self, objects=tuple(o for o in self.objects
                                                 if not (isinstance(o, Pod) and o.key == pod.key)))

    def with_objects(self, objects: Iterable[object]) -> Cluster:
        """The cluster plus ``objects`` (appended in order)."""
        return attrs.evolve(self, objects=(*self.objects, *objects))


def load_cluster(source: str | PathLike[str] | Mapping[str, Any] | Sequence[Any] | Cluster) -> Cluster:
    """Read a cluster: a file (JSON, or YAML with the ``yaml`` extra), a v1 ``List`` dict, or a list of
    objects, dicts, files and clusters (concatenated in order).  Model objects are kept as they are.

    Input an API server would refuse (two nodes of one name, two pods of one namespace/name, ...)
    raises :class:`~kschedlib.errors.ManifestError`, and nothing is loaded.
    """
    if isinstance(source, Cluster):
        return source
    collector = ObjectCollector()
    _collect(collector, source)
    objects = collector.finish()
    _check_unique(objects)
    return Cluster(tuple(objects), dict(collector.skipped), frozenset(collector.custom_kinds),
                   collector.classes_read, frozenset(collector.kubelet_versions))


def _collect(collector: ObjectCollector, source: object) -> None:
    """Add ``source`` (a file, a document, a Cluster, or an iterable of those and model objects)."""
    if isinstance(source, str | PathLike):
        for doc in read_documents(source):
            collector.add(doc)
    elif isinstance(source, Mapping):
        collector.add(source)
    elif isinstance(source, Cluster):
        collector.objects.extend(source.objects)  # type: ignore[arg-type]
        collector.skipped.update(source.skipped)
        collector.custom_kinds.update(source.custom_kinds)
        collector.kubelet_versions.update(source.kubelet_versions)
    else:
        for item in source:  # type: ignore[attr-defined]
            if isinstance(item, list | tuple):
                collector.add(item)
            elif isinstance(item, str | PathLike | Mapping | Cluster):
                _collect(collector, item)
            else:
                collector.objects.append(item)


def _check_unique(objects: Sequence[object]) -> None:
    """The API server's "already exists": one node per name, one pod per namespace/name."""
    nodes: set[str] = set()
    pods: set[str] = set()
    for obj in objects:
        if type(obj) is Pod:
            if obj.key in pods:
                raise ManifestError(f'pods "{obj.name}" already exists (the input holds it twice)',
                                    obj=f"Pod {obj.key}", field="metadata.name", value=obj.name)
            pods.add(obj.key)
        elif type(obj) is Node:
            if obj.name in nodes:
                raise ManifestError(f'nodes "{obj.name}" already exists (the input holds it twice)',
                                    obj=f"Node {obj.name}", field="metadata.name", value=obj.name)
            nodes.add(obj.name)


def _found(collector: ObjectCollector) -> str:
    kinds = sorted(collector.skipped)
    if not kinds:
        return "found no object"
    article = "an" if kinds[0][:1] in "AEIOU" else "a"
    what = f"{article} {kinds[0]}" if len(kinds) == 1 and collector.skipped[kinds[0]] == 1 else ", ".join(kinds)
    return f"found {what}"


def resolve_pod(cluster: Cluster, pod: Pod | Mapping[str, Any] | str | PathLike[str]) -> Pod:
    """A pod given as a model Pod, a v1 dict, a ``namespace/name`` of the cluster, or a file.

    A pod read without ``spec.priority`` gets it from the cluster's PriorityClasses.
    """
    if isinstance(pod, Pod):
        return pod
    collector = ObjectCollector(cluster.priority_classes)
    if isinstance(pod, Mapping):
        collector.add(pod)
        found_pods = [obj for obj in collector.finish() if isinstance(obj, Pod)]
        if len(found_pods) != 1:
            raise ManifestError(f"expected one Pod, {_found(collector)}", obj="<pod>", value=pod.get("kind"))
        return found_pods[0]
    text = fspath(pod)
    found = cluster.find_pod(text)
    if found is not None:
        return found
    try:
        docs = read_documents(text)
    except ManifestError:
        if Path(text).is_file():
            raise
        raise ManifestError("no such pod in the cluster, and not a readable pod file", obj=text) from None
    for doc in docs:
        collector.add(doc)
    pods = [obj for obj in collector.finish() if isinstance(obj, Pod)]
    if len(pods) == 1:
        return pods[0]
    if not pods:
        hint = ""
        if collector.skipped.keys() & CONTROLLER_KINDS:
            hint = ("; kschedlib schedules pods and does not create them from controllers: "
                    "pass one of its pods (kubectl get pod NAME -o yaml)")
        raise ManifestError(f"expected exactly one Pod, {_found(collector)}{hint}", obj=text)
    raise ManifestError(f"expected exactly one Pod, found {len(pods)}", obj=text)
