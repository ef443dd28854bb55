"""Soak the Scheduler as a long-running host: the chaos state machine, for many steps.

Runs ``HostMachine`` from ``tests/scenarios/test_long_running_host.py`` (node and pod events,
removals, cordons, uid changes, a FakeClock, Permit waits and timeouts, failing and raising Bind,
chaos Filter/Score plugins) with its invariants checked after every step, until ``--steps`` steps
have run.  Run by hand, from the checkout's root::

    .venv/bin/python benchmarks/soak.py --steps 200000 --seed 7
    .venv/bin/python benchmarks/soak.py --steps 20000 --no-shrink    # report the first failure as found

Prints the steps run, the examples (fresh schedulers) they were spread over, the time taken and
the first failure (Hypothesis's minimal failing program unless ``--no-shrink``); exits 1 on a
failure.  The same ``--seed`` runs the same steps.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

# Soak the checkout this script lives in (its kschedlib and its tests), whether or not it is installed.
_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis.stateful import get_state_machine_test  # noqa: E402

from tests.scenarios import test_long_running_host as host  # noqa: E402


def soak(steps: int, seed: int, *, step_count: int, batch: int, shrink: bool) -> int:
    """Run batches of examples until ``steps`` steps ran; returns the exit status."""
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)
    config = settings(max_examples=batch, stateful_step_count=step_count, deadline=None, database=None,
                      derandomize=False, phases=phases, suppress_health_check=list(HealthCheck),
                      print_blob=True)
    started = time.perf_counter()
    examples = 0
    round_number = 0
    while host.HostMachine.steps < steps:
        test = get_state_machine_test(host.HostMachine, settings=config)
        hypothesis_seed(seed * 1_000_003 + round_number)(test)
        round_number += 1
        try:
            test()
        except BaseException:  # report whatever the machine found, then stop
            traceback.print_exc()
            print(f"FAILED after {host.HostMachine.steps} steps (seed {seed}, round {round_number - 1})")
            return 1
        examples += batch
        elapsed = time.perf_counter() - started
        print(f"{host.HostMachine.steps} steps, {examples} examples, {elapsed:.0f} s", flush=True)
    elapsed = time.perf_counter() - started
    print(f"steps run: {host.HostMachine.steps} in {examples} examples, {elapsed:.1f} s "
          f"({host.HostMachine.steps / elapsed:.0f} steps/s), seed {seed}, "
          f"engine fixes merged: {host.ENGINE_FIXES_MERGED}; no failure")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100_000, help="steps to run (default 100000)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--step-count", type=int, default=200, help="steps per example (default 200)")
    parser.add_argument("--batch", type=int, default=50, help="examples per Hypothesis run (default 50)")
    parser.add_argument("--no-shrink", action="store_true", help="report a failure without shrinking it")
    args = parser.parse_args(argv)
    return soak(args.steps, args.seed, step_count=args.step_count, batch=args.batch, shrink=not args.no_shrink)


if __name__ == "__main__":
    sys.exit(main())
