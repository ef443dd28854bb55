"""A real kube-apiserver and etcd for the tests of ``kschedlib.kube``: one per session (faults that need other
flags start their own).  Without the binaries (``KUBEBUILDER_ASSETS``) every test here skips with one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kschedlib.kube import KubeClient, connect
from kschedlib.model import Pod
from tests.kube import plugins_for_run
from tests.kube.envtest import ControlPlane, assets, control_plane, missing_reason

AUDITED = ("writes-kube", "writes-lib")
"""The namespaces whose writes the shared API server logs (the side-by-side comparison of kube-scheduler's)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if assets() is not None:
        return
    skip = pytest.mark.skip(reason=missing_reason())
    for item in items:
        if "tests/kube/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def plane() -> Iterator[ControlPlane]:
    """The shared control plane (each test works in a namespace and on nodes of its own)."""
    with control_plane(audited=AUDITED) as started:
        yield started


@pytest.fixture(scope="session")
def admin(plane: ControlPlane) -> KubeClient:
    """A client with every right, for setting up and reading back."""
    return connect(str(plane.kubeconfig), qps=0, burst=0)


@pytest.fixture(scope="session")
def as_scheduler(plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> KubeClient:
    """A client as ``system:kube-scheduler`` (client certificate): only kube-scheduler's own RBAC role, which is
    what a scheduler run here must need, and no exemption from the API server's limits."""
    return scheduler_client(plane, tmp_path_factory.mktemp("as-scheduler"))


def scheduler_client(plane: ControlPlane, where: Path) -> KubeClient:
    return connect(str(plane.write_kubeconfig(where / "scheduler.kubeconfig", client_cert=True)))


@pytest.fixture
def hook() -> Iterator[list[Any]]:
    """Set ``hook[0]`` to a callable(pod, node) run just before a binding (see plugins_for_run.BeforeBinding)."""
    holder: list[Any] = [None]

    def run(p: Pod, node_name: str) -> None:
        if holder[0] is not None:
            holder[0](p, node_name)

    with plugins_for_run.BeforeBinding.LOCK:
        plugins_for_run.BeforeBinding.HOOK = run
    yield holder
    with plugins_for_run.BeforeBinding.LOCK:
        plugins_for_run.BeforeBinding.HOOK = None
