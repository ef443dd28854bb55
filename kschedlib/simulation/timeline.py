"""Timelines: cluster changes applied while a simulation runs (``simulate --events``).

Each event is ``{"op": ..., ...args, "at": ...}``; see DESIGN "Timelines".  Events
reach the scheduler through the same calls an embedder makes, so pods in the
unschedulable pool move only on events that may help them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import attrs

from kschedlib.errors import ManifestError
from kschedlib.model.convert import node_from_dict, pod_from_dict
from kschedlib.model.objects import Node, Pod, Taint
from kschedlib.model.quantity import parse_quantity
from kschedlib.scheduler import Scheduler
from kschedlib.simulation._drain import delete_node, drain_node
from kschedlib.simulation.cluster import load_cluster

__all__ = ["Batch", "Change", "TimelineEvent", "apply_event", "batches", "parse_events", "waiting_for"]

OPS: Final = frozenset({
    "add_node", "delete_node", "label_node", "taint_node", "untaint_node", "set_unschedulable",
    "set_allocatable", "add_pod", "delete_pod", "remove_gates", "label_pod", "drain_node", "apply",
})


@final
@attrs.frozen(slots=True)
class TimelineEvent:
    """One cluster change and when it applies (``idle``, ``with_previous``, ``nominated`` or ``attempts``)."""

    index: int
    op: str
    args: Mapping[str, Any]
    at: str = "idle"
    pod: str = ""
    attempts: int = 0


@final
@attrs.frozen(slots=True)
class Batch:
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
        if item["op"] == "apply":
            _applied(args, index)  # refused before the run starts, not half way through it
        out.append(TimelineEvent(index, item["op"], args, at, pod, attempts))
    return out


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


def _pod(known: Mapping[str, Pod], args: Mapping[str, Any]) -> Pod:
    key = f"{args.get('namespace', 'default')}/{args.get('name')}"
    pod = known.get(key)
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
    if event.op == "label_node":
        node = attrs.evolve(node, labels=_merge_labels(node.labels, args.get("labels") or {}))
    elif event.op == "taint_node":
        taint = args.get("taint") or {}
        node = attrs.evolve(node, taints=(*node.taints, Taint(taint["key"], taint["effect"], taint.get("value", ""))))
    elif event.op == "untaint_node":
        node = attrs.evolve(node, taints=tuple(t for t in node.taints if t.key != args.get("key")))
    elif event.op == "set_unschedulable":
        node = attrs.evolve(node, unschedulable=bool(args.get("unschedulable")))
    else:
        amounts = {name: parse_quantity(value) for name, value in (args.get("allocatable") or {}).items()}
        node = attrs.evolve(node, allocatable={**node.allocatable, **amounts}, capacity={**node.capacity, **amounts})
    scheduler.update_node(node)


@final
@attrs.frozen(slots=True)
class Change:
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
    respect = event.args.get("respect_pdbs", True)
    if not isinstance(respect, bool):
        raise ManifestError("must be true or false", obj="events", field=f"[{event.index}].respect_pdbs", value=respect)
    drained = drain_node(scheduler, name, scheduler.pod_disruption_budgets(), budgets, respect_pdbs=respect)
    entry = {"index": event.index, "op": event.op, **drained.to_dict()}
    if drained.blocked is not None:
        return Change(node_removal=entry)
    return Change(deleted=tuple(drained.left), added_pending=drained.moved, node_removal=entry)


def apply_event(scheduler: Scheduler, event: TimelineEvent, known: Mapping[str, Pod],
                budgets: dict[str, int] | None = None) -> Change:
    """Apply one event through the scheduler's public event calls.

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
        pod = _pod(known, args)
        scheduler.remove_pod(pod.key)
        return Change(deleted=(pod.key,))
    elif event.op == "remove_gates":
        pod = _pod(known, args)
        names = args.get("gates")
        gates = () if names is None else tuple(g for g in pod.scheduling_gates if g not in names)
        scheduler.update_pod(attrs.evolve(pod, scheduling_gates=gates))
    elif event.op == "label_pod":
        pod = _pod(known, args)
        scheduler.update_pod(attrs.evolve(pod, labels=_merge_labels(pod.labels, args.get("labels") or {})))
    elif event.op == "apply":
        scheduler.add_objects(_applied(args, event.index))
    else:
        _node_event(scheduler, event)
    return Change()
