"""Events on a real API server as client-go's event broadcaster writes them: a repeat whose first event is not
there (still being created, or removed by the API server's event TTL) creates it with its series, and events
with different notes are different events."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kschedlib.kube import KubeClient
from kschedlib.kube._events import EventRecorder
from tests.kube.cluster import create, events, namespace, pod, wait_for

EVENTS = "/apis/events.k8s.io/v1/namespaces/{ns}/events"


def _pod(admin: KubeClient, ns: str) -> dict[str, Any]:
    namespace(admin, ns)
    return create(admin, pod("p", ns, scheduler="nobody"))


def _record(recorder: EventRecorder, regarding: dict[str, Any], note: str) -> None:
    recorder.record(regarding, controller="events-test", event_type="Warning", reason="FailedScheduling",
                    action="Scheduling", note=note)


@contextmanager
def _recorder(admin: KubeClient) -> Iterator[EventRecorder]:
    recorder = EventRecorder(admin, hostname="h", senders=1)
    try:
        yield recorder
    finally:
        recorder.close()


def test_a_repeat_whose_first_event_is_gone_creates_it_with_its_series(admin: KubeClient) -> None:
    ns = "events-gone"
    regarding = _pod(admin, ns)
    with _recorder(admin) as recorder:
        _record(recorder, regarding, "0/1 nodes are available")
        wait_for("the first event", lambda: recorder.sent == 1)
        [first] = events(admin, ns)
        admin.request("DELETE", EVENTS.format(ns=ns) + f"/{first['metadata']['name']}")  # the event TTL's work
        _record(recorder, regarding, "0/1 nodes are available")
        wait_for("the repeat", lambda: recorder.sent == 2)
    [again] = events(admin, ns)
    assert again["metadata"]["name"] == first["metadata"]["name"]
    assert again["series"]["count"] == 2
    assert again["note"] == "0/1 nodes are available"


def test_events_with_other_notes_are_other_events(admin: KubeClient) -> None:
    ns = "events-notes"
    regarding = _pod(admin, ns)
    with _recorder(admin) as recorder:
        _record(recorder, regarding, "0/1 nodes are available: 1 Insufficient cpu.")
        _record(recorder, regarding, "0/1 nodes are available: 1 Insufficient memory.")
        wait_for("both events", lambda: recorder.sent == 2)
    assert sorted((e["note"], e.get("series")) for e in events(admin, ns)) == [
        ("0/1 nodes are available: 1 Insufficient cpu.", None),
        ("0/1 nodes are available: 1 Insufficient memory.", None)]
