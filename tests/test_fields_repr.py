"""kschedlib's attrs classes share one ``__repr__`` (``FieldsRepr``) that prints what attrs' generated one prints."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path
from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st

import kschedlib
from kschedlib._fields_repr import FieldsRepr
from kschedlib.model import Pod, Toleration


def _shout(value: object) -> str:
    return f"<{value}>"


@attrs.frozen(slots=True)
class _AttrsOwn:
    name: str
    count: int | None = None
    hidden: int = attrs.field(default=0, repr=False)
    loud: str = attrs.field(default="x", repr=_shout)
    _private: tuple[object, ...] = ()


@attrs.frozen(slots=True, repr=False)
class _Shared(FieldsRepr):
    name: str
    count: int | None = None
    hidden: int = attrs.field(default=0, repr=False)
    loud: str = attrs.field(default="x", repr=_shout)
    _private: tuple[object, ...] = ()


@attrs.define(slots=True)
class _AttrsNode:
    value: int
    next: Any = None


@attrs.define(slots=True, repr=False)
class _SharedNode(FieldsRepr):
    value: int
    next: Any = None


def _strip_class_names(text: str) -> str:
    return re.sub(r"\b_(?:Attrs|Shared)Node\(", "N(", re.sub(r"\b_(?:AttrsOwn|Shared)\(", "C(", text))


@given(
    name=st.text(max_size=8),
    count=st.none() | st.integers(),
    hidden=st.integers(),
    loud=st.text(max_size=5),
    private=st.lists(st.integers() | st.text(max_size=3) | st.none(), max_size=3),
)
def test_prints_what_attrs_prints(name: str, count: int | None, hidden: int, loud: str, private: list[object]) -> None:
    own = _AttrsOwn(name, count, hidden, loud, tuple(private))
    shared = _Shared(name, count, hidden, loud, tuple(private))
    assert _strip_class_names(repr(shared)) == _strip_class_names(repr(own))
    assert "hidden" not in repr(shared)


def test_nested_objects_print_their_own_fields() -> None:
    inner_own, inner_shared = _AttrsOwn("in"), _Shared("in")
    assert _strip_class_names(repr(_Shared("out", private=(inner_shared,)))) == _strip_class_names(
        repr(_AttrsOwn("out", private=(inner_own,)))
    )


def test_an_object_met_again_while_printing_shows_as_dots() -> None:
    own, shared = _AttrsNode(1), _SharedNode(1)
    own.next, shared.next = own, shared
    assert _strip_class_names(repr(shared)) == _strip_class_names(repr(own)) == "N(value=1, next=...)"


def test_model_objects_print_their_fields() -> None:
    assert repr(Toleration(key="gpu", operator="Exists")) == (
        "Toleration(key='gpu', operator='Exists', value='', effect='', toleration_seconds=None)"
    )
    text = repr(Pod(name="web-1", namespace="default"))
    assert text.startswith("Pod(name='web-1', namespace='default', ")
    assert "_key" not in text


PACKAGE = Path(kschedlib.__file__).parent


def _attrs_decorators(tree: ast.AST) -> list[tuple[str, ast.expr]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for decorator in node.decorator_list:
                func = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(func, ast.Attribute) and ast.unparse(func.value) in ("attrs", "attr"):
                    found.append((node.name, decorator))
    return found


def test_every_attrs_class_is_declared_without_a_generated_repr() -> None:
    compiled = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for name, decorator in _attrs_decorators(ast.parse(path.read_text(encoding="utf-8"))):
            keywords = decorator.keywords if isinstance(decorator, ast.Call) else []
            if not any(k.arg == "repr" for k in keywords):
                compiled.append(f"{path.relative_to(PACKAGE)}: {name}")
    assert compiled == []


def test_loaded_classes_use_the_shared_repr() -> None:
    for name in ("kschedlib.scheduler", "kschedlib.simulation", "kschedlib.dra._allocator", "kschedlib.sweeps"):
        importlib.import_module(name)
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("kschedlib"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and attrs.has(value) and value.__module__ == module_name:
                code = getattr(value.__repr__, "__code__", None)
                assert code is None or not code.co_filename.startswith("<attrs generated"), value.__qualname__
