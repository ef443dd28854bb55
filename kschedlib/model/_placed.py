"""A checked pod copied with its node name (or nominated node name) set, without checking it again.

The scheduler copies each pod it assumes with ``node_name`` set.  ``attrs.evolve`` would run the
pod's checks over all of its fields again, though only a name changed: a tenth of a small
cluster's scheduling cycle.  Here the fields are copied as they are and the one new value is
checked for what the pod's check asks of it (a ``str``); anything else takes ``attrs.evolve``.
The copy is a generated function per name field, a line per pod field (as attrs generates its own
``__init__``): a loop over the fields costs half as much again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs

from kschedlib.model.objects import Pod

__all__ = ["placed"]

_NAMES: Final = tuple(field.name for field in attrs.fields(Pod))
_TEXT_FIELDS: Final = ("node_name", "nominated_node_name")


def _copier(field: str) -> Callable[[Pod, str], Pod]:
    """``copy(pod, value)``: a new Pod with every field of ``pod`` and ``value`` in ``field``, unchecked.

    Each field is written through its slot's own setter (``Pod.<name>.__set__``, bound once), which skips the
    attribute lookup ``object.__setattr__`` makes on every call: the copy costs about half as much.
    """
    lines = ["def copy(pod, value):", "    new = _new(_Pod)"]
    lines += [f"    _set_{name}(new, {'value' if name == field else f'pod.{name}'})" for name in _NAMES]
    lines.append("    return new")
    scope: dict[str, Any] = {"_new": object.__new__, "_Pod": Pod}
    scope.update({f"_set_{name}": vars(Pod)[name].__set__ for name in _NAMES})
    exec(compile("\n".join(lines), f"<placed {field}>", "exec"), scope)  # fixed text, names from attrs
    copy: Callable[[Pod, str], Pod] = scope["copy"]
    return copy


_COPIERS: Final = {field: _copier(field) for field in _TEXT_FIELDS}


def placed(pod: Pod, field: str, value: str) -> Pod:
    """``attrs.evolve(pod, **{field: value})`` for ``node_name``/``nominated_node_name``, unchecked
    where the pod was checked when built and ``value`` is a ``str`` (all the check asks of it)."""
    copy = _COPIERS.get(field)
    if copy is None or type(value) is not str or type(pod) is not Pod:
        changes: dict[str, Any] = {field: value}
        return attrs.evolve(pod, **changes)
    return copy(pod, value)
