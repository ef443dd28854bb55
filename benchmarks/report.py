"""How big HTML reports of a 5,000-node cluster get, and how fast headless Chromium opens them.

Run by hand, never by the test suite (it needs ``chromium`` and ``chromedriver`` from the
distribution, as the report tests do)::

    .venv/bin/python benchmarks/report.py               # simulate, explain and drain on 5,000 nodes
    .venv/bin/python benchmarks/report.py --scale 0.2   # 1,000 nodes
    .venv/bin/python benchmarks/report.py --json

The cluster is the ``basic`` workload (5,000 nodes in 10 zones, 10,000 pending pods) plus pods that
fit nowhere: 40 asking for 64 CPU, 20 selecting a label no node has, 10 gated.  Per kind: the JSON
result's size, the seconds ``render_html`` takes, the page's size, and in Chromium (one browser, a
fresh page load each time, median of ``--repeat``) the wall-clock seconds of ``driver.get`` (until the
load event), the navigation timing's DOMContentLoaded and load, and the milliseconds a click takes
to sort the largest table (the sort and the layout after it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import workloads

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import kschedlib  # noqa: E402
from kschedlib import capacity  # noqa: E402
from kschedlib.report import render_html  # noqa: E402
from tests.report.browser import chromium, missing, open_page  # noqa: E402

_SORT = """
const tables = [...document.querySelectorAll('table.sortable')];
const table = tables.reduce((a, b) => (a.tBodies[0].rows.length >= b.tBodies[0].rows.length ? a : b));
const button = table.tHead.rows[0].cells[1].querySelector('button');
const start = performance.now();
button.click();
document.body.offsetHeight;  // the layout after the sort
return [performance.now() - start, table.tBodies[0].rows.length];
"""


def cluster(scale: float) -> list[dict[str, Any]]:
    """The ``basic`` workload and pods that fit nowhere (too big, an unknown label, gated)."""
    objects = workloads.build("basic", scale)
    objects += [workloads.pod(f"huge-{i:03d}", "huge", "64", "1Gi") for i in range(40)]
    objects += [workloads.pod(f"picky-{i:03d}", "picky", "100m", "128Mi", nodeSelector={"disk": "nvme"})
                for i in range(20)]
    objects += [workloads.pod(f"held-{i:03d}", "held", "100m", "128Mi", schedulingGates=[{"name": "example.com/q"}])
                for i in range(10)]
    return objects


def results(scale: float) -> dict[str, tuple[Any, float]]:
    """Kind -> (JSON result, seconds the command took)."""
    objects = kschedlib.load_cluster(cluster(scale))
    out = {}
    started = time.perf_counter()
    out["simulate"] = (kschedlib.simulate(objects).to_dict(), time.perf_counter() - started)
    started = time.perf_counter()
    out["explain"] = (kschedlib.explain(objects, "default/huge-000").to_dict(), time.perf_counter() - started)
    drained = [node.name for node in objects.nodes[:10]]
    started = time.perf_counter()
    out["drain"] = (capacity.drain(objects, drained).to_dict(), time.perf_counter() - started)
    return out


def _timings(driver: Any) -> dict[str, float]:
    nav: dict[str, float] = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd};")
    return nav


def measure(scale: float, repeat: int) -> list[dict[str, Any]]:
    rows = []
    folder = Path(tempfile.mkdtemp(prefix="kschedlib-report-bench-"))
    answered = results(scale)
    with chromium() as driver:
        for kind, (data, seconds) in answered.items():
            text = json.dumps(data, indent=2)
            started = time.perf_counter()
            page = render_html(data)
            rendered = time.perf_counter() - started
            path = folder / f"{kind}.html"
            path.write_text(page, encoding="utf-8")
            opened, dcl, load, sort = [], [], [], []
            for _ in range(repeat):
                started = time.perf_counter()
                console = open_page(driver, path)
                opened.append(time.perf_counter() - started)
                if any(m["level"] == "SEVERE" for m in console):
                    raise SystemExit(f"{kind}: console errors {console}")
                nav = _timings(driver)
                dcl.append(nav["dcl"] / 1000)
                load.append(nav["load"] / 1000)
                took, table_rows = driver.execute_script(_SORT)
                sort.append(took)
            rows.append({"kind": kind, "command s": round(seconds, 2), "json MB": round(len(text) / 1e6, 2),
                         "render s": round(rendered, 2), "html MB": round(len(page.encode()) / 1e6, 2),
                         "open s": round(statistics.median(opened), 2),
                         "DOMContentLoaded s": round(statistics.median(dcl), 2),
                         "load s": round(statistics.median(load), 2),
                         "sort ms": round(statistics.median(sort)), "sorted rows": table_rows})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scale", type=float, default=1.0, help="of the basic workload (1.0: 5,000 nodes)")
    parser.add_argument("--repeat", type=int, default=3, help="page loads per kind (the median is shown)")
    parser.add_argument("--json", action="store_true", help="one JSON object per kind")
    args = parser.parse_args(argv)
    why = missing()
    if why is not None:
        raise SystemExit(why)
    rows = measure(args.scale, args.repeat)
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    header = list(rows[0])
    print("  ".join(f"{h:>10}" for h in header))
    for row in rows:
        print("  ".join(f"{row[h]!s:>10}" for h in header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
