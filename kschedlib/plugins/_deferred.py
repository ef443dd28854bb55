"""A registry entry whose module is imported when the entry is first used, not when it is registered.

Registering every plugin kschedlib ships would otherwise import every plugin module, including the
ones no default profile enables (the batch plugins), for each program that only builds a Scheduler.
"""

from __future__ import annotations

import importlib
from typing import Any, final

__all__ = ["Deferred"]


@final
class Deferred:
    """``module.attribute`` called with the given arguments, the module imported at the first call."""

    __slots__ = ("attribute", "module")

    def __init__(self, module: str, attribute: str) -> None:
        self.module = module
        self.attribute = attribute

    def __call__(self, *args: Any) -> Any:
        return getattr(importlib.import_module(self.module), self.attribute)(*args)

    def __repr__(self) -> str:
        return f"Deferred({self.module}.{self.attribute})"
