"""Running the extenders where kube-scheduler runs them (``schedule_one.go``: ``findNodesThatPassExtenders``,
``prioritizeNodes``, ``extendersBinding``).

Each function takes the extenders in their configured order (non-ignorable
first) and applies kube-scheduler v1.30's rules for interest, ignorable
failures, status merging and score scaling.  Extender exceptions never
escape: they become an ``ERROR`` status or are skipped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import Final

import attrs

from kschedlib.errors import ConfigError
from kschedlib.framework.config import ProfileConfig
from kschedlib.framework.extender import MAX_EXTENDER_PRIORITY, Extender, ExtenderFilterResult
from kschedlib.framework.extension_points import MAX_NODE_SCORE
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod

__all__ = [
    "NODE_RESOURCES_FIT",
    "bind_with_extenders",
    "check_ignored_resources",
    "filter_with_extenders",
    "has_filter_or_scoring",
    "order_extenders",
    "prioritize_with_extenders",
    "with_ignored_resources",
]

SCORE_SCALE: Final = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
NODE_RESOURCES_FIT: Final = "NodeResourcesFit"


def order_extenders(extenders: Iterable[Extender]) -> tuple[Extender, ...]:
    """Configured order, with every ignorable extender moved after the non-ignorable ones."""
    items = list(extenders)
    return tuple([e for e in items if not e.is_ignorable] + [e for e in items if e.is_ignorable])


def has_filter_or_scoring(extenders: Sequence[Extender]) -> bool:
    """Whether an extender filters or prioritizes (then the node search keeps more than one node)."""
    return any(e.is_filter or e.is_prioritizer for e in extenders)


def _message(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _merge_statuses(result: ExtenderFilterResult, statuses: MutableMapping[str, Status], replace: bool) -> None:
    """FailedAndUnresolvable wins over Failed for a node listed in both.

    v1.30 appends the extender's reason to a status the node already has (an unresolvable verdict
    raising its code); with ``replace`` (v1.32+) the verdict becomes the node's whole status.
    """
    unresolvable = result.failed_and_unresolvable
    for name, reason in unresolvable.items():
        known = None if replace else statuses.get(name)
        reasons = (*known.all_reasons(), reason) if known is not None else (reason,)
        statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)
    for name, reason in result.failed.items():
        if name in unresolvable:
            continue
        known = None if replace else statuses.get(name)
        statuses[name] = Status.unschedulable(reason) if known is None else known.with_reason(reason)


def filter_with_extenders(
    extenders: Sequence[Extender],
    pod: Pod,
    feasible: Sequence[NodeInfo],
    statuses: MutableMapping[str, Status],
    snapshot: Snapshot,
    *,
    replace_statuses: bool = False,
) -> list[NodeInfo] | Status:
    """The nodes left after every interested extender's filter, each on the previous one's output.

    ``statuses`` receives the extenders' rejections (statuses without a plugin
    name).  Returned nodes are the snapshot's NodeInfos where the name is known:
    Score plugins read the snapshot, as kube-scheduler's do.
    """
    nodes = list(feasible)
    for extender in extenders:
        if not nodes:
            break
        if not extender.is_interested(pod):
            continue
        try:
            result = extender.filter(pod, nodes)
        except Exception as exc:
            if extender.is_ignorable:
                continue
            return Status.from_error(_message(exc))
        _merge_statuses(result, statuses, replace_statuses)
        nodes = [snapshot.find(info.name) or info for info in result.nodes]
    return nodes


def prioritize_with_extenders(
    extenders: Sequence[Extender], pod: Pod, nodes: Sequence[NodeInfo]
) -> tuple[list[int], dict[str, list[tuple[str, int]]]]:
    """Per node, the sum the extenders add to its total, and their entries ``(extender, score x weight x 10)``.

    Failures are ignored (that extender adds nothing); hosts outside ``nodes``
    are ignored; a host listed twice counts twice.  An interested extender that
    does not prioritize adds an entry of 0 for every node.
    """
    index = {info.name: position for position, info in enumerate(nodes)}
    added = [0] * len(nodes)
    entries: dict[str, list[tuple[str, int]]] = {}
    for extender in extenders:
        if not extender.is_interested(pod):
            continue
        if not extender.is_prioritizer:
            pairs, weight = [(info.name, 0) for info in nodes], 0
        else:
            try:
                pairs, weight = extender.prioritize(pod, nodes), extender.weight
            except Exception:
                continue
        for host, score in pairs:
            position = index.get(host)
            if position is None:
                continue
            value = score * weight * SCORE_SCALE
            added[position] += value
            entries.setdefault(host, []).append((extender.name, value))
    return added, entries


def bind_with_extenders(extenders: Sequence[Extender], pod: Pod, node_name: str) -> Status | None:
    """The first interested binder's verdict, or ``None`` when no extender bound (the Bind plugins do it).

    A failing ignorable binder hands over to the next one.
    """
    for extender in extenders:
        if not extender.is_binder or not extender.is_interested(pod):
            continue
        try:
            extender.bind(pod, node_name)
        except Exception as exc:
            if extender.is_ignorable:
                continue
            return Status.from_error(_message(exc))
        return Status.success()
    return None


def with_ignored_resources(profile: ProfileConfig, names: Sequence[str]) -> ProfileConfig:
    """The profile with NodeResourcesFit's ``ignoredResources`` replaced by ``names`` (``ignoredByScheduler``)."""
    if not names:
        return profile
    config: dict[str, Mapping[str, object] | None] = dict(profile.plugin_config)
    args = dict(config.get(NODE_RESOURCES_FIT) or {})
    args["ignoredResources"] = list(names)
    config[NODE_RESOURCES_FIT] = args
    return attrs.evolve(profile, plugin_config=config)


def check_ignored_resources(profile: ProfileConfig, plugin_args: Mapping[str, object], where: str) -> None:
    """kube-scheduler refuses ``ignoredByScheduler`` resources for a profile without NodeResourcesFit."""
    if NODE_RESOURCES_FIT not in plugin_args and NODE_RESOURCES_FIT not in profile.plugin_config:
        raise ConfigError("can't find NodeResourcesFitArgs in plugin config", field=f"{where}.pluginConfig")
