"""Registry: plugin name -> factory, refusing duplicates.

A factory builds a plugin from its decoded arguments and the
:class:`~kschedlib.framework.handle.Handle`.  An optional ``args`` decoder
turns the raw ``pluginConfig`` args (a dict, or ``None`` when the profile
gives none) into a typed, validated object, raising
:class:`~kschedlib.errors.ConfigError` for bad input; without a decoder the
factory receives the raw mapping.

Third-party packages can publish plugins through the ``kschedlib.plugins``
entry-point group: each entry point's name is the plugin name and it loads a
factory (a decoder may hang off it as ``factory.decode_args``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import RegistryError
from kschedlib.framework.extension_points import Plugin
from kschedlib.framework.handle import Handle

__all__ = ["ENTRY_POINT_GROUP", "ArgsDecoder", "PluginEntry", "PluginFactory", "Registry"]

ENTRY_POINT_GROUP = "kschedlib.plugins"

ArgsDecoder = Callable[[Mapping[str, Any] | None], Any]
PluginFactory = Callable[[Any, Handle], Plugin]


@final
@attrs.frozen(slots=True, repr=False)
class PluginEntry(FieldsRepr):
    """How to build one plugin."""

    name: str
    factory: PluginFactory
    decode_args: ArgsDecoder | None = None

    def args_from(self, raw: Mapping[str, Any] | None) -> Any:
        """Decode raw args (``None`` = defaults); raw passes through without a decoder."""
        return self.decode_args(raw) if self.decode_args is not None else raw


@final
class Registry:
    """A map of plugin names to :class:`PluginEntry`, refusing duplicates."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Mapping[str, PluginEntry] | None = None) -> None:
        self._entries: dict[str, PluginEntry] = dict(entries or {})

    def register(self, name: str, factory: PluginFactory, *, args: ArgsDecoder | None = None) -> None:
        """Add a plugin; ``RegistryError`` if the name is taken."""
        if name in self._entries:
            raise RegistryError(f"a plugin named {name} already exists")
        self._entries[name] = PluginEntry(name, factory, args)

    def unregister(self, name: str) -> None:
        """Remove a plugin; ``RegistryError`` if unknown."""
        if name not in self._entries:
            raise RegistryError(f"no plugin named {name} exists")
        del self._entries[name]

    def merge(self, other: Registry) -> Registry:
        """A new registry with both sets of plugins; ``RegistryError`` on a shared name."""
        merged = Registry(self._entries)
        for entry in other:
            merged.register(entry.name, entry.factory, args=entry.decode_args)
        return merged

    def copy(self) -> Registry:
        """An independent registry with the same plugins."""
        return Registry(self._entries)

    def get(self, name: str) -> PluginEntry:
        """The entry of ``name``; ``RegistryError`` if unknown."""
        try:
            return self._entries[name]
        except KeyError:
            raise RegistryError(f"no plugin named {name} exists") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[PluginEntry]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def with_entry_points(self, group: str = ENTRY_POINT_GROUP) -> Registry:
        """A new registry adding the plugins that installed packages publish under ``group``."""
        from importlib import metadata  # here: only a registry that looks up entry points pays for its imports

        merged = Registry(self._entries)
        for point in metadata.entry_points(group=group):
            factory = point.load()
            merged.register(point.name, factory, args=getattr(factory, "decode_args", None))
        return merged
