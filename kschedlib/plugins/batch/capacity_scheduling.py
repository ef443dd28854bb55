"""CapacityScheduling: ElasticQuota min/max per namespace, borrowing, and quota-aware preemption.

scheduler-plugins' ``CapacityScheduling`` at d250c4b9 (not in the default profile;
enable it as the PostFilter in place of DefaultPreemption).  A namespace with an
:class:`~kschedlib.model.ElasticQuota` may use up to ``max``; above its ``min`` it
borrows what other namespaces leave unused, as long as the sum of all use stays
within the sum of all mins.  Use counts every pod the cycle's snapshot holds on a
node (bound or assumed), all resources included (GPUs too).

* **PreFilter** (``Unschedulable``): ``Pod ns/name is rejected in PreFilter because
  ElasticQuota ns is more than Max`` / ``... because total ElasticQuota used is more
  than min`` (the pod's request plus the nominated pods that count).
* **AddPod/RemovePod** keep the cycle's copy of the quotas in step in preemption's dry run.
* **PostFilter**: kube's preemption with the victims of
  :mod:`kschedlib.plugins.batch._capacity_victims` (reclaim borrowed capacity from other
  namespaces before preempting within one), every potential node tried from the
  first; with ``gangAware`` (default true) the pods of a PodGroup are evicted
  together or not at all.
* **Reserve/Unreserve** charge and release the pod against its namespace's quota.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.events import POD, ActionType, ClusterEvent, ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import (
    PostFilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    ReservePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.plugin_state import KeepsState
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.results import PostFilterResult
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from kschedlib.model.resources import Resources, pod_requests
from kschedlib.plugins.batch._capacity_preemption import preempt
from kschedlib.plugins.batch._capacity_victims import PRE_FILTER_KEY, QUOTA_KEY, QuotaPreFilterState
from kschedlib.plugins.batch._elastic_quota import QuotaInfos, quota_infos
from kschedlib.plugins.default_preemption import MESSAGE_PREFIX

__all__ = ["CapacityScheduling", "CapacitySchedulingArgs", "ELASTIC_QUOTA_GVK", "NAME", "decode_args"]

NAME: Final = "CapacityScheduling"
ELASTIC_QUOTA_GVK: Final = "elasticquotas.v1alpha1.scheduling.x-k8s.io"
_ENDED: Final = frozenset({"Succeeded", "Failed"})


@final
@attrs.frozen(slots=True, repr=False)
class CapacitySchedulingArgs(FieldsRepr):
    """``gangAware`` (kschedlib's addition, default true): preemption takes a PodGroup's pods together."""

    gang_aware: bool = True


def decode_args(raw: Mapping[str, Any] | None) -> CapacitySchedulingArgs:
    """``CapacitySchedulingArgs`` from ``pluginConfig[].args``; ``ConfigError`` naming a bad field."""
    if raw is None:
        return CapacitySchedulingArgs()
    if not isinstance(raw, Mapping):
        raise ConfigError("must be an object", field="args", value=raw)
    gang_aware = raw.get("gangAware", True)
    if not isinstance(gang_aware, bool):
        raise ConfigError("must be a boolean", field="gangAware", value=gang_aware)
    return CapacitySchedulingArgs(gang_aware)


@final
class CapacityScheduling(KeepsState, PreFilterPlugin, PreFilterExtensions, PostFilterPlugin, ReservePlugin,
                         EnqueueExtensions):
    """Elastic quotas per namespace (see the module docstring)."""

    name: ClassVar[str] = NAME
    __slots__ = ("_args", "_handle", "_node_pods", "infos")

    def __init__(self, args: CapacitySchedulingArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else CapacitySchedulingArgs()
        self._handle = handle
        self.infos = QuotaInfos()
        """The live quotas: rebuilt from the snapshot in PreFilter, charged by Reserve, released by Unreserve."""
        self._node_pods: dict[str, tuple[int, dict[str, list[Pod]]]] = {}

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A pod deleted (use went down) or any change to an ElasticQuota."""
        return (ClusterEventWithHint(ClusterEvent(POD, ActionType.DELETE)),
                ClusterEventWithHint(ClusterEvent(ELASTIC_QUOTA_GVK, ActionType.ALL)))

    # --- KeepsState: what a what-if cycle must leave as it was ---------------------------------

    def save_state(self) -> object:
        """The live quotas (PreFilter rebuilds them; Reserve and Unreserve charge them)."""
        return self.infos.clone()

    def restore_state(self, saved: object) -> None:
        assert isinstance(saved, QuotaInfos)
        self.infos = saved

    # --- the quotas as the cycle sees them -------------------------------------------------------

    def _pods_by_namespace(self) -> dict[str, list[Pod]]:
        """Assigned pods that still count (not Succeeded/Failed) by namespace, memoized per node generation."""
        merged: dict[str, list[Pod]] = {}
        for info in self._handle.snapshot.node_infos:
            cached = self._node_pods.get(info.name)
            if cached is None or cached[0] != info.generation:
                by_namespace: dict[str, list[Pod]] = {}
                for pod_info in info.pods:
                    if pod_info.pod.phase not in _ENDED:
                        by_namespace.setdefault(pod_info.pod.namespace, []).append(pod_info.pod)
                cached = self._node_pods[info.name] = (info.generation, by_namespace)
            for namespace, pods in cached[1].items():
                merged.setdefault(namespace, []).extend(pods)
        return merged

    def refresh(self) -> QuotaInfos:
        """Rebuild the live quotas from the cluster's ElasticQuotas and the snapshot's pods."""
        self.infos = quota_infos(self._handle.scheduling_objects.elastic_quotas(), self._pods_by_namespace())
        return self.infos

    def _nominated_requests(self, pod: Pod) -> tuple[Resources, Resources]:
        """(nominated pods counting against the pod's quota, those counting against all mins), pod included."""
        in_quota = everywhere = pod_requests(pod)
        priority = pod.effective_priority
        for node_info in self._handle.snapshot.node_infos:
            for nominated in self._handle.nominated_pods_for_node(node_info.name):
                other = nominated.pod
                info = self.infos.get(other.namespace)
                if other.uid == pod.uid or info is None:
                    continue
                if other.namespace == pod.namespace and other.effective_priority >= priority:
                    in_quota = in_quota.add(pod_requests(other))
                    everywhere = everywhere.add(pod_requests(other))
                elif other.namespace != pod.namespace and not info.used_over_min():
                    everywhere = everywhere.add(pod_requests(other))
        return in_quota, everywhere

    # --- PreFilter and its extensions ----------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        infos = self.refresh()
        state.write(QUOTA_KEY, infos.clone())
        request = pod_requests(pod)
        own = infos.get(pod.namespace)
        if own is None:
            state.write(PRE_FILTER_KEY, QuotaPreFilterState(request, Resources(), Resources()))
            return Status.success()
        in_quota, everywhere = self._nominated_requests(pod)
        state.write(PRE_FILTER_KEY, QuotaPreFilterState(request, in_quota, everywhere))
        if own.used_over_max_with(in_quota):
            return Status.unschedulable(f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because "
                                        f"ElasticQuota {own.namespace} is more than Max")
        if infos.aggregated_used_over_min_with(everywhere):
            return Status.unschedulable(f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because "
                                        "total ElasticQuota used is more than min")
        return Status.success()

    def add_pod(self, state: CycleState, pod: Pod, pod_info_to_add: PodInfo, node_info: NodeInfo) -> Status:
        return _charge(state, pod_info_to_add.pod, add=True)

    def remove_pod(self, state: CycleState, pod: Pod, pod_info_to_remove: PodInfo, node_info: NodeInfo) -> Status:
        return _charge(state, pod_info_to_remove.pod, add=False)

    # --- PostFilter, Reserve, Unreserve --------------------------------------------------------

    def post_filter(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> PostFilterResult:
        """Quota-aware preemption, with every non-empty message prefixed ``preemption: ``."""
        result = preempt(self._handle, self.name, state, pod, node_statuses, gang_aware=self._args.gang_aware)
        message = result.status.message()
        if not message:
            return result
        return PostFilterResult(Status(result.status.code, (MESSAGE_PREFIX + message,)), result.nominated_node_name,
                                result.victims)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        info = self.infos.get(pod.namespace)
        if info is not None:
            info.add_pod_if_not_present(pod)
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        info = self.infos.get(pod.namespace)
        if info is not None:
            info.delete_pod_if_present(pod)


def _charge(state: CycleState, pod: Pod, *, add: bool) -> Status:
    """Charge (or release) ``pod`` against its namespace's quota in the cycle's copy of the quotas."""
    infos = state.get(QUOTA_KEY)
    if infos is None:
        return Status.from_error(f"{QUOTA_KEY.name}: not found")
    info = infos.get(pod.namespace)
    if info is not None:
        (info.add_pod_if_not_present if add else info.delete_pod_if_present)(pod)
    return Status.success()
