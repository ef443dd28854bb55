"""One ``__repr__`` for every attrs class in kschedlib, instead of one compiled per class.

attrs writes each class's ``__repr__`` as Python source and compiles it when the class is created:
about 16 lines per class, over 40% of the code attrs compiles for kschedlib's 200 classes, paid by
every process at import (a fifth of ``python -m kschedlib explain``'s imports) and kept in memory
as code objects and linecache lines.  Classes declared ``@attrs.frozen(..., repr=False)`` that
inherit :class:`FieldsRepr` print exactly what attrs' own ``__repr__`` prints, from one function.
"""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["FieldsRepr"]


class FieldsRepr:
    """``ClassName(field=value, ...)`` over the attrs fields, as attrs' generated ``__repr__`` writes it.

    Fields declared ``repr=False`` are left out, a field's ``repr=callable`` formats its value, and an
    object met again while it is being printed shows as ``...``.
    """

    __slots__ = ()

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        cls: Any = type(self)
        parts = []
        for field in cls.__attrs_attrs__:
            if field.repr is False:
                continue
            value = getattr(self, field.name)
            parts.append(f"{field.name}={value!r}" if field.repr is True else f"{field.name}={field.repr(value)}")
        return f"{cls.__qualname__.rsplit('>.', 1)[-1]}({', '.join(parts)})"
