"""NodePorts: a pod's host ports must be free on the node.

Only regular containers' ports with ``hostPort > 0`` count (init containers
are ignored, as in kube).  An empty ``hostIP`` means ``0.0.0.0``, which clashes
with the same protocol and port on any IP; a specific IP clashes with itself
and with ``0.0.0.0`` (:func:`kschedlib.framework.node_info.ports_conflict`).
PreFilter collects the wanted ports once and Skips pods that want none, so the
per-node Filter is a few set lookups against ``NodeInfo.used_ports``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import (
    ActionType,
    ClusterEventWithHint,
    EnqueueExtensions,
    QueueingHint,
    hint_of,
    node_events,
    pod_events,
)
from kschedlib.framework.extension_points import FilterPlugin, PreFilterPlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalFilter
from kschedlib.framework.node_info import NodeInfo, ports_conflict
from kschedlib.framework.pod_info import HostPort
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["ERR_REASON", "NodePorts", "fits"]

ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
_REJECTED: Final = Status.unschedulable(ERR_REASON)


def wanted_host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """(host IP, protocol, port) of every regular-container port with ``hostPort > 0``, defaults applied.

    The same triples :attr:`PodInfo.host_ports` holds, computed from the bare pod PreFilter receives.
    """
    return tuple(
        (port.host_ip or "0.0.0.0", port.protocol or "TCP", port.host_port)
        for container in pod.containers
        for port in container.ports
        if port.host_port > 0
    )


def fits_ports(wanted: Iterable[HostPort], node_info: NodeInfo) -> bool:
    """Whether none of the ``wanted`` ports clashes with the ports in use on the node."""
    used = node_info.used_ports
    if not used:
        return True
    for ip, protocol, port in wanted:
        if ports_conflict(used, ip, protocol, port):
            return False
    return True


def after_pod_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue when the deleted pod was placed (or nominated) and held a host port the pod wants."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.node_name and not old.nominated_node_name:
        return QueueingHint.QUEUE_SKIP
    return _frees_a_wanted_port(pod, old)


def after_pod_deleted_v130(pod: Pod, old: object, new: object) -> QueueingHint:
    """kube v1.30: as :func:`after_pod_deleted`, but a pod only nominated to a node frees nothing."""
    if not isinstance(old, Pod):
        return QueueingHint.QUEUE
    if not old.node_name:
        return QueueingHint.QUEUE_SKIP
    return _frees_a_wanted_port(pod, old)


def _frees_a_wanted_port(pod: Pod, old: Pod) -> QueueingHint:
    held = wanted_host_ports(old)
    if not held:
        return QueueingHint.QUEUE_SKIP
    used = {ip: frozenset((protocol, port) for other_ip, protocol, port in held if other_ip == ip)
            for ip, _, _ in held}
    return hint_of(any(ports_conflict(used, ip, protocol, port) for ip, protocol, port in wanted_host_ports(pod)))


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """kube's ``nodeports.Fits``: the pod's host ports are all free on the node."""
    return fits_ports(wanted_host_ports(pod), node_info)


@final
@attrs.frozen(slots=True, repr=False)
class _PreFilterState(FieldsRepr):
    """The pod's wanted host ports (never empty: PreFilter Skips otherwise)."""

    ports: tuple[HostPort, ...]

    def clone(self) -> _PreFilterState:
        return self


_PRE_FILTER_KEY: Final[StateKey[_PreFilterState]] = StateKey("PreFilterNodePorts")


@final
class NodePorts(PreFilterPlugin, FilterPlugin, NodeLocalFilter, EnqueueExtensions):
    """Rejects nodes where a wanted host port is taken (Unschedulable: evicting its user frees it)."""

    name: ClassVar[str] = "NodePorts"
    __slots__ = ("_narrow_hints",)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """The cluster events that may make a pod this plugin rejected schedulable (v1.30's or v1.36's)."""
        if not self._narrow_hints:
            return (pod_events(ActionType.DELETE, after_pod_deleted_v130),
                    node_events(ActionType.ADD | ActionType.UPDATE))
        return (pod_events(ActionType.DELETE, after_pod_deleted), node_events(ActionType.ADD))

    def __init__(self, args: None, handle: Handle) -> None:
        self._narrow_hints = handle.switches.narrow_queueing_hints
        """Nothing to configure: kube's NodePorts has no args."""

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Skip pods without host ports; otherwise remember the wanted ports for Filter."""
        ports = wanted_host_ports(pod)
        if not ports:
            return Status.skip()
        state.write(_PRE_FILTER_KEY, _PreFilterState(ports))
        return Status.success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Needs PreFilter's state; without it the result is an Error, as in kube."""
        wanted = state.get(_PRE_FILTER_KEY)
        if wanted is None:
            return Status.from_error(f'reading "{_PRE_FILTER_KEY.name}" from cycleState: not found')
        return Status.SUCCESS if fits_ports(wanted.ports, node_info) else _REJECTED

    def filter_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """The verdict depends only on the wanted host ports."""
        wanted = state.get(_PRE_FILTER_KEY)
        return wanted.ports if wanted is not None else None
