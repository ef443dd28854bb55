"""Device selectors: a CEL expression compiled once into a predicate on devices.

The allocator depends only on :data:`CompileSelector` -- ``expression -> predicate(device, driver)``
-- so it can run on plain Python predicates in tests.  The default compiler is the Kubernetes CEL
environment of :mod:`kschedlib.dra._cel` (the ``kschedlib[dra]`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from kschedlib.model.dra import Device


__all__ = ["CompileSelector", "SelectorError", "SelectorPredicate", "SelectorRuntimeError", "SelectorCache"]

_RESULTS_MAX: Final = 1 << 18

SelectorPredicate = Callable[["Device", str], bool]
"""Whether the device (published by the driver named) matches."""
CompileSelector = Callable[[str], SelectorPredicate]
"""Compile an expression; raise :class:`SelectorError` if it does not compile."""


class SelectorError(Exception):
    """A selector that does not compile (the message is the compiler's)."""


class SelectorRuntimeError(Exception):
    """A selector that failed while evaluating on a device (e.g. a missing attribute)."""


class SelectorCache:
    """Compiled selectors by expression, shared by all cycles (kube keeps a CEL cache too)."""

    __slots__ = ("_compile", "_compiled", "_results", "_size")

    def __init__(self, compile_selector: CompileSelector) -> None:
        self._compile = compile_selector
        self._compiled: dict[str, SelectorPredicate | SelectorError] = {}
        self._results: dict[str, tuple[dict[int, Device], dict[int, Device]]] = {}
        """expression -> (devices it matches, devices it does not), by object id: no container per
        answer, so remembering tens of thousands of them adds nothing for the garbage collector."""
        self._size = 0

    def match(self, expression: str, device: Device, driver: str) -> bool:
        """Whether ``device`` matches, remembered per (expression, device object): devices are immutable
        and shared by every cycle until their slice changes."""
        known = self._results.get(expression)
        if known is None:
            known = self._results[expression] = ({}, {})
        key = id(device)
        yes, no = known
        if yes.get(key) is device:
            return True
        if no.get(key) is device:
            return False
        result = self.get(expression)(device, driver)
        if self._size >= _RESULTS_MAX:
            for remembered in self._results.values():
                remembered[0].clear()
                remembered[1].clear()
            self._size = 0
        (yes if result else no)[key] = device
        (no if result else yes).pop(key, None)  # an id reused by a new device object
        self._size += 1
        return result

    def get(self, expression: str) -> SelectorPredicate:
        """The predicate for ``expression``; raises the (cached) :class:`SelectorError`."""
        found = self._compiled.get(expression)
        if found is None:
            try:
                found = self._compile(expression)
            except SelectorError as exc:
                found = exc
            self._compiled[expression] = found
        if isinstance(found, SelectorError):
            raise found
        return found
