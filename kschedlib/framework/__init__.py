"""The plugin author's contract: extension points, Status, CycleState, NodeInfo, Snapshot, Registry."""

from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.config import PluginRef, PluginSet, ProfileConfig, SchedulerConfig, parse_config
from kschedlib.framework.cycle_state import CycleState, StateData, StateKey
from kschedlib.framework.diagnosis import Diagnosis, fit_error_message
from kschedlib.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EnqueueExtensions,
    QueueingHint,
)
from kschedlib.framework.extension_points import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import (
    BatchScore,
    ExternalNodeState,
    LabelKeyedFilter,
    NodeLocalFilter,
    NodeLocalScore,
    PureNormalize,
)
from kschedlib.framework.node_info import ImageState, NodeInfo
from kschedlib.framework.plugin_state import KeepsState
from kschedlib.framework.pod_info import AffinityTerm, PodInfo, WeightedAffinityTerm
from kschedlib.framework.queued_pod import QueuedPodInfo
from kschedlib.framework.registry import PluginEntry, Registry
from kschedlib.framework.results import PostFilterResult, PreFilterResult, Wait
from kschedlib.framework.snapshot import NodeCursor, Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.framework.waiting import WaitingPodView

__all__ = [
    "ActionType",
    "AffinityTerm",
    "BatchScore",
    "BindPlugin",
    "ClusterApi",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "Diagnosis",
    "EnqueueExtensions",
    "ExternalNodeState",
    "FilterPlugin",
    "Handle",
    "ImageState",
    "KeepsState",
    "LabelKeyedFilter",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NodeCursor",
    "NodeInfo",
    "NodeLocalFilter",
    "NodeLocalScore",
    "PermitPlugin",
    "Plugin",
    "PluginEntry",
    "PluginRef",
    "PluginSet",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "ProfileConfig",
    "PureNormalize",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "Registry",
    "ReservePlugin",
    "SchedulerConfig",
    "ScoreExtensions",
    "ScorePlugin",
    "Snapshot",
    "StateData",
    "StateKey",
    "Status",
    "Wait",
    "WaitingPodView",
    "WeightedAffinityTerm",
    "fit_error_message",
    "parse_config",
]
