"""A what-if grid on two worker processes: which node pool, scheduler config and kube-scheduler
version fit which workload?

The grid (sweep/grid.yaml) crosses 3 clusters x 2 workloads x 2 configs x 2 versions: 24
simulations.  Each cluster is sent to each worker process once, not with each of its 8 scenarios;
the results come back in grid order.  The same grid from the command line:

    python -m kschedlib sweep sweep/grid.yaml --executor process --workers 2 --format csv
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import kschedlib
from kschedlib.sweeps import Ask, load_grid

GRID = Path(__file__).parent / "sweep" / "grid.yaml"


def main() -> None:
    grid = load_grid(GRID)
    print(f"{len(grid)} scenarios asking {grid.question!r}")
    print(f"{'scenario':40} {'scheduled':>9} {'nodes used':>10}  first unschedulable reason")
    with ProcessPoolExecutor(max_workers=2) as pool:
        for result in kschedlib.sweep(grid.scenarios, Ask(grid.question), pool):
            answer = result.unwrap()
            summary = answer["summary"]
            reason = next(iter(answer["unschedulable"]), "-")
            print(f"{result.name:40} {summary['scheduled']:>4}/{summary['pods']:<4} {len(answer['pods_per_node']):>10}"
                  f"  {reason}")


if __name__ == "__main__":
    main()
