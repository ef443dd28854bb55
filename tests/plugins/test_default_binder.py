"""DefaultBinder: the library binds in its facade, so the binder just accepts."""

from __future__ import annotations

from kschedlib.framework import BindPlugin, CycleState, Status
from kschedlib.plugins.default_binder import DefaultBinder
from kschedlib.testing import FakeHandle
from tests.helpers import make_pod


def test_bind_succeeds() -> None:
    binder = DefaultBinder(None, FakeHandle(kube_version="1.30"))
    status = binder.bind(CycleState(), make_pod("p"), "node-a")
    assert status == Status.success()
    assert status.is_success


def test_plugin_identity() -> None:
    assert DefaultBinder.name == "DefaultBinder"
    assert isinstance(DefaultBinder(None, FakeHandle(kube_version="1.30")), BindPlugin)
