"""explain and simulate report PodGroup and ElasticQuota state (and nothing new without those objects)."""

from __future__ import annotations

from typing import Any

from kschedlib import Scheduler, explain, simulate
from kschedlib.clock import FakeClock
from kschedlib.model import ElasticQuota, PodGroup, parse_quantity
from kschedlib.model.convert import elastic_quota_to_dict, node_to_dict, pod_group_to_dict, pod_to_dict
from kschedlib.model.scheduling_crds import POD_GROUP_LABEL
from kschedlib.plugins.batch import batch_scheduling_config
from kschedlib.simulation._groups import pod_group_report
from kschedlib.simulation.report import explanation_text, simulation_text
from tests.helpers import make_node, make_pod

GPU = "nvidia.com/gpu"


def _member(name: str, group: str, *, namespace: str = "ns", node: str = "", gpus: str = "1") -> Any:
    return pod_to_dict(make_pod(name, namespace=namespace, labels={POD_GROUP_LABEL: group}, node_name=node,
                                requests={"cpu": "500m", GPU: gpus}))


def _cluster() -> dict[str, Any]:
    quota = {"cpu": parse_quantity("2"), GPU: parse_quantity("2")}
    return {"kind": "List", "items": [
        node_to_dict(make_node("n1", allocatable={"cpu": "8", "memory": "16Gi", "pods": "110", GPU: "4"})),
        pod_group_to_dict(PodGroup("job", "ns", min_member=2, schedule_timeout_seconds=30)),
        pod_group_to_dict(PodGroup("other", "ns", min_member=1)),
        elastic_quota_to_dict(ElasticQuota("q", "ns", min=quota, max={**quota, GPU: parse_quantity("3")})),
        elastic_quota_to_dict(ElasticQuota("q", "idle", min=quota)),
        _member("w0", "job", node="n1"), _member("w1", "job"),
        pod_to_dict(make_pod("solo", namespace="ns", node_name="n1", requests={"cpu": "1", GPU: "2"})),
    ]}


def test_explain_reports_the_pods_group_and_every_quota() -> None:
    data = explain(_cluster(), "ns/w1", batch_scheduling_config()).to_dict()
    assert data["pod_group"] == {
        "name": "ns/job", "phase": "Scheduling", "minMember": 2, "members": 2, "bound": 1, "waiting": 0,
        "assumed": 1, "pending": 1, "running": 0, "succeeded": 0, "failed": 0, "scheduleTimeoutSeconds": 30.0,
        "scheduleStartTime": None,
        "waitingTimesOutAt": None}
    assert data["elastic_quotas"] == {
        "idle": {"name": "q", "min": {"cpu": "2", GPU: "2"}, "max": None, "used": {"cpu": "0", GPU: "0"},
                 "pods": 0, "overMin": False, "overMax": False},
        "ns": {"name": "q", "min": {"cpu": "2", GPU: "2"}, "max": {"cpu": "2", GPU: "3"},
               "used": {"cpu": "1500m", GPU: "3"}, "pods": 2, "overMin": True, "overMax": False},
    }


def test_explain_text_shows_group_and_quotas() -> None:
    text = explanation_text(explain(_cluster(), "ns/w1", batch_scheduling_config()))
    assert "pod group ns/job: Scheduling, minMember 2, 2 members: 1 bound, 0 waiting, 1 pending; " \
           "Permit timeout 30.0s" in text
    assert "  ns (q): used cpu=1500m,nvidia.com/gpu=3; min cpu=2,nvidia.com/gpu=2; max cpu=2,nvidia.com/gpu=3 " \
           "(borrowing)" in text
    assert "  idle (q): used cpu=0,nvidia.com/gpu=0; min cpu=2,nvidia.com/gpu=2; max -" in text


def test_a_pod_outside_any_group_gets_no_group_section() -> None:
    data = explain(_cluster(), "ns/solo", batch_scheduling_config()).to_dict()
    assert "pod_group" not in data
    assert "elastic_quotas" in data


def test_simulate_reports_groups_and_quotas_at_the_end() -> None:
    report = simulate(_cluster(), batch_scheduling_config())
    data = report.to_dict()
    # w1 would take ns past its GPU max (3: w0 and solo hold 3), so the gang stays one short
    assert data["pod_groups"]["ns/job"] | {"scheduleTimeoutSeconds": 0} == {
        "phase": "Scheduling", "minMember": 2, "members": 2, "bound": 1, "waiting": 0, "assumed": 1, "pending": 1,
        "running": 0, "succeeded": 0, "failed": 0, "scheduleTimeoutSeconds": 0, "scheduleStartTime": None,
        "waitingTimesOutAt": None}
    assert data["elastic_quotas"]["ns"]["used"] == {"cpu": "1500m", GPU: "3"}
    assert data["unschedulable"]["ns/w1"].startswith("0/1 nodes are available")
    text = simulation_text(report)
    assert "pod groups:\n  ns/job: Scheduling, minMember 2, 2 members: 1 bound, 0 waiting, 1 pending" in text
    assert "elastic quotas:\n  idle (q)" in text


def test_a_quota_already_over_its_max_is_flagged() -> None:
    cluster = _cluster()
    cluster["items"].append(elastic_quota_to_dict(ElasticQuota("q", "over", max={GPU: parse_quantity("1")})))
    cluster["items"].append(pod_to_dict(make_pod("hog", namespace="over", node_name="n1", requests={GPU: "2"})))
    explanation = explain(cluster, "ns/w1", batch_scheduling_config())
    assert explanation.to_dict()["elastic_quotas"]["over"]["overMax"] is True
    assert "  over (q): used nvidia.com/gpu=2; min -; max nvidia.com/gpu=1 OVER MAX" in \
        explanation_text(explanation)


def test_results_without_batch_objects_keep_their_keys() -> None:
    cluster = {"kind": "List", "items": [node_to_dict(make_node("n1")), pod_to_dict(make_pod("p"))]}
    explained = explain(cluster, "default/p").to_dict()
    simulated = simulate(cluster).to_dict()
    for data in (explained, simulated):
        assert not {"pod_group", "pod_groups", "elastic_quotas"} & set(data)
    assert "pod group" not in explanation_text(explain(cluster, "default/p"))
    assert "elastic quotas" not in simulation_text(simulate(cluster))


def test_waiting_members_show_when_their_permit_wait_ends() -> None:
    clock = FakeClock(100.0)
    scheduler = Scheduler(batch_scheduling_config(capacity_scheduling=False), clock=clock)
    scheduler.add_objects([make_node("n1"), PodGroup("job", "ns", min_member=3, schedule_timeout_seconds=30)])
    for i in range(2):
        scheduler.add_pod(make_pod(f"w{i}", namespace="ns", labels={POD_GROUP_LABEL: "job"}))
    scheduler.add_pod(make_pod("w2", namespace="ns", labels={POD_GROUP_LABEL: "job"}, scheduling_gates=("later",)))
    scheduler.run_until_idle()
    state = pod_group_report(scheduler)["ns/job"]
    assert (state["waiting"], state["bound"], state["assumed"], state["pending"]) == (2, 0, 2, 1)
    assert state["waitingTimesOutAt"] == 130.0


def test_without_coscheduling_the_timeout_is_the_groups_own_and_the_first_quota_counts() -> None:
    cluster = _cluster()
    cluster["items"].append(elastic_quota_to_dict(ElasticQuota("second", "ns", max={GPU: parse_quantity("9")})))
    data = explain(cluster, "ns/w1", batch_scheduling_config(coscheduling=False)).to_dict()
    assert data["pod_group"]["scheduleTimeoutSeconds"] == 30
    assert data["elastic_quotas"]["ns"]["name"] == "q"
