"""The code in the docs runs, and prints what the docs say it prints.

* Every ``python`` block of the tutorial runs, in order, in one namespace, with the
  working directory ``docs/tutorial`` (where ``cluster.json`` is).  When a ``text``
  block directly follows a ``python`` block, it is the block's exact output.
* Every ``console`` block of the tutorial holds ``$ python -m kschedlib ...`` commands,
  each followed by its exact output (the timing line of ``simulate`` is not compared).
* The ``python`` and ``console`` blocks of every how-to guide run the same way, one namespace
  per page, in a temporary directory holding a copy of the tutorial's files (``cluster.json`` and
  the inputs the guides' commands name) and of ``examples/sweep``; a block preceded by
  ``<!-- skip: next -->`` is shown but not run (it needs an installed package, a real cluster or
  runs until stopped).
* The API reference mentions every name of ``kschedlib.__all__``, ``kschedlib.framework.__all__``
  and ``kschedlib.framework.events.__all__``; relative links in the pages listed in
  ``OWN_PAGES`` lead to existing files and headings.

``KSCHEDLIB_UPDATE_DOCS=1 python -m pytest tests/examples/test_docs.py`` rewrites the
output blocks from what the code prints; read the diff before committing.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import types
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIAL = DOCS / "tutorial" / "index.md"
LIVE_HOW_TO = ("run-as-a-second-scheduler.md", "ask-a-live-cluster.md")
"""Pages about a live cluster: tests/kube/test_docs_live.py runs them against a real API server."""
HOW_TO = tuple(sorted(page.name for page in (DOCS / "how-to").glob("*.md") if page.name not in LIVE_HOW_TO))
"""Every other how-to page: none is left out of the doc tests."""
EXCERPTS = {"property-test-your-plugin.md": (ROOT / "examples" / "property_testing" / "app_density.py",
                                             ROOT / "tests" / "examples" / "test_property_testing_example.py")}
"""Pages whose python blocks are excerpts, verbatim, of files that run (an example and its tests)."""
OWN_PAGES = (TUTORIAL, *(DOCS / "how-to" / page for page in (*HOW_TO, *LIVE_HOW_TO)), DOCS / "index.md",
             DOCS / "reference" / "api.md",
             DOCS / "explanation" / "cycle.md", DOCS / "explanation" / "design.md", ROOT / "examples" / "README.md",
             ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "tests" / "README.md")
SKIP_MARK = "<!-- skip: next -->"
UPDATE = bool(os.environ.get("KSCHEDLIB_UPDATE_DOCS"))
_FENCE = re.compile(r"^```(\w*)\s*$")
_TIMING = re.compile(r"\d+\.\d+ s scheduling, [\d.]+ pods/s")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@attrs.frozen
class Block:
    """A fenced block: its language, its text and the lines it spans (fences excluded)."""

    lang: str
    text: str
    first: int
    last: int
    skip: bool
    output: Block | None = None


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file; a ``text`` block right after a ``python`` one is its output."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None or not match.group(1):
            index += 1
            continue
        end = index + 1
        while not lines[end].startswith("```"):
            end += 1
        previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
        block = Block(match.group(1), "\n".join(lines[index + 1:end]), index + 1, end, previous.strip() == SKIP_MARK)
        between = lines[found[-1].last + 1:index] if found else []
        if block.lang == "text" and found and found[-1].lang == "python" and not any(s.strip() for s in between):
            found[-1] = attrs.evolve(found[-1], output=block)
        else:
            found.append(block)
        index = end + 1
    return found


def rewrite(path: Path, replacements: list[tuple[Block, str]]) -> None:
    """Replace the text of output blocks (``KSCHEDLIB_UPDATE_DOCS``)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for block, text in sorted(replacements, key=lambda item: -item[0].first):
        lines[block.first:block.last] = text.rstrip("\n").split("\n")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_python_blocks(path: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exec the page's python blocks in one namespace; compare each with its output block."""
    monkeypatch.chdir(cwd)
    module = types.ModuleType(f"docs_{path.parent.name}_{path.stem}".replace("-", "_"))
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses and pickling look modules up
    namespace = module.__dict__
    mismatches: list[str] = []
    updates: list[tuple[Block, str]] = []
    for block in blocks(path):
        if block.lang != "python" or block.skip:
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block.text, f"{path}:{block.first}", "exec", dont_inherit=True), namespace)
        if block.output is None:
            continue
        if UPDATE:
            updates.append((block.output, out.getvalue()))
        elif out.getvalue().rstrip("\n") != block.output.text.rstrip("\n"):
            mismatches.append(f"line {block.first}:\n--- printed\n{out.getvalue()}--- documented\n{block.output.text}")
    if updates:
        rewrite(path, updates)
    assert not mismatches, "\n".join(mismatches)


def test_tutorial_python_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    run_python_blocks(TUTORIAL, TUTORIAL.parent, monkeypatch)


def console_commands(path: Path) -> list[tuple[Block, str, str]]:
    """``(block, command, documented output)`` for every ``$ `` line of the page's console blocks."""
    out: list[tuple[Block, str, str]] = []
    for block in blocks(path):
        if block.lang != "console":
            continue
        for chunk in re.split(r"^\$ ", block.text, flags=re.MULTILINE)[1:]:
            command, _, output = chunk.partition("\n")
            out.append((block, command, output))
    return out


def run_command(command: str, cwd: Path) -> str:
    """The command's standard output; with a final ``> FILE`` the output goes to that file (in ``cwd``) instead."""
    argv = shlex.split(command)
    target = None
    if len(argv) > 2 and argv[-2] == ">":
        argv, target = argv[:-2], argv[-1]
    assert argv[:3] == ["python", "-m", "kschedlib"], f"only kschedlib commands are run: {command}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    completed = subprocess.run([sys.executable, *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True,
                               timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    if target is not None:
        (cwd / target).write_text(completed.stdout, encoding="utf-8")
        return ""
    return completed.stdout


def check_console_blocks(page: Path, cwd: Path) -> None:
    """Run the page's console commands in ``cwd`` (those not marked skipped); each prints what the page says
    (timings aside)."""
    commands = [entry for entry in console_commands(page) if not entry[0].skip]
    assert commands
    updates: dict[int, tuple[Block, list[str]]] = {}
    for block, command, documented in commands:
        printed = run_command(command, cwd)
        if UPDATE:
            updates.setdefault(block.first, (block, []))[1].append(f"$ {command}\n{printed}")
            continue
        assert _TIMING.sub("<timing>", printed.rstrip("\n")) == _TIMING.sub("<timing>", documented.rstrip("\n")), (
            f"$ {command}\n--- printed\n{printed}--- documented\n{documented}")
    if updates:
        rewrite(page, [(block, "".join(texts)) for block, texts in updates.values()])


def test_tutorial_console_blocks() -> None:
    check_console_blocks(TUTORIAL, TUTORIAL.parent)


@pytest.fixture
def how_to_dir(tmp_path: Path) -> Path:
    """A directory as a reader of the guides has it: the tutorial's files and the sweep examples."""
    for file in TUTORIAL.parent.iterdir():
        if file.name != TUTORIAL.name:
            shutil.copy(file, tmp_path / file.name)
    shutil.copytree(ROOT / "examples" / "sweep", tmp_path / "examples" / "sweep")
    return tmp_path


@pytest.mark.parametrize("page", [page for page in HOW_TO if page not in EXCERPTS])
def test_how_to_python_blocks(page: str, how_to_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_python_blocks(DOCS / "how-to" / page, how_to_dir, monkeypatch)


@pytest.mark.parametrize("page", sorted(EXCERPTS))
def test_excerpt_pages_quote_files_that_run(page: str) -> None:
    sources = "\n".join(path.read_text(encoding="utf-8") for path in EXCERPTS[page])
    quoted = [block for block in blocks(DOCS / "how-to" / page) if block.lang == "python"]
    assert quoted
    assert [block.first for block in quoted if block.text.rstrip("\n") not in sources] == []


@pytest.mark.parametrize("page", [page for page in HOW_TO
                                  if any(not block.skip for block, _, _ in console_commands(DOCS / "how-to" / page))])
def test_how_to_console_blocks(page: str, how_to_dir: Path) -> None:
    check_console_blocks(DOCS / "how-to" / page, how_to_dir)


def test_every_command_example_is_run() -> None:
    """Commands are shown in console blocks (run, or marked skipped with a reason), never in plain ``sh`` ones."""
    shown = [f"{page}:{block.first}" for page in (TUTORIAL, *(DOCS / "how-to" / p for p in (*HOW_TO, *LIVE_HOW_TO)))
             for block in blocks(page) if block.lang in ("sh", "bash") and "kschedlib " in block.text
             and "pip install" not in block.text]
    assert shown == []


def test_readme_python_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """"A taste" runs from the repository's root, on a file that exists, and prints what it shows."""
    run_python_blocks(ROOT / "README.md", ROOT, monkeypatch)


def test_reference_python_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_python_blocks(DOCS / "reference" / "api.md", tmp_path, monkeypatch)


def test_reference_documents_every_public_name() -> None:
    import kschedlib
    import kschedlib.framework
    import kschedlib.framework.events

    text = (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    names = [*kschedlib.__all__, *kschedlib.framework.__all__, *kschedlib.framework.events.__all__]
    missing = sorted({name for name in names if not re.search(rf"`{re.escape(name)}\b", text)})
    assert not missing, f"docs/reference/api.md does not mention: {missing}"



def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", OWN_PAGES, ids=[str(page.relative_to(ROOT)) for page in OWN_PAGES])
def test_relative_links_resolve(page: Path) -> None:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)  # code is not a link, even when it looks like one
    broken = []
    for target in _LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists() or (anchor and resolved.suffix == ".md" and anchor not in anchors(resolved)):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


def test_readme_commands_are_what_ci_runs() -> None:
    """The README's set-up and test commands, and the checks it names, are the ones ``.ci/run`` runs."""
    readme = ROOT / "README.md"
    ci = [" ".join(line.replace("--quiet", "").replace("> /dev/null", "").rstrip("\\").split())
          for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    setup = next(block for block in blocks(readme) if block.lang == "sh")
    commands = [part.strip() for line in setup.text.splitlines() for part in line.split(" && ")]
    assert [command for command in commands if command not in ci] == []
    checks = [line for line in ci if line.startswith((".venv/bin/mypy", ".venv/bin/ruff"))]
    flat = " ".join(readme.read_text(encoding="utf-8").split())
    assert len(checks) >= 3
    assert [check for check in checks if f"`{check}`" not in flat] == []


_SIGNATURE = re.compile(r"\*\*`([A-Za-z_][\w.]*)\(([^`]*)\)(?: -> [^`]*)?`\*\*")
_NAMESPACES = ("kschedlib", "kschedlib.kube", "kschedlib.framework", "kschedlib.framework.events",
               "kschedlib.model", "kschedlib.simulation", "kschedlib.testing", "kschedlib.sweeps", "kschedlib.capacity",
               "kschedlib.progress", "kschedlib.report")


def _documented_parameters(text: str) -> list[str]:
    """The parameter names of a documented signature, ``*`` kept as the keyword-only marker."""
    names, depth, current = [], 0, ""
    for char in text + ",":
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            if current.strip():
                names.append(current.split("=")[0].strip())
            current = ""
        else:
            current += char
    return names


def _code_parameters(obj: object) -> list[str]:
    names: list[str] = []
    for parameter in inspect.signature(obj).parameters.values():  # type: ignore[arg-type]
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in names:
            names.append("*")
        prefixes: dict[object, str] = {parameter.VAR_POSITIONAL: "*", parameter.VAR_KEYWORD: "**"}
        prefix = prefixes.get(parameter.kind, "")
        names.append(prefix + parameter.name)
    return names


def _documented_signatures() -> list[tuple[str, str]]:
    return _SIGNATURE.findall((DOCS / "reference" / "api.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "parameters"), _documented_signatures(), ids=[n for n, _ in _documented_signatures()])
def test_reference_signatures_match_the_code(name: str, parameters: str) -> None:
    """Each bold signature in the API reference names the parameters the code has, in order."""
    import importlib

    obj = next((getattr(module, name) for module in map(importlib.import_module, _NAMESPACES)
                if hasattr(module, name)), None)
    assert obj is not None, f"{name} is documented but not exported"
    assert _documented_parameters(parameters) == _code_parameters(obj)
