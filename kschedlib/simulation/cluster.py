"""Cluster files: Kubernetes v1 objects read into the model."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from os import PathLike, fspath
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.documents import read_documents
from kschedlib.errors import ManifestError
from kschedlib.model.convert import ObjectCollector, PriorityClass
from kschedlib.model.objects import Namespace, Node, OwnerSelector, Pod, PodDisruptionBudget

__all__ = ["CONFIG_KINDS", "CONTROLLER_KINDS", "FINISHED_PHASES", "Cluster", "load_cluster", "resolve_pod"]

CONTROLLER_KINDS: Final = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet",
                                     "ReplicationController"})
"""Controllers: their pods exist only once the controller creates them, which kschedlib does not do."""
CONFIG_KINDS: Final = frozenset({"KubeSchedulerConfiguration", "Policy"})
"""Scheduler configurations: a file holding one is the ``--config``, never the cluster."""
FINISHED_PHASES: Final = frozenset({"Succeeded", "Failed"})
"""Pods in these phases hold nothing on their node; kube-scheduler's informers never hand them over."""


def _no_counts() -> Mapping[str, int]:
    return {}


@final
@attrs.frozen(slots=True, repr=False)
class Cluster(FieldsRepr):
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
    finished: tuple[str, ...] = attrs.field(default=(), eq=False)
    """Pods dropped because their phase is ``Succeeded`` or ``Failed`` (kube-scheduler never sees them)."""
    duplicates: tuple[str, ...] = attrs.field(default=(), eq=False)
    """Objects the input held twice with one uid (``Pod default/web-1``): the later copy is used."""

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


def load_cluster(source: str | PathLike[str] | Mapping[str, Any] | Iterable[Any] | Cluster) -> Cluster:
    """Read a cluster: a file (JSON, or YAML with the ``yaml`` extra), a v1 ``List`` dict, or a list (or any
    iterable, read once) of objects, dicts, files and clusters (concatenated in order).  Model objects are
    kept as they are; dicts are converted as they come, so a generator need not hold them all at once.

    The same object twice (one uid, as overlapping ``kubectl get`` dumps give it) is read once, the later
    copy in the place of the first (:attr:`Cluster.duplicates`); two objects of one kind and name with
    different uids are what an API server would refuse ("already exists"): :class:`~kschedlib.errors.ManifestError`,
    and nothing is loaded, as for any other object an API server refuses.  Pods whose phase is
    ``Succeeded`` or ``Failed`` are dropped (:attr:`Cluster.finished`).
    """
    if isinstance(source, Cluster):
        return source
    collector = ObjectCollector()
    notes: dict[str, list[str]] = {"finished": [], "duplicates": []}
    _collect(collector, source, notes)
    objects, duplicates = _deduplicate(collector.finish())
    live = [o for o in objects if not (type(o) is Pod and o.phase in FINISHED_PHASES)]
    finished = [o.key for o in objects if type(o) is Pod and o.phase in FINISHED_PHASES]
    return Cluster(tuple(live), dict(collector.skipped), frozenset(collector.custom_kinds),
                   collector.classes_read, frozenset(collector.kubelet_versions),
                   tuple(notes["finished"] + finished), tuple(dict.fromkeys(notes["duplicates"] + duplicates)))


def _collect(collector: ObjectCollector, source: object, notes: dict[str, list[str]]) -> None:
    """Add ``source`` (a file, a document, a Cluster, or an iterable of those and model objects)."""
    if isinstance(source, str | PathLike):
        for doc in read_documents(source):
            _not_a_config(doc, fspath(source))
            collector.add(doc)
    elif isinstance(source, Mapping):
        _not_a_config(source, "<cluster>")
        collector.add(source)
    elif isinstance(source, Cluster):
        collector.objects.extend(source.objects)  # type: ignore[arg-type]
        collector.skipped.update(source.skipped)
        collector.custom_kinds.update(source.custom_kinds)
        collector.kubelet_versions.update(source.kubelet_versions)
        notes["finished"].extend(source.finished)
        notes["duplicates"].extend(source.duplicates)
    else:
        for item in source:  # type: ignore[attr-defined]
            if isinstance(item, list | tuple):
                collector.add(item)
            elif isinstance(item, str | PathLike | Mapping | Cluster):
                _collect(collector, item, notes)
            else:
                collector.objects.append(item)


def _not_a_config(doc: object, source: str) -> None:
    """A scheduler configuration given where cluster objects go: say which file, and where it goes."""
    kind = doc.get("kind") if isinstance(doc, Mapping) else None
    if kind in CONFIG_KINDS:
        raise ManifestError(f"holds a {kind} (a scheduler configuration), not cluster objects: give it with "
                            "--config (config= in Python), and the cluster's objects as the cluster", obj=source)


def _identity(obj: object) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of a named object (the API server's key), else ``None``."""
    name = getattr(obj, "name", None)
    if type(name) is not str:
        return None
    namespace = getattr(obj, "namespace", "")
    kind = obj.kind if isinstance(obj, OwnerSelector) else type(obj).__name__  # a Service, a ReplicaSet, ...
    return kind, namespace if type(namespace) is str else "", name


def _uid(obj: object) -> str:
    """The uid the input gave ``obj`` ("" when none: a pod's default uid is its namespace/name)."""
    uid = getattr(obj, "uid", "")
    if not isinstance(uid, str) or (isinstance(obj, Pod) and uid == obj.key):
        return ""
    return uid


def _deduplicate(objects: Sequence[object]) -> tuple[list[object], list[str]]:
    """One object per kind and name: a second copy with the same uid replaces the first (in its place);
    one with another uid, or without any (two creates of one manifest), is the API server's "already exists"."""
    kept: list[object] = []
    where: dict[tuple[str, str, str], int] = {}
    duplicates: list[str] = []
    for obj in objects:
        identity = _identity(obj)
        if identity is None:
            kept.append(obj)
            continue
        index = where.get(identity)
        if index is None:
            where[identity] = len(kept)
            kept.append(obj)
            continue
        kind, namespace, name = identity
        label = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        first, second = _uid(kept[index]), _uid(obj)
        if not first or first != second:
            resource = kind.lower() + ("es" if kind.endswith("s") else "s")  # the API server's resource name
            if first and second:
                raise ManifestError(f'{resource} "{name}" already exists (the input holds two objects of this name, '
                                    f"uids {first} and {second})", obj=label, field="metadata.uid", value=second)
            raise ManifestError(f'{resource} "{name}" already exists (the input holds it twice)', obj=label,
                                field="metadata.name", value=name)
        kept[index] = obj
        duplicates.append(label)
    return kept, duplicates


def _found(collector: ObjectCollector) -> str:
    kinds = sorted(collector.skipped)
    if not kinds:
        return "found no object"
    article = "an" if kinds[0][:1] in "AEIOU" else "a"
    what = f"{article} {kinds[0]}" if len(kinds) == 1 and collector.skipped[kinds[0]] == 1 else ", ".join(kinds)
    return f"found {what}"


def _pod_hint(cluster: Cluster, ref: str) -> str:
    """What the user may have meant by a pod reference that names no pod."""
    namespace, _, name = ref.rpartition("/")
    same = [p.key for p in cluster.pods if p.name == name]
    if same:  # a bare name several namespaces share, or the wrong namespace
        return f"; give one of the pods of this name: {', '.join(same)}"
    if any(key == ref or key.endswith(f"/{ref}") for key in cluster.finished):
        return "; it has finished (Succeeded or Failed), and finished pods are dropped: kube-scheduler never sees them"
    pods = {p.name: p.key for p in cluster.pods if not namespace or p.namespace == namespace}
    import difflib  # here: only a pod that is not found needs suggestions

    close = [pods[found] if namespace else found for found in difflib.get_close_matches(name, pods, n=3)]
    if len(close) > 1:
        return f"; did you mean {', '.join(close[:-1])} or {close[-1]}?"
    return f"; did you mean {close[0]}?" if close else ""


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
        if os.path.isfile(text):
            raise
        raise ManifestError(f"no such pod in the cluster, and not a readable pod file{_pod_hint(cluster, text)}",
                            obj=text) from None
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
