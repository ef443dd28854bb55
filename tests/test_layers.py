"""The import direction of DESIGN.md ("Layers"): a higher layer may import a lower one, never the reverse."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kschedlib"

EDGES = "edges"
# what each layer must not import (DESIGN.md "Layers")
FORBIDDEN: dict[str, frozenset[str]] = {
    "base": frozenset({"kschedlib", "base", "model", "framework", "plugins", "_internal", "scheduler", EDGES}),
    "model": frozenset({"kschedlib", "framework", "plugins", "_internal", "scheduler", EDGES}),
    "framework": frozenset({"kschedlib", "plugins", "_internal", "scheduler", EDGES}),
    "plugins": frozenset({"kschedlib", "_internal", "scheduler", EDGES}),
    "_internal": frozenset({"kschedlib", "scheduler", EDGES}),
    "scheduler": frozenset({"kschedlib", EDGES}),
    EDGES: frozenset(),
    "kschedlib": frozenset(),
}
TOP_LEVEL = {
    "errors": "base", "clock": "base", "versions": "model",
    "model": "model", "framework": "framework", "plugins": "plugins", "_internal": "_internal",
    "scheduler": "scheduler", "explanation": "scheduler", "results": "_internal", "metrics": "_internal",
    "dra": "model",
    "cli": EDGES, "_cli": EDGES, "__main__": EDGES, "capacity": EDGES,
    "simulation": EDGES, "testing": EDGES, "extender": EDGES, "prometheus": EDGES,
    "sweeps": EDGES, "progress": "base",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    """The layer of a ``kschedlib...`` module; ``kschedlib`` itself (the re-exporting root) is its own layer."""
    parts = module.split(".")
    if parts[0] != "kschedlib":
        raise ValueError(module)
    if len(parts) == 1:
        return "kschedlib"
    try:
        return TOP_LEVEL[parts[1]]
    except KeyError:
        raise AssertionError(f"{module} is in no layer of DESIGN.md; add it to the table") from None


def _is_package(module: str) -> bool:
    path = PACKAGE.parent.joinpath(*module.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def imports(path: Path, source: str | None = None) -> Iterator[tuple[int, str]]:
    """Every kschedlib module imported by the file (also under TYPE_CHECKING and inside functions)."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "kschedlib":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "kschedlib":
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                yield node.lineno, candidate if _is_package(candidate) else target


def violations(path: Path, source: str | None = None) -> list[str]:
    mine = layer_of(module_name(path))
    out = []
    for line, target in imports(path, source):
        theirs = layer_of(target)
        if theirs in FORBIDDEN[mine]:
            out.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {mine} imports {target} ({theirs})")
    return out


FILES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_is_in_a_layer() -> None:
    for path in FILES:
        layer_of(module_name(path))


@pytest.mark.parametrize("layer", ["base", "model", "framework", "plugins", "_internal", "scheduler", EDGES])
def test_layer_has_modules(layer: str) -> None:
    assert any(layer_of(module_name(p)) == layer for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE.parent)) for p in FILES])
def test_imports_point_down(path: Path) -> None:
    assert violations(path) == []


# --- the checker itself -------------------------------------------------------------------------

CHECKER_CASES = [
    ("model-imports-framework", "model/objects.py", "from kschedlib.framework.status import Status", True),
    ("model-relative-up", "model/objects.py", "from ..framework import Status", True),
    ("model-imports-root", "model/objects.py", "import kschedlib", True),
    ("model-imports-root-name", "model/objects.py", "from kschedlib import Scheduler", True),
    ("model-imports-errors", "model/objects.py", "from kschedlib.errors import ManifestError", False),
    ("model-relative-sibling", "model/objects.py", "from .labels import LabelSelector", False),
    ("framework-imports-plugins", "framework/config.py", "from kschedlib.plugins import in_tree_registry", True),
    ("framework-type-checking", "framework/config.py",
     "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kschedlib._internal.cache import Cache", True),
    ("plugins-import-internal", "plugins/node_name.py", "from kschedlib._internal import cycle", True),
    ("plugins-import-framework", "plugins/node_name.py", "from kschedlib.framework import Status", False),
    ("internal-imports-scheduler", "_internal/cache.py", "def f():\n    from kschedlib.scheduler import Scheduler",
     True),
    ("internal-imports-plugins", "_internal/cache.py", "from kschedlib.plugins import node_name", False),
    ("scheduler-imports-simulation", "scheduler.py", "from kschedlib.simulation import explain", True),
    ("scheduler-imports-cli", "scheduler.py", "import kschedlib.cli", True),
    ("errors-imports-clock", "errors.py", "from kschedlib import clock", True),
    ("clock-imports-nothing", "clock.py", "import time", False),
    ("cli-imports-anything", "cli.py", "from kschedlib._internal.cache import Cache\nimport kschedlib", False),
]


@pytest.mark.parametrize(("where", "source", "violates"), [c[1:] for c in CHECKER_CASES],
                         ids=[c[0] for c in CHECKER_CASES])
def test_the_checker_sees_violations(where: str, source: str, violates: bool) -> None:
    assert bool(violations(PACKAGE / where, source)) is violates
