"""Which kube-scheduler kschedlib behaves as: a Kubernetes minor version plus feature gates.

kube-scheduler's behaviour is a function of its version and its feature gates.  This module keeps
that shape in one place:

* :data:`GATES` -- the feature gates the scheduler reads, with each one's default, stage and lock
  per minor version (kube's versioned feature specs, ``pkg/features/kube_features.go``);
* :data:`CHANGES` -- every behaviour change after v1.30 that kschedlib models: the switch that
  names it, the minor version it entered, the gate that guards it (if any) and one line saying
  what a user sees;
* :func:`resolve` -- a version and gate overrides in, one frozen :class:`KubeSettings` out, whose
  :class:`Switches` plugins and the queue read by name (``switches.generic_taint_reason``); nothing
  else in kschedlib compares version numbers.

The list of what differs between two versions is therefore ``CHANGES`` filtered by their minors;
``docs/reference/versions.md`` is generated from it (and a test keeps the two equal).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError

__all__ = [
    "CHANGES",
    "DEFAULT_KUBE_VERSION",
    "ENV_VAR",
    "GATES",
    "SUPPORTED_VERSIONS",
    "VERIFICATIONS",
    "VERIFIED_VERSIONS",
    "Change",
    "GateSpec",
    "KubeSettings",
    "Switches",
    "Verification",
    "add_version_arguments",
    "changes_between",
    "chosen_explicitly",
    "gate_defaults",
    "kubelet_note",
    "markdown_table",
    "parse_feature_gates",
    "parse_kube_version",
    "resolve",
    "verification_table",
]

Stage = Literal["alpha", "beta", "GA", "deprecated"]

SUPPORTED_VERSIONS: Final = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36")
"""Kubernetes minors kschedlib accepts; each means that minor's newest patch as kschedlib models it."""

VERIFIED_VERSIONS: Final = SUPPORTED_VERSIONS
"""Minors whose behaviour is checked against a real kube-scheduler's recorded decisions (see :data:`VERIFICATIONS`)."""

DEFAULT_KUBE_VERSION: Final = "1.36"
"""The version used when none is chosen in code, on the command line or in :data:`ENV_VAR`."""

ENV_VAR: Final = "KSCHEDLIB_KUBE_VERSION"
"""Environment variable that sets the default version (e.g. to run one test suite per version)."""

_MINORS: Final = tuple(int(v.split(".")[1]) for v in SUPPORTED_VERSIONS)
_VERSION = re.compile(r"v?1\.(0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))?")
"""A release version as kube reads one: ASCII digits only, no zero-prefixed component (``1.036`` is refused)."""
_SPACE: Final = " \t\n\f\r"
"""What kube's version parser skips around a version (RE2's ``\\s``: ASCII whitespace only)."""


@final
@attrs.frozen(slots=True, repr=False)
class GateSpec(FieldsRepr):
    """A gate's value from minor ``since`` on (until a later spec of the same gate)."""

    since: int
    default: bool
    stage: Stage
    locked: bool = False


def _specs(*specs: tuple[int, bool, Stage] | tuple[int, bool, Stage, bool]) -> tuple[GateSpec, ...]:
    return tuple(GateSpec(*spec) for spec in specs)


GATES: Final[Mapping[str, tuple[GateSpec, ...]]] = MappingProxyType({
    # Scheduler gates of kube-scheduler 1.30-1.36 (pkg/features/kube_features.go, versioned specs).
    "SchedulerQueueingHints": _specs((28, False, "beta"), (32, True, "beta"), (34, True, "GA", True)),
    "SchedulerAsyncPreemption": _specs((32, False, "alpha"), (33, True, "beta")),
    "SchedulerPopFromBackoffQ": _specs((33, True, "beta")),
    "SchedulerAsyncAPICalls": _specs((34, False, "beta")),
    "OpportunisticBatching": _specs((35, True, "beta")),
    "NominatedNodeNameForExpectation": _specs((34, False, "alpha"), (35, True, "beta")),
    "PodLevelResources": _specs((32, False, "alpha"), (34, True, "beta")),
    "InPlacePodVerticalScaling": _specs((27, False, "alpha"), (33, True, "beta"), (35, True, "GA", True)),
    "InPlacePodLevelResourcesVerticalScaling": _specs((35, False, "alpha"), (36, True, "beta")),
    "SidecarContainers": _specs((29, True, "beta"), (33, True, "GA", True)),
    "MatchLabelKeysInPodTopologySpread": _specs((27, True, "beta")),
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": _specs((34, True, "beta")),
    "MatchLabelKeysInPodAffinity": _specs((29, False, "alpha"), (31, True, "beta"), (33, True, "GA", True)),
    "NodeInclusionPolicyInPodTopologySpread": _specs((26, True, "beta"), (33, True, "GA", True)),
    "DynamicResourceAllocation": _specs((26, False, "alpha"), (32, False, "beta"), (34, True, "GA"),
                                        (35, True, "GA", True)),
    "DRAPrioritizedList": _specs((33, False, "alpha"), (34, True, "beta"), (36, True, "GA")),
    "DRAAdminAccess": _specs((32, False, "alpha"), (34, True, "beta"), (36, True, "GA")),
    "DRAResourceClaimDeviceStatus": _specs((32, False, "alpha"), (33, True, "beta")),
    "DRASchedulerFilterTimeout": _specs((34, True, "beta")),
    "DRADeviceTaints": _specs((33, False, "alpha"), (36, True, "beta")),
    "DRAPartitionableDevices": _specs((33, False, "alpha"), (36, True, "beta")),
    "DRAConsumableCapacity": _specs((34, False, "alpha"), (36, True, "beta")),
    "DRAExtendedResource": _specs((34, False, "alpha"), (36, True, "beta")),
    "DRADeviceBindingConditions": _specs((34, False, "alpha"), (36, True, "beta")),
    "DRADeviceTaintRules": _specs((35, False, "alpha"), (36, False, "beta")),
    "DRAWorkloadResourceClaims": _specs((36, False, "alpha")),
    "DRANodeAllocatableResources": _specs((36, False, "alpha")),
    "DRAListTypeAttributes": _specs((36, False, "alpha")),
    "VolumeCapacityPriority": _specs((21, False, "alpha")),
    "StorageCapacityScoring": _specs((33, False, "alpha")),
    "VolumeAttributesClass": _specs((29, False, "alpha"), (31, False, "beta"), (34, True, "GA"),
                                    (36, True, "GA", True)),
    "VolumeLimitScaling": _specs((35, False, "alpha")),
    "NodeDeclaredFeatures": _specs((35, False, "alpha"), (36, True, "beta")),
    "GenericWorkload": _specs((35, False, "alpha")),
    "GangScheduling": _specs((35, False, "alpha")),
    "TopologyAwareWorkloadScheduling": _specs((36, False, "alpha")),
    "WorkloadAwarePreemption": _specs((36, False, "alpha")),
    "TaintTolerationComparisonOperators": _specs((35, False, "alpha")),
    "ImageVolume": _specs((31, False, "alpha"), (33, False, "beta"), (35, True, "beta"), (36, True, "GA")),
    "PodDisruptionConditions": _specs((26, True, "beta"), (31, True, "GA", True)),
})
"""Every feature gate kschedlib knows, with its versioned specs (oldest first)."""

_MODELLED_ON_FROM: Final[Mapping[str, tuple[int, str]]] = MappingProxyType({
    "DynamicResourceAllocation": (32, "1.30 and 1.31 run an alpha API (resource.k8s.io/v1alpha2, v1alpha3) that "
                                      "kschedlib does not model"),
})
"""Gates kschedlib cannot turn on before a minor: the minor it models them on from, and why not before."""

_REMOVED_GATES: Final[Mapping[str, int]] = MappingProxyType({
    "VolumeCapacityPriority": 33,  # renamed StorageCapacityScoring
    "PodDisruptionConditions": 34,
})


@final
@attrs.frozen(slots=True, repr=False)
class Change(FieldsRepr):
    """One behaviour change of kube-scheduler after v1.30, as kschedlib models it."""

    switch: str
    """The :class:`Switches` attribute that turns it on."""
    since: int
    """The Kubernetes minor that brought it (1.``since``)."""
    description: str
    gate: str | None = None
    """The feature gate that must be on as well, if any."""


CHANGES: Final[tuple[Change, ...]] = (
    Change("legacy_volume_limits_removed", 31,
           "EBSLimits, GCEPDLimits, AzureDiskLimits leave the default profile; they and CinderLimits are "
           "refused in configurations"),
    Change("volume_binding_all_nodes", 31,
           "VolumeBinding's PreFilter no longer narrows the nodes to bound local volumes' hostnames "
           "(reverted upstream after v1.30.6)"),
    Change("prefilter_narrowing_rejects", 31,
           "the plugins whose PreFilterResult narrowed the nodes count among the plugins that rejected a pod "
           "that fits nowhere (their events requeue it)"),
    Change("extender_error_verbatim", 31,
           "an extender's `Error` reply is reported as sent (no Go format artefacts such as `%!o(MISSING)`)"),
    Change("preemption_victims_resorted", 31,
           "preemption re-sorts a node's victims by importance after reprieving them (changes which "
           "node is picked)"),
    Change("legacy_volume_limits_unregistered", 32,
           "EBSLimits, GCEPDLimits, AzureDiskLimits and CinderLimits no longer exist (also refused in multiPoint)"),
    Change("absent_nodes_in_fit_error", 32,
           "nodes left out by a PreFilterResult count in the FitError as "
           "`node(s) didn't satisfy plugin(s) [X]`; preemption counts every node"),
    Change("dynamic_resources", 32,
           "DynamicResources joins the default profile before DefaultPreemption (off by default until 1.34, "
           "where resource.k8s.io/v1 is served; 1.32 reads v1beta1, 1.33 v1beta1 and v1beta2)",
           gate="DynamicResourceAllocation"),
    Change("sidecar_nonzero_requests", 32,
           "bound pods' non-zero requests count restartable init (sidecar) containers like the kubelet"),
    Change("volume_attachments_counted", 32,
           "NodeVolumeLimits counts the node's VolumeAttachments of CSI volumes (volumes still detaching)"),
    Change("extender_status_replaces", 32,
           "an extender's failed/unresolvable verdict replaces the node's status"),
    Change("csi_limits_from_csinode", 32,
           "NodeVolumeLimits takes CSI volume limits only from CSINode objects (before, a node's allocatable "
           "`attachable-volumes-csi-<driver>` limited it where its CSINode gave no count)"),
    Change("balanced_allocation_skips_best_effort", 33,
           "NodeResourcesBalancedAllocation skips pods without cpu/memory requests (score 0)"),
    Change("pv_node_affinity_reason", 33,
           "VolumeBinding says `node(s) didn't match PersistentVolume's node affinity`"),
    Change("topology_spread_per_constraint", 33,
           "PodTopologySpread scores two soft constraints on one topology key with counts of their own "
           "(up to v1.32 they shared the key's counts)"),
    Change("nominated_pod_delete_requeues", 33,
           "a nominated pending pod leaving the queue (deleted, and in 1.33-1.34 also bound) requeues the pods "
           "of lower or equal priority that a deleted assigned pod could help"),
    Change("affinity_node_hint_by_domain", 33,
           "InterPodAffinity's node hint requeues only for a node added with a topology key of the pod's terms "
           "or an update that gives (affinity), takes away (anti-affinity) or changes one; before, any update "
           "of a node carrying such a key did", gate="SchedulerQueueingHints"),
    Change("in_place_resize_requests", 33,
           "bound pods' requests include in-place resize status resources", gate="InPlacePodVerticalScaling"),
    Change("fit_unresolvable_over_allocatable", 34,
           "NodeResourcesFit is UnschedulableAndUnresolvable where a request exceeds the node's total "
           "allocatable; preemption skips such nodes"),
    Change("rwop_in_use_reason", 34,
           "VolumeRestrictions' ReadWriteOncePod reason names the claim as already in use by another pod"),
    Change("volume_attributes_class", 34,
           "VolumeBinding binds an unbound claim only to a volume of its VolumeAttributesClass",
           gate="VolumeAttributesClass"),
    Change("pod_level_resources", 34,
           "pod-level `spec.resources` requests replace the containers' sum", gate="PodLevelResources"),
    Change("generic_taint_reason", 34,
           "TaintToleration says `node(s) had untolerated taint(s)` (v1.35, and v1.34 from its 1.34.x patch "
           "that kschedlib models)"),
    Change("short_queue_sort_message", 34,
           "profiles with different queueSort plugins are refused with `must be the same for all profiles` "
           "(before, `queueSort must be the same for all profiles`)"),
    Change("dra_claimless_post_filter_reason", 34,
           "DynamicResources' PostFilter says `no new claims to deallocate` also for pods without claims (before, "
           "no reason)", gate="DynamicResourceAllocation"),
    Change("dra_prioritized_list", 34, "DRA requests may list `firstAvailable` alternatives",
           gate="DRAPrioritizedList"),
    Change("dra_admin_access", 34, "DRA requests with `adminAccess` may use devices already in use",
           gate="DRAAdminAccess"),
    Change("dynamic_resources_score", 35,
           "DynamicResources scores (weight 2; 0 for pods without claims)", gate="DynamicResourceAllocation"),
    Change("terminating_victims_not_deleted", 35,
           "preemption does not delete a victim that is already terminating"),
    Change("dra_incomplete_pools_skipped", 35,
           "the DRA allocator takes no device from an incomplete pool and counts the pool's slices beyond the "
           "node's to tell whether it is complete (a newer generation elsewhere drops the pool); before, only "
           "`All` requests refused incomplete pools", gate="DynamicResourceAllocation"),
    Change("binding_is_not_a_nominated_delete", 35,
           "a nominated pod's binding no longer counts as its deletion (it requeues nothing of its own)"),
    Change("nominated_node_name_kept", 35,
           "a failed pod keeps its nominated node", gate="NominatedNodeNameForExpectation"),
    Change("nominated_node_name_before_prebind", 35,
           "the binding cycle sets the pod's nominated node to the chosen node before PreBind or Permit "
           "waits do work", gate="NominatedNodeNameForExpectation"),
    Change("node_declared_features", 35,
           "NodeDeclaredFeatures joins the default profile after DefaultBinder; a pod needing a declared node "
           "feature fits only nodes listing it in `status.declaredFeatures`", gate="NodeDeclaredFeatures"),
    Change("dra_device_taints", 36, "DRA devices with NoSchedule/NoExecute taints need a toleration",
           gate="DRADeviceTaints"),
    Change("dra_partitionable_devices", 36, "DRA devices consuming shared counters are allocated within them",
           gate="DRAPartitionableDevices"),
    Change("dra_consumable_capacity", 36, "DRA devices allowing multiple allocations share their capacity",
           gate="DRAConsumableCapacity"),
    Change("dra_binding_conditions", 36, "DRA devices with binding conditions may be allocated; a claim whose "
           "devices failed to bind or timed out is not available (PostFilter deallocates it) and PreBind needs "
           "them ready", gate="DRADeviceBindingConditions"),
    Change("dra_extended_resource", 36, "an extended resource a DeviceClass provides (and the node does not "
           "advertise) is allocated by DynamicResources, not checked by NodeResourcesFit",
           gate="DRAExtendedResource"),
    Change("affinity_pod_hint_fixes", 36,
           "InterPodAffinity's pod hint requeues a pod after its own label update, reads nominated pods like "
           "assigned ones, and requeues a pod matching a deleted pod's anti-affinity", gate="SchedulerQueueingHints"),
    Change("dra_binding_errors_wrapped", 36,
           "DRA binding-condition waits end in `device binding failed: claim=C, ...`, `device binding timeout: "
           "claim=C` or `device binding timeout: context deadline exceeded` (before, `claim C binding failed: ...`, "
           "`claim C binding timeout`, `device binding timeout`)"),
    Change("claim_owner_reason_capitalized", 36,
           "DynamicResources says `was not created for Pod ... (Pod is not owner)` (before, `pod`)",
           gate="DynamicResourceAllocation"),
    Change("balanced_allocation_change_score", 36,
           "NodeResourcesBalancedAllocation scores the change in balance the pod makes"),
    Change("pod_level_resize_requests", 36,
           "bound pods' pod-level requests include pod-level in-place resize status resources",
           gate="InPlacePodLevelResourcesVerticalScaling"),
    Change("image_volume_locality", 36,
           "ImageLocality also scores images of image volumes", gate="ImageVolume"),
    Change("queueing_hints", 30,
           "plugins' queueing hints decide which event requeues a rejected pod; in-flight events are "
           "replayed", gate="SchedulerQueueingHints"),
    Change("narrow_queueing_hints", 32,
           "plugins register v1.36's narrower events and hint functions, node events skip the node pre-check, "
           "pending-pod updates and every assigned-pod event go through the hints, a node deletion requeues "
           "(before, the gate on gives v1.30's events and hint functions; 1.32, where the gate turned on by "
           "default, stands for the set)", gate="SchedulerQueueingHints"),
    Change("pop_from_backoff_queue", 33,
           "an idle scheduler pops from the backoff queue; backoff ends on whole seconds",
           gate="SchedulerPopFromBackoffQ"),
    Change("async_preemption", 32,
           "victims are deleted after the cycle; the preemptor waits at PreEnqueue until they are gone",
           gate="SchedulerAsyncPreemption"),
)
"""Every modelled behaviour change, grouped by the minor that brought it."""


@final
@attrs.frozen(slots=True, repr=False)
class Switches(FieldsRepr):
    """The behaviour changes in force, one named flag each (see :data:`CHANGES` for what they mean).

    Plugins and the queue read these flags; they never compare version numbers.
    """

    legacy_volume_limits_removed: bool = False
    volume_binding_all_nodes: bool = False
    legacy_volume_limits_unregistered: bool = False
    preemption_victims_resorted: bool = False
    prefilter_narrowing_rejects: bool = False
    absent_nodes_in_fit_error: bool = False
    sidecar_nonzero_requests: bool = False
    volume_attachments_counted: bool = False
    extender_status_replaces: bool = False
    csi_limits_from_csinode: bool = False
    nominated_pod_delete_requeues: bool = False
    affinity_node_hint_by_domain: bool = False
    extender_error_verbatim: bool = False
    balanced_allocation_skips_best_effort: bool = False
    pv_node_affinity_reason: bool = False
    in_place_resize_requests: bool = False
    topology_spread_per_constraint: bool = False
    fit_unresolvable_over_allocatable: bool = False
    rwop_in_use_reason: bool = False
    pod_level_resources: bool = False
    volume_attributes_class: bool = False
    dynamic_resources: bool = False
    generic_taint_reason: bool = False
    dynamic_resources_score: bool = False
    dra_claimless_post_filter_reason: bool = False
    dra_incomplete_pools_skipped: bool = False
    binding_is_not_a_nominated_delete: bool = False
    affinity_pod_hint_fixes: bool = False
    claim_owner_reason_capitalized: bool = False
    dra_binding_errors_wrapped: bool = False
    dra_prioritized_list: bool = False
    dra_admin_access: bool = False
    dra_device_taints: bool = False
    dra_partitionable_devices: bool = False
    dra_consumable_capacity: bool = False
    dra_binding_conditions: bool = False
    dra_extended_resource: bool = False
    terminating_victims_not_deleted: bool = False
    nominated_node_name_kept: bool = False
    nominated_node_name_before_prebind: bool = False
    node_declared_features: bool = False
    short_queue_sort_message: bool = False
    balanced_allocation_change_score: bool = False
    pod_level_resize_requests: bool = False
    image_volume_locality: bool = False
    queueing_hints: bool = False
    narrow_queueing_hints: bool = False
    pop_from_backoff_queue: bool = False
    async_preemption: bool = False


@final
@attrs.frozen(slots=True, repr=False)
class Verification(FieldsRepr):
    """How one minor was checked against a real kube-scheduler (a row of the versions page)."""

    minor: int
    release: str
    """The patch release whose decisions were recorded (``v1.31.14``): kschedlib follows it."""
    build: str
    """Where that kube-scheduler came from."""
    samples: Mapping[str, int]
    """Recorded cases per kind (``single cycles``, ``loop timelines``, ...), in the project's test data."""
    answered: int = 0
    """Scenarios written for differences the samples miss, answered by that kube-scheduler."""


_SAMPLE = {"single cycles": 151, "loop timelines": 16, "extender cases": 10}
_MICROSHIFT = "the OpenShift fork vendored by openshift/microshift release-4.{}"

VERIFICATIONS: Final[tuple[Verification, ...]] = (
    Verification(30, "v1.30.6", "upstream, as vendored by kubernetes-sigs/scheduler-plugins d250c4b9",
                 {"single cycles": 157, "loop timelines": 16, "extender cases": 12, "scheduling sequences": 2},
                 answered=9),
    Verification(31, "v1.31.14", _MICROSHIFT.format(18), _SAMPLE),
    Verification(32, "v1.32.13", _MICROSHIFT.format(19), _SAMPLE),
    Verification(33, "v1.33.13", _MICROSHIFT.format(20), _SAMPLE),
    Verification(34, "v1.34.9", _MICROSHIFT.format(21), {**_SAMPLE, "DRA cases": 51}),
    Verification(35, "v1.35.6", _MICROSHIFT.format(22), {**_SAMPLE, "DRA cases": 51}),
    Verification(36, "v1.36.3", _MICROSHIFT.format(23), {**_SAMPLE, "DRA cases": 51}, answered=10),
)
"""Per minor, the kube-scheduler whose decisions kschedlib is compared with, and how many."""


@final
@attrs.frozen(slots=True, repr=False)
class KubeSettings(FieldsRepr):
    """A resolved kube-scheduler version: its minor, every known gate's value and the switches."""

    version: str
    """``"1.MINOR"``."""
    feature_gates: Mapping[str, bool]
    """Every gate that exists at this version, defaults overlaid with the overrides."""
    overrides: Mapping[str, bool]
    """The gates set explicitly."""
    switches: Switches

    @property
    def minor(self) -> int:
        return int(self.version.split(".")[1])

    def describe(self) -> str:
        """One line for text output: ``kube-scheduler 1.36`` and the gates set explicitly."""
        gates = ",".join(f"{name}={str(value).lower()}" for name, value in sorted(self.overrides.items()))
        return f"kube-scheduler {self.version}" + (f", feature gates {gates}" if gates else "")

    def to_dict(self) -> dict[str, object]:
        """The version and the gates set explicitly, as results report them."""
        return {"kube_version": self.version, "feature_gates": dict(sorted(self.overrides.items()))}

    def __reduce__(self) -> tuple[Any, tuple[str, dict[str, bool]]]:
        """Pickled as version and overrides (results cross process boundaries in sweeps)."""
        return resolve, (self.version, dict(self.overrides))


def parse_kube_version(value: object, *, field: str = "kube_version") -> str:
    """``"1.36"``, ``"v1.36"`` or ``"1.36.3"`` -> ``"1.36"``; anything unsupported is a ConfigError (also
    fullwidth digits or ``"1.036"``: kube's semantic versions are ASCII digits without leading zeros)."""
    match = _VERSION.fullmatch(value.strip(_SPACE)) if isinstance(value, str) else None
    if match is None or int(match.group(1)) not in _MINORS:
        raise ConfigError(f"unsupported Kubernetes version; supported: {', '.join(SUPPORTED_VERSIONS)}",
                          field=field, value=value)
    return f"1.{int(match.group(1))}"


def parse_feature_gates(value: object, *, field: str = "feature_gates") -> dict[str, bool]:
    """``"A=true,B=false"`` (as ``--feature-gates`` takes it) or a mapping -> ``{name: bool}``."""
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, str):
        items = []
        for part in filter(None, (p.strip() for p in value.split(","))):
            name, sep, text = part.partition("=")
            if not sep or text.strip().lower() not in ("true", "false"):
                raise ConfigError("invalid value of feature gate, expected Name=true|false", field=field,
                                  value=part)
            items.append((name.strip(), text.strip().lower() == "true"))
    else:
        raise ConfigError("must be a mapping of gate names to booleans or 'Name=bool,...'", field=field,
                          value=value)
    gates: dict[str, bool] = {}
    for name, enabled in items:
        if not isinstance(name, str) or type(enabled) is not bool:
            raise ConfigError("a feature gate maps a name to true or false", field=f"{field}.{name}",
                              value=enabled)
        gates[name] = enabled
    return gates


def _spec_at(name: str, minor: int) -> GateSpec | None:
    if minor >= _REMOVED_GATES.get(name, 1_000):
        return None
    current = None
    for spec in GATES[name]:
        if spec.since <= minor:
            current = spec
    return current


def gate_defaults(version: str) -> dict[str, bool]:
    """Every gate that exists at ``version`` (``"1.MINOR"``) with its default value."""
    minor = int(version.split(".")[1])
    return {name: spec.default for name in GATES if (spec := _spec_at(name, minor)) is not None}


def resolve(kube_version: str | None = None, feature_gates: Mapping[str, bool] | str | None = None) -> KubeSettings:
    """The settings for ``kube_version`` (else :data:`ENV_VAR`, else the default) with gate overrides.

    Refused as kube-scheduler refuses them: an unknown gate (``unrecognized feature gate: X``) and a
    locked gate set against its lock (``cannot set feature gate X to false, feature is locked to true``).
    """
    if kube_version is None:
        env = os.environ.get(ENV_VAR)
        version = parse_kube_version(env, field=ENV_VAR) if env else DEFAULT_KUBE_VERSION
    else:
        version = parse_kube_version(kube_version)
    minor = int(version.split(".")[1])
    overrides = parse_feature_gates(feature_gates) if feature_gates is not None else {}
    gates = gate_defaults(version)
    for name, enabled in overrides.items():
        spec = _spec_at(name, minor) if name in GATES else None
        if spec is None:
            raise ConfigError(f"unrecognized feature gate: {name}", field="feature_gates", value=name)
        if spec.locked and enabled != spec.default:
            raise ConfigError(f"cannot set feature gate {name} to {str(enabled).lower()}, feature is locked to "
                              f"{str(spec.default).lower()}", field="feature_gates", value=name)
        modelled = _MODELLED_ON_FROM.get(name)
        if enabled and modelled is not None and minor < modelled[0]:
            raise ConfigError(f"kschedlib models feature gate {name} on from 1.{modelled[0]}: {modelled[1]}",
                              field="feature_gates", value=name)
        gates[name] = enabled
    flags = {change.switch: minor >= change.since and (change.gate is None or gates.get(change.gate, False))
             for change in CHANGES}
    return KubeSettings(version, MappingProxyType(gates), MappingProxyType(dict(overrides)), Switches(**flags))


def chosen_explicitly(kube_version: str | None) -> bool:
    """Whether a version was chosen (in code, on the command line or in :data:`ENV_VAR`)."""
    return kube_version is not None or bool(os.environ.get(ENV_VAR))


def kubelet_note(settings: KubeSettings, kubelet_versions: Iterable[str]) -> str | None:
    """A note when nodes report kubelet minors other than the version in force, else ``None``.

    ``kubelet_versions`` are ``status.nodeInfo.kubeletVersion`` values (``v1.29.3``); unparsable ones
    are ignored.
    """
    minors = sorted({m.group(1) for v in kubelet_versions if (m := re.match(r"v?(1\.\d+)", v.strip()))},
                    key=lambda v: int(v.split(".")[1]))
    other = [minor for minor in minors if minor != settings.version]
    if not other:
        return None
    return (f"the cluster's nodes report kubelet {', '.join(minors)}; kschedlib behaves as kube-scheduler "
            f"{settings.version} (choose with kube_version / --kube-version / ${ENV_VAR})")


def changes_between(old: str, new: str) -> list[Change]:
    """The modelled changes that entered after ``old`` up to and including ``new`` (oldest first)."""
    low, high = (int(parse_kube_version(v).split(".")[1]) for v in (old, new))
    return sorted((c for c in CHANGES if low < c.since <= high), key=lambda c: c.since)


def markdown_table() -> str:
    """The change table as Markdown (``docs/reference/versions.md`` is this text)."""
    header = "| switch | since | gate (default per minor) | what changes |\n|---|---|---|---|\n"
    rows = []
    for change in sorted(CHANGES, key=lambda c: (c.since, c.switch)):
        gate = "none"
        if change.gate is not None:
            values = ", ".join(f"1.{m}: {'on' if gate_defaults(f'1.{m}').get(change.gate) else 'off'}"
                               for m in _MINORS if m >= change.since)
            gate = f"`{change.gate}` ({values})"
        rows.append(f"| `{change.switch}` | 1.{change.since} | {gate} | {change.description} |\n")
    return header + "".join(rows)


def verification_table() -> str:
    """Per minor, what was checked against which kube-scheduler, as Markdown (part of the versions page)."""
    rows = ["| minor | kube-scheduler | built from | compared (every case must match) |\n|---|---|---|---|\n"]
    for check in VERIFICATIONS:
        compared = ", ".join(f"{count} {kind}" for kind, count in check.samples.items())
        if check.answered:
            compared += f"; {check.answered} scenarios written for the table's differences, answered by it"
        rows.append(f"| 1.{check.minor} | {check.release} | {check.build} | {compared} |\n")
    return "".join(rows)


def add_version_arguments(parser: Any) -> None:
    """``--kube-version`` and ``--feature-gates`` for a command that builds a scheduler."""
    parser.add_argument("--kube-version", default=None, metavar="X.Y",
                        help=f"kube-scheduler version to behave as ({SUPPORTED_VERSIONS[0]}-{SUPPORTED_VERSIONS[-1]}; "
                             f"default ${ENV_VAR} or {DEFAULT_KUBE_VERSION})")
    parser.add_argument("--feature-gates", default=None, metavar="NAME=BOOL,...",
                        help="feature gates, as kube-scheduler's --feature-gates")
