"""VolumeBinding: a pod's claims must be bound, or bindable, on the chosen node (kube-scheduler v1.30).

* PreFilter: every claim must exist (ephemeral ones be owned by the pod), not
  be lost or being deleted, and none may be unbound with immediate binding.
  Bound claims whose volumes name hostnames narrow the nodes (PreFilterResult).
* Filter: bound volumes' node affinity; WaitForFirstConsumer claims matched to
  available static volumes, else provisioned (class topology, CSI capacity).
  Every rejection is UnschedulableAndUnresolvable, reasons in kube's order.
* Reserve binds, in the cluster's storage objects, the volumes Filter chose on
  the node (claimRef on the volume, volumeName on the claim, both ``Bound``) and
  annotates claims to provision with the node: kube's assume plus what the PV
  controller and provisioner then do, so the next pods see the claims taken.
  Unreserve restores the old objects unless PreBind already committed them.
* On a live cluster (the handle's ``api``), Reserve assumes only what kube does
  (claimRef, the selected-node annotation); PreBind writes those objects through
  the API server and waits, up to ``bindTimeoutSeconds``, for the cluster's PV
  controller to finish; Unreserve puts back what the cluster last reported.
* PreScore/Score: scoring needs the VolumeCapacityPriority gate (off in
  v1.30), so PreScore always Skips and the plugin never scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError, KubeApiError
from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import (
    FilterPlugin,
    PreBindPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.framework.storage import StorageLister
from kschedlib.model.objects import Pod
from kschedlib.plugins._helpers import volume_hints as _volume_hints
from kschedlib.plugins._helpers.volumes import claim_of, is_fully_bound, not_owner_error, pvc_not_found
from kschedlib.plugins.volume_binding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NODE_AFFINITY,
    ERR_REASON_PV_NOT_EXIST,
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    assumed_volume,
    bind_volume_to_claim,
    bound_claim,
    eligible_nodes,
    find_pod_volumes,
    pod_volume_claims,
    selected_claim,
)

if TYPE_CHECKING:
    from kschedlib.model.storage import PersistentVolume, PersistentVolumeClaim

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NODE_AFFINITY",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "VolumeBinding",
    "VolumeBindingArgs",
    "decode_args",
]

ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
_TIMEOUT_FIELD: Final = "bindTimeoutSeconds"
_SHAPE_FIELD: Final = "shape"


# --- args -----------------------------------------------------------------------------------


@final
@attrs.frozen(slots=True, repr=False)
class VolumeBindingArgs(FieldsRepr):
    """``VolumeBindingArgs``: how long PreBind waits for the binding on a live cluster (a simulated binding is
    immediate).  ``shape`` is only allowed with the VolumeCapacityPriority gate, off in v1.30."""

    bind_timeout_seconds: int = 600


def decode_args(raw: Mapping[str, Any] | None) -> VolumeBindingArgs:
    """Decode ``pluginConfig[].args`` (JSON names), defaulting absent fields, and validate as kube does."""
    if raw is None:
        return VolumeBindingArgs()
    timeout = raw.get(_TIMEOUT_FIELD)
    if timeout is None:
        timeout = 600
    elif not isinstance(timeout, int) or isinstance(timeout, bool):
        raise ConfigError("must be an integer", field=_TIMEOUT_FIELD, value=timeout)
    if timeout < 0:
        raise ConfigError("invalid BindTimeoutSeconds, should not be a negative value", field=_TIMEOUT_FIELD,
                          value=timeout)
    shape = raw.get(_SHAPE_FIELD)
    if shape is not None:
        raise ConfigError("unsupported when VolumeCapacityPriority is disabled", field=_SHAPE_FIELD, value=shape)
    return VolumeBindingArgs(timeout)


# --- state ----------------------------------------------------------------------------------


@final
@attrs.define(slots=True, eq=False, repr=False)
class VolumeBindingState(FieldsRepr):
    """One attempt's volume decisions; shared by clones, as kube's (Filter fills it per node).

    ``claims`` is ``None`` for pods without claims.  ``written`` keeps the
    objects Reserve replaced, for Unreserve; ``committed`` is set by PreBind.
    """

    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = attrs.field(factory=dict)
    has_static_bindings: bool = False
    all_bound: bool = False
    written: tuple[tuple[PersistentVolume, ...], tuple[PersistentVolumeClaim, ...]] | None = None
    assumed: tuple[tuple[PersistentVolume, ...], tuple[PersistentVolumeClaim, ...]] = ((), ())
    committed: bool = False
    api: ClusterApi | None = None
    """The API server this attempt writes to (``None``: the scheduler's own state is the cluster)."""

    def clone(self) -> VolumeBindingState:
        return self


STATE_KEY: Final[StateKey[VolumeBindingState]] = StateKey("VolumeBinding")
_NO_CLAIMS: Final = VolumeBindingState()
_NOT_FOUND: Final = Status.from_error("not found")


def claim_problem(pod: Pod, storage: StorageLister) -> tuple[bool, str | None]:
    """kube's ``podHasPVCs``: whether the pod has claims, and the first reason it cannot be scheduled."""
    has_claims = False
    for volume in pod.volumes:
        claim = claim_of(pod, volume)
        if claim is None:
            continue
        name, ephemeral = claim
        has_claims = True
        pvc = storage.get_pvc(pod.namespace, name)
        if pvc is None:
            if ephemeral:
                return True, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
            return True, pvc_not_found(name)
        if pvc.phase == "Lost":
            return True, (f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume '
                          f'"{pvc.volume_name}"')
        if pvc.deletion_timestamp is not None:
            return True, f'persistentvolumeclaim "{pvc.name}" is being deleted'
        if ephemeral and (problem := not_owner_error(pod, pvc)) is not None:
            return True, problem
    return has_claims, None


def _all_bound(pod: Pod, storage: StorageLister) -> bool:
    """Whether every claim of the pod is fully bound right now (a missing claim is not)."""
    for volume in pod.volumes:
        claim = claim_of(pod, volume)
        if claim is None:
            continue
        pvc = storage.get_pvc(pod.namespace, claim[0])
        if pvc is None or not is_fully_bound(pvc):
            return False
    return True


@final
class VolumeBinding(PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, PreScorePlugin, ScorePlugin,
                    EnqueueExtensions):
    """Binds (in simulation) the pod's claims to volumes on the chosen node; rejects nodes where it cannot."""

    name: ClassVar[str] = "VolumeBinding"
    __slots__ = ("_args", "_handle", "_match_attributes_class", "_narrows", "_node_conflict")

    def __init__(self, args: VolumeBindingArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else VolumeBindingArgs()
        self._handle = handle
        switches = handle.switches
        self._narrows = not switches.volume_binding_all_nodes
        self._node_conflict = (ERR_REASON_PV_NODE_AFFINITY if switches.pv_node_affinity_reason
                               else ERR_REASON_NODE_CONFLICT)
        self._match_attributes_class = handle.switches.volume_attributes_class

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Every event with hints off (v1.30); v1.36's registrations and hints with them on."""
        return _volume_hints.watched(self._handle, _volume_hints.binding_events)

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Classify the claims; unbound immediate claims fail; bound hostname-pinned volumes narrow the nodes."""
        if not pod.volumes:
            state.write(STATE_KEY, _NO_CLAIMS)
            return Status.SKIP
        storage = self._handle.storage
        has_claims, problem = claim_problem(pod, storage)
        if problem is not None:
            return Status.unresolvable(problem)
        if not has_claims:
            state.write(STATE_KEY, _NO_CLAIMS)
            return Status.SKIP
        try:
            claims = pod_volume_claims(pod, storage)
        except BinderError as exc:
            return Status.from_error(str(exc))
        if claims.unbound_immediate:
            return Status.unresolvable(ERR_UNBOUND_IMMEDIATE)
        eligible = eligible_nodes(claims.bound, storage) if self._narrows else None
        state.write(STATE_KEY, VolumeBindingState(claims, api=self._handle.api))
        return PreFilterResult(eligible) if eligible is not None else Status.SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Decide the pod's volumes on this node and remember them for Reserve."""
        data = state.get(STATE_KEY)
        if data is None:
            return _NOT_FOUND
        node = node_info.node
        if data.claims is None or node is None:
            return Status.SUCCESS
        try:
            volumes, reasons = find_pod_volumes(data.claims, node, self._handle.storage, self._node_conflict,
                                                self._match_attributes_class)
        except BinderError as exc:
            return Status.from_error(str(exc))
        if reasons:
            return Status.unresolvable(*reasons)
        data.by_node[node.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        return Status.SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Scoring needs the VolumeCapacityPriority gate, off in v1.30: always Skip."""
        return Status.SKIP

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Never reached (PreScore Skips); 0, as kube's Score without a scorer."""
        return 0

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind the chosen volumes in the cluster's storage objects (nothing to do when all are bound)."""
        data = state.get(STATE_KEY)
        if data is _NO_CLAIMS:
            return Status.SUCCESS
        if data is None:
            return _NOT_FOUND
        volumes = data.by_node.get(node_name)
        if volumes is None:
            data.all_bound = True
            return Status.SUCCESS
        storage = self._handle.storage
        data.all_bound = _all_bound(pod, storage)
        if data.all_bound:
            return Status.SUCCESS
        to_provision = tuple(selected_claim(pvc, node_name) for pvc in volumes.dynamic_provisions)
        old_pvs = tuple(b.pv for b in volumes.static_bindings)
        old_pvcs = volumes.dynamic_provisions
        if data.api is not None:  # kube's assumptions only: the cluster's PV controller does the rest
            new_pvs = tuple(assumed_volume(b.pv, b.pvc) for b in volumes.static_bindings)
            new_pvcs = to_provision
            data.assumed = (new_pvs, new_pvcs)
        else:
            new_pvs = tuple(bind_volume_to_claim(b.pv, b.pvc) for b in volumes.static_bindings)
            new_pvcs = tuple(bound_claim(b.pvc, pv) for b, pv in zip(volumes.static_bindings, new_pvs, strict=True))
            new_pvcs += to_provision
            old_pvcs = tuple(b.pvc for b in volumes.static_bindings) + old_pvcs
        self._handle.write_volume_bindings(new_pvs, new_pvcs)
        data.written = (old_pvs, old_pvcs)
        return Status.SUCCESS

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Commit Reserve's binding (kube's API writes; the simulated controllers finish at once)."""
        data = state.get(STATE_KEY)
        if data is None:
            return _NOT_FOUND
        if data.claims is None or data.all_bound:
            return Status.SUCCESS
        if node_name not in data.by_node:
            return Status.from_error(f'no pod volumes found for node "{node_name}"')
        if data.api is not None:
            volumes, claims = data.assumed
            try:
                data.api.bind_volumes(pod, node_name, volumes, claims, self._args.bind_timeout_seconds)
            except KubeApiError as exc:
                return Status.from_error(exc.message)
        data.committed = True
        return Status.SUCCESS

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBind works only when Reserve left volumes to bind (read from v1.35)."""
        data = state.get(STATE_KEY)
        if data is None:
            return _NOT_FOUND
        return Status.skip() if data.claims is None or data.all_bound else Status.SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Put back the objects Reserve replaced, unless PreBind committed them (idempotent)."""
        data = state.get(STATE_KEY)
        if data is None or data.written is None or data.committed or node_name not in data.by_node:
            return
        old_pvs, old_pvcs = data.written
        if data.api is not None:  # what the cluster has in place of the assumptions (kube's assume-cache Restore)
            latest = data.api.latest_volumes([pv.name for pv in old_pvs], [pvc.key for pvc in old_pvcs])
            old_pvs, old_pvcs = tuple(latest[0]), tuple(latest[1])
        self._handle.write_volume_bindings(old_pvs, old_pvcs)
        data.written = None
