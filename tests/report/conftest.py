"""Shared by the report tests: one result of each kind, their pages on disk, and one browser per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kschedlib.report import render_html
from tests.report import browser
from tests.report.results import results


@pytest.fixture(scope="session")
def kind_results() -> dict[str, Any]:
    return results()


@pytest.fixture(scope="session")
def pages(kind_results: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Kind -> its page, written to a file."""
    folder = tmp_path_factory.mktemp("pages")
    written = {}
    for kind, data in kind_results.items():
        path = folder / f"{kind}.html"
        path.write_text(render_html(data), encoding="utf-8")
        written[kind] = path
    return written


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One headless Chromium for the session (the tests skip, saying why, where there is none; in CI,
    which installs it, they fail instead)."""
    why = browser.missing()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    with browser.chromium() as driver:
        yield driver
