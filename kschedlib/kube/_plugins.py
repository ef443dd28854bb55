"""The plugins a running scheduler has: the in-tree ones, those installed packages publish as entry points,
those of modules named on the command line, and, under the name ``DefaultBinder``, a binder that binds through
the API server (so every configuration's ``DefaultBinder`` binds for real, and a config needs no change).

A module named with ``--plugins`` is a dotted module name or a ``.py`` file.  If it has a ``register(registry)``
function, that function registers what it likes; otherwise every plugin class defined in the module (a subclass
of a ``kschedlib.framework`` plugin base with a ``name``) is registered under its name, with its
``decode_args`` static method, if any, as its argument decoder.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Final, final

from kschedlib.errors import ConfigError
from kschedlib.framework import BindPlugin, CycleState, Handle, Plugin, Registry, Status
from kschedlib.kube.client import KubeApiError
from kschedlib.model import Pod
from kschedlib.plugins import in_tree_registry

__all__ = ["BINDER", "ApiBinder", "Bind", "load_module", "registry"]

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


def load_module(ref: str) -> ModuleType:
    """Import a dotted module name, or a ``.py`` file by path."""
    path = Path(ref)
    if ref.endswith(".py"):
        if not path.is_file():
            raise ConfigError("no such file", field="--plugins", value=ref)
        spec = importlib.util.spec_from_file_location(f"kschedlib_plugins_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ConfigError("cannot be loaded as a module", field="--plugins", value=ref)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(ref)
    except ImportError as exc:
        raise ConfigError(f"cannot be imported: {exc}", field="--plugins", value=ref) from exc


def _plugin_classes(module: ModuleType) -> list[type[Plugin]]:
    found: list[type[Plugin]] = []
    for value in vars(module).values():
        if (inspect.isclass(value) and issubclass(value, Plugin) and value.__module__ == module.__name__
                and not inspect.isabstract(value) and isinstance(getattr(value, "name", None), str)):
            found.append(value)
    return found


def _add_module(target: Registry, module: ModuleType, ref: str) -> None:
    register = getattr(module, "register", None)
    if callable(register):
        register(target)
        return
    classes = _plugin_classes(module)
    if not classes:
        raise ConfigError("defines no plugin class and no register(registry) function", field="--plugins", value=ref)
    for cls in classes:
        plugin_factory: Any = cls
        target.register(cls.name, plugin_factory, args=getattr(cls, "decode_args", None))


def registry(bind: Bind, plugins: Sequence[str | type[Plugin]] = ()) -> Registry:
    """In-tree plus entry-point plugins, those of ``plugins`` (modules, ``.py`` files or plugin classes), and the
    API binder as ``DefaultBinder``."""
    target = in_tree_registry().with_entry_points()
    for ref in plugins:
        if isinstance(ref, str):
            _add_module(target, load_module(ref), ref)
        else:
            factory: Any = ref
            target.register(ref.name, factory, args=getattr(ref, "decode_args", None))
    target.unregister(BINDER)

    def binder(args: object, handle: Handle) -> Plugin:
        return ApiBinder(bind)

    target.register(BINDER, binder)
    return target
