"""Builders shared by the extender tests: configs naming stubs, small clusters, one-cycle runs."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kschedlib import Scheduler, ScheduleResult, explain
from kschedlib.model import Node, Pod
from kschedlib.simulation.explain import Explanation
from tests.extender_stub import StubPool
from tests.helpers import make_node, make_pod

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def config(*extenders: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {**HEADER, **top, "extenders": list(extenders)}


def nodes(count: int = 4, cpu: str = "4") -> list[Node]:
    return [make_node(f"n-{i}", allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"}) for i in range(count)]


def pod(name: str = "p", cpu: str = "1", **fields: Any) -> Pod:
    return make_pod(name, requests={"cpu": cpu, "memory": "1Gi"}, **fields)


@contextmanager
def stubs(*behaviours: Any) -> Iterator[StubPool]:
    with StubPool([{"behaviour": b} for b in behaviours]) as pool:
        yield pool


def url(pool: StubPool, k: int = 0) -> str:
    return f"http://127.0.0.1:{pool.ports[k]}"


def post(port: int, body: bytes, path: str = "/filter", timeout: float = 10) -> tuple[int, Any]:
    """POST ``body`` to the server on 127.0.0.1:``port``: the status and the decoded JSON reply."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def run_once(cfg: Any, objects: Sequence[object], **kwargs: Any) -> tuple[ScheduleResult, Scheduler]:
    """One scheduling cycle (and binding) of the first pending pod."""
    scheduler = Scheduler(cfg, seed=0, retry_unschedulable=False, **kwargs)
    scheduler.add_objects(list(objects))
    result = scheduler.schedule_one()
    assert result is not None
    return result, scheduler


def explained(cfg: Any, objects: Sequence[object], target: str = "default/p", **kwargs: Any) -> Explanation:
    return explain(list(objects), target, cfg, **kwargs)
