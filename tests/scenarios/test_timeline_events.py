"""A timeline's report survives every event it was given: an event that finds its pod or node gone
is reported as refused (and changes nothing); one that could only fail is refused before the run."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib.cli import main
from kschedlib.errors import ManifestError
from tests.scenarios.test_simulate_stops import node, pod


def bound(name: str, on: str, cpu: str = "1", owner: str | None = None) -> dict[str, Any]:
    manifest = pod(name, cpu)
    manifest["spec"]["nodeName"] = on
    if owner is not None:
        kind, owner_name = owner.split("/")
        manifest["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": owner_name,
                                                    "uid": f"uid-{owner_name}", "controller": True}]
    return manifest


def cluster() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List",
            "items": [node("n0"), node("n1"), bound("p", "n0"), bound("w", "n0", owner="ReplicaSet/web"),
                      pod("q")]}


@pytest.mark.parametrize(("events", "refused"), [
    pytest.param([{"op": "delete_node", "name": "n0"}, {"op": "delete_pod", "name": "p"}],
                 [{"index": 1, "op": "delete_pod",
                   "error": "Pod default/p: no such pod (deleted by event 0, delete_node)"}],
                 id="delete-pod-after-its-node-went"),
    pytest.param([{"op": "delete_node", "name": "n0"}, {"op": "delete_pod", "name": "p", "at": "with_previous"}],
                 [{"index": 1, "op": "delete_pod",
                   "error": "Pod default/p: no such pod (deleted by event 0, delete_node)"}],
                 id="same-batch"),
    pytest.param([{"op": "delete_node", "name": "n0"}, {"op": "drain_node", "name": "n0"}],
                 [{"index": 1, "op": "drain_node",
                   "error": "Node n0: no such node (deleted by event 0, delete_node)"}],
                 id="drain-a-deleted-node"),
    pytest.param([{"op": "delete_pod", "name": "p"}, {"op": "label_pod", "name": "p", "labels": {"a": "b"},
                                                      "at": "with_previous"}],
                 [{"index": 1, "op": "label_pod", "error": "Pod default/p: no such pod (deleted by event 0, "
                                                           "delete_pod)"}],
                 id="label-a-deleted-pod-does-not-bring-it-back"),
    pytest.param([{"op": "taint_node", "name": "gone", "taint": {"key": "k", "effect": "NoSchedule"}}],
                 [{"index": 0, "op": "taint_node", "error": "Node gone: no such node"}],
                 id="never-there"),
    pytest.param([{"op": "add_pod", "pod": pod("p")}],
                 [{"index": 0, "op": "add_pod", "error": "pod default/p is bound to n0; it cannot become pending"}],
                 id="pending-pod-under-a-bound-pods-name"),
])
def test_an_event_that_finds_the_cluster_otherwise_is_reported_and_the_run_goes_on(
        events: list[dict[str, Any]], refused: list[dict[str, Any]]) -> None:
    report = kschedlib.simulate(cluster(), events=events).to_dict()
    assert report["events_refused"] == refused
    assert report["placements"]["default/q"] is not None  # the run went on to its end
    assert len(report["deleted_by_events"]) == len(set(report["deleted_by_events"]))  # nothing deleted twice


def test_the_cli_reports_a_refused_event(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps(cluster()))
    (tmp_path / "e.json").write_text(json.dumps([{"op": "delete_node", "name": "n0"},
                                                 {"op": "delete_pod", "name": "p"}]))
    out, err = io.StringIO(), io.StringIO()
    status = main(["simulate", str(tmp_path / "c.json"), "--events", str(tmp_path / "e.json"), "--format", "json"],
                  out=out, err=err)
    assert status == 0, err.getvalue()
    assert json.loads(out.getvalue())["events_refused"][0]["index"] == 1


@pytest.mark.parametrize(("event", "field"), [
    ({"op": "add_pod", "pod": {"metadata": {"name": "x"}, "spec": {"containers": "no"}}}, "[0].pod.spec.containers"),
    ({"op": "add_node", "node": None}, "[0].node"),
    ({"op": "taint_node", "name": "n0", "taint": {"key": "k"}}, "[0].taint.effect"),
    ({"op": "taint_node", "name": "n0"}, "[0].taint"),
    ({"op": "set_allocatable", "name": "n0", "allocatable": {"cpu": "lots"}}, "[0].allocatable.cpu"),
    ({"op": "label_node", "name": "n0", "labels": ["a"]}, "[0].labels"),
    ({"op": "delete_node", "name": 3}, "[0].name"),
    ({"op": "delete_pod"}, "[0].name"),
    ({"op": "drain_node", "name": "n0", "respect_pdbs": "yes"}, "[0].respect_pdbs"),
    ({"op": "remove_gates", "name": "q", "gates": "g"}, "[0].gates"),
], ids=lambda value: value if isinstance(value, str) else value["op"])
def test_an_event_that_could_only_fail_is_refused_before_the_run(event: dict[str, Any], field: str) -> None:
    with pytest.raises(ManifestError) as raised:
        kschedlib.simulate(cluster(), events=[event])
    assert raised.value.obj == "events"
    assert raised.value.field == field


_ops = st.sampled_from([
    {"op": "delete_node", "name": "n0"}, {"op": "delete_node", "name": "n1"}, {"op": "drain_node", "name": "n0"},
    {"op": "delete_pod", "name": "p"}, {"op": "delete_pod", "name": "w"}, {"op": "delete_pod", "name": "q"},
    {"op": "label_pod", "name": "w", "labels": {"x": "y"}}, {"op": "remove_gates", "name": "q"},
    {"op": "label_node", "name": "n1", "labels": {"x": None}}, {"op": "set_unschedulable", "name": "n0"},
    {"op": "add_pod", "pod": pod("q")}, {"op": "add_pod", "pod": bound("p", "n1")},
    {"op": "add_node", "node": node("n0")},
])


@settings(max_examples=40)
@given(events=st.lists(st.tuples(_ops, st.booleans()), min_size=1, max_size=8))
def test_a_report_survives_every_timeline(events: list[tuple[dict[str, Any], bool]]) -> None:
    timeline = [{**event, **({"at": "with_previous"} if together and index else {})}
                for index, (event, together) in enumerate(events)]
    report = kschedlib.simulate(cluster(), events=timeline).to_dict()
    refused = [entry["index"] for entry in report["events_refused"]]
    waiting = [entry["index"] for entry in report["events_not_applied"]]
    assert len(set(refused)) == len(refused)
    assert not set(refused) & set(waiting)
    assert set(refused) <= set(range(len(timeline)))
