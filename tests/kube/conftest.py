"""A real kube-apiserver and etcd for the tests of ``kschedlib.kube``: one per session (faults that need other
flags start their own).  Without the binaries (``KUBEBUILDER_ASSETS``) every test here skips with one line."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kschedlib.kube import KubeClient, connect
from tests.kube.envtest import ControlPlane, assets, control_plane, missing_reason


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
    with control_plane() as started:
        yield started


@pytest.fixture(scope="session")
def admin(plane: ControlPlane) -> KubeClient:
    """A client with every right, for setting up and reading back."""
    return connect(str(plane.kubeconfig), qps=0, burst=0)
