"""Timelines: cluster changes applied while a simulation runs (``simulate --events``).

Each event is ``{"op": ..., ...args, "at": ...}``; see DESIGN "Timelines".  Events
reach the scheduler through the same calls an embedder makes, so pods in the
unschedulable pool move only on events that may help them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ManifestError
from kschedlib.model.convert import node_from_dict, pod_from_dict
from kschedlib.model.objects import Node, Pod, Taint
from kschedlib.model.quantity import Quantity, parse_quantity
from kschedlib.scheduler import Scheduler
from kschedlib.simulation._drain import delete_node, drain_node
from kschedlib.simulation.cluster import load_cluster

__all__ = ["Batch", "Change", "TimelineEvent", "apply_event", "batches", "parse_events", "waiting_for"]

OPS: Final = frozenset({
    "add_node", "delete_node", "label_node", "taint_node", "untaint_node", "set_unschedulable",
    "set_allocatable", "add_pod", "delete_pod", "remove_gates", "label_pod", "drain_node", "apply",
})


@final
@attrs.frozen(slots=True, repr=False)
class TimelineEvent(FieldsRepr):
    """One cluster change and when it applies (``idle``, ``with_previous``, ``nominated`` or ``attempts``)."""

    index: int
    op: str
    args: Mapping[str, Any]
    at: str = "idle"
    pod: str = ""
    attempts: int = 0


@final
@attrs.frozen(slots=True, repr=False)
class Batch(FieldsRepr):
    """Events applied together; the first event's ``at`` says when."""

    events: tuple[TimelineEvent, ...]

    @property
    def first(self) -> TimelineEvent:
        return self.events[0]


def _parse_at(raw: Any, where: str) -> tuple[str, str, int]:
    if raw is None or raw == "idle":
        return "idle", "", 0
    if raw == "with_previous":
        return "with_previous", "", 0
    if isinstance(raw, Mapping) and isinstance(raw.get("nominated"), str):
        return "nominated", raw["nominated"], 0
    if isinstance(raw, Mapping) and isinstance(raw.get("attempts"), Mapping):
        spec = raw["attempts"]
        if isinstance(spec.get("pod"), str) and isinstance(spec.get("n"), int):
            return "attempts", spec["pod"], spec["n"]
    raise ManifestError("unknown 'at'", obj="events", field=f"{where}.at", value=raw)


def parse_events(raw: Any) -> list[TimelineEvent]:
    """Validate a timeline document (a JSON list of events)."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ManifestError("a timeline must be a list of events", obj="events", value=type(raw).__name__)
    out = []
    for index, item in enumerate(raw):
        where = f"[{index}]"
        if not isinstance(item, Mapping) or item.get("op") not in OPS:
            op = item.get("op") if isinstance(item, Mapping) else item
            raise ManifestError(f"op must be one of {sorted(OPS)}", obj="events", field=f"{where}.op", value=op)
        at, pod, attempts = _parse_at(item.get("at"), where)
        if index == 0 and at == "with_previous":
            raise ManifestError("the first event cannot be 'with_previous'", obj="events", field=f"{where}.at")
        args = {k: v for k, v in item.items() if k not in ("op", "at")}
        _check_args(item["op"], args, index)  # refused before the run starts, not half way through it
        out.append(TimelineEvent(index, item["op"], args, at, pod, attempts))
    return out


_NODE_OPS: Final = frozenset({"delete_node", "drain_node", "label_node", "taint_node", "untaint_node",
                              "set_unschedulable", "set_allocatable"})
_POD_OPS: Final = frozenset({"delete_pod", "remove_gates", "label_pod"})


def _check_args(op: str, args: Mapping[str, Any], index: int) -> None:
    """Refuse an event whose arguments could only fail when it applies: a run never stops half way."""
    where = f"[{index}]"

    def text(name: str, value: Any) -> None:
        if not isinstance(value, str) or not value:
            raise ManifestError("must be a non-empty string", obj="events", field=f"{where}.{name}", value=value)

    if op == "apply":
        _applied(args, index)
    elif op in ("add_node", "add_pod"):
        kind = op.removeprefix("add_")
        raw = args.get(kind)
        if not isinstance(raw, Mapping):
            raise ManifestError("must be an object (a v1 manifest)", obj="events", field=f"{where}.{kind}", value=raw)
        try:
            (node_from_dict if kind == "node" else pod_from_dict)(raw)
        except ManifestError as exc:
            field = f"{where}.{kind}" + (f".{exc.field}" if exc.field else "")
            raise ManifestError(exc.message, obj="events", field=field, value=exc.value) from exc
    elif op in _NODE_OPS:
        text("name", args.get("name"))
    elif op in _POD_OPS:
        text("name", args.get("name"))
        text("namespace", args.get("namespace", "default"))
    if op == "drain_node" and not isinstance(args.get("respect_pdbs", True), bool):
        raise ManifestError("must be true or false", obj="events", field=f"{where}.respect_pdbs",
                            value=args.get("respect_pdbs"))
    if op == "taint_node":
        _taint(args, where)
    if op == "set_allocatable":
        _allocatable(args, where)
    if op in ("label_node", "label_pod"):
        _label_changes(args, where)
    if op == "remove_gates" and args.get("gates") is not None and (
            not isinstance(args["gates"], list) or not all(isinstance(g, str) for g in args["gates"])):
        raise ManifestError("must be a list of gate names", obj="events", field=f"{where}.gates", value=args["gates"])


def _taint(args: Mapping[str, Any], where: str) -> Taint:
    raw = args.get("taint")
    if not isinstance(raw, Mapping):
        raise ManifestError("must be an object with key and effect", obj="events", field=f"{where}.taint", value=raw)
    try:
        return Taint(raw.get("key"), raw.get("effect"), raw.get("value", ""))  # type: ignore[arg-type]
    except ManifestError as exc:
        raise ManifestError(exc.message, obj="events", field=f"{where}.taint.{exc.field}", value=exc.value) from exc


def _allocatable(args: Mapping[str, Any], where: str) -> dict[str, Quantity]:
    raw = args.get("allocatable") or {}
    if not isinstance(raw, Mapping):
        raise ManifestError("must be an object of quantities", obj="events", field=f"{where}.allocatable", value=raw)
    out = {}
    for name, value in raw.items():
        try:
            out[str(name)] = parse_quantity(value)
        except ManifestError as exc:
            raise ManifestError(exc.message, obj="events", field=f"{where}.allocatable.{name}", value=value) from exc
    return out


def _label_changes(args: Mapping[str, Any], where: str) -> Mapping[str, str | None]:
    raw = args.get("labels") or {}
    if not isinstance(raw, Mapping):
        raise ManifestError("must be an object (null removes a label)", obj="events", field=f"{where}.labels",
                            value=raw)
    return raw


def waiting_for(event: TimelineEvent) -> str:
    """What an event still waits for: ``idle``, ``attempts ns/name N``, ``nominated ns/name``, ``with_previous``."""
    if event.at == "attempts":
        return f"attempts {event.pod} {event.attempts}"
    if event.at == "nominated":
        return f"nominated {event.pod}"
    return event.at


def batches(events: Sequence[TimelineEvent]) -> list[Batch]:
    """Group ``with_previous`` events with the event before them."""
    groups: list[list[TimelineEvent]] = []
    for event in events:
        if event.at == "with_previous" and groups:
            groups[-1].append(event)
        else:
            groups.append([event])
    return [Batch(tuple(group)) for group in groups]


def _applied(args: Mapping[str, Any], index: int) -> tuple[object, ...]:
    """The object an ``apply`` event adds or replaces (a ResourceClaim freed or allocated by a controller,
    a new ResourceSlice, a PersistentVolume...); pods and nodes have events of their own."""
    where = f"[{index}].object"
    raw = args.get("object")
    if not isinstance(raw, Mapping):
        raise ManifestError("must be an object (a v1 manifest)", obj="events", field=where, value=raw)
    kind = raw.get("kind")
    if kind in ("Pod", "Node", "List"):
        raise ManifestError("use add_pod / add_node for pods and nodes, one object per apply", obj="events",
                            field=f"{where}.kind", value=kind)
    read = load_cluster([raw])
    if not read.objects:
        raise ManifestError("is not a kind kschedlib reads", obj="events", field=f"{where}.kind", value=kind)
    return read.objects


def _node(scheduler: Scheduler, name: str) -> Node:
    info = scheduler.snapshot().find(name)
    if info is None or info.node is None:
        raise ManifestError("no such node", obj=f"Node {name}")
    return info.node


def _pod(scheduler: Scheduler, args: Mapping[str, Any]) -> Pod:
    """The pod as it is now (an earlier event of the same batch may have deleted or changed it)."""
    key = f"{args.get('namespace', 'default')}/{args.get('name')}"
    pod = scheduler.get_pod(key)
    if pod is None:
        raise ManifestError("no such pod", obj=f"Pod {key}")
    return pod


def _merge_labels(labels: Mapping[str, str], changes: Mapping[str, str | None]) -> dict[str, str]:
    out = dict(labels)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = str(value)
    return out


def _node_event(scheduler: Scheduler, event: TimelineEvent) -> None:
    args = event.args
    node = _node(scheduler, str(args.get("name")))
    where = f"[{event.index}]"
    if event.op == "label_node":
        node = attrs.evolve(node, labels=_merge_labels(node.labels, _label_changes(args, where)))
    elif event.op == "taint_node":
        node = attrs.evolve(node, taints=(*node.taints, _taint(args, where)))
    elif event.op == "untaint_node":
        node = attrs.evolve(node, taints=tuple(t for t in node.taints if t.key != args.get("key")))
    elif event.op == "set_unschedulable":
        node = attrs.evolve(node, unschedulable=bool(args.get("unschedulable")))
    else:
        amounts = _allocatable(args, where)
        node = attrs.evolve(node, allocatable={**node.allocatable, **amounts}, capacity={**node.capacity, **amounts})
    scheduler.update_node(node)


@final
@attrs.frozen(slots=True, repr=False)
class Change(FieldsRepr):
    """Pods an event deleted or added as pending (``namespace/name``), and what it did to a node."""

    deleted: tuple[str, ...] = ()
    added_pending: tuple[str, ...] = ()
    node_removal: Mapping[str, Any] | None = None
    """For ``delete_node`` and ``drain_node``: the report entry (see DESIGN "Timelines")."""


def _remove_node(scheduler: Scheduler, event: TimelineEvent, budgets: dict[str, int]) -> Change:
    name = str(event.args.get("name"))
    if event.op == "delete_node":
        again, gone = delete_node(scheduler, name)
        entry = {"index": event.index, "op": event.op, "node": name, "rescheduled": again, "deleted": gone}
        return Change(deleted=tuple(gone), added_pending=tuple(again), node_removal=entry)
    respect = bool(event.args.get("respect_pdbs", True))  # checked when the timeline was read
    drained = drain_node(scheduler, name, scheduler.pod_disruption_budgets(), budgets, respect_pdbs=respect)
    entry = {"index": event.index, "op": event.op, **drained.to_dict()}
    if drained.blocked is not None:
        return Change(node_removal=entry)
    return Change(deleted=tuple(drained.left), added_pending=drained.moved, node_removal=entry)


def apply_event(scheduler: Scheduler, event: TimelineEvent, budgets: dict[str, int] | None = None) -> Change:
    """Apply one event through the scheduler's public event calls, to the cluster as it is now.

    An event whose node or pod is gone (an earlier event deleted it), or that the cluster refuses (a
    pod added under a bound pod's name), raises a :class:`~kschedlib.errors.KschedError` and changes
    nothing; :func:`~kschedlib.simulate` reports it and goes on.

    ``budgets`` carries PodDisruptionBudget allowances from one ``drain_node`` to the next.
    """
    args = event.args
    if event.op == "add_node":
        scheduler.add_node(node_from_dict(args["node"]))
    elif event.op in ("delete_node", "drain_node"):
        return _remove_node(scheduler, event, budgets if budgets is not None else {})
    elif event.op == "add_pod":
        added = pod_from_dict(args["pod"])
        scheduler.add_pod(added)
        return Change(added_pending=() if added.node_name else (added.key,))
    elif event.op == "delete_pod":
        pod = _pod(scheduler, args)
        scheduler.remove_pod(pod.key)
        return Change(deleted=(pod.key,))
    elif event.op == "remove_gates":
        pod = _pod(scheduler, args)
        names = args.get("gates")
        gates = () if names is None else tuple(g for g in pod.scheduling_gates if g not in names)
        scheduler.update_pod(attrs.evolve(pod, scheduling_gates=gates))
    elif event.op == "label_pod":
        pod = _pod(scheduler, args)
        scheduler.update_pod(attrs.evolve(pod, labels=_merge_labels(pod.labels, args.get("labels") or {})))
    elif event.op == "apply":
        scheduler.add_objects(_applied(args, event.index))
    else:
        _node_event(scheduler, event)
    return Change()
