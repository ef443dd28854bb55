"""Plugins that return the wrong thing, or interrupt: the pod fails cleanly or is put back, never lost or held.

Each case goes through the public Scheduler: a wrong type at any extension point is an
Error naming the plugin, the point and the value; the pod goes through the normal failure
path (unreserved, forgotten, requeued with backoff, listeners told) and later cycles work.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import pytest

import kschedlib
from kschedlib import Code
from kschedlib.framework import (
    BindPlugin,
    CycleState,
    FilterPlugin,
    NodeInfo,
    PermitPlugin,
    Plugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
    Status,
)
from kschedlib.framework.memo import BatchScore, NodeLocalFilter, NodeLocalScore
from kschedlib.model import Pod
from tests.helpers import Recorder, make_node, make_pod

BAD = "bad"


class Chaos(Plugin):
    """Returns ``value`` for the pod named ``bad``; behaves for the others."""

    value: ClassVar[Any] = None
    interrupt: ClassVar[bool] = False
    behave: ClassVar[bool] = False

    def wrong(self, pod: Pod, good: Any) -> Any:
        if pod.name != BAD or Chaos.behave:
            return good
        if Chaos.interrupt:
            raise KeyboardInterrupt
        if isinstance(Chaos.value, Exception):
            raise Chaos.value
        return Chaos.value


class PreEnqueueChaos(Chaos, PreEnqueuePlugin):
    name = "PreEnqueueChaos"

    def pre_enqueue(self, pod: Pod) -> Status:
        return self.wrong(pod, Status.success())  # type: ignore[no-any-return]


class PreFilterChaos(Chaos, PreFilterPlugin):
    name = "PreFilterChaos"

    def pre_filter(self, state: CycleState, pod: Pod) -> Status:
        return self.wrong(pod, Status.success())  # type: ignore[no-any-return]


class FilterChaos(Chaos, FilterPlugin):
    name = "FilterChaos"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self.wrong(pod, Status.success())  # type: ignore[no-any-return]


class LocalFilterChaos(FilterChaos, NodeLocalFilter):
    name = "LocalFilterChaos"

    def filter_key(self, state: CycleState, pod: Pod) -> Any:
        return pod.name if pod.name != "unhashable" else [pod.name]


class PostFilterChaos(Chaos, PostFilterPlugin):
    name = "PostFilterChaos"

    def post_filter(self, state: CycleState, pod: Pod, node_statuses: Mapping[str, Status]) -> Any:
        return self.wrong(pod, None)


class PreScoreChaos(Chaos, PreScorePlugin):
    name = "PreScoreChaos"

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return self.wrong(pod, Status.success())  # type: ignore[no-any-return]


class ScoreChaos(Chaos, ScorePlugin):
    name = "ScoreChaos"

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return self.wrong(pod, 50)  # type: ignore[no-any-return]


class LocalScoreChaos(ScoreChaos, NodeLocalScore):
    name = "LocalScoreChaos"

    def score_key(self, state: CycleState, pod: Pod) -> Any:
        return pod.name if pod.name != "unhashable" else {pod.name}


class BatchScoreChaos(ScoreChaos, BatchScore):
    """The wrong value for every node, asked in one call."""

    name = "BatchScoreChaos"
    short: ClassVar[bool] = False

    def score_nodes(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        if BatchScoreChaos.short:
            return [50]
        return [self.wrong(pod, 50) for _ in nodes]


class NormalizeChaos(Chaos, ScorePlugin, ScoreExtensions):
    """A wrong value from NormalizeScore, or (``values`` mode) wrong values inside the list it returns."""

    name = "NormalizeChaos"
    into_values: ClassVar[bool] = False

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 10

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        if not NormalizeChaos.into_values:
            return self.wrong(pod, scores)  # type: ignore[no-any-return]
        return [self.wrong(pod, score) for score in scores]


class ReserveChaos(Chaos, ReservePlugin):
    name = "ReserveChaos"
    unreserved: ClassVar[list[str]] = []

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self.wrong(pod, Status.success())  # type: ignore[no-any-return]

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        ReserveChaos.unreserved.append(pod.name)


class PermitChaos(Chaos, PermitPlugin):
    name = "PermitChaos"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self.wrong(pod, Status.success())  # type: ignore[no-any-return]


class PreBindChaos(Chaos, PreBindPlugin):
    name = "PreBindChaos"

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self.wrong(pod, Status.success())  # type: ignore[no-any-return]


class BindChaos(Chaos, BindPlugin):
    name = "BindChaos"

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return self.wrong(pod, Status.success())  # type: ignore[no-any-return]


PLUGINS: dict[str, tuple[str, type[Chaos]]] = {
    "PreEnqueue": ("preEnqueue", PreEnqueueChaos),
    "PreFilter": ("preFilter", PreFilterChaos),
    "Filter": ("filter", FilterChaos),
    "Filter(alone)": ("filter", FilterChaos),
    "Filter(memo-column)": ("filter", LocalFilterChaos),
    "PostFilter": ("postFilter", PostFilterChaos),
    "PreScore": ("preScore", PreScoreChaos),
    "Score": ("score", ScoreChaos),
    "Score(memo)": ("score", LocalScoreChaos),
    "Score(batch)": ("score", BatchScoreChaos),
    "NormalizeScore": ("score", NormalizeChaos),
    "NormalizeScore(values)": ("score", NormalizeChaos),
    "Reserve": ("reserve", ReserveChaos),
    "Permit": ("permit", PermitChaos),
    "PreBind": ("preBind", PreBindChaos),
    "Bind": ("bind", BindChaos),
}
SCORE_POINTS = ["Score", "Score(memo)", "Score(batch)", "NormalizeScore(values)"]
STATUS_POINTS = [point for point in PLUGINS if point not in SCORE_POINTS]
BOOM = RuntimeError("boom")
WRONG_STATUSES = {"None": None, "True": True, "str": "ok", "raises": BOOM}
WRONG_SCORES = {"None": None, "True": True, "float": 3.7, "str": "50", "raises": BOOM}
CASES = [pytest.param(point, value, id=f"{point}-{label}") for point in STATUS_POINTS
         for label, value in WRONG_STATUSES.items()]
CASES += [pytest.param(point, value, id=f"{point}-{label}") for point in SCORE_POINTS
          for label, value in WRONG_SCORES.items()]


@pytest.fixture(autouse=True)
def _reset() -> None:
    Chaos.value = None
    Chaos.interrupt = False
    Chaos.behave = False
    NormalizeChaos.into_values = False
    BatchScoreChaos.short = False
    ReserveChaos.unreserved.clear()


def new_scheduler(case: str, recorder: Recorder, **kwargs: Any) -> kschedlib.Scheduler:
    point, plugin = PLUGINS[case]
    registry = kschedlib.in_tree_registry()
    registry.register(plugin.name, lambda args, handle: plugin())
    plugins: dict[str, Any] = {point: {"enabled": [{"name": plugin.name}]}}
    if point == "bind" or case in ("Filter(alone)", "Filter(memo-column)"):
        plugins[point]["disabled"] = [{"name": "*"}]
    sched = kschedlib.Scheduler({"profiles": [{"plugins": plugins}]}, registry=registry, listeners=[recorder],
                                clock=kschedlib.FakeClock(), **kwargs)
    for name in ("n1", "n2"):
        sched.add_node(make_node(name))
    return sched


def requested_cpu(sched: kschedlib.Scheduler) -> int:
    return sum(info.requested.milli_cpu for info in sched.snapshot().node_infos)


def assert_nothing_held(sched: kschedlib.Scheduler) -> None:
    assert sched.bound_pods() == {}
    assert sched.waiting_pods() == []
    assert requested_cpu(sched) == 0


def assert_later_cycles_work(sched: kschedlib.Scheduler, recorder: Recorder) -> None:
    sched.add_pod(make_pod("good", requests={"cpu": "1"}))
    results = sched.run_until_idle()
    assert [(r.pod.key, r.scheduled) for r in results] == [("default/good", True)]
    assert recorder.keys("bound") == ["default/good"]
    assert requested_cpu(sched) == 1000


@pytest.mark.parametrize(("case", "value"), CASES)
def test_a_wrong_return_value_is_an_error_and_the_pod_is_requeued(case: str, value: Any) -> None:
    Chaos.value = value
    NormalizeChaos.into_values = case == "NormalizeScore(values)"
    recorder = Recorder()
    sched = new_scheduler(case, recorder)
    _, plugin = PLUGINS[case]
    sched.add_pod(make_pod(BAD, requests={"cpu": "100" if case == "PostFilter" else "1"}))

    results = sched.run_until_idle()

    assert_nothing_held(sched)
    queue, info = sched.pending()["default/bad"]
    if case == "PreEnqueue":
        assert results == []
        assert queue == "gated"
        assert info.unschedulable_plugins == {plugin.name}
    else:
        (result,) = results
        assert recorder.keys("failed") == ["default/bad"]
        message = result.message or ""
        if case != "PostFilter":  # kube-scheduler's PostFilter error text does not name the plugin
            assert f'"{plugin.name}"' in message
        assert (str(value) if value is BOOM else repr(value)) in message
        if case == "PostFilter":
            assert result.status.code is Code.UNSCHEDULABLE
            assert value is BOOM or "running PostFilter plugin" in message
        else:
            assert result.status.code is Code.ERROR
            assert queue == "backoff"
            point = case.split("(")[0]
            assert point.replace("NormalizeScore", "Normalize") in message or point.lower() in message
    if case == "Reserve":
        assert ReserveChaos.unreserved == [BAD]
    assert_later_cycles_work(sched, recorder)


def test_a_wrong_bind_return_on_a_binding_executor_is_rolled_back() -> None:
    Chaos.value = None
    recorder = Recorder()
    with ThreadPoolExecutor(max_workers=1) as executor:
        sched = new_scheduler("Bind", recorder, binding_executor=executor)
        sched.add_pod(make_pod(BAD, requests={"cpu": "1"}))
        result = binding_outcome(sched)
    assert result.status.code is Code.ERROR
    assert "returned None (NoneType), not a Status" in (result.message or "")
    assert_nothing_held(sched)
    assert sched.pending()["default/bad"][0] == "backoff"


def binding_outcome(sched: kschedlib.Scheduler) -> kschedlib.ScheduleResult:
    """The result that ends the one binding started on the executor (waits up to 10 s)."""
    results = sched.run_until_idle()
    assert results[0].status.code is Code.WAIT
    deadline = time.monotonic() + 10
    while len(results) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
        results += sched.tick()
    assert len(results) == 2
    return results[1]


@pytest.mark.parametrize("case", ["PreFilter", "Filter", "Filter(memo-column)", "Score", "Score(memo)",
                                  "Score(batch)", "Reserve", "Permit", "PreBind", "Bind"])
def test_an_interrupt_propagates_after_the_pod_is_put_back(case: str) -> None:
    Chaos.interrupt = True
    recorder = Recorder()
    sched = new_scheduler(case, recorder)
    sched.add_pod(make_pod(BAD, requests={"cpu": "1"}))
    with pytest.raises(KeyboardInterrupt):
        sched.schedule_one()
    assert_nothing_held(sched)
    assert sched.pending()["default/bad"][0] == "backoff"
    if case == "Reserve":
        assert ReserveChaos.unreserved == [BAD]
    Chaos.behave = True
    sched.clock.advance(1)  # type: ignore[attr-defined]
    (result,) = sched.run_until_idle()
    assert result.scheduled
    assert result.attempts == 2


def test_an_interrupt_on_the_binding_executor_is_a_failed_binding() -> None:
    Chaos.interrupt = True
    recorder = Recorder()
    with ThreadPoolExecutor(max_workers=1) as executor:
        sched = new_scheduler("Bind", recorder, binding_executor=executor)
        sched.add_pod(make_pod(BAD, requests={"cpu": "1"}))
        result = binding_outcome(sched)
    assert result.status.code is Code.ERROR
    assert "KeyboardInterrupt" in (result.message or "")
    assert_nothing_held(sched)
    assert sched.pending()["default/bad"][0] == "backoff"


class RaisingSort(kschedlib.framework.QueueSortPlugin):
    name = "RaisingSort"

    def less(self, a: Any, b: Any) -> bool:
        raise RuntimeError("broken sort")


def test_a_raising_queue_sort_keeps_arrival_order() -> None:
    registry = kschedlib.in_tree_registry()
    registry.register(RaisingSort.name, lambda args, handle: RaisingSort())
    config = {"profiles": [{"plugins": {"queueSort": {"enabled": [{"name": "RaisingSort"}],
                                                      "disabled": [{"name": "*"}]}}}]}
    sched = kschedlib.Scheduler(config, registry=registry, clock=kschedlib.FakeClock())
    sched.add_node(make_node("n1"))
    for name in ("a", "b", "c"):
        sched.add_pod(make_pod(name))
    assert [r.pod.name for r in sched.run_until_idle()] == ["a", "b", "c"]


@pytest.mark.parametrize("case", ["Filter(memo-column)", "Score(memo)"])
def test_an_unhashable_memo_key_means_no_reuse(case: str) -> None:
    recorder = Recorder()
    sched = new_scheduler(case, recorder)
    for name in ("unhashable", "again"):
        sched.add_pod(make_pod(name, requests={"cpu": "1"}))
    assert [r.scheduled for r in sched.run_until_idle()] == [True, True]


class WaitingPermit(PermitPlugin):
    name = "WaitingPermit"

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        return kschedlib.framework.Wait(30.0)


class InterruptOnWaiting(Recorder):
    def on_waiting(self, result: kschedlib.ScheduleResult) -> None:
        super().on_waiting(result)
        raise KeyboardInterrupt


def test_an_interrupt_after_the_pod_was_parked_in_permit_leaves_it_waiting() -> None:
    registry = kschedlib.in_tree_registry()
    registry.register(WaitingPermit.name, lambda args, handle: WaitingPermit())
    config = {"profiles": [{"plugins": {"permit": {"enabled": [{"name": "WaitingPermit"}]}}}]}
    clock = kschedlib.FakeClock()
    sched = kschedlib.Scheduler(config, registry=registry, clock=clock, listeners=[InterruptOnWaiting()])
    sched.add_node(make_node("n1"))
    sched.add_pod(make_pod("p", requests={"cpu": "1"}))
    with pytest.raises(KeyboardInterrupt):
        sched.schedule_one()
    assert sched.waiting_pods() == ["default/p"]
    assert "default/p" not in sched.pending()
    assert requested_cpu(sched) == 1000  # still assumed while it waits, as any waiting pod
    clock.advance(30)
    (timed_out,) = sched.tick()
    assert timed_out.status.code is Code.UNSCHEDULABLE
    assert requested_cpu(sched) == 0


def test_a_batch_score_must_return_one_score_per_node() -> None:
    BatchScoreChaos.short = True
    recorder = Recorder()
    sched = new_scheduler("Score(batch)", recorder)
    sched.add_pod(make_pod(BAD, requests={"cpu": "1"}))
    (result,) = sched.run_until_idle()
    assert result.status.code is Code.ERROR
    assert ('running Score plugins: plugin "BatchScoreChaos" failed with: returned [50] (list), not a list of 2 '
            "int scores") in (result.message or "")
    assert_nothing_held(sched)


class ShrinkingNormalizer(ScorePlugin, ScoreExtensions):
    """Returns fewer, or more, scores than it was given."""

    name = "ShrinkingNormalizer"
    grow: ClassVar[bool] = False

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 10

    def normalize_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo], scores: list[int]) -> list[int]:
        return [*scores, 1] if ShrinkingNormalizer.grow else []


@pytest.mark.parametrize("grow", [False, True], ids=["emptied", "grown"])
def test_normalize_score_must_return_one_score_per_node(grow: bool) -> None:
    ShrinkingNormalizer.grow = grow
    registry = kschedlib.in_tree_registry()
    registry.register(ShrinkingNormalizer.name, lambda args, handle: ShrinkingNormalizer())
    config = {"profiles": [{"plugins": {"score": {"enabled": [{"name": "ShrinkingNormalizer"}]}}}]}
    sched = kschedlib.Scheduler(config, registry=registry, clock=kschedlib.FakeClock())
    for name in ("n1", "n2"):
        sched.add_node(make_node(name))
    sched.add_pod(make_pod("p"))
    (result,) = sched.run_until_idle()
    assert result.status.code is Code.ERROR
    assert ('plugin "ShrinkingNormalizer" failed with: returned '
            f"{[10, 10, 1] if grow else []!r} (list), not a list of 2 int scores") in (result.message or "")
    assert sched.pending()["default/p"][0] == "backoff"
