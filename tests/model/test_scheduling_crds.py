"""PodGroup and ElasticQuota: reading, typed errors, writing back, and the by-group pod index."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib._internal.scheduling_store import PodTable, SchedulingStore
from kschedlib._internal.store import ObjectStore
from kschedlib.errors import ManifestError
from kschedlib.model import POD_GROUP_LABEL, ElasticQuota, Pod, PodGroup, parse_quantity
from kschedlib.model._placed import placed
from kschedlib.model.convert import (
    elastic_quota_from_dict,
    elastic_quota_to_dict,
    object_from_dict,
    object_to_dict,
    objects_from_document,
    pod_group_from_dict,
    pod_group_to_dict,
)

POD_GROUP: dict[str, Any] = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
    "metadata": {"name": "job", "namespace": "team-a", "creationTimestamp": "2024-05-01T10:00:00Z"},
    "spec": {"minMember": 4, "minResources": {"cpu": "8", "nvidia.com/gpu": "4"}, "scheduleTimeoutSeconds": 30},
    "status": {"phase": "Running", "occupiedBy": "team-a/trainer", "running": 4, "succeeded": 1, "failed": 0,
               "scheduleStartTime": "2024-05-01T10:00:05Z"},
}
QUOTA: dict[str, Any] = {
    "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
    "metadata": {"name": "quota", "namespace": "team-a"},
    "spec": {"min": {"cpu": "4", "nvidia.com/gpu": "8"}, "max": {"cpu": "6", "nvidia.com/gpu": "16"}},
    "status": {"used": {"cpu": "2"}},
}


def test_pod_group_is_read_with_spec_status_and_creation_time() -> None:
    group = pod_group_from_dict(POD_GROUP)
    assert (group.key, group.min_member, group.schedule_timeout_seconds) == ("team-a/job", 4, 30)
    assert group.min_resources == {"cpu": parse_quantity("8"), "nvidia.com/gpu": parse_quantity("4")}
    assert (group.phase, group.occupied_by, group.running, group.succeeded) == ("Running", "team-a/trainer", 4, 1)
    assert group.creation_timestamp == 1714557600.0
    assert group.schedule_start_time == 1714557605.0


def test_elastic_quota_keeps_absent_min_and_max_apart_from_empty() -> None:
    quota = elastic_quota_from_dict(QUOTA)
    assert quota.min == {"cpu": parse_quantity("4"), "nvidia.com/gpu": parse_quantity("8")}
    assert quota.used == {"cpu": parse_quantity("2")}
    bare = elastic_quota_from_dict({"kind": "ElasticQuota", "metadata": {"name": "q"}})
    assert (bare.namespace, bare.min, bare.max, bare.used) == ("default", None, None, {})


@pytest.mark.parametrize("doc", [POD_GROUP, QUOTA,
                                 {"kind": "PodGroup", "metadata": {"name": "g"}},
                                 {"kind": "PodGroup", "metadata": {"name": "g"}, "spec": {"minResources": {}}},
                                 {"kind": "ElasticQuota", "metadata": {"name": "q"}, "spec": {"max": {}}}],
                         ids=["pod-group", "quota", "bare-group", "empty-min-resources", "empty-max"])
def test_round_trip(doc: dict[str, Any]) -> None:
    obj = object_from_dict(doc)
    assert obj is not None
    assert object_from_dict(object_to_dict(obj)) == obj


def test_writers_leave_defaults_out() -> None:
    assert pod_group_to_dict(PodGroup("g")) == {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"}, "spec": {}}
    assert elastic_quota_to_dict(ElasticQuota("q", "ns")) == {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
        "metadata": {"name": "q", "namespace": "ns"}, "spec": {}}


@pytest.mark.parametrize(("doc", "field", "value"), [
    ({"spec": {"minMember": -1}}, "spec.minMember", -1),
    ({"spec": {"minMember": "3"}}, "spec.minMember", "3"),
    ({"spec": {"scheduleTimeoutSeconds": -5}}, "spec.scheduleTimeoutSeconds", -5),
    ({"spec": {"minResources": {"cpu": "lots"}}}, "spec.minResources.cpu", "lots"),
    ({"status": {"phase": "Sleeping"}}, "status.phase", "Sleeping"),
    ({"status": {"running": 1.5}}, "status.running", 1.5),
], ids=["negative-min-member", "string-min-member", "negative-timeout", "bad-quantity", "bad-phase", "float-count"])
def test_bad_pod_groups_are_manifest_errors_naming_field_and_value(doc: dict[str, Any], field: str,
                                                                   value: object) -> None:
    with pytest.raises(ManifestError) as caught:
        pod_group_from_dict({"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ns"}, **doc})
    assert caught.value.field == field
    assert caught.value.value == value
    assert "PodGroup ns/g" in str(caught.value)


def test_bad_quota_is_a_manifest_error() -> None:
    with pytest.raises(ManifestError, match=r"spec\.max\.nvidia\.com/gpu"):
        elastic_quota_from_dict({"kind": "ElasticQuota", "metadata": {"name": "q"},
                                 "spec": {"max": {"nvidia.com/gpu": "x"}}})


def test_cluster_files_hold_the_batch_kinds() -> None:
    objects = objects_from_document({"kind": "List", "items": [POD_GROUP, QUOTA]})
    assert [type(o) for o in objects] == [PodGroup, ElasticQuota]
    store = ObjectStore()
    store.add(objects)
    assert store.scheduling.get_pod_group("team-a", "job") == objects[0]
    assert store.scheduling.elastic_quotas() == [objects[1]]
    assert store.copy().scheduling.pod_groups() == [objects[0]]


def _member(name: str, group: str, namespace: str = "ns") -> Pod:
    return Pod(name, namespace, labels={POD_GROUP_LABEL: group} if group else {})


def test_pod_table_indexes_pods_by_group_through_every_write() -> None:
    table = PodTable({"ns/a": _member("a", "g")})
    store = SchedulingStore(table)
    table["ns/b"] = _member("b", "g")
    table["ns/c"] = _member("c", "")
    assert [p.name for p in store.group_pods("ns", "g")] == ["a", "b"]
    table["ns/a"] = _member("a", "h")  # relabelled: moves to the other group
    assert [p.name for p in store.group_pods("ns", "g")] == ["b"]
    assert table.pop("ns/b") is not None
    del table["ns/a"]
    assert table.pop("ns/zzz", None) is None
    assert store.group_pods("ns", "g") == store.group_pods("ns", "h") == []
    assert list(table) == ["ns/c"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["set", "pop", "bind"]), st.sampled_from("abcd"),
                          st.sampled_from(["", "g", "h"])), max_size=30))
def test_pod_table_index_equals_a_scan(ops: list[tuple[str, str, str]]) -> None:
    """Bindings (a new version sharing the labels: the shortcut for pods in no group) included."""
    table = PodTable()
    for op, name, group in ops:
        key = f"ns/{name}"
        if op == "set":
            table[key] = _member(name, group)
        elif op == "bind" and key in table:
            table[key] = placed(table[key], "node_name", f"node-{len(ops)}")
        else:
            table.pop(key, None)
    for group in ("g", "h"):
        scanned = sorted((p.name, id(p)) for p in table.values() if p.labels.get(POD_GROUP_LABEL) == group)
        assert sorted((p.name, id(p)) for p in table.group("ns", group)) == scanned
