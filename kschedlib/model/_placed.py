"""A checked pod copied with its node name (or nominated node name) set, without checking it again.

The scheduler copies each pod it assumes with ``node_name`` set.  ``attrs.evolve`` would run the
pod's checks over all of its fields again, though only a name changed: a tenth of a small
cluster's scheduling cycle.  Here the fields are copied as they are and the one new value is
checked for what the pod's check asks of it (a ``str``); anything else takes ``attrs.evolve``.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Final

import attrs

from kschedlib.model.objects import Pod

__all__ = ["placed"]

_NAMES: Final = tuple(field.name for field in attrs.fields(Pod))
_VALUES: Final = attrgetter(*_NAMES)
_TEXT_FIELDS: Final = frozenset({"node_name", "nominated_node_name"})
_set = object.__setattr__


def placed(pod: Pod, field: str, value: str) -> Pod:
    """``attrs.evolve(pod, **{field: value})`` for ``node_name``/``nominated_node_name``, unchecked
    where the pod was checked when built and ``value`` is a ``str`` (all the check asks of it)."""
    if field not in _TEXT_FIELDS or type(value) is not str or type(pod) is not Pod:
        changes: dict[str, Any] = {field: value}
        return attrs.evolve(pod, **changes)
    copy = object.__new__(Pod)
    for name, old in zip(_NAMES, _VALUES(pod), strict=True):
        _set(copy, name, old)
    _set(copy, field, value)
    return copy
