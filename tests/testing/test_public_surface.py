"""kschedlib.testing's public surface: sorted and documented; only it (not the core) imports Hypothesis."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import types
from pathlib import Path

import pytest

import kschedlib.testing
from kschedlib.testing import strategies

PACKAGE = Path(kschedlib.testing.__file__).resolve().parents[1]
MODULES = [kschedlib.testing, strategies]


@pytest.mark.parametrize("module", MODULES, ids=[m.__name__ for m in MODULES])
def test_all_is_sorted_complete_and_documented(module: types.ModuleType) -> None:
    assert module.__all__ == sorted(module.__all__)
    public = {name for name, value in vars(module).items() if not name.startswith("_")
              and not isinstance(value, types.ModuleType) and getattr(value, "__module__", module.__name__) != "typing"}
    assert public - {"annotations"} <= set(module.__all__)
    for name in module.__all__:
        value = getattr(module, name)
        if callable(value) and not isinstance(value, type(print)):
            assert inspect.getdoc(value), f"{module.__name__}.{name} has no docstring"


@pytest.mark.parametrize("cls", [kschedlib.testing.FakeHandle, kschedlib.testing.Scenario,
                                 kschedlib.testing.ContractViolation])
def test_public_members_of_classes_are_documented(cls: type) -> None:
    for name, member in vars(cls).items():
        if name.startswith("_") or not (inspect.isfunction(member) or isinstance(member, property)):
            continue
        assert inspect.getdoc(member), f"{cls.__name__}.{name} has no docstring"


def _imports_hypothesis(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "hypothesis" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "hypothesis":
            return True
    return False


def test_only_kschedlib_testing_imports_hypothesis() -> None:
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if "testing" not in p.relative_to(PACKAGE).parts[:1] and _imports_hypothesis(p)]
    assert offenders == []


def test_importing_kschedlib_does_not_import_hypothesis() -> None:
    code = "import sys, kschedlib, kschedlib.simulation; print('hypothesis' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"HYPOTHESIS_NO_PLUGINS": "1", "PATH": ""}, cwd=PACKAGE.parent)
    assert done.stdout.strip() == "False"
