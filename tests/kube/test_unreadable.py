"""An object the API server accepted but kschedlib cannot read (here a DeviceClass whose selector uses kube's URL
library, which kschedlib's CEL does not have) is left out with a warning: the scheduler still starts and schedules,
and the read-only commands still answer, where they used to stop on it."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from kschedlib.kube import KubeClient, snapshot
from tests.kube.cluster import config, create, namespace, node, pod, pods, running, wait_for
from tests.kube.envtest import ControlPlane

CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
UNREADABLE = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "by-url"},
              "spec": {"selectors": [{"cel": {"expression": 'isURL("https://x.example") && device.driver == "d"'}}]}}


@pytest.fixture
def unreadable(admin: KubeClient) -> Iterator[None]:
    admin.request("POST", CLASSES, body=UNREADABLE)  # kube v1.36's DRA CEL has the URL library: accepted
    try:
        yield
    finally:
        admin.request("DELETE", f"{CLASSES}/by-url")


def _left_out(caplog: pytest.LogCaptureFixture) -> bool:
    return any(r.levelno == logging.WARNING and "DeviceClass by-url" in r.getMessage() for r in caplog.records)


@pytest.mark.usefixtures("unreadable")
def test_the_snapshot_leaves_it_out(plane: ControlPlane, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kschedlib.kube"):
        cluster = snapshot(str(plane.kubeconfig))
    assert cluster.nodes is not None
    assert _left_out(caplog)


@pytest.mark.usefixtures("unreadable")
def test_the_scheduler_starts_without_it(admin: KubeClient, as_scheduler: KubeClient,
                                         caplog: pytest.LogCaptureFixture) -> None:
    ns, me = namespace(admin, "unreadable"), "unreadable-scheduler"
    create(admin, node("unreadable-1", cpu="2"))
    with caplog.at_level(logging.WARNING, logger="kschedlib.kube"), running(as_scheduler, config(me)):
        create(admin, pod("fits", ns, scheduler=me))
        wait_for("the pod bound", lambda: bool(pods(admin, ns)["fits"]["spec"].get("nodeName")))
    assert _left_out(caplog)
    admin.request("DELETE", f"/api/v1/namespaces/{ns}/pods", body={"gracePeriodSeconds": 0})
    admin.request("DELETE", "/api/v1/nodes/unreadable-1")
