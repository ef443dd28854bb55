"""The one bounded cache of the engine and the plugins: a map that keeps its most recently used keys.

Every cache it holds (memo tables and columns, tallies carried across cycles, per-node count
tables, filter runners) stores values that can be recomputed from the snapshot, so dropping an
entry costs time, never a decision. One rule for all of them keeps memory bounded the same way
everywhere; a cap with another rule says why where it is defined.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar, final

__all__ = ["BoundedLRU"]

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


@final
class BoundedLRU(Generic[_K, _V]):
    """At most ``size`` entries; storing one more drops the least recently used (read or stored).

    Values must not be ``None``: :meth:`get` answers ``None`` for a missing key.
    """

    __slots__ = ("_entries", "size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"BoundedLRU size must be at least 1, got {size}")
        self.size = size
        self._entries: OrderedDict[_K, _V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: _K) -> _V | None:
        """The value of ``key`` (now the most recently used), or ``None``."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: _K, value: _V) -> None:
        """Store ``value`` as the most recently used; drop the least recently used beyond :attr:`size`."""
        entries = self._entries
        entries[key] = value
        entries.move_to_end(key)
        if len(entries) > self.size:
            entries.popitem(last=False)

    def pop(self, key: _K) -> _V | None:
        """Forget ``key``; its value, or ``None``."""
        return self._entries.pop(key, None)
