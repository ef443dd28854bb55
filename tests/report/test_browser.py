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
                                     ".map(r => parseFloat(r.cells[1].textContent))")
    assert ratios == sorted(ratios)
    assert len(set(ratios)) > 1
    header.click()
    again = chromium.execute_script("return [...document.getElementById('utilisation-nodes').tBodies[0].rows]"
                                    ".map(r => parseFloat(r.cells[1].textContent))")
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


def _many_nodes(data: dict[str, Any], count: int) -> dict[str, Any]:
    """``data`` (a simulate result) with a utilisation of ``count`` nodes, node ``i`` ``i % 100`` % busy."""
    nodes = {f"node-{i:04d}": {"cpu": {"requested": 40 * (i % 100), "allocatable": 4000, "ratio": (i % 100) / 100},
                               "pods": {"requested": 1, "allocatable": 110, "ratio": 0.0091}} for i in range(count)}
    total = {"cpu": {"requested": 1, "allocatable": 2, "ratio": 0.5}, "pods": {"requested": 1, "allocatable": 2,
                                                                               "ratio": 0.5}}
    state = {"nodes": nodes, "zones": {"zone-1": total}, "total": total}
    return {**data, "utilisation": {"before": state, "after": state}}


def test_a_large_heat_map_names_the_node_under_the_pointer(chromium: Any, kind_results: dict[str, Any],
                                                          tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    from kschedlib.report import render_html

    page = tmp_path / "many.html"
    page.write_text(render_html(_many_nodes(kind_results["simulate"], 1234)), encoding="utf-8")
    assert open_page(chromium, page) == []
    heat = chromium.find_element("css selector", "#utilisation div.heatmap svg")
    assert chromium.execute_script("return arguments[0].querySelectorAll('rect').length", heat) == 0  # paths
    left, top = chromium.execute_script(
        "const r = arguments[0].getBoundingClientRect(); const v = arguments[0].viewBox.baseVal;"
        "return [r.width / v.width, r.height / v.height];", heat)
    # cpu block, second row of 100 cells, fourth column: node 103 (3% busy); 18 px of heading, steps of 7
    x, y = (3 * 7 + 3) * left, (18 + 7 + 3) * top
    width, height = heat.size["width"], heat.size["height"]
    ActionChains(chromium).move_to_element_with_offset(heat, int(x - width / 2), int(y - height / 2)).perform()
    tip = chromium.find_element("css selector", "#utilisation .tip")
    assert tip.text.startswith("node-0103 cpu: 3% (120m of 4 CPU)")
    ActionChains(chromium).click().perform()
    assert chromium.execute_script("return document.querySelector('tr.hit').cells[0].textContent") == "node-0103"
