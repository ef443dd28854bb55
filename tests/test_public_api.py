"""The public surface of ``kschedlib``: ``__all__`` sorted, complete, importable and documented."""

from __future__ import annotations

import importlib
import inspect
import sys
import types
import warnings
from pathlib import Path
from types import ModuleType

import pytest

import kschedlib

PUBLIC = sorted(kschedlib.__all__)


def test_all_is_sorted() -> None:
    assert kschedlib.__all__ == sorted(kschedlib.__all__)


def test_all_has_no_duplicates() -> None:
    assert len(set(kschedlib.__all__)) == len(kschedlib.__all__)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_name_is_importable(name: str) -> None:
    module = importlib.import_module("kschedlib")
    assert hasattr(module, name)
    namespace: dict[str, object] = {}
    exec(f"from kschedlib import {name}", namespace)
    assert namespace[name] is getattr(kschedlib, name)


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from kschedlib import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == PUBLIC


def test_every_public_attribute_is_listed() -> None:
    for name in kschedlib.__all__:
        getattr(kschedlib, name)  # names are imported on first use
    public = {name for name, value in vars(kschedlib).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert public == set(kschedlib.__all__)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_exported_object_has_a_docstring(name: str) -> None:
    obj = getattr(kschedlib, name)
    doc = inspect.getdoc(obj)
    assert doc, f"kschedlib.{name} has no docstring"
    if inspect.isclass(obj) and obj.__doc__ is None:
        pytest.fail(f"kschedlib.{name} only inherits its docstring")


def test_the_package_has_a_docstring_and_a_version() -> None:
    assert kschedlib.__doc__
    assert isinstance(kschedlib.__version__, str)
    assert kschedlib.__version__.count(".") >= 1


ENTRY_POINTS = ["Scheduler", "load_cluster", "explain", "simulate", "Explanation", "parse_config", "Registry",
                "in_tree_registry", "KschedError"]


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_design_entry_points_are_exported(name: str) -> None:
    assert name in kschedlib.__all__


@pytest.mark.parametrize("name", [n for n in PUBLIC if n.endswith("Error")])
def test_errors_share_one_root(name: str) -> None:
    error = getattr(kschedlib, name)
    assert issubclass(error, kschedlib.KschedError)
    if error is not kschedlib.KschedError:
        assert any(base.__module__ == "builtins" and base is not Exception for base in error.__mro__[1:])


def _undocumented_members(cls: type) -> list[str]:
    missing = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property | classmethod | staticmethod) or inspect.isfunction(member):
            target = member if isinstance(member, property) else getattr(cls, name)
            if not inspect.getdoc(target):
                missing.append(name)
    return missing


CLASSES = [n for n in PUBLIC if inspect.isclass(getattr(kschedlib, n))
           and not issubclass(getattr(kschedlib, n), BaseException)]
UNDOCUMENTED: dict[str, str] = {}


def _member_param(name: str) -> object:
    if name in UNDOCUMENTED:
        reason = f"kschedlib.{name}: no docstring on {UNDOCUMENTED[name]}"
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason))
    return name


@pytest.mark.parametrize("name", [_member_param(n) for n in CLASSES])
def test_public_members_of_exported_classes_are_documented(name: str) -> None:
    assert _undocumented_members(getattr(kschedlib, name)) == []


PUBLIC_NAMESPACES = ["kschedlib", "kschedlib.framework", "kschedlib.model", "kschedlib.testing", "kschedlib.extender",
                     "kschedlib.simulation", "kschedlib.plugins", "kschedlib.errors", "kschedlib.results",
                     "kschedlib.metrics", "kschedlib.kube"]
FACADES = {"kschedlib.testing.strategies"}
"""Private modules whose public names are declared as such (the strategies re-export their defining modules)."""


def _defined_in_private_module(module_name: str) -> list[str]:
    module = _import(module_name)
    wrong = []
    for name in module.__all__:
        defined = getattr(getattr(module, name), "__module__", None)
        if not isinstance(defined, str) or defined in FACADES or not defined.startswith("kschedlib"):
            continue
        if any(part.startswith("_") for part in defined.split(".")[1:]):
            wrong.append(f"{name} ({defined})")
    return wrong


@pytest.mark.parametrize("module_name", PUBLIC_NAMESPACES)
def test_public_types_are_defined_in_public_modules(module_name: str) -> None:
    """Reprs, pickles and tracebacks name the module a type was defined in: it must be one users may import."""
    assert _defined_in_private_module(module_name) == []


def test_every_kschedlib_exception_is_defined_in_errors() -> None:
    for path in sorted(Path(kschedlib.__file__).parent.rglob("*.py")):
        relative = path.relative_to(Path(kschedlib.__file__).parent.parent).with_suffix("")
        name = ".".join(part for part in relative.parts if part != "__init__")
        if name.endswith("__main__"):
            continue
        module = _import(name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, kschedlib.KschedError):
                assert value.__module__ == "kschedlib.errors", f"{value.__qualname__} is defined in {value.__module__}"


DEPRECATED_ALIASES = {
    "kschedlib.plugins.coscheduling": "kschedlib.plugins.batch.coscheduling",
    "kschedlib.plugins.capacity_scheduling": "kschedlib.plugins.batch.capacity_scheduling",
}
"""Old public import paths kept as aliases (they warn) of the modules that moved."""


def _import(name: str) -> ModuleType:
    """Import a module; an alias's DeprecationWarning is expected (and tested below), not an error."""
    with warnings.catch_warnings():
        if name in DEPRECATED_ALIASES:
            warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module(name)


@pytest.mark.parametrize(("alias", "target"), sorted(DEPRECATED_ALIASES.items()))
def test_a_moved_module_keeps_its_old_path_with_a_warning(alias: str, target: str) -> None:
    sys.modules.pop(alias, None)
    with pytest.warns(DeprecationWarning, match=target):
        old = importlib.import_module(alias)
    new = importlib.import_module(target)
    assert old.__all__ == new.__all__
    assert all(getattr(old, name) is getattr(new, name) for name in new.__all__)


def _plugin_modules() -> list[str]:
    import pkgutil

    import kschedlib.plugins
    import kschedlib.plugins.batch

    return [f"{package.__name__}.{info.name}" for package in (kschedlib.plugins, kschedlib.plugins.batch)
            for info in pkgutil.iter_modules(package.__path__) if not info.name.startswith("_")]


GUARDED = ["kschedlib.framework", "kschedlib.plugins", *_plugin_modules()]


@pytest.mark.parametrize("module_name", GUARDED)
def test_namespace_all_is_sorted_unique_and_defined(module_name: str) -> None:
    """What a plugin module exports is its class, args, reason constants and pure predicates: listed, in order."""
    module = _import(module_name)
    names = list(module.__all__)
    assert names == sorted(set(names))
    assert [name for name in names if not hasattr(module, name)] == []
