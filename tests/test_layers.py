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
    "sweeps": EDGES, "report": EDGES, "progress": "base", "kube": EDGES, "_lazy": "base", "_fields_repr": "base",
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


EDGE_ONLY_LIBRARIES = frozenset({
    "kubernetes", "kubernetes_asyncio", "lightkube", "kr8s",  # Kubernetes clients
    "dask", "distributed", "ray",  # sweep executors
    "matplotlib", "plotly", "pygal", "bokeh", "altair", "playwright", "selenium",  # charts and browsers
})
"""Libraries only the edges may import (each behind an extra): the core stays free of them."""

BATCH = "kschedlib.plugins.batch"
"""scheduler-plugins' plugins: kube's in-tree plugins never import them (only the registration does)."""
BATCH_IMPORTERS = frozenset({
    "kschedlib.plugins",  # the registration
    "kschedlib.plugins.coscheduling", "kschedlib.plugins.capacity_scheduling",  # deprecated aliases of moved modules
})


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def foreign_imports(path: Path, source: str | None = None) -> Iterator[tuple[int, str]]:
    """The top-level name of every non-kschedlib module the file imports (also lazily, in functions)."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] != "kschedlib":
                yield node.lineno, name.split(".")[0]


def violations(path: Path, source: str | None = None) -> list[str]:
    here = module_name(path)
    mine = layer_of(here)
    where = path.relative_to(PACKAGE.parent)
    out = []
    for line, target in imports(path, source):
        theirs = layer_of(target)
        if theirs in FORBIDDEN[mine]:
            out.append(f"{where}:{line}: {mine} imports {target} ({theirs})")
        in_tree = mine == "plugins" and here not in BATCH_IMPORTERS and not _within(here, BATCH)
        if in_tree and _within(target, BATCH):
            out.append(f"{where}:{line}: an in-tree plugin imports scheduler-plugins' {target}")
    if mine != EDGES:
        out.extend(f"{where}:{line}: the core imports {name}, an edge-only library"
                   for line, name in foreign_imports(path, source) if name in EDGE_ONLY_LIBRARIES)
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


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph`` (module -> modules it imports): its strongly connected parts of 2+."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm; the package is shallow enough for recursion
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in graph.get(module, ()):
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            part = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(part) > 1:
                circles.append(sorted(part))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return circles


def test_no_module_imports_itself_back() -> None:
    """A helper never imports the plugin it serves: shared code moves down (imports inside functions count)."""
    graph = {module_name(p): {t for _, t in imports(p)} - {module_name(p)} for p in FILES}
    assert import_circles(graph) == []


def test_import_circles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_circles(graph) == [["a", "b", "c"]]


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
    ("in-tree-plugin-imports-batch", "plugins/node_name.py", "from kschedlib.plugins.batch import coscheduling", True),
    ("in-tree-plugin-imports-batch-package", "plugins/node_name.py", "import kschedlib.plugins.batch", True),
    ("registration-imports-batch", "plugins/__init__.py", "from kschedlib.plugins import batch", False),
    ("batch-imports-in-tree", "plugins/batch/coscheduling.py", "from kschedlib.plugins import default_preemption",
     False),
    ("core-imports-client-lazily", "_internal/engine.py", "def f():\n    import kubernetes.client", True),
    ("core-imports-dask", "scheduler.py", "from dask.distributed import Client", True),
    ("model-imports-ray", "model/objects.py", "import ray", True),
    ("edge-imports-ray", "sweeps/executors.py", "import ray", False),
    ("core-imports-yaml-lazily", "_internal/documents.py", "def f():\n    import yaml", False),
]


@pytest.mark.parametrize(("where", "source", "violates"), [c[1:] for c in CHECKER_CASES],
                         ids=[c[0] for c in CHECKER_CASES])
def test_the_checker_sees_violations(where: str, source: str, violates: bool) -> None:
    assert bool(violations(PACKAGE / where, source)) is violates
