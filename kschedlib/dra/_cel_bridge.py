"""The allocator's selector compiler on top of the Kubernetes CEL environment (:mod:`kschedlib.dra._cel`).

Each model :class:`~kschedlib.model.dra.Device` is turned into the CEL package's ``DeviceView`` once
(views are kept per device object), so a selector's per-device memo works across cycles.
"""

from __future__ import annotations

from typing import Final

from kschedlib.dra._selectors import SelectorError, SelectorPredicate, SelectorRuntimeError
from kschedlib.errors import KschedError
from kschedlib.model.dra import Device

__all__ = ["DRA_EXTRA_MISSING", "compile_selector"]

DRA_EXTRA_MISSING: Final = ("device selectors (CEL) need the Kubernetes CEL environment: "
                            "install kschedlib[dra]")

_VIEWS: dict[int, tuple[Device, str, object]] = {}
_VIEWS_MAX: Final = 65536


def _view(device: Device, driver: str) -> object:
    from kschedlib.dra._cel import DeviceView, Version

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
        from kschedlib.dra import _cel
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise SelectorError(DRA_EXTRA_MISSING) from exc
    try:
        selector = _cel.compile_selector(expression)
    except KschedError as exc:
        raise SelectorError(getattr(exc, "message", str(exc))) from exc

    def matches(device: Device, driver: str) -> bool:
        try:
            return selector.matches(_view(device, driver))  # type: ignore[arg-type]
        except KschedError as exc:
            raise SelectorRuntimeError(getattr(exc, "message", str(exc))) from exc

    return matches
