"""Scheduler.explain / feasible_nodes: the explain answer against a live scheduler, changing nothing."""

from __future__ import annotations

import pytest

import kschedlib
from kschedlib import FakeClock, Scheduler
from kschedlib.errors import ModelError
from kschedlib.model.convert import node_to_dict, pod_to_dict
from tests.helpers import make_node, make_pod
from tests.whatif.test_fork import _cluster, _decisions, _state


def _objects(sched: Scheduler) -> list[dict[str, object]]:
    nodes = [node_to_dict(info.node) for info in sched.snapshot().node_infos if info.node is not None]
    return [*nodes, *(pod_to_dict(pod) for pod in sched.pods().values() if pod.node_name)]


def test_explain_equals_the_module_function_on_the_same_cluster() -> None:
    sched = Scheduler(seed=0)
    _cluster(sched, nodes=5, bound=7, pending=0)
    pod = make_pod("ask", uid="ask", requests={"cpu": "3500m"})
    live = sched.explain(pod).to_dict()
    pure = kschedlib.explain(_objects(sched), pod).to_dict()
    inputs = ("skipped", "notes", "config")  # what kschedlib.explain says about its input files
    assert {k: v for k, v in live.items() if k not in inputs} == {k: v for k, v in pure.items() if k not in inputs}
    assert "config" not in live
    assert pure["config"] == {"source": "default", "document": None}
    assert live["feasible"] == sched.feasible_nodes(pod)


def test_explain_changes_nothing_not_even_the_random_choices() -> None:
    sched = Scheduler(seed=7, clock=FakeClock())
    _cluster(sched, nodes=6, bound=0, pending=6)
    twin = sched.fork()
    before = _state(sched)
    for i in range(5):
        sched.explain(make_pod(f"q{i}", uid=f"q{i}", requests={"cpu": "100m"}))
        sched.explain(make_pod("p0", uid="p0", requests={"cpu": "1500m"}))  # a queued pod itself
    assert _state(sched) == before
    assert _decisions(sched) == _decisions(twin)


def test_a_pod_that_fits_nowhere_gets_the_fit_error_and_the_preemption_answer() -> None:
    sched = Scheduler()
    sched.add_node(make_node("n0", allocatable={"cpu": "1", "memory": "1Gi", "pods": "10"}))
    answer = sched.explain(make_pod("big", requests={"cpu": "2"}))
    assert answer.selected is None
    assert answer.to_dict()["message"] == "0/1 nodes are available: 1 Insufficient cpu."
    assert sched.feasible_nodes(make_pod("big", requests={"cpu": "2"})) == []


@pytest.mark.parametrize(("pod", "field", "expected"), [
    pytest.param(make_pod("other", scheduler_name="elsewhere"), "error",
                 'profile not found for scheduler name "elsewhere"', id="no-profile"),
    pytest.param(make_pod("held", scheduling_gates=("wait",)), "preenqueue",
                 {"plugin": "SchedulingGates", "code": "UnschedulableAndUnresolvable",
                  "reasons": ["waiting for scheduling gates: [wait]"]}, id="gated"),
])
def test_pods_no_cycle_runs_for(pod: kschedlib.Pod, field: str, expected: object) -> None:
    sched = Scheduler()
    sched.add_node(make_node("n0"))
    assert sched.explain(pod).to_dict()[field] == expected
    assert sched.feasible_nodes(pod) == []


def test_sampling_as_the_config_says_from_a_start_index() -> None:
    sched = Scheduler({"percentageOfNodesToScore": 50})
    _cluster(sched, nodes=120, bound=0, pending=0)
    pod = make_pod("ask")
    sampled = sched.explain(pod, start_index=10, percentage_of_nodes_to_score=None).to_dict()
    every = sched.explain(pod).to_dict()
    assert sampled["start_index"] == 10
    assert sampled["evaluated_nodes"] < every["evaluated_nodes"] == 120


def test_explain_refuses_what_is_not_a_pod() -> None:
    with pytest.raises(ModelError, match=r"Scheduler\.explain"):
        Scheduler().explain("default/p")  # type: ignore[arg-type]
