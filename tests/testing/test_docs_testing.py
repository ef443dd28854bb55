"""The testing docs stay true: the reference names every public strategy and check with its parameters,
and the how-to's code is verbatim from the example and its tests, its report the saved one."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import kschedlib.testing
from kschedlib.testing import check_no_mutation, strategies

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = (ROOT / "docs" / "reference" / "testing.md").read_text(encoding="utf-8")
HOW_TO = (ROOT / "docs" / "how-to" / "property-test-your-plugin.md").read_text(encoding="utf-8")
SOURCES = [ROOT / "examples" / "property_testing" / "app_density.py",
           ROOT / "tests" / "examples" / "test_property_testing_example.py"]
SAVED_REPORT = ROOT / "examples" / "property_testing" / "shared_counts.out"
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)

PUBLIC = sorted({*((name, strategies) for name in strategies.__all__),
                 *((name, kschedlib.testing) for name in kschedlib.testing.__all__)}, key=lambda p: p[0])


@pytest.mark.parametrize(("name", "module"), PUBLIC, ids=[name for name, _ in PUBLIC])
def test_the_reference_names_every_public_name(name: str, module: Any) -> None:
    assert f"`{name}" in REFERENCE or f"**`{name}" in REFERENCE, name


FUNCTIONS = [(name, getattr(module, name)) for name, module in PUBLIC
             if inspect.isfunction(getattr(module, name))]


@pytest.mark.parametrize(("name", "function"), FUNCTIONS, ids=[name for name, _ in FUNCTIONS])
def test_the_reference_gives_every_parameter(name: str, function: Callable[..., Any]) -> None:
    line = next((line for line in REFERENCE.splitlines() if f"**`{name}(" in line), None)
    assert line is not None, f"no signature for {name}"
    if f"`{name}(...)`" in line:  # the checks share check_no_mutation's signature
        assert inspect.signature(function) == inspect.signature(check_no_mutation)
        return
    for parameter in inspect.signature(function).parameters:
        assert re.search(rf"\b{parameter}\b", line), f"{name}: {parameter} is not in the reference"


def test_every_python_block_of_the_how_to_is_taken_from_the_example() -> None:
    sources = "\n".join(path.read_text(encoding="utf-8") for path in SOURCES)
    blocks = [text for lang, text in _FENCE.findall(HOW_TO) if lang == "python"]
    assert len(blocks) >= 8
    for block in blocks:
        assert block.rstrip("\n") in sources, block


def test_the_how_to_shows_the_saved_report() -> None:
    [report] = [text for lang, text in _FENCE.findall(HOW_TO) if lang == "text"]
    assert report == SAVED_REPORT.read_text(encoding="utf-8")
