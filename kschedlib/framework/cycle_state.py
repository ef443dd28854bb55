"""CycleState: what plugins share within one scheduling attempt.

PreFilter and PreScore compute per-pod data once and write it under a typed
:class:`StateKey`; Filter and Score read it per node.  The framework clones the
state when it evaluates a node with nominated pods added and in the
preemption dry run, so a value that AddPod/RemovePod mutate must copy itself
in ``clone()``; immutable values return ``self``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Protocol, Self, TypeVar, final

__all__ = ["CycleState", "StateData", "StateKey"]


class StateData(Protocol):
    """A value stored in a CycleState."""

    def clone(self) -> Self:
        """A copy that later mutations of the original do not affect (``self`` if immutable)."""
        ...


T = TypeVar("T", bound=StateData)


@final
class StateKey(Generic[T]):
    """A typed key: ``KEY: StateKey[MyState] = StateKey("PreFilterMyPlugin")``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


@final
class CycleState:
    """Per-attempt storage keyed by :class:`StateKey`; also records skipped plugins."""

    __slots__ = ("_data", "get", "skip_filter_plugins", "skip_score_plugins")

    if TYPE_CHECKING:
        def get(self, key: StateKey[T]) -> T | None:
            """The value under ``key``, or ``None``."""

    def __init__(self) -> None:
        self._data: dict[StateKey[Any], Any] = {}
        # ``get`` is the dict's own: plugins call it for every node they look at, and a method
        # forwarding to it would cost a Python call each time
        self.get = self._data.get  # type: ignore[method-assign, assignment]
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()

    def write(self, key: StateKey[T], value: T) -> None:
        """Store ``value`` under ``key``, replacing any earlier value."""
        self._data[key] = value

    def read(self, key: StateKey[T]) -> T:
        """The value under ``key``; ``KeyError`` naming the key when absent."""
        try:
            value: T = self._data[key]
            return value
        except KeyError:
            raise KeyError(f"{key.name}: not found") from None

    def delete(self, key: StateKey[T]) -> None:
        """Remove ``key`` if present."""
        self._data.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def clone(self) -> CycleState:
        """A new state whose values are ``value.clone()``; the skip sets are shared."""
        copy = CycleState()
        copy._data = data = {key: value.clone() for key, value in self._data.items()}
        copy.get = data.get  # type: ignore[method-assign, assignment]
        copy.skip_filter_plugins = self.skip_filter_plugins
        copy.skip_score_plugins = self.skip_score_plugins
        return copy
