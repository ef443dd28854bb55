"""Pod writes as kube-scheduler v1.36 makes them.

- Binding: ``POST pods/NAME/binding`` with the pod's uid in the Binding's metadata (a pod deleted and created
  again under its name is not bound by mistake); the API server sets ``spec.nodeName``, the ``PodScheduled: True``
  condition, and clears ``status.nominatedNodeName``.
- A failed attempt: a strategic-merge patch of ``pods/NAME/status`` with the ``PodScheduled`` condition (status
  False, reason ``Unschedulable`` or ``SchedulerError``, kube's message, the pod's generation as
  ``observedGeneration``) and ``nominatedNodeName`` when it changes; nothing is sent when neither changed.
- A preemption victim: the ``DisruptionTarget`` condition (reason ``PreemptionByScheduler``) patched into its
  status, then a delete with its uid as precondition (a pod created again under the victim's name stays).

Writes that kube-scheduler retries (conflicts excepted) are retried here: a 429 or 5xx with Retry-After by the
client, other 5xx and lost connections a few times with a short backoff.  Every write can be repeated safely:
a binding already made answers 409, a patch sets the same values, a delete of a pod gone answers 404.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

from kschedlib.kube.client import KubeApiError, KubeClient

__all__ = ["bind", "condition_patch", "delete_victim", "mark_victim", "patch_status", "with_retries"]

POD_SCHEDULED: Final = "PodScheduled"
DISRUPTION_TARGET: Final = "DisruptionTarget"
T = TypeVar("T")
log = logging.getLogger("kschedlib.kube")
_RETRY_DELAYS: Final = (0.01, 0.05, 0.25, 1.25)
"""client-go's retry.DefaultBackoff: 10 ms, times 5, four steps."""


def _now() -> str:
    return datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def with_retries(call: Callable[[], T]) -> T:
    """``call``, retried after server errors and lost connections (not after 4xx answers)."""
    for delay in (*_RETRY_DELAYS, None):
        try:
            return call()
        except KubeApiError as exc:
            if delay is None or not (exc.status == 0 or exc.status >= 500):
                raise
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def _pod_path(namespace: str, name: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods/{name}"


def bind(client: KubeClient, namespace: str, name: str, uid: str, node: str,
         made: Callable[[], bool] = lambda: False) -> None:
    """Bind the pod (uid as precondition); raises :class:`KubeApiError` (409 bound elsewhere, 404 gone).  A 409 to
    a binding sent again (after a lost answer or a server error) is no error when ``made()`` says the pod is bound
    as asked: the first one went through."""
    body = {"kind": "Binding", "apiVersion": "v1", "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"kind": "Node", "name": node}}
    sent = 0

    def send() -> None:
        nonlocal sent
        sent += 1
        client.request("POST", _pod_path(namespace, name) + "/binding", body=body)

    try:
        with_retries(send)
    except KubeApiError as exc:
        if exc.status != 409 or sent == 1 or not made():
            raise


def _condition(kind: str, status: str, reason: str, message: str, generation: object,
               old: Mapping[str, Any] | None) -> dict[str, Any]:
    """A pod condition as kube's UpdatePodCondition leaves it: the transition time kept while the status is."""
    condition: dict[str, Any] = {"type": kind, "status": status, "lastProbeTime": None,
                                 "lastTransitionTime": _now(), "reason": reason, "message": message}
    if old is not None and old.get("status") == status and old.get("lastTransitionTime"):
        condition["lastTransitionTime"] = old["lastTransitionTime"]
    if isinstance(generation, int) and generation > 0:
        condition["observedGeneration"] = generation
    return condition


def _same(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    if old is None:
        return False
    fields = ("status", "reason", "message", "lastTransitionTime", "observedGeneration")
    return all(old.get(f) == new.get(f) for f in fields) and old.get("lastProbeTime") is None


def _find(pod: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == kind:
            return condition
    return None


def condition_patch(pod: Mapping[str, Any], kind: str, status: str, reason: str, message: str, *,
                    nominated: str | None = None) -> dict[str, Any] | None:
    """The status patch setting condition ``kind`` (and ``nominatedNodeName`` when ``nominated`` is not None
    and differs), or ``None`` when the pod has both already."""
    meta = pod.get("metadata") or {}
    old = _find(pod, kind)
    condition = _condition(kind, status, reason, message, meta.get("generation"), old)
    patch: dict[str, Any] = {}
    if not _same(old, condition):
        patch["conditions"] = [condition]
    current = (pod.get("status") or {}).get("nominatedNodeName") or ""
    if nominated is not None and nominated != current:
        patch["nominatedNodeName"] = nominated or None
    return {"status": patch} if patch else None


def patch_status(client: KubeClient, pod: Mapping[str, Any], patch: Mapping[str, Any]) -> None:
    """Send a status patch (strategic merge: conditions merge by type)."""
    meta = pod.get("metadata") or {}
    path = _pod_path(meta["namespace"], meta["name"]) + "/status"
    kind = "application/strategic-merge-patch+json"
    with_retries(lambda: client.request("PATCH", path, body=patch, content_type=kind))


def mark_victim(client: KubeClient, victim: Mapping[str, Any], scheduler_name: str) -> None:
    """Give a preemption victim the DisruptionTarget condition (unless it has it already)."""
    message = f"{scheduler_name}: preempting to accommodate a higher priority pod"
    patch = condition_patch(victim, DISRUPTION_TARGET, "True", "PreemptionByScheduler", message)
    if patch is not None:
        patch_status(client, victim, patch)


def delete_victim(client: KubeClient, victim: Mapping[str, Any]) -> None:
    """Delete a victim, its uid as precondition; a victim already gone (404) or replaced (409) is left be."""
    meta = victim.get("metadata") or {}
    body = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": meta.get("uid")}}
    try:
        with_retries(lambda: client.request("DELETE", _pod_path(meta["namespace"], meta["name"]), body=body))
    except KubeApiError as exc:
        if exc.status not in (404, 409):
            raise
        log.info("victim %s/%s was already gone (%s)", meta.get("namespace"), meta.get("name"), exc.status)
