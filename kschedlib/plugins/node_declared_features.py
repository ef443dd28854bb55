"""NodeDeclaredFeatures (kube-scheduler v1.35 alpha, v1.36 beta on): nodes must declare what a pod needs.

A kubelet lists the node-level features it supports in ``status.declaredFeatures``; a pod whose
spec needs one of them fits only nodes that declare it (UnschedulableAndUnresolvable otherwise).
What a pod needs is inferred from its spec by the feature registry of v1.36
(``k8s.io/component-helpers/nodedeclaredfeatures``): of its five features only two are inferred for
scheduling --

* ``RestartAllContainersOnContainerExits``: a container or init container has a ``restartPolicyRules``
  entry with action ``RestartAllContainers``;
* ``UserNamespacesHostNetworkSupport``: ``hostNetwork: true`` together with ``hostUsers: false``.

Every other pod is skipped at PreFilter, so the plugin costs nothing for ordinary pods.

A node's list is matched as kube matches it: merged in order against the sorted registry, names
the registry does not know ignored -- so a list that is not sorted loses the entries out of order
(kubelets always report it sorted).  With the ``NodeDeclaredFeatures`` gate off (the
``node_declared_features`` switch) the plugin, if configured at all, does nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
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
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.model.objects import Node, Pod

__all__ = [
    "ERR_REASON",
    "FEATURES",
    "NodeDeclaredFeatures",
    "after_node_change",
    "after_pod_update",
    "declared_features",
    "required_features",
]

ERR_REASON: Final = "node(s) didn't match Pod's required features"
RESTART_ALL_CONTAINERS: Final = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK: Final = "UserNamespacesHostNetworkSupport"
FEATURES: Final = (
    "ExtendWebSocketsToKubelet",
    "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScalingInitContainers",
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
)
"""The v1.36 registry, sorted by name (the others are only inferred for pod updates, never for scheduling)."""

_STATE_KEY: Final[StateKey[_PreFilterState]] = StateKey("PreFilterNodeDeclaredFeatures")
_REJECTED: Final = Status.unresolvable(ERR_REASON)


def required_features(pod: Pod) -> frozenset[str]:
    """The declared node features the pod's spec needs to be scheduled (v1.36's inference)."""
    needed: set[str] = set()
    if any(rule.action == "RestartAllContainers"
           for container in (*pod.containers, *pod.init_containers)
           for rule in container.restart_policy_rules):
        needed.add(RESTART_ALL_CONTAINERS)
    if pod.host_network and pod.host_users is False:
        needed.add(USER_NAMESPACES_HOST_NETWORK)
    return frozenset(needed)


@functools.lru_cache(maxsize=256)
def declared_features(declared: tuple[str, ...]) -> frozenset[str]:
    """The registry's features among a node's ``status.declaredFeatures``, merged in order as kube does."""
    found: set[str] = set()
    i = j = 0
    while i < len(declared) and j < len(FEATURES):
        if declared[i] == FEATURES[j]:
            found.add(FEATURES[j])
            i += 1
            j += 1
        elif declared[i] < FEATURES[j]:
            i += 1
        else:
            j += 1
    return frozenset(found)


def after_node_change(pod: Pod, old: object, new: object) -> QueueingHint:
    """A node added, or one whose declared features changed, may now fit."""
    if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
        return QueueingHint.QUEUE
    return hint_of(old is None or old.declared_features != new.declared_features)


def after_pod_update(pod: Pod, old: object, new: object) -> QueueingHint:
    """Only an update of the waiting pod that changes what it needs may help."""
    if not isinstance(old, Pod) or not isinstance(new, Pod):
        return QueueingHint.QUEUE
    if new.uid != pod.uid:
        return QueueingHint.QUEUE_SKIP
    return hint_of(required_features(old) != required_features(new))


@final
@attrs.frozen(slots=True, repr=False)
class _PreFilterState(FieldsRepr):
    """The features the pod needs (never empty: PreFilter Skips otherwise)."""

    required: frozenset[str]

    def clone(self) -> _PreFilterState:
        return self


@final
class NodeDeclaredFeatures(PreFilterPlugin, FilterPlugin, EnqueueExtensions):
    """Rejects nodes that do not declare every feature the pod needs."""

    name: ClassVar[str] = "NodeDeclaredFeatures"
    __slots__ = ("_enabled",)

    def __init__(self, args: None, handle: Handle) -> None:
        """No args; enabled by the ``NodeDeclaredFeatures`` gate."""
        self._enabled = handle.switches.node_declared_features

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A node added or declaring new features; the pod itself updated (none while disabled)."""
        if not self._enabled:
            return ()
        return (node_events(ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE, after_node_change),
                pod_events(ActionType.UPDATE, after_pod_update))

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Skip pods that need no declared feature; otherwise remember what they need."""
        if not self._enabled:
            return Status.skip()
        required = required_features(pod)
        if not required:
            return Status.skip()
        state.write(_STATE_KEY, _PreFilterState(required))
        return Status.success()

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """UnschedulableAndUnresolvable unless the node declares every needed feature."""
        if not self._enabled:
            return Status.SUCCESS
        wanted = state.get(_STATE_KEY)
        if wanted is None:
            return Status.from_error(f'error reading "{_STATE_KEY.name}" from cycle-state: not found')
        node = node_info.node
        declared = declared_features(node.declared_features) if node is not None else frozenset()
        return Status.SUCCESS if wanted.required <= declared else _REJECTED
