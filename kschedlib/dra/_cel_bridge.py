"""The allocator's selector compiler on top of the Kubernetes CEL environment (:mod:`kschedlib.dra._cel`).

Each model :class:`~kschedlib.model.dra.Device` is turned into a CEL ``DeviceView`` once (views are
kept per device object, which the store shares across cycles), so a selector's per-device memo works.
"""

from __future__ import annotations

from typing import Final

from kschedlib.dra._cel import CelError, DeviceView, Version
from kschedlib.dra._cel import compile_selector as compile_cel
from kschedlib.dra._selectors import SelectorError, SelectorPredicate, SelectorRuntimeError
from kschedlib.model.dra import Device

__all__ = ["compile_selector"]

_VIEWS: dict[int, tuple[Device, str, DeviceView]] = {}
_VIEWS_MAX: Final = 65536


def _view(device: Device, driver: str) -> DeviceView:
    key = id(device)
    found = _VIEWS.get(key)
    if found is not None and found[0] is device and found[1] == driver:
        return found[2]
    attributes = {name: Version(str(a.value)) if a.kind == "version" else a.value
                  for name, a in device.attributes.items()}
    view = DeviceView(driver, attributes, dict(device.capacity),
                      allow_multiple_allocations=device.allow_multiple_allocations)
    if len(_VIEWS) >= _VIEWS_MAX:
        _VIEWS.clear()
    _VIEWS[key] = (device, driver, view)
    return view


def compile_selector(expression: str) -> SelectorPredicate:
    """Compile ``expression``; :class:`SelectorError` carries the CEL compiler's message."""
    try:
        selector = compile_cel(expression)
    except CelError as exc:
        raise SelectorError(exc.message) from exc

    def matches(device: Device, driver: str) -> bool:
        try:
            return selector.matches(_view(device, driver))
        except CelError as exc:
            raise SelectorRuntimeError(exc.message) from exc

    return matches
