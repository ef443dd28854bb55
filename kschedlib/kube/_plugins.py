"""The plugins a running scheduler has: the in-tree ones, those installed packages publish as entry points,
those of modules named on the command line, and, under the name ``DefaultBinder``, a binder that binds through
the API server (so every configuration's ``DefaultBinder`` binds for real, and a config needs no change).

Modules named with ``--plugins`` are read as every command reads them (:mod:`kschedlib._cli.plugin_modules`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final, final

from kschedlib._cli.plugin_modules import add_module, load_module
from kschedlib.framework import BindPlugin, CycleState, Handle, Plugin, Registry, Status
from kschedlib.kube.client import KubeApiError
from kschedlib.model import Pod
from kschedlib.plugins import in_tree_registry

__all__ = ["BINDER", "ApiBinder", "Bind", "registry"]

BINDER: Final = "DefaultBinder"
Bind = Callable[[Pod, str], None]
"""Binds a pod to a node through the API server; raises :class:`KubeApiError` when refused."""


@final
class ApiBinder(BindPlugin):
    """kube-scheduler's DefaultBinder: one ``pods/binding`` call; a refusal is an Error status with the API
    server's message (a 409 when someone else bound the pod, a 404 when it is gone), as kube reports them."""

    name: ClassVar[str] = BINDER

    def __init__(self, bind: Bind) -> None:
        self._bind = bind

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        try:
            self._bind(pod, node_name)
        except KubeApiError as exc:
            return Status.from_error(exc.message)
        return Status.success()


def registry(bind: Bind, plugins: Sequence[str | type[Plugin]] = ()) -> Registry:
    """In-tree plus entry-point plugins, those of ``plugins`` (modules, ``.py`` files or plugin classes), and the
    API binder as ``DefaultBinder``."""
    target = in_tree_registry().with_entry_points()
    for ref in plugins:
        if isinstance(ref, str):
            add_module(target, load_module(ref), ref)
        else:
            factory: Any = ref
            target.register(ref.name, factory, args=getattr(ref, "decode_args", None))
    target.unregister(BINDER)

    def binder(args: object, handle: Handle) -> Plugin:
        return ApiBinder(bind)

    target.register(BINDER, binder)
    return target
