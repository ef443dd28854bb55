"""The writes kube-scheduler v1.36's plugins make besides the binding, made on the API server
(:class:`~kschedlib.framework.ClusterApi` for a live scheduler), request for request as the real binary sends
them (checked against its audit log):

- the nomination before PreBind work: a status patch ``{"status": {"nominatedNodeName": NODE}}``;
- DynamicResources' PreBind, per claim not yet reserved for the pod: the pod's extended-resource claim created
  first (``generateName: <pod>-extended-resources-``, the pod as controller); a new allocation's finalizer
  ``resource.kubernetes.io/delete-protection`` added by an update of the claim; then a status update carrying
  the allocation and the pod appended to ``reservedFor`` (``allocationTimestamp`` when binding conditions are
  in force); a conflict reads the claim again and retries (client-go's ``retry.DefaultRetry``); then, for the
  extended-resource claim, the pod's ``status.extendedResourceClaimStatus``;
- Unreserve: a strategic-merge status patch deleting the pod from ``reservedFor``; the extended-resource claim
  the attempt made updated without its finalizer, then deleted;
- PostFilter: a status update dropping a claim's allocation, reservations and device status;
- VolumeBinding's PreBind: each pre-provisioned volume updated with its ``claimRef``, each claim to provision
  updated with ``volume.kubernetes.io/selected-node``; then a look every second (the first after one) until
  the PV controller has bound every claim, an error says the binding failed, or ``bindTimeoutSeconds`` ran out.

Objects are updated as the informers last saw them (kube-scheduler updates its informers' objects too).  What
was written is remembered by resourceVersion, so that an informer event older than a write of ours (the
finalizer-only version of a claim, say) is not applied over it, as kube's assume cache ignores older objects.
"""

from __future__ import annotations

import copy
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar, final

from kschedlib.errors import KubeApiError
from kschedlib.kube._events import EventRecorder
from kschedlib.kube._informer import object_key
from kschedlib.kube._resources import resource
from kschedlib.kube.client import KubeClient
from kschedlib.model._convert_base import format_timestamp
from kschedlib.model.convert import allocation_to_dict, device_request_to_dict, object_from_dict
from kschedlib.model.dra import ResourceClaim
from kschedlib.model.objects import ContainerExtendedResourceRequest, Pod
from kschedlib.model.storage import PersistentVolume, PersistentVolumeClaim
from kschedlib.plugins._helpers.volumes import (
    BIND_COMPLETED_ANNOTATION,
    BOUND_BY_CONTROLLER_ANNOTATION,
    SELECTED_NODE_ANNOTATION,
    pv_node_affinity_matches,
)

__all__ = ["CLAIM_FINALIZER", "LiveClusterApi", "Lookup"]

log = logging.getLogger("kschedlib.kube")
CLAIM_FINALIZER: Final = "resource.kubernetes.io/delete-protection"
EXTENDED_ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
STRATEGIC: Final = "application/strategic-merge-patch+json"
VOLUME_POLL: Final = 1.0
"""Seconds between two looks at a pod's volumes while PreBind waits (kube's interval)."""
_CONFLICT_RETRIES: Final = (0.01, 0.01, 0.01, 0.01)
"""client-go's ``retry.DefaultRetry``: five attempts, 10 ms apart."""
Lookup = Callable[[str, str], dict[str, Any] | None]
"""``lookup(kind, key)``: the object as the informer of ``kind`` last saw it (``None``: not there)."""
T = TypeVar("T")


class _NotYet(Exception):
    """A volume binding is not complete yet: look again."""


def _key(obj: Mapping[str, Any]) -> str:
    return object_key(obj)


def _version(obj: Mapping[str, Any]) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


def _failed(message: str) -> KubeApiError:
    """An error of the scheduler's own (not an API server's answer): never retried."""
    return KubeApiError(0, "SchedulerError", message)


def _wrapped(prefix: str | None, exc: KubeApiError) -> KubeApiError:
    """``exc`` with kube's context (if any) in front of the API server's message (Go's ``%w``)."""
    return KubeApiError(exc.status, exc.reason, exc.message if prefix is None else f"{prefix}: {exc.message}")


@final
class LiveClusterApi:
    """:class:`~kschedlib.framework.ClusterApi` on an API server (see the module docstring).  ``lookup`` reads the
    informers (given once they run, :meth:`attach`); ``stopping`` ends a volume wait early."""

    def __init__(self, client: KubeClient, events: EventRecorder, stopping: threading.Event) -> None:
        self.client = client
        self.events = events
        self.stopping = stopping
        self._lookup: Lookup = lambda kind, key: None
        self._written: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def attach(self, lookup: Lookup) -> None:
        self._lookup = lookup

    # --- what was written ---------------------------------------------------------------------

    def _wrote(self, kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._written[(kind, _key(obj))] = _version(obj)
        out = dict(obj)
        out["kind"] = kind
        out["apiVersion"] = resource(kind).api_version
        return out

    def stale(self, kind: str, obj: Mapping[str, Any]) -> bool:
        """Whether ``obj`` (from an informer) is older than what this scheduler wrote of it (then it is not applied)."""
        if not self._written:
            return False
        key = (kind, _key(obj))
        with self._lock:
            written = self._written.get(key)
            if written is None:
                return False
            if _version(obj) < written:
                return True
            del self._written[key]
        return False

    def _raw(self, kind: str, key: str) -> dict[str, Any]:
        """A copy of the object as the informer has it, else as the API server has it."""
        seen = self._lookup(kind, key)
        if seen is not None:
            return copy.deepcopy(seen)
        namespace, _, name = key.rpartition("/")
        found = self.client.request("GET", resource(kind).object_path(name, namespace or None))
        found["kind"] = kind
        found["apiVersion"] = resource(kind).api_version
        return found

    def _path(self, kind: str, obj: Mapping[str, Any], subresource: str = "") -> str:
        meta = obj.get("metadata") or {}
        path = resource(kind).object_path(str(meta.get("name")), meta.get("namespace"))
        return f"{path}/{subresource}" if subresource else path

    # --- pods -----------------------------------------------------------------------------------

    def nominate(self, pod: Pod, node_name: str) -> None:
        try:
            self.client.request("PATCH", resource("Pod").object_path(pod.name, pod.namespace) + "/status",
                                body={"status": {"nominatedNodeName": node_name}}, content_type=STRATEGIC)
        except KubeApiError as exc:
            log.error("Failed to update the nominated node name in the binding cycle: pod=%s node=%s: %s",
                      pod.key, node_name, exc)

    def record_event(self, pod: Pod, event_type: str, reason: str, action: str, note: str) -> None:
        regarding = self._lookup("Pod", pod.key) or {
            "kind": "Pod", "apiVersion": "v1", "metadata": {"name": pod.name, "namespace": pod.namespace,
                                                            "uid": pod.uid}}
        self.events.record(regarding, controller=pod.scheduler_name, event_type=event_type, reason=reason,
                           action=action, note=note)

    # --- ResourceClaims --------------------------------------------------------------------------

    def reserve_claim(self, claim: ResourceClaim, pod: Pod, *, allocate: bool,
                      mappings: Sequence[ContainerExtendedResourceRequest] = ()) -> ResourceClaim:
        raw = self._raw("ResourceClaim", claim.key)
        key = _key(raw)
        fresh = True

        def attempt() -> dict[str, Any]:
            nonlocal raw, fresh
            if not fresh:
                raw = self._get_after_conflict(key)
            fresh = False
            meta = raw.setdefault("metadata", {})
            if meta.get("deletionTimestamp"):
                raise _failed(f"claim {key} got deleted in the meantime")
            status = raw.setdefault("status", {})
            if allocate:
                if status.get("allocation"):
                    raise _failed(f"claim {key} got allocated elsewhere in the meantime")
                if CLAIM_FINALIZER not in (meta.get("finalizers") or []):
                    meta["finalizers"] = [*(meta.get("finalizers") or []), CLAIM_FINALIZER]
                    raw = self._put("ResourceClaim", raw, "", f"add finalizer to claim {key}")
                    status = raw.setdefault("status", {})
                assert claim.allocation is not None
                status["allocation"] = allocation_to_dict(claim.allocation)
            status["reservedFor"] = [*(status.get("reservedFor") or []),
                                     {"resource": "pods", "name": pod.name, "uid": pod.uid}]
            stamp = claim.allocation.allocation_timestamp if claim.allocation is not None else None
            if stamp is not None:
                if not status.get("allocation"):
                    raise _failed(f"claim {key} got deallocated elsewhere in the meantime")
                status["allocation"].setdefault("allocationTimestamp", format_timestamp(math.floor(stamp)))
            what = "add allocation and reservation to claim" if allocate else "add reservation to claim"
            return self._put("ResourceClaim", raw, "status", f"{what} {key}")

        written = _on_conflict(attempt)
        if mappings:
            self._extended_status(pod, claim.name, mappings)
        return self._claim(written)

    def _get_after_conflict(self, key: str) -> dict[str, Any]:
        namespace, _, name = key.partition("/")
        try:
            found = self.client.request("GET", resource("ResourceClaim").object_path(name, namespace))
        except KubeApiError as exc:
            raise _wrapped(f"get updated claim {key} after conflict", exc) from exc
        return found

    def _put(self, kind: str, raw: Mapping[str, Any], subresource: str, context: str | None) -> dict[str, Any]:
        try:
            answer = self.client.request("PUT", self._path(kind, raw, subresource), body=raw)
        except KubeApiError as exc:
            raise _wrapped(context, exc) from exc
        return self._wrote(kind, answer)

    def create_claim(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"generateName": f"{pod.name}-extended-resources-", "namespace": pod.namespace,
                             "annotations": {EXTENDED_ANNOTATION: "true"},
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name,
                                                  "uid": pod.uid, "controller": True}]},
                "spec": {"devices": {"requests": [device_request_to_dict(r) for r in claim.requests]}}}
        path = f"/apis/resource.k8s.io/v1/namespaces/{pod.namespace}/resourceclaims"
        try:
            created = self.client.request("POST", path, body=body)
        except KubeApiError as exc:
            raise _wrapped(f"create claim for extended resources {pod.namespace}/", exc) from exc
        return self._claim(self._wrote("ResourceClaim", created))

    def _extended_status(self, pod: Pod, claim_name: str, mappings: Sequence[ContainerExtendedResourceRequest]) -> None:
        status = {"extendedResourceClaimStatus": {
            "requestMappings": [{"containerName": m.container_name, "requestName": m.request_name,
                                 "resourceName": m.resource_name} for m in mappings],
            "resourceClaimName": claim_name}}
        try:
            self.client.request("PATCH", resource("Pod").object_path(pod.name, pod.namespace) + "/status",
                                body={"status": status}, content_type=STRATEGIC)
        except KubeApiError as exc:
            raise _wrapped(f"update pod {pod.key} ExtendedResourceClaimStatus", exc) from exc

    def _claim(self, raw: Mapping[str, Any]) -> ResourceClaim:
        claim = object_from_dict(raw)
        assert isinstance(claim, ResourceClaim)
        return claim

    def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> ResourceClaim:
        body = {"metadata": {"uid": claim.uid}, "status": {"reservedFor": [{"$patch": "delete", "uid": pod.uid}]}}
        path = resource("ResourceClaim").object_path(claim.name, claim.namespace) + "/status"
        written = self.client.request("PATCH", path, body=body, content_type=STRATEGIC)
        return self._claim(self._wrote("ResourceClaim", written))

    def deallocate_claim(self, claim: ResourceClaim) -> ResourceClaim:
        raw = self._raw("ResourceClaim", claim.key)
        status = raw.setdefault("status", {})
        for field in ("reservedFor", "allocation", "devices"):
            status.pop(field, None)
        written = self.client.request("PUT", self._path("ResourceClaim", raw, "status"), body=raw)
        return self._claim(self._wrote("ResourceClaim", written))

    def delete_claim(self, claim: ResourceClaim) -> None:
        raw = self._raw("ResourceClaim", claim.key)
        key = claim.key
        fresh = True

        def attempt() -> dict[str, Any]:
            nonlocal raw, fresh
            if not fresh:
                try:
                    raw = self.client.request("GET", self._path("ResourceClaim", raw))
                except KubeApiError as exc:
                    raise _wrapped(f"get resourceclaim {key}", exc) from exc
            fresh = False
            meta = raw.setdefault("metadata", {})
            meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != CLAIM_FINALIZER] or None
            if meta["finalizers"] is None:
                del meta["finalizers"]
            return self._put("ResourceClaim", raw, "", f"update resourceclaim {key}")

        _on_conflict(attempt)
        self.client.request("DELETE", self._path("ResourceClaim", raw))

    # --- volumes ---------------------------------------------------------------------------------

    def bind_volumes(self, pod: Pod, node_name: str, volumes: Sequence[PersistentVolume],
                     claims: Sequence[PersistentVolumeClaim], timeout: float) -> None:
        written_pvs = [self._bind_volume(pv) for pv in volumes]
        written_pvcs = [self._provision(pvc) for pvc in claims]
        deadline = time.monotonic() + timeout
        while True:  # a look every second, the first after one; none when the deadline comes first
            left = deadline - time.monotonic()
            if self.stopping.wait(min(VOLUME_POLL, max(left, 0.0))) or left < VOLUME_POLL:
                reason = "context canceled" if self.stopping.is_set() else "context deadline exceeded"
                raise KubeApiError(0, "Timeout", f"binding volumes: {reason}")
            try:
                self._check_bindings(pod, node_name, written_pvs, written_pvcs)
                return
            except _NotYet:
                continue
            except KubeApiError as exc:
                raise _wrapped("binding volumes", exc) from exc

    def _bind_volume(self, pv: PersistentVolume) -> dict[str, Any]:
        raw = self._raw("PersistentVolume", pv.name)
        ref = pv.claim_ref
        assert ref is not None
        spec = raw.setdefault("spec", {})
        old = spec.get("claimRef") or {}
        if (old.get("name"), old.get("namespace"), old.get("uid")) != (ref.name, ref.namespace, ref.uid):
            claim = self._lookup("PersistentVolumeClaim", f"{ref.namespace}/{ref.name}") or {}
            spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ref.namespace, "name": ref.name,
                                "uid": ref.uid, "apiVersion": "v1",
                                "resourceVersion": (claim.get("metadata") or {}).get("resourceVersion")}
        if BOUND_BY_CONTROLLER_ANNOTATION in pv.annotations:
            raw.setdefault("metadata", {}).setdefault("annotations", {})[BOUND_BY_CONTROLLER_ANNOTATION] = \
                pv.annotations[BOUND_BY_CONTROLLER_ANNOTATION]
        return self._put("PersistentVolume", raw, "", None)  # kube passes the API server's error on as it is

    def _provision(self, pvc: PersistentVolumeClaim) -> dict[str, Any]:
        raw = self._raw("PersistentVolumeClaim", pvc.key)
        raw.setdefault("metadata", {}).setdefault("annotations", {})[SELECTED_NODE_ANNOTATION] = \
            pvc.annotations[SELECTED_NODE_ANNOTATION]
        return self._put("PersistentVolumeClaim", raw, "", None)

    def _current(self, kind: str, key: str, written: Mapping[str, Any]) -> dict[str, Any]:
        """The informer's object, not older than what was ``written`` (else :class:`_NotYet`)."""
        seen = self._lookup(kind, key)
        if seen is None:
            raise _failed(f'failed to check binding: {kind.lower()} "{key}" not found')
        if _version(seen) < _version(written):
            raise _NotYet
        return seen

    def _check_bindings(self, pod: Pod, node_name: str, volumes: Sequence[Mapping[str, Any]],
                        claims: Sequence[Mapping[str, Any]]) -> None:
        """kube's ``checkBindings``: returns once every claim is bound, raises :class:`_NotYet` to look again."""
        if self._lookup("Pod", pod.key) is None:
            raise _failed(f'pod does not exist any more: pods "{pod.name}" not found')
        node = self._lookup("Node", node_name) or {}
        labels = (node.get("metadata") or {}).get("labels") or {}
        for written in volumes:
            pv = self._current("PersistentVolume", _key(written), written)
            self._affinity(pv, node_name, labels)
            ref = (pv.get("spec") or {}).get("claimRef") or {}
            if not ref.get("uid"):
                raise _failed(f'ClaimRef got reset for pv "{_key(pv)}"')
            claim = self._lookup("PersistentVolumeClaim", f"{ref.get('namespace')}/{ref.get('name')}")
            if claim is None or not _fully_bound(claim):
                raise _NotYet
        for written in claims:
            pvc = self._current("PersistentVolumeClaim", _key(written), written)
            name = (pvc.get("metadata") or {}).get("name")
            annotations = (pvc.get("metadata") or {}).get("annotations")
            if not annotations:
                raise _failed(f'selectedNode annotation reset for PVC "{name}"')
            if annotations.get(SELECTED_NODE_ANNOTATION) != node_name:
                raise _failed(f'provisioning failed for PVC "{name}"')
            volume = (pvc.get("spec") or {}).get("volumeName")
            if volume:
                provisioned = self._lookup("PersistentVolume", volume)
                if provisioned is None:
                    raise _NotYet
                self._affinity(provisioned, node_name, labels)
            if not _fully_bound(pvc):
                raise _NotYet

    @staticmethod
    def _affinity(raw: Mapping[str, Any], node_name: str, labels: Mapping[str, str]) -> None:
        pv = object_from_dict(raw)
        if isinstance(pv, PersistentVolume) and not pv_node_affinity_matches(pv.node_affinity, labels):
            raise _failed(f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                                                "no matching NodeSelectorTerms")

    def latest_volumes(self, volumes: Sequence[str], claims: Sequence[str]) -> tuple[list[PersistentVolume],
                                                                                    list[PersistentVolumeClaim]]:
        pvs = [object_from_dict(raw) for name in volumes if (raw := self._lookup("PersistentVolume", name))]
        pvcs = [object_from_dict(raw) for key in claims if (raw := self._lookup("PersistentVolumeClaim", key))]
        return ([pv for pv in pvs if isinstance(pv, PersistentVolume)],
                [pvc for pvc in pvcs if isinstance(pvc, PersistentVolumeClaim)])


def _fully_bound(pvc: Mapping[str, Any]) -> bool:
    meta = pvc.get("metadata") or {}
    return bool((pvc.get("spec") or {}).get("volumeName")) and BIND_COMPLETED_ANNOTATION in (meta.get("annotations")
                                                                                             or {})


def _on_conflict(call: Callable[[], T]) -> T:
    """client-go's ``RetryOnConflict`` with ``retry.DefaultRetry``: ``call`` again after a 409, up to five times."""
    for delay in (*_CONFLICT_RETRIES, None):
        try:
            return call()
        except KubeApiError as exc:
            if delay is None or exc.status != 409:
                raise
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover
