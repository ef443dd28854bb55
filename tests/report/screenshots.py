"""The screenshots of docs/how-to/html-reports.md, taken with the browser tests' machinery.

Run by hand after a change to what reports show (the tests never write into docs/)::

    .venv/bin/python -m tests.report.screenshots            # writes docs/how-to/img/report-*.png

The reports are those of the how-to's commands on the tutorial's cluster; each picture is one part of
a page at a fixed window width, reduced to 256 colours with ``pngquant`` when it is installed (Debian's
``pngquant``), so that all of them together stay small.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import kschedlib
from kschedlib import capacity
from kschedlib.report import render_html
from tests.report.browser import chromium, missing, open_page, screenshot
from tests.report.results import PACKING, ROOT, TUTORIAL

TARGET: Final = ROOT / "docs" / "how-to" / "img"
SHOTS: Final = (
    # (file, kind, CSS selector of the part shown; None: the top of the page)
    ("report-simulate.png", "simulate", None),
    ("report-utilisation.png", "simulate", "#utilisation"),
    ("report-explain.png", "explain", "#nodes"),
    ("report-compare.png", "compare", "#utilisation .side"),
)


def pages(folder: Path) -> dict[str, Path]:
    """The how-to's reports, written to ``folder``."""
    cluster = str(TUTORIAL)
    results: dict[str, Any] = {
        "simulate": kschedlib.simulate(cluster).to_dict(),
        "explain": kschedlib.explain(cluster, "default/web-1").to_dict(),
        "compare": capacity.compare(cluster, [None, PACKING], labels=["default", "packing"]).to_dict(),
    }
    written = {}
    for kind, result in results.items():
        path = folder / f"{kind}.html"
        path.write_text(render_html(json.loads(json.dumps(result))), encoding="utf-8")  # as saved and read back
        written[kind] = path
    return written


def shrink(path: Path) -> None:
    """256 colours (text and flat charts lose nothing visible), when pngquant is there."""
    if shutil.which("pngquant") is not None:
        subprocess.run(["pngquant", "--force", "--skip-if-larger", "--strip", "--output", str(path), "256",
                        str(path)], check=False)


def main(target: Path = TARGET) -> int:
    why = missing()
    if why is not None:
        print(why, file=sys.stderr)
        return 1
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, chromium(width=1000, height=760) as driver:
        written = pages(Path(folder))
        for name, kind, selector in SHOTS:
            console = open_page(driver, written[kind])
            if console:
                print(f"{kind}: {console}", file=sys.stderr)
                return 1
            screenshot(driver, target / name, selector=selector)
            shrink(target / name)
            print(f"{target / name}: {(target / name).stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET))
