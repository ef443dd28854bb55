"""Plugins a test scheduler loads by module path (``--plugins tests/kube/plugins_for_run.py``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import ClassVar

from kschedlib.framework import CycleState, FilterPlugin, NodeInfo, PreBindPlugin, Status
from kschedlib.model import Pod


class AvoidMaintenance(FilterPlugin):
    """Keeps pods off nodes labelled ``maintenance: "true"``."""

    name: ClassVar[str] = "AvoidMaintenance"

    def __init__(self, args: object, handle: object) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is not None and node.labels.get("maintenance") == "true":
            return Status.unresolvable("node(s) were under maintenance")
        return Status.success()


class BeforeBinding(PreBindPlugin):
    """Runs ``HOOK`` (if set) just before a pod is bound: a test changes the cluster between cycle and binding."""

    name: ClassVar[str] = "BeforeBinding"
    HOOK: ClassVar[Callable[[Pod, str], None] | None] = None
    LOCK: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, args: object, handle: object) -> None:
        pass

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        with BeforeBinding.LOCK:
            hook = BeforeBinding.HOOK
        if hook is not None:
            hook(pod, node_name)
        return Status.success()
