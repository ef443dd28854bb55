"""``LiveClusterApi`` on a real API server, call by call, where the scheduler rarely goes: a conflict read again and
retried, a claim allocated meanwhile, a claim given back, deallocated and deleted, a volume binding that fails or
runs out of time, and informer events older than a write of its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import attrs
import pytest

from kschedlib.errors import KubeApiError
from kschedlib.kube import KubeClient
from kschedlib.kube._cluster_api import LiveClusterApi
from kschedlib.kube._events import EventRecorder
from kschedlib.model.convert import object_from_dict, pod_from_dict
from kschedlib.model.dra import AllocationResult, DeviceAllocation, ResourceClaim
from kschedlib.model.storage import PersistentVolumeClaim
from tests.kube.cluster import create, namespace, pod

RESOURCE = "/apis/resource.k8s.io/v1"
NS = "cluster-api"


@pytest.fixture
def objects() -> dict[tuple[str, str], dict[str, Any]]:
    """What the test's stand-in informers hold: (kind, key) -> object."""
    return {}


@pytest.fixture
def api(admin: KubeClient, objects: dict[tuple[str, str], dict[str, Any]]) -> Iterator[LiveClusterApi]:
    events = EventRecorder(admin)
    live = LiveClusterApi(admin, events, threading.Event())
    live.attach(lambda kind, key: objects.get((kind, key)))
    namespace(admin, NS)
    yield live
    events.close()
    admin.request("DELETE", f"/api/v1/namespaces/{NS}/pods", body={"gracePeriodSeconds": 0})
    admin.request("DELETE", f"/api/v1/namespaces/{NS}/persistentvolumeclaims")


def a_claim(admin: KubeClient, name: str) -> dict[str, Any]:
    made = create(admin, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                          "metadata": {"name": name, "namespace": NS},
                          "spec": {"devices": {"requests": [{"name": "d", "exactly": {"deviceClassName": "x"}}]}}})
    return {**made, "kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1"}


def allocated(raw: dict[str, Any]) -> ResourceClaim:
    claim = object_from_dict(raw)
    assert isinstance(claim, ResourceClaim)
    return attrs.evolve(claim, allocation=AllocationResult((DeviceAllocation("d", "drv", "pool", "dev"),)))


def test_claims_conflicts_and_their_undoing(admin: KubeClient, api: LiveClusterApi,
                                            objects: dict[tuple[str, str], dict[str, Any]]) -> None:
    stale = a_claim(admin, "c")
    label = {"metadata": {"labels": {"touched": "yes"}}}  # someone changes the claim: the informer lags behind
    admin.request("PATCH", f"{RESOURCE}/namespaces/{NS}/resourceclaims/c", body=label,
                  content_type="application/merge-patch+json")
    objects["ResourceClaim", f"{NS}/c"] = stale
    owner = pod_from_dict(create(admin, pod("p", NS, scheduler="nobody")))
    claim = allocated(stale)
    written = api.reserve_claim(attrs.evolve(claim, reserved_for=()), owner, allocate=True)
    assert written.allocation is not None
    assert written.allocation.devices[0].device == "dev"
    raw = admin.request("GET", f"{RESOURCE}/namespaces/{NS}/resourceclaims/c")
    assert raw["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]  # after one conflict
    assert [r["name"] for r in raw["status"]["reservedFor"]] == ["p"]
    assert api.stale("ResourceClaim", stale)  # older than the write: an informer event not to apply
    assert not api.stale("ResourceClaim", raw)
    assert not api.stale("ResourceClaim", stale)

    objects["ResourceClaim", f"{NS}/c"] = raw
    with pytest.raises(KubeApiError, match=f"claim {NS}/c got allocated elsewhere in the meantime"):
        api.reserve_claim(claim, owner, allocate=True)
    assert api.unreserve_claim(written, owner).reserved_for == ()
    with pytest.raises(KubeApiError, match="the object has been modified"):  # from the informer's old version
        api.deallocate_claim(written)
    objects["ResourceClaim", f"{NS}/c"] = admin.request("GET", f"{RESOURCE}/namespaces/{NS}/resourceclaims/c")
    deallocated = api.deallocate_claim(written)
    assert (deallocated.allocation, deallocated.reserved_for) == (None, ())
    objects["ResourceClaim", f"{NS}/c"] = admin.request("GET", f"{RESOURCE}/namespaces/{NS}/resourceclaims/c")
    api.delete_claim(deallocated)  # its finalizer taken off first, or it would stay
    with pytest.raises(KubeApiError, match="not found"):
        admin.request("GET", f"{RESOURCE}/namespaces/{NS}/resourceclaims/c")


def test_a_nomination_that_cannot_be_written_is_only_logged(api: LiveClusterApi,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    api.nominate(pod_from_dict(pod("gone", NS, scheduler="nobody")), "n1")
    assert "Failed to update the nominated node name" in caplog.text


def test_volume_bindings_that_fail(admin: KubeClient, api: LiveClusterApi,
                                   objects: dict[tuple[str, str], dict[str, Any]]) -> None:
    raw = create(admin, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "metadata": {"name": "v", "namespace": NS},
                         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    objects["PersistentVolumeClaim", f"{NS}/v"] = {**raw, "kind": "PersistentVolumeClaim", "apiVersion": "v1"}
    claim = object_from_dict(raw)
    assert isinstance(claim, PersistentVolumeClaim)
    chosen = attrs.evolve(claim, annotations={"volume.kubernetes.io/selected-node": "n1"})
    waiting = pod_from_dict(create(admin, pod("w", NS, scheduler="nobody")))
    with pytest.raises(KubeApiError, match=r"^binding volumes: pod does not exist any more"):
        api.bind_volumes(waiting, "n1", [], [chosen], timeout=5)  # the stand-in pod informer has none
    objects["Pod", f"{NS}/w"] = {"metadata": {"name": "w", "namespace": NS}}
    with pytest.raises(KubeApiError, match=r'^Operation cannot be fulfilled on persistentvolumeclaims "v"'):
        api.bind_volumes(waiting, "n2", [], [chosen], timeout=5)  # the informer is behind: kube's error as it is
    objects["PersistentVolumeClaim", f"{NS}/v"] = admin.request("GET", f"/api/v1/namespaces/{NS}/"
                                                                       "persistentvolumeclaims/v")
    with pytest.raises(KubeApiError, match=r'^binding volumes: provisioning failed for PVC "v"'):
        api.bind_volumes(waiting, "n2", [], [chosen], timeout=5)  # the claim says n1: a provisioner gave up
    with pytest.raises(KubeApiError, match=r"^binding volumes: context deadline exceeded$"):
        api.bind_volumes(waiting, "n1", [], [], timeout=0.2)
