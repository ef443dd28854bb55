"""The gang-scheduling example: competing gangs never half-bind or deadlock, a failed gang frees everything.

``examples/gang_scheduling.py`` is imported as a module (its helpers drive the in-tree Coscheduling
plugin) and run as a script (its output must equal ``gang_scheduling.out``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib import FakeClock, Scheduler
from kschedlib.model import Pod, PodGroup

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "gang_scheduling.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gang_scheduling", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gang_scheduling", module)
    spec.loader.exec_module(module)
    return module


gs = _load()


def scheduler(clock: FakeClock, node_cpus: Sequence[str]) -> Scheduler:
    sched: Scheduler = gs.new_scheduler(clock)
    sched.add_objects([gs.make_node(f"n{i}", cpu) for i, cpu in enumerate(node_cpus)])
    return sched


def bound(sched: Scheduler, pods: Sequence[Pod]) -> int:
    waiting = set(sched.waiting_pods())
    placed = sched.bound_pods()
    return sum(1 for pod in pods if pod.key in placed and pod.key not in waiting)


def add(sched: Scheduler, group: PodGroup, pods: Sequence[Pod]) -> None:
    sched.add_objects([group])
    for pod in pods:
        sched.add_pod(pod)


@pytest.mark.parametrize("older", ["alpha", "beta"])
def test_the_older_of_two_competing_gangs_wins_whole(older: str) -> None:
    clock = FakeClock()
    sched = scheduler(clock, ("4", "4"))
    alpha, alpha_pods = gs.gang("alpha", 3, "2", created=1 if older == "alpha" else 2)
    beta, beta_pods = gs.gang("beta", 3, "2", created=2 if older == "alpha" else 1)
    sched.add_objects([alpha, beta])
    for a, b in zip(alpha_pods, beta_pods, strict=True):
        sched.add_pod(a)
        sched.add_pod(b)
    gs.drive(sched, clock, until=60)
    winner, loser = (alpha_pods, beta_pods) if older == "alpha" else (beta_pods, alpha_pods)
    assert (bound(sched, winner), bound(sched, loser)) == (3, 0)


@settings(max_examples=25, deadline=None)
@given(sizes=st.tuples(st.integers(1, 4), st.integers(1, 4)),
       cpus=st.tuples(st.sampled_from(["1", "2", "3"]), st.sampled_from(["1", "2", "3"])),
       node_cpus=st.lists(st.sampled_from(["2", "4", "6"]), min_size=1, max_size=3),
       order=st.permutations(range(8)))
def test_competing_gangs_never_half_bind(sizes: tuple[int, int], cpus: tuple[str, str], node_cpus: list[str],
                                         order: list[int]) -> None:
    """Whatever the arrival order: no gang is half bound (members waiting in Permit are not bound)."""
    gangs = [gs.gang("alpha", sizes[0], cpus[0], created=1), gs.gang("beta", sizes[1], cpus[1], created=2)]
    pods = [*gangs[0][1], *gangs[1][1]]
    clock = FakeClock()
    sched = scheduler(clock, node_cpus)
    sched.add_objects([group for group, _ in gangs])
    for index in order:
        if index < len(pods):
            sched.add_pod(pods[index])
    gs.drive(sched, clock, until=200)
    for _, members in gangs:
        assert bound(sched, members) in (0, len(members))


def test_a_gang_that_cannot_complete_gives_everything_back() -> None:
    clock = FakeClock()
    sched = scheduler(clock, ("4", "1"))
    add(sched, *gs.gang("big", 2, "3"))
    gs.drive(sched, clock, until=30)
    assert sched.bound_pods() == {}
    assert all(info.requested.milli_cpu == 0 for info in sched.snapshot())


def test_a_group_short_of_members_waits_for_them() -> None:
    clock = FakeClock()
    sched = scheduler(clock, ("8",))
    group, pods = gs.gang("trio", 3, "1")
    add(sched, group, pods[:2])
    results = gs.drive(sched, clock, until=30)
    assert any("cannot find enough sibling pods, current pods number: 2, minMember of group: 3" in (r.message or "")
               for r in results)
    sched.add_pod(pods[2])  # the missing member arrives: the new pod requeues its siblings
    gs.drive(sched, clock, until=60)
    assert bound(sched, pods) == 3


def test_example_output_equals_the_saved_output() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
    env["PYTHONHASHSEED"] = "0"
    completed = subprocess.run([sys.executable, str(SCRIPT)], cwd=SCRIPT.parent, env=env, capture_output=True,
                               text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert completed.stdout == SCRIPT.with_suffix(".out").read_text(encoding="utf-8")
