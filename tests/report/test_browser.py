"""Each kind of report in a real headless Chromium: what it shows, that its script works, that it needs
no network and no script, and a screenshot of each (``KSCHEDLIB_SCREENSHOTS=DIR`` keeps them)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kschedlib.report import KINDS
from tests.report.browser import open_page, screenshot
from tests.report.results import node_names, pending_pods

PNG = b"\x89PNG\r\n\x1a\n"


def _text(driver: Any) -> str:
    """Everything the page holds as text, folded parts included."""
    text: str = driver.execute_script("return document.body.textContent")
    return text


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    kept = os.environ.get("KSCHEDLIB_SCREENSHOTS")
    if kept:
        Path(kept).mkdir(parents=True, exist_ok=True)
        return Path(kept)
    return tmp_path


@pytest.mark.parametrize("kind", KINDS)
def test_each_report_opens_and_shows_its_pods_and_nodes(kind: str, chromium: Any, pages: dict[str, Path],
                                                       kind_results: dict[str, Any], shots: Path) -> None:
    console = open_page(chromium, pages[kind])
    assert [m for m in console if m["level"] in ("SEVERE", "WARNING")] == []
    assert chromium.title.startswith(f"kschedlib {kind}")
    assert chromium.find_element("css selector", "h1").text == chromium.title
    assert chromium.execute_script("return document.documentElement.dataset.script") == "ready"
    text = _text(chromium)
    for name in pending_pods(kind, kind_results[kind]) | node_names(kind, kind_results[kind]):
        assert name in text, name
    for table in chromium.find_elements("css selector", "table.sortable"):
        rows = chromium.execute_script("return arguments[0].tBodies[0].rows.length", table)
        assert int(table.get_attribute("data-rows")) == rows
    assert chromium.execute_script("return performance.getEntriesByType('resource').length") == 0
    png = screenshot(chromium, shots / f"report-{kind}.png")
    assert png.startswith(PNG)
    assert len(png) > 5_000


def test_the_summary_figures_are_the_results_counts(chromium: Any, pages: dict[str, Path],
                                                    kind_results: dict[str, Any]) -> None:
    open_page(chromium, pages["simulate"])
    shown = chromium.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.figures div')].map("
        "d => [d.querySelector('dt').textContent, d.querySelector('dd').textContent]))")
    summary = kind_results["simulate"]["summary"]
    assert shown == {"pods": str(summary["pods"]), "scheduled": str(summary["scheduled"]),
                     "unschedulable": str(summary["unschedulable"]), "not tried": str(summary["gated"]),
                     "evicted": "0"}


def _column(driver: Any, table_id: str, index: int) -> list[str]:
    values: list[str] = driver.execute_script(
        f"return [...document.getElementById('{table_id}').tBodies[0].rows]"
        f".filter(r => !r.hidden).map(r => r.cells[{index}].textContent)")
    return values


def test_tables_sort_by_a_clicked_column(chromium: Any, pages: dict[str, Path]) -> None:
    open_page(chromium, pages["simulate"])
    header = chromium.find_element("css selector", "#utilisation-nodes th:nth-child(2) button")
    header.click()
    ratios = chromium.execute_script("return [...document.getElementById('utilisation-nodes').tBodies[0].rows]"
                                     ".map(r => parseFloat(r.cells[1].dataset.v))")
    assert ratios == sorted(ratios)
    assert len(set(ratios)) > 1
    header.click()
    again = chromium.execute_script("return [...document.getElementById('utilisation-nodes').tBodies[0].rows]"
                                    ".map(r => parseFloat(r.cells[1].dataset.v))")
    assert again == sorted(ratios, reverse=True)
    assert header.find_element("xpath", "..").get_attribute("aria-sort") == "descending"


def test_long_tables_filter_by_typed_words(chromium: Any, pages: dict[str, Path]) -> None:
    open_page(chromium, pages["sweep"])
    box = chromium.find_element("css selector", "#pods-per-node-table")
    assert box.get_attribute("data-filter") is None  # short: no filter box
    open_page(chromium, pages["simulate"])
    search = chromium.find_element("css selector", ".filter input")
    search.send_keys("after memory")
    assert _column(chromium, "fragmentation-table", 1) == ["memory"]
    assert chromium.find_element("css selector", ".filter span").text == "1 of 8 rows"


def test_every_report_reads_without_its_script(chromium: Any, pages: dict[str, Path],
                                               kind_results: dict[str, Any]) -> None:
    chromium.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        for kind in KINDS:
            open_page(chromium, pages[kind])
            assert chromium.find_element("css selector", "html").get_attribute("data-script") is None
            assert chromium.find_elements("css selector", ".filter, th button") == []
            text = chromium.find_element("css selector", "main").get_attribute("textContent")
            for name in pending_pods(kind, kind_results[kind]):
                assert name in text, (kind, name)
    finally:
        chromium.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})


def test_the_console_check_sees_script_errors(chromium: Any, tmp_path: Path) -> None:
    """The check the reports pass is not blind: a failing script shows as a SEVERE message."""
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><title>x</title><script>no_such_function()</script>", encoding="utf-8")
    console = open_page(chromium, broken)
    assert [m["level"] for m in console] == ["SEVERE"]
    assert "no_such_function" in console[0]["message"]
