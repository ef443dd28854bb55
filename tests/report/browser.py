"""Headless Chromium from the distribution's packages, driven through its own chromedriver (selenium).

One browser serves a whole test session; each page is opened from a file (``file://``), so nothing
but the browser process and its driver runs, on loopback only.  ``CHROMIUM`` and ``CHROMEDRIVER``
name other binaries.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

CHROMIUM: Final = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER: Final = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS: Final = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", "--force-device-scale-factor=1")


def missing() -> str | None:
    """Why no browser test can run here (one line), or ``None``."""
    for binary in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(binary) is None:
            return f"{binary} not found: apt-get install chromium chromium-driver (CI does)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium not installed: pip install -e '.[dev]'"
    return None


@contextmanager
def chromium(width: int = 1100, height: int = 900) -> Iterator[Any]:
    """A headless Chromium with a fresh profile, quit (and its profile removed) on the way out."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="kschedlib-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver: Any, path: Path) -> list[dict[str, Any]]:
    """Load ``path`` and return the console messages it logged (errors have level ``SEVERE``)."""
    driver.get_log("browser")  # drop what an earlier page left
    driver.get(path.resolve().as_uri())
    messages: list[dict[str, Any]] = driver.get_log("browser")
    return messages


def screenshot(driver: Any, path: Path, *, selector: str | None = None) -> bytes:
    """A PNG of the viewport, or of the whole first element ``selector`` matches (also where it reaches
    beyond the viewport); written to ``path``."""
    import base64

    if selector is None:
        png: bytes = driver.get_screenshot_as_png()
    else:
        box = driver.execute_script(
            "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
            "return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height};", selector)
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True, "clip": {**box, "scale": 1}})
        png = base64.b64decode(shot["data"])
    path.write_bytes(png)
    return png
