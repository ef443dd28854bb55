"""The decisions behind VolumeBinding (kube's ``SchedulerVolumeBinder``), as pure functions.

* :func:`pod_volume_claims` sorts a pod's claims into bound, unbound with
  delayed binding (WaitForFirstConsumer) and unbound "immediate" ones.
* :func:`eligible_nodes` narrows the nodes to the hostnames that bound
  volumes' node affinity names.
* :func:`find_pod_volumes` decides for one node: bound volumes' node affinity,
  static PersistentVolumes for delayed claims (smallest fitting one, greedily,
  smallest claims first), else dynamic provisioning (class topology and CSI
  storage capacity).
* :func:`bind_volume_to_claim` / :func:`bound_claim` / :func:`selected_claim`
  build the objects a binding writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.storage import StorageLister
from kschedlib.model.labels import NodeSelector
from kschedlib.model.objects import Node, Pod
from kschedlib.plugins._helpers.csi_translation import (
    IN_TREE_PLUGINS,
    TranslationError,
    migrated_on_node,
    translated_node_affinity,
)
from kschedlib.plugins._helpers.volumes import (
    BIND_COMPLETED_ANNOTATION,
    BOUND_BY_CONTROLLER_ANNOTATION,
    NO_PROVISIONER,
    SELECTED_NODE_ANNOTATION,
    WAIT_FOR_FIRST_CONSUMER,
    claim_class,
    claim_of,
    is_fully_bound,
    not_owner_error,
    pv_class,
    pv_node_affinity_matches,
    pvc_not_found,
)

if TYPE_CHECKING:
    from kschedlib.model.storage import (
        CSINode,
        PersistentVolume,
        PersistentVolumeClaim,
        StorageClass,
        TopologySelectorTerm,
    )

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_PV_NODE_AFFINITY",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "BinderError",
    "Binding",
    "PodVolumeClaims",
    "PodVolumes",
    "assumed_volume",
    "bind_volume_to_claim",
    "bound_claim",
    "eligible_nodes",
    "find_pod_volumes",
    "pod_volume_claims",
    "selected_claim",
]

ERR_REASON_NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
ERR_REASON_PV_NODE_AFFINITY: Final = "node(s) didn't match PersistentVolume's node affinity"
"""The bound-volume conflict reason from v1.33 on (``pv_node_affinity_reason``)."""
ERR_REASON_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NOT_ENOUGH_SPACE: Final = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST: Final = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
_STORAGE: Final = "storage"
_ZERO: Final = Fraction(0)


class BinderError(Exception):
    """Something kube reports as an Error status (not a node rejection)."""


@final
@attrs.frozen(slots=True, repr=False)
class PodVolumeClaims(FieldsRepr):
    """A pod's claims by binding state, and the volumes of each delayed claim's class (as listed in PreFilter)."""

    bound: tuple[PersistentVolumeClaim, ...] = ()
    unbound_delayed: tuple[PersistentVolumeClaim, ...] = ()
    unbound_immediate: tuple[PersistentVolumeClaim, ...] = ()
    volumes_by_class: Mapping[str, Sequence[PersistentVolume]] = attrs.field(factory=dict)


@final
@attrs.frozen(slots=True, repr=False)
class Binding(FieldsRepr):
    """A delayed claim matched to a static PersistentVolume."""

    pv: PersistentVolume
    pvc: PersistentVolumeClaim


@final
@attrs.frozen(slots=True, repr=False)
class PodVolumes(FieldsRepr):
    """What binding the pod's claims on one node takes: static bindings and claims to provision."""

    static_bindings: tuple[Binding, ...] = ()
    dynamic_provisions: tuple[PersistentVolumeClaim, ...] = ()


# --- PreFilter ------------------------------------------------------------------------------


def _is_delay_binding(pvc: PersistentVolumeClaim, storage: StorageLister) -> bool:
    class_name = claim_class(pvc)
    if not class_name:
        return False
    storage_class = storage.get_storage_class(class_name)
    if storage_class is None:
        return False
    if storage_class.volume_binding_mode is None:
        raise BinderError(f'VolumeBindingMode not set for StorageClass "{class_name}"')
    return storage_class.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER


def pod_volume_claims(pod: Pod, storage: StorageLister) -> PodVolumeClaims:
    """kube's ``GetPodVolumeClaims`` (every claim exists: PreFilter checked first)."""
    bound: list[PersistentVolumeClaim] = []
    delayed: list[PersistentVolumeClaim] = []
    immediate: list[PersistentVolumeClaim] = []
    for volume in pod.volumes:
        claim = claim_of(pod, volume)
        if claim is None:
            continue
        name, ephemeral = claim
        pvc = storage.get_pvc(pod.namespace, name)
        if pvc is None:
            raise BinderError(f'error getting PVC "{pod.namespace}/{name}": {pvc_not_found(name)}')
        if ephemeral and (problem := not_owner_error(pod, pvc)) is not None:
            raise BinderError(problem)
        if is_fully_bound(pvc):
            bound.append(pvc)
        elif _is_delay_binding(pvc, storage) and not pvc.volume_name:
            delayed.append(pvc)
        else:
            immediate.append(pvc)
    by_class = {claim_class(pvc): storage.pvs_of_class(claim_class(pvc)) for pvc in delayed}
    return PodVolumeClaims(tuple(bound), tuple(delayed), tuple(immediate), by_class)


def _hostnames(pv: PersistentVolume) -> set[str]:
    """kube's ``GetLocalPersistentVolumeNodeNames``: per term, the intersection of its hostname ``In``
    values; the union over terms."""
    names: set[str] = set()
    if pv.node_affinity is None:
        return names
    for term in pv.node_affinity.terms:
        term_names: set[str] | None = None
        for req in term.match_expressions:
            if req.key == HOSTNAME_LABEL and req.operator == "In":
                term_names = set(req.values) if term_names is None else term_names & set(req.values)
        names |= term_names or set()
    return names


def eligible_nodes(bound: Sequence[PersistentVolumeClaim], storage: StorageLister) -> frozenset[str] | None:
    """The node names bound volumes allow (``None``: all nodes, also when a bound volume is missing)."""
    eligible: set[str] | None = None
    missing = False
    for pvc in bound:
        pv = storage.get_pv(pvc.volume_name)
        if pv is None:
            missing = True
            continue
        names = _hostnames(pv)
        if names:
            eligible = names if eligible is None else eligible & names
    if missing or eligible is None:
        return None
    return frozenset(eligible)


# --- Filter ---------------------------------------------------------------------------------


def _translated_affinity(pv: PersistentVolume, csi_node: CSINode | None) -> NodeSelector | None:
    """The PV's node affinity, after CSI translation when its plugin is migrated on the node."""
    source = pv.source
    plugin = IN_TREE_PLUGINS.get(source.source_kind, "") if source is not None else ""
    if not plugin or not migrated_on_node(csi_node, plugin):
        return pv.node_affinity
    try:
        return translated_node_affinity(pv)
    except TranslationError as exc:
        raise BinderError(f"could not translate pv: {exc}") from None


def _check_bound_claims(claims: Sequence[PersistentVolumeClaim], node: Node,
                        storage: StorageLister) -> tuple[bool, bool]:
    """``(node affinity satisfied, volumes found)``; stops at the first missing or mismatching volume."""
    csi_node = storage.get_csi_node(node.name)
    for pvc in claims:
        pv = storage.get_pv(pvc.volume_name)
        if pv is None:
            return True, False
        affinity = _translated_affinity(pv, csi_node)
        if not pv_node_affinity_matches(affinity, node.labels):
            return False, True
    return True, True


def _requested(pvc: PersistentVolumeClaim) -> Fraction:
    quantity = pvc.requests.get(_STORAGE)
    return quantity.amount if quantity is not None else _ZERO


def _capacity(pv: PersistentVolume) -> Fraction:
    quantity = pv.capacity.get(_STORAGE)
    return quantity.amount if quantity is not None else _ZERO


def is_volume_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """The volume's claimRef names the claim (and its uid, when the ref has one)."""
    ref = pv.claim_ref
    if ref is None or ref.name != pvc.name or ref.namespace != pvc.namespace:
        return False
    return not ref.uid or ref.uid == pvc.uid


def find_matching_volume(pvc: PersistentVolumeClaim, volumes: Sequence[PersistentVolume], node: Node,
                         excluded: set[str], match_attributes_class: bool = False) -> PersistentVolume | None:
    """kube's ``FindMatchingVolume`` on the scheduler path: a volume pre-bound to the claim if its node
    affinity fits, else the smallest available, matching one (first of equals in list order).

    With ``match_attributes_class`` (v1.34, VolumeAttributesClass) an available volume must also have
    the claim's ``volumeAttributesClassName``."""
    requested = _requested(pvc)
    wanted_class = claim_class(pvc)
    best: PersistentVolume | None = None
    best_capacity = _ZERO
    for pv in volumes:
        if pv.name in excluded or (pv.claim_ref is not None and not is_volume_bound_to_claim(pv, pvc)):
            continue
        capacity = _capacity(pv)
        if capacity < requested or pvc.volume_mode != pv.volume_mode or pv.deletion_timestamp is not None:
            continue
        fits_node = pv_node_affinity_matches(pv.node_affinity, node.labels)
        if is_volume_bound_to_claim(pv, pvc):
            return pv if fits_node else None
        if pv.phase != "Available" or (pvc.selector is not None and not pvc.selector.matches(pv.labels)):
            continue
        if pv_class(pv) != wanted_class or not fits_node:
            continue
        if match_attributes_class and pv.volume_attributes_class_name != pvc.volume_attributes_class_name:
            continue
        if not set(pvc.access_modes) <= set(pv.access_modes):
            continue
        if best is None or best_capacity > capacity:
            best, best_capacity = pv, capacity
    return best


def _find_matching_volumes(claims: Sequence[PersistentVolumeClaim], by_class: Mapping[str, Sequence[PersistentVolume]],
                           node: Node, match_attributes_class: bool,
                           ) -> tuple[bool, list[Binding], list[PersistentVolumeClaim]]:
    chosen: set[str] = set()
    bindings: list[Binding] = []
    unmatched: list[PersistentVolumeClaim] = []
    for pvc in sorted(claims, key=_requested):
        pv = find_matching_volume(pvc, by_class.get(claim_class(pvc), ()), node, chosen, match_attributes_class)
        if pv is None:
            unmatched.append(pvc)
            continue
        chosen.add(pv.name)
        bindings.append(Binding(pv, pvc))
    return not unmatched, bindings, unmatched


def _topology_term_matches(term: TopologySelectorTerm, labels: Mapping[str, str]) -> bool:
    expressions = term.match_label_expressions
    if not expressions:
        return False
    for expr in expressions:
        value = labels.get(expr.key)
        if not expr.values or value is None or value not in expr.values:
            return False
    return True


def _topology_matches(storage_class: StorageClass, labels: Mapping[str, str]) -> bool:
    terms = storage_class.allowed_topologies
    return not terms or any(_topology_term_matches(term, labels) for term in terms)


def _has_enough_capacity(provisioner: str, pvc: PersistentVolumeClaim, storage_class: StorageClass, node: Node,
                         storage: StorageLister) -> bool:
    quantity = pvc.requests.get(_STORAGE)
    if quantity is None:
        return True
    driver = storage.get_csi_driver(provisioner)
    if driver is None or not driver.storage_capacity:
        return True
    size = quantity.value()
    for capacity in storage.csi_storage_capacities():
        limit = capacity.maximum_volume_size if capacity.maximum_volume_size is not None else capacity.capacity
        if (capacity.storage_class_name == storage_class.name and limit is not None and limit.value() >= size
                and capacity.node_topology is not None and capacity.node_topology.matches(node.labels)):
            return True
    return False


def _check_volume_provisions(claims: Sequence[PersistentVolumeClaim], node: Node,
                             storage: StorageLister) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
    """``(provisioning possible, enough storage, claims to provision)``; stops at the first failing claim."""
    provisions: list[PersistentVolumeClaim] = []
    for pvc in claims:
        class_name = claim_class(pvc)
        if not class_name:
            raise BinderError(f'no class for claim "{pvc.key}"')
        storage_class = storage.get_storage_class(class_name)
        if storage_class is None:
            raise BinderError(f'failed to find storage class "{class_name}"')
        provisioner = storage_class.provisioner
        if not provisioner or provisioner == NO_PROVISIONER or not _topology_matches(storage_class, node.labels):
            return False, True, []
        if not _has_enough_capacity(provisioner, pvc, storage_class, node, storage):
            return True, False, []
        provisions.append(pvc)
    return True, True, provisions


def find_pod_volumes(claims: PodVolumeClaims, node: Node, storage: StorageLister,
                     node_conflict: str = ERR_REASON_NODE_CONFLICT,
                     match_attributes_class: bool = False) -> tuple[PodVolumes, tuple[str, ...]]:
    """kube's ``FindPodVolumes``: the pod's volumes on ``node`` and the reasons it fails there (in kube's
    fixed order, ``node_conflict`` naming a bound volume's node-affinity conflict); :class:`BinderError`
    for what kube reports as an error.  ``match_attributes_class``: see :func:`find_matching_volume`."""
    bound_ok = unbound_ok = enough_storage = pvs_found = True
    bindings: list[Binding] = []
    provisions: list[PersistentVolumeClaim] = []
    if claims.bound:
        bound_ok, pvs_found = _check_bound_claims(claims.bound, node, storage)
    if claims.unbound_delayed:
        bindings, provisions, unbound_ok, enough_storage = _delayed(claims, node, storage, match_attributes_class)
    reasons = [reason for ok, reason in ((bound_ok, node_conflict), (unbound_ok, ERR_REASON_BIND_CONFLICT),
                                         (enough_storage, ERR_REASON_NOT_ENOUGH_SPACE),
                                         (pvs_found, ERR_REASON_PV_NOT_EXIST)) if not ok]
    return PodVolumes(tuple(bindings), tuple(provisions)), tuple(reasons)


def _delayed(claims: PodVolumeClaims, node: Node, storage: StorageLister,
             match_attributes_class: bool) -> tuple[list[Binding], list[PersistentVolumeClaim], bool, bool]:
    """Delayed claims on ``node``: ``(bindings, provisions, satisfied, enough storage)``."""
    to_match: list[PersistentVolumeClaim] = []
    to_provision: list[PersistentVolumeClaim] = []
    for pvc in claims.unbound_delayed:
        selected = pvc.annotations.get(SELECTED_NODE_ANNOTATION)
        if selected is None:
            to_match.append(pvc)
        elif selected != node.name:
            return [], [], False, True
        else:
            to_provision.append(pvc)
    satisfied = True
    bindings: list[Binding] = []
    unmatched: list[PersistentVolumeClaim] = []
    if to_match:
        satisfied, bindings, unmatched = _find_matching_volumes(to_match, claims.volumes_by_class, node,
                                                                match_attributes_class)
        to_provision.extend(unmatched)
    enough = True
    provisions: list[PersistentVolumeClaim] = []
    if to_provision:
        satisfied, enough, provisions = _check_volume_provisions(to_provision, node, storage)
    return bindings, provisions, satisfied, enough


# --- Reserve --------------------------------------------------------------------------------


def assumed_volume(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """kube's ``GetBindVolumeToClaim``: the volume's claimRef names the claim (what kube-scheduler writes)."""
    from kschedlib.model.storage import ClaimRef

    annotations = dict(pv.annotations)
    if not is_volume_bound_to_claim(pv, pvc):
        annotations.setdefault(BOUND_BY_CONTROLLER_ANNOTATION, "yes")
    ref = pv.claim_ref
    if ref is None or (ref.name, ref.namespace, ref.uid) != (pvc.name, pvc.namespace, pvc.uid):
        ref = ClaimRef(pvc.name, pvc.namespace, pvc.uid)
    return attrs.evolve(pv, claim_ref=ref, annotations=annotations)


def bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """:func:`assumed_volume` plus the PV controller's part: ``Bound``."""
    return attrs.evolve(assumed_volume(pv, pvc), phase="Bound")


def bound_claim(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> PersistentVolumeClaim:
    """The claim as the PV controller leaves it once bound to ``pv``."""
    annotations = dict(pvc.annotations)
    if pvc.volume_name != pv.name:
        annotations.setdefault(BOUND_BY_CONTROLLER_ANNOTATION, "yes")
    annotations.setdefault(BIND_COMPLETED_ANNOTATION, "yes")
    return attrs.evolve(pvc, volume_name=pv.name, annotations=annotations, phase="Bound")


def selected_claim(pvc: PersistentVolumeClaim, node_name: str) -> PersistentVolumeClaim:
    """A claim to provision, annotated with the chosen node (what kube-scheduler writes)."""
    return attrs.evolve(pvc, annotations={**pvc.annotations, SELECTED_NODE_ANNOTATION: node_name})
