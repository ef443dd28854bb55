"""DynamicResources: kube-scheduler's Dynamic Resource Allocation plugin (v1.34+).

A pod names ResourceClaims (directly, or made from a template by the resourceclaim controller and
listed in ``status.resourceClaimStatuses``).  The plugin, at each extension point, as v1.36 does:

* PreEnqueue: every claim must exist (and a template's claim must be owned by the pod);
* PreFilter: a claim allocated and reserved by other pods beyond the limit is ``resourceclaim in use``;
  an unallocated claim's device classes must exist; an allocator is built for the unallocated claims
  over the devices not held by allocated claims;
* Filter: an allocated claim's node selector must match the node, and its devices must not have failed
  to bind nor waited for their binding conditions beyond ``bindingTimeout``; the unallocated claims
  (and the pod's extended resources that a DeviceClass provides and the node does not advertise) must
  be allocatable on the node (``cannot allocate all claims``), within ``filterTimeout``;
* Score: prioritized lists -- the earlier the chosen ``firstAvailable`` subrequest, the higher;
* Reserve/Unreserve: the node's allocation is held in flight, so later pods see the devices as used;
* PreBind: the allocation and the pod's reservation are written into the claims; devices with binding
  conditions must be ready (kschedlib answers at once what kube's wait ends in, see :mod:`kschedlib.dra._binding`);
* PostFilter: a claim allocated but reserved for nobody (or only this pod) that did not fit a node
  is deallocated, so the next attempt can allocate it elsewhere; else the extended-resource claim an
  earlier attempt left (Filter refuses every node while it exists) is deleted.

For a pod without claims PreFilter returns Skip and Score gives 0 everywhere.  With the
DynamicResourceAllocation gate off (v1.30-v1.33 defaults) the plugin is not in the profile.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.clock import Clock
from kschedlib.dra._allocated import AllocationError, Features, NodeAllocationFailed, claims_signature
from kschedlib.dra._binding import (
    BINDING_POLL_INTERVAL,
    ERRORS_V134,
    ERRORS_V136,
    has_binding_conditions,
    poll_outcome,
    readiness,
    timed_out,
    wait_outcome,
)
from kschedlib.dra._extended import extended_requests
from kschedlib.dra._selectors import SelectorCache
from kschedlib.dra._store import (
    EXTENDED_CLAIM_ANNOTATION,
    EXTENDED_CLAIM_SUFFIX,
    ClaimProblem,
    DraStore,
    pod_claim_name,
)
from kschedlib.errors import ConfigError, KschedError, KubeApiError
from kschedlib.framework._go_duration import parse_duration
from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import (
    FilterPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import ExternalNodeState, NodeLocalFilter, NodeLocalScore, PureNormalize
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PostFilterResult, PreFilterResult
from kschedlib.framework.status import SUCCESS as _SUCCESS
from kschedlib.framework.status import Code, Status
from kschedlib.model.labels import NodeSelector
from kschedlib.model.objects import ContainerExtendedResourceRequest, Node, OwnerReference, Pod
from kschedlib.model.resources import pod_requests
from kschedlib.plugins._helpers.dra_hints import dynamic_resources_events
from kschedlib.plugins._helpers.normalize import normalized_values

if TYPE_CHECKING:
    from kschedlib.dra._allocator import Allocator
    from kschedlib.model.dra import AllocationResult, ExactRequest, ResourceClaim

__all__ = ["DynamicResources", "DynamicResourcesArgs", "NO_CLAIMS_TO_DEALLOCATE", "decode_args", "dra_allocations"]

NO_CLAIMS_TO_DEALLOCATE: Final = "no new claims to deallocate"
STATE_NOT_FOUND: Final = "not found"
CANNOT_ALLOCATE: Final = "cannot allocate all claims"
NOT_AVAILABLE: Final = "resourceclaim not available on the node"
FIRST_AVAILABLE_MAX_SIZE: Final = 8
RESERVED_FOR_MAX_SIZE: Final = 256
STALE_EXTENDED_CLAIM: Final = "cannot schedule extended resource claim"
_MEMO_SIGNATURES_MAX: Final = 64
_CANNOT_ALLOCATE: Final = Status.unresolvable(CANNOT_ALLOCATE, plugin="DynamicResources")
"""Shared by every node that cannot serve the claims (already naming the plugin, so not copied to add it)."""


def _warn(message: str, *args: object) -> None:
    """Log a warning on the ``kschedlib`` logger (imported here: only a failed API write needs logging)."""
    import logging

    logging.getLogger("kschedlib").warning(message, *args)


@final
@attrs.frozen(slots=True, repr=False)
class DynamicResourcesArgs(FieldsRepr):
    """``DynamicResourcesArgs`` (config v1, kube-scheduler v1.34+), in seconds.

    ``filter_timeout`` bounds the device search per node (0 disables the bound);
    ``binding_timeout`` bounds the wait for device binding conditions: PreBind's wait, and how long
    after its ``allocationTimestamp`` a claim whose devices are not ready stays available.
    """

    filter_timeout: float = 10.0
    binding_timeout: float = 600.0


def _duration(raw: Mapping[str, Any], name: str, default: float) -> float:
    value = raw.get(name)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConfigError("must be a duration string such as 10s", field=name, value=value)
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ConfigError(str(exc), field=name, value=value) from exc


def decode_args(raw: Mapping[str, Any] | None) -> DynamicResourcesArgs:
    """Decode ``pluginConfig[].args`` (``filterTimeout``, ``bindingTimeout``: Go durations) and validate."""
    defaults = DynamicResourcesArgs()
    if raw is None:
        return defaults
    args = DynamicResourcesArgs(_duration(raw, "filterTimeout", defaults.filter_timeout),
                                _duration(raw, "bindingTimeout", defaults.binding_timeout))
    if args.filter_timeout < 0:
        raise ConfigError("must be zero or positive", field="filterTimeout", value=raw.get("filterTimeout"))
    if args.binding_timeout <= 0:
        raise ConfigError("must be positive", field="bindingTimeout", value=raw.get("bindingTimeout"))
    return args


@final
class _State:
    """PreFilter's findings, shared (not copied) by clones as kube shares its pointer."""

    __slots__ = ("_pending", "allocator", "api", "available_on", "binding", "claims", "extended", "extended_claims",
                 "mappings",
                 "node_allocations", "node_memo", "not_ready", "prioritized", "resolve", "selectors", "signature",
                 "stale_extended", "store", "unavailable")

    def __init__(self) -> None:
        self.claims: list[ResourceClaim] = []
        self.available_on: list[NodeSelector | None] = []
        self.allocator: Allocator | None = None
        self.extended: dict[str, tuple[str, int]] = {}
        """extended resource -> (device class, count) for resources a DeviceClass may provide."""
        self.extended_claims: dict[tuple[str, ...], ResourceClaim] = {}
        """The pod's extended-resource claim per set of resources left to DRA (most nodes share one)."""
        self.mappings: dict[int, tuple[ContainerExtendedResourceRequest, ...]] = {}
        """id of an extended-resource claim -> which of its requests serves which container's resource."""
        self.api: ClusterApi | None = None
        """The API server this attempt writes to (``None``: the scheduler's own state is the cluster)."""
        self.stale_extended: ResourceClaim | None = None
        """The pod's extended-resource claim from an earlier attempt: no node fits, PostFilter deletes it."""
        self.node_allocations: dict[str, tuple[Sequence[ResourceClaim], Sequence[AllocationResult]]] = {}
        """node -> the claims allocated there and their results (paired only when asked: most nodes never are)."""
        self.unavailable: set[int] = set()
        self._pending: tuple[ResourceClaim, ...] | None = None
        self.signature: Hashable = None
        """The claims' :func:`claims_signature` (None with extended resources: their claim depends on the node)."""
        self.selectors: tuple[tuple[int, NodeSelector], ...] = ()
        """(claim index, node selector) of the allocated claims that name one (Filter checks only these)."""
        self.node_memo: _NodeMemo | None = None
        """The plugin's remembered allocations for this signature, slices and classes (see ``_allocate``)."""
        self.store: DraStore | None = None
        self.prioritized = False
        """Whether an unallocated claim has a prioritized list (else every node scores 0)."""
        self.resolve: Callable[[_State, str], list[AllocationResult] | None] | None = None
        """Finds the allocation on a node Filter did not visit in this cycle (its verdict was reused)."""
        self.binding = False
        """Whether an allocated claim has devices with binding conditions (their readiness moves with time)."""
        self.not_ready: tuple[int, ...] = ()
        """Indices of the allocated claims whose binding failed or timed out (not available on any node)."""

    def clone(self) -> _State:
        return self

    def allocations(self, node_name: str) -> list[tuple[ResourceClaim, AllocationResult]]:
        """Each claim allocated on ``node_name`` with its result (none if Filter found none there)."""
        found = self.node_allocations.get(node_name)
        return list(zip(*found, strict=True)) if found is not None else []

    def resolved(self, node_name: str) -> list[tuple[ResourceClaim, AllocationResult]]:
        """:meth:`allocations`, found now for a node whose Filter verdict was reused from an earlier
        cycle (the node search then never called Filter there); kept for Reserve and PreBind."""
        if node_name not in self.node_allocations and self.resolve is not None:
            results = self.resolve(self, node_name)
            if results is not None:
                self.node_allocations[node_name] = (self.pending, results)
        return self.allocations(node_name)

    @property
    def to_allocate(self) -> list[ResourceClaim]:
        return [claim for claim in self.claims if claim.allocation is None]

    @property
    def pending(self) -> tuple[ResourceClaim, ...]:
        """The claims to allocate, computed once (Filter asks for every node)."""
        if self._pending is None:
            self._pending = tuple(self.to_allocate)
        return self._pending


_STATE: Final[StateKey[_State]] = StateKey("PreFilterDynamicResources")

_MemoEntry = tuple[Node, tuple[tuple[str, str], ...], int, "list[AllocationResult] | None"]
"""(the node object, its pools, the sum of their use versions, the allocation found there)."""
_NodeMemo = dict[str, _MemoEntry]


def _wall_time(clock: Clock) -> float:
    """Seconds since the epoch by the handle's clock (``allocationTimestamp`` is a wall-clock time): its
    ``wall_time()`` where it has one, else its ``now()``."""
    wall = getattr(clock, "wall_time", None)
    return float(wall()) if callable(wall) else clock.now()


def _pod_claims(pod: Pod, store: DraStore, owner: str = "Pod") -> list[ResourceClaim]:
    """The pod's claims, or :class:`ClaimProblem` in kube's words (``owner``: how its version writes "pod")."""
    claims = []
    for pod_claim in pod.resource_claims:
        name = pod_claim_name(pod, pod_claim.name, pod_claim.resource_claim_name)
        if name is None:
            continue
        claim = store.get_claim(pod.namespace, name)
        if claim is None:
            raise ClaimProblem(f'could not find ResourceClaim "{pod.namespace}/{name}"')
        if claim.deletion_timestamp is not None:
            raise ClaimProblem(f'resourceclaim "{name}" is being deleted')
        if pod_claim.resource_claim_name is None and not any(
                ref.controller and ref.uid == pod.uid and ref.kind == "Pod" for ref in claim.owner_references):
            raise ClaimProblem(f"ResourceClaim {claim.key} was not created for {owner} {pod.key} "
                               f"({owner} is not owner)")
        claims.append(claim)
    return claims


def _reserved_for_pod(claim: ResourceClaim, pod: Pod) -> bool:
    return any(c.resource == "pods" and c.uid == pod.uid for c in claim.reserved_for)


def _selector_compiler() -> SelectorCache:
    from kschedlib.dra._cel_bridge import compile_selector

    return SelectorCache(compile_selector)


def _remembered(data: _State, node: Node) -> _MemoEntry | None:
    """The allocation remembered for ``node`` if still valid: the same node object, and no device of its
    pools taken or given back since (the slices and classes were checked in PreFilter)."""
    known = data.node_memo.get(node.name) if data.node_memo is not None else None
    if known is None or known[0] is not node or data.store is None:
        return None
    return known if data.store.pools_version(known[1]) == known[2] else None


class _DynamicResourcesCore(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, NodeLocalFilter, ExternalNodeState,
                            ReservePlugin, PreBindPlugin, PostFilterPlugin, EnqueueExtensions):
    """Dynamic Resource Allocation without a Score, as kube-scheduler v1.32-v1.34 has it.

    Filter verdicts are reusable (:class:`NodeLocalFilter`) for pods whose claims to allocate have
    the same shape and name no node: they depend on the node, the slices, the classes and the use
    of the node's pools, and the last is outside NodeInfo, so the plugin names the nodes whose pools'
    use changed (:class:`ExternalNodeState`).
    """

    name: ClassVar[str] = "DynamicResources"
    __slots__ = ("_args", "_binding", "_binding_errors", "_claimless_reason", "_enabled", "_extended", "_features",
                 "_handle", "_memo", "_owner_word", "_selectors")

    def __init__(self, args: DynamicResourcesArgs | None, handle: Handle) -> None:
        self._args = args or DynamicResourcesArgs()
        self._binding_errors = ERRORS_V136 if handle.switches.dra_binding_errors_wrapped else ERRORS_V134
        self._handle = handle
        self._enabled = handle.switches.dynamic_resources
        switches = handle.switches
        self._binding = switches.dra_binding_conditions
        self._extended = switches.dra_extended_resource
        self._claimless_reason = switches.dra_claimless_post_filter_reason
        self._owner_word = "Pod" if switches.claim_owner_reason_capitalized else "pod"
        self._features = Features(admin_access=switches.dra_admin_access,
                                  prioritized_list=switches.dra_prioritized_list,
                                  device_taints=switches.dra_device_taints,
                                  partitionable_devices=switches.dra_partitionable_devices,
                                  consumable_capacity=switches.dra_consumable_capacity,
                                  binding_conditions=switches.dra_binding_conditions,
                                  incomplete_pools_skipped=switches.dra_incomplete_pools_skipped)
        self._selectors: SelectorCache | None = None
        self._memo: dict[Hashable, tuple[object, int, _NodeMemo]] = {}

    @property
    def _store(self) -> DraStore:
        store = getattr(self._handle, "dra", None)
        return store if isinstance(store, DraStore) else DraStore()

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Nodes, claims (devices free up when one is deallocated), the pod's generated claims, DeviceClasses
        and ResourceSlices (:mod:`kschedlib.plugins._helpers.dra_hints`); none while the plugin is disabled."""
        if not self._enabled:
            return ()
        return dynamic_resources_events(lambda pod: _pod_claims(pod, self._store, self._owner_word))

    # --- PreEnqueue / PreFilter ---------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status:
        if not self._enabled or not pod.resource_claims:
            return Status.success()
        try:
            _pod_claims(pod, self._store, self._owner_word)
        except ClaimProblem as exc:
            return Status.unresolvable(str(exc))
        return Status.success()

    def _extended_requests(self, pod: Pod, store: DraStore) -> dict[str, tuple[str, int]]:
        if not self._extended or not store.classes:
            return {}
        classes = store.extended_resource_classes()
        out = {}
        for name, amount in pod_requests(pod).scalar.items():
            device_class = classes.get(name)
            if device_class is not None and amount > 0:
                out[name] = (device_class.name, amount)
        return out

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        data = _State()
        state.write(_STATE, data)
        data.api = self._handle.api
        if not self._enabled:
            return Status.skip()
        store = self._store
        try:
            claims = _pod_claims(pod, store, self._owner_word) if pod.resource_claims else []
        except ClaimProblem as exc:
            return Status.unresolvable(str(exc))
        extended = self._extended_requests(pod, store)
        if not claims and not extended:
            return Status.skip()
        if extended:
            problem = self._find_stale_extended(data, pod, store)
            if problem is not None:
                return problem
        available_on: list[NodeSelector | None] = []
        to_allocate = 0
        for claim in claims:
            selector = None
            if claim.allocation is not None:
                if len(claim.reserved_for) >= RESERVED_FOR_MAX_SIZE and not _reserved_for_pod(claim, pod):
                    return Status.unresolvable("resourceclaim in use")
                selector = claim.allocation.node_selector
            else:
                to_allocate += 1
                if store.has_pending_allocation(claim.uid or claim.key):
                    return Status.unresolvable(f"resource claim {claim.key} is in the process of being allocated")
                problem = self._check_requests(claim, store)
                if problem is not None:
                    return problem
            available_on.append(selector)
        if to_allocate or extended:
            if self._selectors is None:
                self._selectors = _selector_compiler()
            from kschedlib.dra._allocator import Allocator  # here: pods without claims never need the search

            data.allocator = Allocator(self._features, store.allocated_state(), store.classes,
                                       store.pool_index(), self._selectors)
        data.claims, data.available_on, data.extended = claims, available_on, extended
        data.selectors = tuple((i, selector) for i, selector in enumerate(available_on) if selector is not None)
        if self._binding:
            self._check_binding(data)
        data.store = store
        data.prioritized = any(request.first_available for claim in data.to_allocate for request in claim.requests)
        if data.allocator is not None and not extended:
            data.signature = claims_signature(data.to_allocate)
            data.node_memo = self._node_memo(data.signature, store)
            data.resolve = self._resolve  # the plugin's method, not a closure over ``data``: no reference cycle
        return Status.success()

    @staticmethod
    def _find_stale_extended(data: _State, pod: Pod, store: DraStore) -> Status | None:
        """Find the extended-resource claim an earlier attempt made (PreBind wrote it, then the pod did not
        bind), checked as kube checks every claim of the pod: not in use by others, not being allocated."""
        stale = store.extended_claim(pod)
        if stale is None:
            return None
        if stale.allocation is not None:
            if len(stale.reserved_for) >= RESERVED_FOR_MAX_SIZE and not _reserved_for_pod(stale, pod):
                return Status.unresolvable("resourceclaim in use")
        elif store.has_pending_allocation(stale.uid or stale.key):
            return Status.unresolvable(f"resource claim {stale.key} is in the process of being allocated")
        data.stale_extended = stale
        return None

    def _check_binding(self, data: _State) -> None:
        """Find the allocated claims with binding conditions, and those of them that failed or timed out
        (at PreFilter's time: the verdict is the same on every node)."""
        allocated = [(i, claim) for i, claim in enumerate(data.claims) if claim.allocation is not None]
        if not has_binding_conditions(claim for _, claim in allocated):
            return
        data.binding = True
        now, timeout = _wall_time(self._handle.clock), self._args.binding_timeout
        data.not_ready = tuple(i for i, claim in allocated
                               if (state := readiness(claim, self._binding_errors)) is not True
                               and (state is not False or timed_out(claim, timeout, now)))

    def filter_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """The claims' shape with what else the verdicts read besides the node and its pools' use: the
        slices, the classes and the store.  ``None`` when a claim is allocated with a node selector or
        with binding conditions (whose timeout moves with the clock, without any event), or extended
        resources are asked for (their claim depends on the node)."""
        data = state.get(_STATE)
        if data is None or data.node_memo is None or data.selectors or data.binding or data.store is None:
            return None
        store = data.store
        return "DynamicResources", data.signature, store.pool_index(), store.classes_version, store.epoch

    def node_state_changes(self, since: object) -> tuple[object, Collection[str] | None]:
        """The nodes whose pools' device use changed since ``since`` (a pool that is not node-local: all)."""
        store = self._store
        position, pools = store.pools_changed(since)
        if pools is None:
            return position, None
        index = store.pool_index()
        names: set[str] = set()
        for pool in pools:
            reached = index.nodes_of(pool)
            if reached is None:
                return position, None
            names.update(reached)
        return position, names

    def _resolve(self, data: _State, node_name: str) -> list[AllocationResult] | None:
        """The allocation of the pending claims on ``node_name`` (remembered, or searched again)."""
        info = self._handle.snapshot.find(node_name)
        if info is None or info.node is None or not data.pending:
            return None
        try:
            return self._allocate(data, info.node, data.pending)
        except (TimeoutError, AllocationError):
            return None

    def _node_memo(self, signature: Hashable, store: DraStore) -> _NodeMemo:
        """The remembered allocations of claims with this signature in this store, dropped when the slices or
        classes change (looked up once per cycle, so Filter's check per node is one dict lookup and the
        pools' use).  Kept per store: pool-use versions of two stores (a copy ``explain`` works on, say) may
        be equal while the devices in use differ."""
        key = (signature, store.epoch)
        known = self._memo.get(key)
        pools = store.pool_index()
        if known is not None and known[0] is pools and known[1] == store.classes_version:
            return known[2]
        if len(self._memo) >= _MEMO_SIGNATURES_MAX:
            self._memo.clear()
        node_memo: _NodeMemo = {}
        self._memo[key] = (pools, store.classes_version, node_memo)
        return node_memo

    def _check_requests(self, claim: ResourceClaim, store: DraStore) -> Status | None:
        """Every request of an unallocated claim has a known shape and existing device classes."""
        def check(request: ExactRequest, name: str) -> Status | None:
            if not request.device_class_name:
                return Status.from_error(f"request {name}: unsupported request type")
            if request.device_class_name not in store.classes:
                return Status.unresolvable(f"request {name}: device class {request.device_class_name} does not exist")
            return None

        for request in claim.requests:
            if request.exactly is None and not request.first_available:
                return Status.unresolvable(f"resource claim {claim.key}, request {request.name}: unknown request type")
            if request.first_available and not self._features.prioritized_list:
                return Status.unresolvable(f"resource claim {claim.key}, request {request.name}: has subrequests, "
                                           "but the DRAPrioritizedList feature is disabled")
            subs = ([(request.exactly, request.name)] if request.exactly is not None
                    else [(s, f"{request.name}/{s.name}") for s in request.first_available])
            for sub, name in subs:
                problem = check(sub, name)
                if problem is not None:
                    return problem
        return None

    # --- Filter -------------------------------------------------------------------------------

    @staticmethod
    def _extended_claim(pod: Pod, data: _State, node_info: NodeInfo) -> ResourceClaim | None:
        """The pod's extended-resource claim for this node: a request per container and resource the node
        does not advertise (zero allocatable); ``None`` when the node advertises them all."""
        allocatable = node_info.allocatable.scalar
        needed = tuple(name for name in sorted(data.extended) if not allocatable.get(name, 0))
        if not needed:
            return None
        claim = data.extended_claims.get(needed)
        if claim is None:
            requests, mappings = extended_requests(pod, {name: data.extended[name][0] for name in needed})
            if not requests:
                return None
            from kschedlib.model.dra import ResourceClaim  # requests were made: the DRA model is imported

            claim = ResourceClaim(
                f"{pod.name}{EXTENDED_CLAIM_SUFFIX}", pod.namespace, annotations={EXTENDED_CLAIM_ANNOTATION: "true"},
                owner_references=(OwnerReference("Pod", pod.name, pod.uid, "v1", controller=True),),
                requests=requests)
            data.extended_claims[needed] = claim
            data.mappings[id(claim)] = mappings
        return claim

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        data = state.get(_STATE)
        if data is None or (not data.claims and not data.extended):
            return Status.success()
        if data.stale_extended is not None and data.stale_extended.requests:
            return Status.unresolvable(STALE_EXTENDED_CLAIM)
        node = node_info.node
        assert node is not None
        if data.node_memo is not None and not data.selectors and not data.not_ready:
            known = _remembered(data, node)
            if known is not None:
                return self._allocated(data, node, data.pending, known[3])
        unavailable = [i for i, selector in data.selectors if not selector.matches(node.name, node.labels)]
        unavailable.extend(data.not_ready)
        if data.allocator is not None:
            claims = data.pending
            if data.extended:
                extended = self._extended_claim(pod, data, node_info)
                if extended is not None:
                    claims = (*claims, extended)
            if claims:
                try:
                    results = self._allocate(data, node, claims)
                except TimeoutError:
                    return Status.from_error(f"node {node.name}: timed out trying to allocate devices")
                except NodeAllocationFailed as exc:
                    return Status.unresolvable(str(exc))
                except AllocationError as exc:
                    return Status.from_error(str(exc))
                status = self._allocated(data, node, claims, results)
                if status is not _SUCCESS:
                    return status
        if unavailable:
            data.unavailable.update(unavailable)
            return Status.unresolvable(NOT_AVAILABLE)
        return Status.success()

    @staticmethod
    def _allocated(data: _State, node: Node, claims: Sequence[ResourceClaim],
                   results: list[AllocationResult] | None) -> Status:
        """Filter's verdict on the allocation found for ``claims`` on ``node`` (kept for Score and Reserve)."""
        if results is None:
            return _CANNOT_ALLOCATE
        data.node_allocations[node.name] = (claims, results)
        return _SUCCESS

    def _deadline(self) -> Callable[[], bool] | None:
        if self._args.filter_timeout <= 0:
            return None
        limit = time.monotonic() + self._args.filter_timeout
        return lambda: time.monotonic() > limit

    def _allocate(self, data: _State, node: Node, claims: Sequence[ResourceClaim]) -> list[AllocationResult] | None:
        """The allocation on ``node``, reused from an earlier pod whose claims asked for the same when nothing
        it depends on changed since: the node, the slices, the classes and the use of the node's pools."""
        allocator = data.allocator
        assert allocator is not None
        node_memo, store = data.node_memo, data.store
        if node_memo is None or store is None:
            return allocator.allocate(node, claims, self._deadline())
        known = _remembered(data, node)
        if known is not None:
            return known[3]
        pools = allocator.pool_keys(node)
        version = store.pools_version(pools)
        results = allocator.allocate(node, claims, self._deadline())
        node_memo[node.name] = (node, pools, version, results)
        return results

    # --- Reserve / Unreserve / PreBind ----------------------------------------------------------

    def _claims_store(self, data: _State) -> DraStore:
        """The device state PreFilter read, written back to by the later extension points: a binding that
        runs on a binding thread while ``explain`` works on a copy of the live state still writes the live
        one."""
        return data.store if data.store is not None else self._store

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = state.get(_STATE)
        if data is None or data.allocator is None:
            return Status.success()
        allocations = data.resolved(node_name)
        if not allocations:
            if data.to_allocate:
                return Status.from_error(f"claim allocation not found for node {node_name}")
            return Status.success()
        store = self._claims_store(data)
        for claim, result in allocations:
            store.assume(attrs.evolve(claim, allocation=result))
        return Status.success()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data = state.get(_STATE)
        if data is None:
            return
        store = self._claims_store(data)
        for claim, _ in data.allocations(node_name):
            store.forget(claim)
        api = data.api
        if api is None:
            store.unreserve_pod(pod)
            return
        # kube patches each claim reserved for the pod, then deletes the extended-resource claim it made; an error
        # is only logged (the next attempt tries again)
        for claim in store.reserved_claims(pod):
            try:
                store.record(claim.key, api.unreserve_claim(claim, pod))
            except KschedError as exc:
                _warn("unreserve of ResourceClaim %s: %s", claim.key, exc)
        extended = store.extended_claim(pod)
        if extended is not None:
            try:
                api.delete_claim(extended)
            except KschedError as exc:
                _warn("delete of ResourceClaim %s: %s", extended.key, exc)
            else:
                store.record(extended.key, None)

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """PreBind works only for a pod with claims or DRA-backed extended resources (read from v1.35: the pod
        is nominated first), even where the node itself provides those resources."""
        data = state.get(_STATE)
        if data is None or (not data.claims and not data.extended and not data.allocations(node_name)):
            return Status.skip()
        return Status.SUCCESS

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Write the allocations and the pod's reservations (stamped with the allocation time when binding
        conditions are in force), then check the devices' binding conditions."""
        data = state.get(_STATE)
        if data is None or (not data.claims and not data.allocations(node_name)):
            return Status.success()
        store = self._claims_store(data)
        now = _wall_time(self._handle.clock) if self._binding else None
        results = {claim.key: (claim, result) for claim, result in data.allocations(node_name)}
        written = []
        try:
            for claim in data.claims:
                allocate = claim.allocation is None
                if allocate:
                    found = results.pop(claim.key, None)
                    if found is None:
                        continue
                    claim = attrs.evolve(claim, allocation=found[1])
                written.append(self._reserve(data, store, claim, pod, now, allocate=allocate))
            written.extend(self._reserve(data, store, attrs.evolve(claim, allocation=result), pod, now, allocate=True,
                                         mappings=data.mappings.get(id(claim), ()))
                           for claim, result in results.values())
        except KubeApiError as exc:
            return Status.from_error(exc.message)
        if now is None or not has_binding_conditions(written):
            return Status.success()
        if data.api is not None:
            return self._await_binding(data.api, store, written, pod, node_name)
        problem = wait_outcome(written, self._args.binding_timeout, now, self._binding_errors)
        return Status.success() if problem is None else Status.from_error(problem)

    @staticmethod
    def _reserve(data: _State, store: DraStore, claim: ResourceClaim, pod: Pod, now: float | None, *,
                 allocate: bool, mappings: tuple[ContainerExtendedResourceRequest, ...] = ()) -> ResourceClaim:
        """Write ``claim``'s allocation and the pod's reservation: into the store (a simulation), or through the
        API server (a claim already reserved for the pod is left as it is, as kube leaves it)."""
        reserved = store.reservation(claim, pod, now)
        if data.api is None or reserved is claim:
            return store.bind(claim, pod, now)
        if not claim.uid:  # the extended-resource claim: made first (and known, so Unreserve can delete it)
            created = data.api.create_claim(claim, pod)
            store.record(created.key, created)
            reserved = store.reservation(attrs.evolve(created, allocation=claim.allocation), pod, now)
        written = data.api.reserve_claim(reserved, pod, allocate=allocate, mappings=mappings)
        store.commit(claim, written)
        return written

    def _await_binding(self, api: ClusterApi, store: DraStore, claims: list[ResourceClaim], pod: Pod,
                       node_name: str) -> Status:
        """kube's wait for the devices' binding conditions on a live cluster: the claims (as the cluster reports
        them) looked at every :data:`BINDING_POLL_INTERVAL` seconds until ready, failed or ``bindingTimeout``."""
        api.record_event(pod, "Normal", "BindingConditionsPending", "Scheduling",
                         f"waiting for binding conditions for device on node {node_name}")
        deadline = time.monotonic() + self._args.binding_timeout
        while True:
            current = [store.claims.get(claim.key, claim) for claim in claims]
            outcome = poll_outcome(current, self._args.binding_timeout, _wall_time(self._handle.clock),
                                   self._binding_errors)
            if outcome is None:
                return Status.success()
            if outcome is not False:
                return Status.from_error(outcome)
            if time.monotonic() + BINDING_POLL_INTERVAL > deadline:
                return Status.from_error(self._binding_errors.deadline)
            time.sleep(BINDING_POLL_INTERVAL)

    # --- PostFilter ---------------------------------------------------------------------------

    def post_filter(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> PostFilterResult:
        data = state.get(_STATE)
        if data is None:
            return PostFilterResult(Status.from_error(STATE_NOT_FOUND))
        if not pod.resource_claims and not self._claimless_reason:
            return PostFilterResult(Status(Code.UNSCHEDULABLE))  # v1.32-v1.33: no reason
        if not data.claims and not data.extended:
            return PostFilterResult(Status.unschedulable(NO_CLAIMS_TO_DEALLOCATE))
        store = self._claims_store(data)
        try:
            for index in sorted(data.unavailable):
                claim = data.claims[index]
                if not claim.reserved_for or (len(claim.reserved_for) == 1 and claim.reserved_for[0].uid == pod.uid):
                    if data.api is None:
                        store.deallocate(claim)
                    else:
                        store.record(claim.key, data.api.deallocate_claim(claim))
                    return PostFilterResult(Status.unschedulable("deallocation of ResourceClaim completed"))
            if data.stale_extended is not None:
                if data.api is not None:
                    data.api.delete_claim(data.stale_extended)
                store.delete(data.stale_extended)
                return PostFilterResult(Status.unschedulable("deletion of ResourceClaim completed"))
        except KubeApiError as exc:
            return PostFilterResult(Status.from_error(exc.message))
        return PostFilterResult(Status.unschedulable("still not schedulable"))


@final
class DynamicResources(_DynamicResourcesCore, ScorePlugin, ScoreExtensions, NodeLocalScore, PureNormalize):
    """Dynamic Resource Allocation as kube-scheduler v1.36 runs it with its default feature gates: from
    v1.35 (``dynamic_resources_score``) it also scores the nodes by the prioritized-list alternatives
    their allocation uses."""

    __slots__ = ()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        data = state.get(_STATE)
        if data is None or not data.prioritized:
            return 0
        total = 0
        for claim, result in data.resolved(node_info.name):
            for request in claim.requests:
                for index, sub in enumerate(request.first_available):
                    if any(d.request == f"{request.name}/{sub.name}" for d in result.devices):
                        total += FIRST_AVAILABLE_MAX_SIZE - index
                        break
        return total

    def score_key(self, state: CycleState, pod: Pod) -> Hashable | None:
        """Pods without prioritized lists to allocate score 0 everywhere (one key); the others score per allocation."""
        data = state.get(_STATE)
        return () if data is None or not data.prioritized else None

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        """DefaultNormalizeScore; scores of a pod without prioritized lists are all 0 and stay so."""
        return normalized_values(scores, reverse=False)

    def normalize_key(self, state: CycleState, pod: Pod) -> Hashable:
        """Normalizing reads nothing but the scores."""
        return ()


@final
class _UnscoredDynamicResources(_DynamicResourcesCore):
    """v1.32-v1.34: no Score (the plugin is no score plugin, so it has no entry in per-plugin scores)."""

    __slots__ = ()


def new(args: DynamicResourcesArgs | None, handle: Handle) -> _DynamicResourcesCore:
    """The plugin as the handle's kube version builds it (the registry's factory)."""
    if handle.switches.dynamic_resources_score:
        return DynamicResources(args, handle)
    return _UnscoredDynamicResources(args, handle)


def dra_allocations(state: CycleState, feasible: Sequence[str]) -> dict[str, list[dict[str, Any]]] | None:
    """``explain``'s ``dra_allocations``: per feasible node, the devices each claim would get."""
    data = state.get(_STATE)
    if data is None:
        return None
    out: dict[str, list[dict[str, Any]]] = {}
    for node in sorted(feasible):
        allocations = data.resolved(node)
        if not allocations:
            continue
        entries = []
        for claim, result in allocations:
            if claim.name.endswith(EXTENDED_CLAIM_SUFFIX) and not claim.uid:
                continue
            entry: dict[str, Any] = {"claim": claim.key, "devices": [_device_dict(d) for d in result.devices]}
            if result.node_selector_raw is not None:
                entry["nodeSelector"] = result.node_selector_raw
            entries.append(entry)
        if entries:
            out[node] = entries
    return out


def _device_dict(device: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"request": device.request, "driver": device.driver, "pool": device.pool,
                           "device": device.device}
    if device.admin_access is not None:
        out["adminAccess"] = device.admin_access
    if device.consumed_capacity:
        out["consumedCapacity"] = {name: str(q) for name, q in device.consumed_capacity.items()}
    if device.binding_conditions:
        out["bindingConditions"] = list(device.binding_conditions)
    if device.binding_failure_conditions:
        out["bindingFailureConditions"] = list(device.binding_failure_conditions)
    return out
