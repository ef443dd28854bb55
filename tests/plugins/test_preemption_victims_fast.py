"""Preemption's dry run without listeners equals the one-pod-at-a-time path.

When no PreFilter extension hears AddPod/RemovePod, ``select_victims_on_node`` takes the lower-priority
pods off in one NodeInfo and undoes a failed reprieve by going back to the copy from before it; these
properties compare both with the plain path: the NodeInfo itself, and whole scheduling runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib.errors import CacheError
from kschedlib.framework import NodeInfo, PodInfo
from kschedlib.model import LabelSelector, Pod
from kschedlib.model.objects import PodDisruptionBudget, TopologySpreadConstraint
from kschedlib.plugins._helpers import preemption_victims
from kschedlib.testing import FakeClock
from tests.helpers import make_node, make_pod

_APPS = ("a", "b", "c")


def _low(name: str, node: str, cpu: int, priority: int, app: str, start: float | None) -> Pod:
    requests = {"cpu": f"{cpu}m", **({"example.com/gpu": str(cpu % 3)} if cpu % 7 == 0 else {})}
    return make_pod(name, node_name=node, requests=requests, priority=priority, labels={"app": app},
                    start_time=start, host_ports=(8000 + cpu % 3,) if cpu % 5 == 0 else ())


@st.composite
def _node_pods(draw: st.DrawFn) -> list[Pod]:
    count = draw(st.integers(min_value=1, max_value=6))
    return [_low(f"p{i}", "n1", draw(st.integers(100, 1500)), draw(st.integers(-2, 3)), draw(st.sampled_from(_APPS)),
                 draw(st.none() | st.floats(0, 10))) for i in range(count)]


def _fields(info: NodeInfo) -> dict[str, object]:
    return attrs.asdict(info, recurse=False, filter=lambda field, _: field.name != "generation")


@given(_node_pods(), st.data())
def test_without_pods_equals_without_pod_in_turn(pods: list[Pod], data: st.DataObject) -> None:
    info = NodeInfo.of(make_node("n1"), tuple(PodInfo.of(p) for p in pods))
    gone = data.draw(st.permutations(pods).flatmap(lambda ps: st.just(ps[:data.draw(st.integers(0, len(ps)))])))
    one_by_one = info
    for pod in gone:
        one_by_one = one_by_one.without_pod(pod)
    together = info.without_pods(gone)
    assert _fields(together) == _fields(one_by_one)
    assert [i.pod.uid for i in together.pods] == [i.pod.uid for i in one_by_one.pods]


def test_without_pods_refuses_a_pod_not_there() -> None:
    info = NodeInfo.of(make_node("n1"), (PodInfo.of(make_pod("here", node_name="n1")),))
    with pytest.raises(CacheError, match="no corresponding pod gone"):
        info.without_pods([make_pod("here", node_name="n1"), make_pod("gone")])


@contextmanager
def _plain_path() -> Iterator[None]:
    """Every dry run as if some extension listened: one pod at a time, a failed reprieve removed again."""
    quiet = preemption_victims._quiet
    preemption_victims._quiet = lambda handle, state: False
    try:
        yield
    finally:
        preemption_victims._quiet = quiet


def _pdb(app: str, allowed: int) -> PodDisruptionBudget:
    return PodDisruptionBudget(f"pdb-{app}", "default", LabelSelector({"app": app}), allowed)


def _run(nodes: int, lows: Sequence[Pod], highs: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget],
         quiet_calls: list[bool]) -> list[tuple[str, str | None, str | None, tuple[str, ...]]]:
    scheduler = kschedlib.Scheduler(seed=3, clock=FakeClock())
    scheduler.add_objects([make_node(f"n{i}", allocatable={"cpu": "2", "memory": "8Gi", "pods": "110"})
                           for i in range(nodes)])
    scheduler.add_objects([*lows, *pdbs, *highs])
    quiet = preemption_victims._quiet

    def spying(handle: object, state: object) -> bool:
        quiet_calls.append(answer := quiet(handle, state))  # type: ignore[arg-type]
        return answer

    preemption_victims._quiet = spying
    out = []
    try:
        while (result := scheduler.schedule_one()) is not None:
            out.append((result.pod.key, result.node_name, result.nominated_node_name, result.victims))
            for victim in result.victims:
                scheduler.remove_pod(victim)
    finally:
        preemption_victims._quiet = quiet
    return out


@st.composite
def _clusters(draw: st.DrawFn) -> tuple[int, list[Pod], list[Pod], list[PodDisruptionBudget]]:
    nodes = draw(st.integers(1, 4))
    lows = [_low(f"low{i}", f"n{draw(st.integers(0, nodes - 1))}", draw(st.integers(100, 900)),
                 draw(st.integers(0, 3)), draw(st.sampled_from(_APPS)), draw(st.none() | st.floats(0, 10)))
            for i in range(draw(st.integers(1, 10)))]
    highs = [make_pod(f"high{i}", requests={"cpu": f"{draw(st.integers(500, 1900))}m"},
                      priority=draw(st.integers(2, 9))) for i in range(draw(st.integers(1, 4)))]
    pdbs = [_pdb(app, draw(st.integers(0, 2))) for app in draw(st.sets(st.sampled_from(_APPS)))]
    return nodes, lows, highs, pdbs


@settings(max_examples=40)
@given(_clusters())
def test_quiet_dry_runs_decide_as_the_plain_path(cluster: tuple[int, list[Pod], list[Pod],
                                                                 list[PodDisruptionBudget]]) -> None:
    nodes, lows, highs, pdbs = cluster
    asked: list[bool] = []
    fast = _run(nodes, lows, highs, pdbs, asked)
    with _plain_path():
        plain = _run(nodes, lows, highs, pdbs, [])
    assert fast == plain
    assert all(asked)  # these pods have no spreading or pod affinity: no extension listens


def test_a_listening_extension_takes_the_plain_path() -> None:
    spread = TopologySpreadConstraint(
        5, "kubernetes.io/hostname", "DoNotSchedule", LabelSelector({"app": "a"}))
    high = attrs.evolve(make_pod("high", requests={"cpu": "1500m"}, priority=5, labels={"app": "a"}),
                        topology_spread_constraints=(spread,))
    asked: list[bool] = []
    lows = [_low("low0", "n0", 900, 0, "a", None), _low("low1", "n0", 900, 0, "b", None)]
    decided = _run(1, lows, [high], [], asked)
    assert asked
    assert not any(asked)
    assert decided[0][2] == "n0"
    assert decided[0][3]
