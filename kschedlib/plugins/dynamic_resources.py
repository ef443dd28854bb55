"""DynamicResources: kube-scheduler's Dynamic Resource Allocation plugin, for pods without claims.

From v1.34 the plugin is in the default profile (before DefaultPreemption; from v1.35 with a Score
of weight 2).  For a pod that claims no devices it does nothing visible but three things that every
user sees in kube-scheduler's output, which this module reproduces:

* PreFilter records its (empty) state and returns Skip, so Filter never runs;
* Score gives every node 0 (the plugin appears with 0 in per-plugin scores);
* PostFilter answers ``no new claims to deallocate`` (Unschedulable), which is why v1.36 preemption
  messages start with that text -- and, when an earlier PreFilter plugin rejected the pod so that
  this plugin's PreFilter never ran, it fails with the Error ``not found`` (its state is missing),
  and preemption is not tried.

Allocating devices for pods with ``spec.resourceClaims`` is not implemented: such pods get an Error
naming the missing support, never a silent wrong answer.  With the DynamicResourceAllocation gate
off (v1.30-v1.33 defaults) the claims are ignored, as those versions ignore them.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar, Final, final

import attrs

from kschedlib.errors import ConfigError
from kschedlib.framework._go_duration import parse_duration
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.events import ClusterEventWithHint, EnqueueExtensions
from kschedlib.framework.extension_points import PostFilterPlugin, PreFilterPlugin, ScorePlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalScore
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.results import PostFilterResult, PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod

__all__ = ["DRA_NOT_SUPPORTED", "DynamicResources", "DynamicResourcesArgs", "NO_CLAIMS_TO_DEALLOCATE", "decode_args"]

NO_CLAIMS_TO_DEALLOCATE: Final = "no new claims to deallocate"
STATE_NOT_FOUND: Final = "not found"
DRA_NOT_SUPPORTED: Final = "Dynamic Resource Allocation is not supported yet"



@final
@attrs.frozen(slots=True)
class DynamicResourcesArgs:
    """``DynamicResourcesArgs`` (config v1, kube-scheduler v1.34+), in seconds.

    ``filter_timeout`` bounds the device search per node (0 disables the bound);
    ``binding_timeout`` bounds the wait for device binding conditions in PreBind.
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
class _NoClaims:
    """PreFilter's state for a pod without claims: immutable, so cloning shares it."""

    __slots__ = ()

    def clone(self) -> _NoClaims:
        return self


_NO_CLAIMS: Final = _NoClaims()
_STATE: Final[StateKey[_NoClaims]] = StateKey("PreFilterDynamicResources")


@final
class DynamicResources(PreFilterPlugin, ScorePlugin, NodeLocalScore, PostFilterPlugin, EnqueueExtensions):
    """Dynamic Resource Allocation as kube-scheduler v1.34+ runs it for pods without resource claims."""

    name: ClassVar[str] = "DynamicResources"
    __slots__ = ("_enabled",)

    def __init__(self, args: DynamicResourcesArgs | None, handle: Handle) -> None:
        """The args are decoded and validated, not used yet (``filterTimeout`` only matters when
        devices are allocated)."""
        self._enabled = handle.switches.dynamic_resources

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Nothing it rejects can be helped by an event: it rejects no pod without claims."""
        return ()

    def pre_filter(self, state: CycleState, pod: Pod) -> Status | PreFilterResult:
        """Skip a pod without claims (recording that it has none); refuse one with claims."""
        if pod.resource_claims and self._enabled:
            names = ", ".join(claim.name for claim in pod.resource_claims)
            return Status.from_error(f"{DRA_NOT_SUPPORTED}: pod {pod.key} has spec.resourceClaims ({names})")
        state.write(_STATE, _NO_CLAIMS)
        return Status.skip()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def score_key(self, state: CycleState, pod: Pod) -> Hashable:
        """Every pod that reaches Score claims nothing and scores 0 everywhere: one key for all."""
        return ()

    def post_filter(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> PostFilterResult:
        if state.get(_STATE) is None:
            return PostFilterResult(Status.from_error(STATE_NOT_FOUND))
        return PostFilterResult(Status.unschedulable(NO_CLAIMS_TO_DEALLOCATE))
