"""Plugins named on the command line (``--plugins MODULE``): a dotted module name or a ``.py`` file.

The same option on every command that schedules, so a plugin a user runs with ``kschedlib run`` can be
asked about with ``explain``, ``simulate`` and the planning commands without packaging it first.  A
module with a ``register(registry)`` function registers what it likes; otherwise every plugin class it
defines (a subclass of a ``kschedlib.framework`` plugin base with a ``name``) is registered under its
name, with its ``decode_args`` static method, if any, as its argument decoder.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from kschedlib.errors import ConfigError

if TYPE_CHECKING:
    from kschedlib.framework import Plugin, Registry

__all__ = ["add_module", "load_module", "plugins_registry"]


def load_module(ref: str) -> ModuleType:
    """Import a dotted module name, or a ``.py`` file by path."""
    from pathlib import Path  # here: only ``--plugins`` needs it

    path = Path(ref)
    if ref.endswith(".py"):
        if not path.is_file():
            raise ConfigError("no such file", field="--plugins", value=ref)
        spec = importlib.util.spec_from_file_location(f"kschedlib_plugins_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ConfigError("cannot be loaded as a module", field="--plugins", value=ref)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # the user's code: a SyntaxError or whatever it raises at import
            del sys.modules[spec.name]  # no half-run module left behind
            raise ConfigError(f"cannot be loaded: {type(exc).__name__}: {exc}", field="--plugins",
                              value=ref) from exc
        return module
    try:
        return importlib.import_module(ref)
    except ImportError as exc:
        raise ConfigError(f"cannot be imported: {exc}", field="--plugins", value=ref) from exc
    except Exception as exc:  # the module imported but raised: the same answer as for a file
        raise ConfigError(f"cannot be loaded: {type(exc).__name__}: {exc}", field="--plugins", value=ref) from exc


def _plugin_classes(module: ModuleType) -> list[type[Plugin]]:
    from kschedlib.framework import Plugin

    found: list[type[Plugin]] = []
    for value in vars(module).values():
        if (inspect.isclass(value) and issubclass(value, Plugin) and value.__module__ == module.__name__
                and not inspect.isabstract(value) and isinstance(getattr(value, "name", None), str)):
            found.append(value)
    return found


def add_module(target: Registry, module: ModuleType, ref: str) -> None:
    """Register ``module``'s plugins into ``target`` (its ``register`` function, else its plugin classes)."""
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


def plugins_registry(refs: Sequence[str] | None) -> Registry | None:
    """In-tree and entry-point plugins plus those of ``refs``; ``None`` (the commands' default) without refs."""
    if not refs:
        return None
    from kschedlib.plugins import in_tree_registry

    target = in_tree_registry().with_entry_points()
    for ref in refs:
        add_module(target, load_module(ref), ref)
    return target
