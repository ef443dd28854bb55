"""A refused Scheduler call leaves nothing behind; uid changes are delete + add (issue 11, defect 5).

Every test goes through the public :class:`kschedlib.Scheduler` and compares everything the
embedder can observe before and after a refused call.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from kschedlib import CacheError, ModelError, Scheduler
from kschedlib.model import Namespace, Node, Pod
from tests.helpers import make_node, make_pod


def observed(sched: Scheduler) -> dict[str, Any]:
    """Everything an embedder can see of the scheduler's state."""
    return {
        "pending": {key: where for key, (where, _info) in sched.pending().items()},
        "bound": sched.bound_pods(),
        "waiting": sched.waiting_pods(),
        "nominations": sched.nominations(),
        "dump": sched.cache_dump(),
        "nodes": sched.node_names(),
        "cpu": {info.name: info.requested.milli_cpu for info in sched.snapshot()},
        "namespaces": sorted(sched._engine.store.namespaces),
    }


@pytest.fixture
def sched() -> Scheduler:
    scheduler = Scheduler()
    scheduler.add_node(make_node("n1"))
    scheduler.add_pod(make_pod("bound", requests={"cpu": "3"}, uid="u1", node_name="n1"))
    scheduler.add_pod(make_pod("pending", requests={"cpu": "1"}, uid="u2"))
    return scheduler


def test_a_pod_reusing_a_bound_pods_uid_is_refused_and_removing_it_frees_nothing(sched: Scheduler) -> None:
    before = observed(sched)
    with pytest.raises(CacheError, match="uid 'u1', which belongs to pod default/bound"):
        sched.add_pod(make_pod("thief", uid="u1"))
    assert observed(sched) == before
    assert sched.remove_pod("default/thief") is False
    assert sched.bound_pods()["default/bound"] == "n1"
    assert sched.snapshot().get("n1").requested.milli_cpu == 3000


def test_a_second_pending_pod_sharing_a_uid_is_refused_not_dropped(sched: Scheduler) -> None:
    before = observed(sched)
    with pytest.raises(CacheError, match="belongs to pod default/pending"):
        sched.add_pod(make_pod("twin", uid="u2"))
    assert observed(sched) == before
    results = sched.run_until_idle()
    assert [(r.pod.key, r.node_name) for r in results] == [("default/pending", "n1")]


def test_a_bound_pod_whose_uid_changes_is_replaced_and_can_then_be_removed(sched: Scheduler) -> None:
    sched.update_pod(make_pod("bound", requests={"cpu": "2"}, uid="u9", node_name="n1"))
    assert sched.bound_pods()["default/bound"] == "n1"
    assert sched.snapshot().get("n1").requested.milli_cpu == 2000
    assert sched.remove_pod("default/bound") is True
    assert sched.snapshot().get("n1").requested.milli_cpu == 0
    assert sched.cache_dump()["nodes"] == {"n1": []}
    sched.add_pod(make_pod("reuser", uid="u1"))  # the replaced uid is free again
    assert "default/reuser" in sched.pending()


def test_a_pending_pod_whose_uid_changes_is_requeued_as_a_new_pod(sched: Scheduler) -> None:
    sched.update_pod(make_pod("pending", requests={"cpu": "1"}, uid="u3"))
    (result,) = sched.run_until_idle()
    assert result.pod.uid == "u3"
    assert sched.bound_pods() == {"default/bound": "n1", "default/pending": "n1"}
    assert sched.remove_pod("default/pending")
    assert sched.snapshot().get("n1").requested.milli_cpu == 3000


def test_a_uid_change_onto_another_pods_uid_is_refused(sched: Scheduler) -> None:
    before = observed(sched)
    with pytest.raises(CacheError, match="belongs to pod default/bound"):
        sched.update_pod(make_pod("pending", uid="u1"))
    assert observed(sched) == before


def test_a_bound_pod_cannot_become_pending_and_stays_bound(sched: Scheduler) -> None:
    before = observed(sched)
    with pytest.raises(CacheError, match="cannot become pending"):
        sched.update_pod(make_pod("bound", requests={"cpu": "3"}, uid="u1", labels={"new": "x"}))
    assert observed(sched) == before
    assert sched._engine.store.pods["default/bound"].labels == {}


def test_removing_an_unknown_node_is_refused_and_changes_nothing(sched: Scheduler) -> None:
    before = observed(sched)
    with pytest.raises(CacheError, match="node n9 is not in the cache"):
        sched.remove_node("n9")
    assert observed(sched) == before


WRONG_ARGUMENTS = [
    ("add_pod a dict", lambda s: s.add_pod({"name": "p"})),
    ("add_pod a name", lambda s: s.add_pod("default/p")),
    ("update_pod None", lambda s: s.update_pod(None)),
    ("add_node a name", lambda s: s.add_node("n2")),
    ("update_node a dict", lambda s: s.update_node({"name": "n1"})),
    ("remove_node a Node", lambda s: s.remove_node(make_node("n1"))),
    ("remove_pod None", lambda s: s.remove_pod(None)),
    # the two wrong types below are the bad input whose refusal is checked
    ("add_pod priority high", lambda s: s.add_pod(make_pod("p", priority="high"))),  # type: ignore[arg-type]
    ("add_node name None", lambda s: s.add_node(Node(None))),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("call", [case[1] for case in WRONG_ARGUMENTS], ids=[case[0] for case in WRONG_ARGUMENTS])
def test_a_wrong_argument_is_a_model_error_and_changes_nothing(sched: Scheduler, call: Any) -> None:
    before = observed(sched)
    with pytest.raises(ModelError):
        call(sched)
    assert observed(sched) == before
    sched.cache_dump()


def test_a_node_with_labels_none_is_added_whole(sched: Scheduler) -> None:
    sched.add_node(Node("n2", labels=None, allocatable={"cpu": "4", "pods": 110}))  # type: ignore[arg-type, dict-item]
    assert sched.node_names() == ["n1", "n2"]
    assert sched.cache_dump()["nodes"] == {"n1": ["default/bound"], "n2": []}
    assert sched.snapshot().get("n2").allocatable.milli_cpu == 4000


def test_add_objects_with_a_uid_clash_adds_nothing() -> None:
    sched = Scheduler()
    clashing = [Namespace("shop"), make_node("n1"), make_pod("a", uid="same"), make_pod("b", uid="same")]
    with pytest.raises(CacheError, match="pods default/a and default/b share uid 'same'"):
        sched.add_objects(clashing)
    assert observed(sched) == observed(Scheduler())
    sched.add_objects(clashing[:3])
    with pytest.raises(CacheError, match="belongs to pod default/a"):
        sched.add_objects([make_pod("c", uid="same")])


def test_a_known_key_added_again_is_an_update_and_a_finished_one_is_removed(sched: Scheduler) -> None:
    sched.add_pod(make_pod("bound", requests={"cpu": "1"}, uid="u1", node_name="n1"))
    assert sched.snapshot().get("n1").requested.milli_cpu == 1000
    sched.add_pod(attrs.evolve(sched._engine.store.pods["default/bound"], phase="Succeeded"))
    assert "default/bound" not in sched.bound_pods()
    assert sched.snapshot().get("n1").requested.milli_cpu == 0


def test_unknown_objects_are_added_by_their_update() -> None:
    sched = Scheduler()
    sched.update_node(make_node("n1"))
    sched.update_pod(make_pod("p", uid="u"))
    assert sched.node_names() == ["n1"]
    assert list(sched.pending()) == ["default/p"]
    sched.add_node(make_node("n1", labels={"tier": "gold"}))  # a duplicate add is an update
    assert sched.snapshot().get("n1").node.labels == {"tier": "gold"}  # type: ignore[union-attr]


def test_a_removed_pod_can_come_back_with_its_uid() -> None:
    sched = Scheduler()
    sched.add_node(make_node("n1"))
    pod: Pod = make_pod("p", uid="u", requests={"cpu": "1"})
    sched.add_pod(pod)
    assert sched.remove_pod(pod)
    sched.add_pod(pod)
    (result,) = sched.run_until_idle()
    assert result.node_name == "n1"


def test_a_finished_pod_that_was_never_known_is_ignored(sched: Scheduler) -> None:
    before = observed(sched)
    sched.add_pod(make_pod("done", uid="u1", phase="Succeeded"))
    assert observed(sched) == before


def test_a_pending_pod_handed_to_another_scheduler_leaves_the_queue(sched: Scheduler) -> None:
    sched.update_pod(make_pod("pending", requests={"cpu": "1"}, uid="u2", scheduler_name="other"))
    assert "default/pending" not in sched.pending()
    assert sched.run_until_idle() == []
    sched.update_pod(make_pod("pending", requests={"cpu": "1"}, uid="u2"))  # and back
    (result,) = sched.run_until_idle()
    assert result.node_name == "n1"
