"""A frozen attrs class's instance built without its ``__init__``, for classes built on every cycle.

attrs' ``__init__`` of a frozen slotted class writes each field through ``object.__setattr__``, which looks
the attribute up on every call.  ``builder(cls)`` returns ``build(*values)``, a generated function that
writes each field through its slot's own setter (bound once): about half the cost.  It runs no
validators, converters, defaults or ``__attrs_post_init__``: classes with a validator or converter on any
field are refused when the builder is made, and the caller passes every field, ``init=False`` ones and
whatever ``__attrs_post_init__`` would derive included (``NodeInfo.name``), in ``attrs.fields`` order.
``model/_placed.py`` generates the same kind of function for a Pod copied with one field changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

__all__ = ["builder"]

T = TypeVar("T")


def builder(cls: type[T], *, caller_derives: bool = False) -> Callable[..., T]:
    """``build(*values)``: a new ``cls`` holding ``values`` in its fields' order, ``__init__`` skipped.

    A class with ``__attrs_post_init__`` is refused unless ``caller_derives`` says the callers pass what it
    would set.
    """
    if hasattr(cls, "__attrs_post_init__") and not caller_derives:
        raise TypeError(f"{cls.__name__} has __attrs_post_init__: build it with __init__, or pass caller_derives")
    fields = attrs.fields(cls)  # type: ignore[arg-type]
    for field in fields:
        if field.validator is not None or field.converter is not None:
            raise TypeError(f"{cls.__name__}.{field.name} is validated or converted: build it with __init__")
    names = [field.name for field in fields]
    lines = [f"def build({', '.join(names)}):", "    new = _new(_cls)"]
    lines += [f"    _set_{name}(new, {name})" for name in names]
    lines.append("    return new")
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    scope.update({f"_set_{name}": vars(cls)[name].__set__ for name in names})
    exec(compile("\n".join(lines), f"<build {cls.__name__}>", "exec"), scope)  # fixed text, names from attrs
    build: Callable[..., T] = scope["build"]
    return build
