"""Shared parts (:mod:`kschedlib.model._shared`) are indistinguishable from the copies they replace."""

from __future__ import annotations

import copy
import json
import math
import pickle
import sys
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework.pod_info import AffinityTerm, PodInfo
from kschedlib.model import _convert_dra
from kschedlib.model import _convert_spec as spec_
from kschedlib.model import _shared as shared
from kschedlib.model._convert_base import Reader
from kschedlib.model._convert_dra import resource_slice_from_dict
from kschedlib.model.convert import node_from_dict, pod_from_dict, pod_to_dict
from kschedlib.model.labels import LabelSelector, Requirement
from kschedlib.model.quantity import parse_quantity
from kschedlib.model.resources import Resources

_TEXT = st.text(st.sampled_from("abz.-/"), max_size=4)
_MAPS = st.dictionaries(_TEXT, _TEXT, max_size=4)
_QUANTITIES = st.sampled_from(["1Gi", "1073741824", "1024Mi", "100m", "0.1", "1e3", "1k", "0"]).map(parse_quantity)
_REQUIREMENTS = st.builds(
    lambda key, op, values: Requirement(key, op, tuple(values) if op in ("In", "NotIn") else ()),
    _TEXT, st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]), st.lists(_TEXT, min_size=1, max_size=2))


@given(_MAPS)
def test_str_map_equals_a_copy_in_order(value: dict[str, str]) -> None:
    got = shared.str_map(value)
    assert got == value
    assert list(got.items()) == list(value.items())
    assert type(got) is shared.ReadOnlyMap
    assert shared.str_map(dict(value)) is got  # equal content, one object


@given(st.dictionaries(st.sampled_from(["cpu", "memory", "example.com/gpu"]), _QUANTITIES, max_size=3))
def test_resource_map_keeps_each_quantity_as_written(value: dict[str, object]) -> None:
    got = shared.resource_map(value)  # type: ignore[arg-type]
    assert got == value
    assert [(k, str(q), q.format) for k, q in got.items()] == [(k, str(q), q.format) for k, q in value.items()]  # type: ignore[attr-defined]


def test_equal_quantities_in_other_notations_are_not_merged() -> None:
    binary = shared.resource_map({"memory": parse_quantity("1Gi")})
    decimal = shared.resource_map({"memory": parse_quantity("1073741824")})
    assert binary == decimal
    assert binary is not decimal
    assert str(binary["memory"]) == "1Gi"
    assert str(decimal["memory"]) == "1073741824"


def test_a_str_subclass_is_copied_not_shared() -> None:
    class Tag(str):
        pass

    plain = shared.str_map({"app": "web"})
    tagged = shared.str_map({"app": Tag("web")})
    assert tagged == plain
    assert tagged is not plain
    assert type(tagged["app"]) is Tag


@given(_MAPS, st.lists(_REQUIREMENTS, max_size=2), _MAPS)
def test_selector_behaves_as_a_fresh_one(match_labels: dict[str, str], exprs: list[Requirement],
                                         labels: dict[str, str]) -> None:
    fresh = LabelSelector(dict(match_labels), tuple(exprs))
    got = shared.selector(match_labels, tuple(exprs))
    assert got == fresh
    assert got.requirements == fresh.requirements
    assert got.matches(labels) == fresh.matches(labels)
    assert shared.selector(dict(match_labels), tuple(exprs)) is got


def test_the_pool_stays_bounded_and_keeps_what_is_in_use() -> None:
    common = shared.str_map({"app": "web"})
    for i in range(3 * shared.MAX_SHARED):
        shared.str_map({"pod": str(i)})
        if i % 1000 == 0:
            assert shared.str_map({"app": "web"}) is common
    assert len(shared._pool) <= shared.MAX_SHARED
    assert len(shared._old) <= shared.MAX_SHARED


_POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "labels": {"app": "web", "tier": "front"}},
    "spec": {
        "containers": [{"name": "c", "image": "nginx",
                        "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}}}],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"app": "web"}}}],
    },
}


def test_replicated_pods_share_their_parts_and_read_back_unchanged() -> None:
    first, second = pod_from_dict(copy.deepcopy(_POD)), pod_from_dict(copy.deepcopy(_POD))
    assert first == second
    assert first.labels is second.labels
    assert first.containers[0].requests is second.containers[0].requests
    assert first.annotations is second.annotations is shared.EMPTY_MAP
    spread = first.topology_spread_constraints[0].label_selector
    assert spread is second.topology_spread_constraints[0].label_selector
    assert first.containers[0].requests == {"cpu": parse_quantity("100m"), "memory": parse_quantity("1Gi")}
    assert pod_to_dict(first) == pod_to_dict(second)
    assert pod_from_dict(pod_to_dict(first)) == first


def test_a_node_without_allocatable_reads_its_capacity() -> None:
    node = node_from_dict({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"},
                           "status": {"capacity": {"cpu": "4"}}})
    assert node.allocatable == node.capacity == {"cpu": parse_quantity("4")}


_AMOUNTS = st.dictionaries(
    st.sampled_from(["cpu", "memory", "ephemeral-storage", "pods", "example.com/gpu", "hugepages-2Mi"]),
    st.sampled_from(["0", "1", "100m", "1Gi", "1073741824", "3", "0.5"]).map(parse_quantity), max_size=4)


@given(_AMOUNTS, _AMOUNTS)
def test_shared_resources_equal_the_amounts_they_stand_for(a: dict[str, object], b: dict[str, object]) -> None:
    first = Resources.from_resource_list(a)  # type: ignore[arg-type]
    second = Resources.from_resource_list(b)  # type: ignore[arg-type]
    for got, amounts in ((first, a), (second, b)):
        nanos = {k: q.amount * 10**9 for k, q in amounts.items()}  # type: ignore[attr-defined]
        assert got.milli_cpu == math.ceil(nanos.get("cpu", 0) * 1000 / 10**9)
        assert got.memory == math.ceil(nanos.get("memory", 0) / 10**9)
        assert got.ephemeral_storage == math.ceil(nanos.get("ephemeral-storage", 0) / 10**9)
        assert got.allowed_pod_number == math.ceil(nanos.get("pods", 0) / 10**9)
        assert dict(got.scalar) == {k: math.ceil(v / 10**9) for k, v in nanos.items()
                                    if k in ("example.com/gpu", "hugepages-2Mi")}
    # shared exactly when nothing tells them apart: equal, and their extended resources in the same order
    same_order = list(first.scalar.items()) == list(second.scalar.items())
    assert (first is second) == (first == second and same_order)


def _nested(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([0.0, -0.0, 1.0, -0.5, math.nan]) | _TEXT,
    _nested, max_leaves=8)


@given(_JSON, _JSON)
def test_manifest_keys_are_equal_exactly_when_the_json_text_is(a: object, b: object) -> None:
    """Types (1, 1.0, true) and key order count, as they do in what a part is read from."""
    assert (shared.manifest_key(a) == shared.manifest_key(b)) == (json.dumps(a) == json.dumps(b))


def test_anything_but_plain_json_has_no_key() -> None:
    class Tag(str):
        pass

    assert shared.manifest_key({"a": Tag("x")}) is None
    assert shared.manifest_key([("a", 1)]) is None
    assert shared.manifest_key({1: "a"}) is None


def test_parts_read_from_equal_subtrees_are_shared_and_equal_to_a_fresh_read() -> None:
    first, second = pod_from_dict(copy.deepcopy(_POD)), pod_from_dict(copy.deepcopy(_POD))
    assert first.affinity is second.affinity
    assert first.containers is second.containers
    assert first.topology_spread_constraints is second.topology_spread_constraints
    r, spec = Reader("Pod"), _POD["spec"]
    assert first.affinity == spec_._affinity(r, spec)  # type: ignore[arg-type]
    assert first.containers == r.each(spec, "containers", "spec", spec_._container)  # type: ignore[arg-type]
    assert first.topology_spread_constraints == r.each(
        spec, "topologySpreadConstraints", "spec", spec_._spread_constraint)  # type: ignore[arg-type]
    other = copy.deepcopy(_POD)
    other["spec"]["topologySpreadConstraints"][0]["maxSkew"] = 2  # type: ignore[index]
    assert pod_from_dict(other).topology_spread_constraints[0].max_skew == 2


def test_pods_sharing_an_affinity_get_terms_for_their_own_namespace() -> None:
    pod = pod_from_dict(copy.deepcopy(_POD))
    elsewhere = attrs.evolve(pod, namespace="other")
    assert elsewhere.affinity is pod.affinity
    here, there = PodInfo.of(pod), PodInfo.of(elsewhere)
    assert here.required_anti_affinity_terms[0].namespaces == frozenset({"default"})
    assert there.required_anti_affinity_terms[0].namespaces == frozenset({"other"})
    again = PodInfo.of(pod_from_dict(copy.deepcopy(_POD)))
    assert again.required_anti_affinity_terms is here.required_anti_affinity_terms
    anti = pod.affinity.pod_anti_affinity  # type: ignore[union-attr]
    assert anti is not None
    assert here.required_anti_affinity_terms == tuple(AffinityTerm.parse(t, "default") for t in anti.required)


def _slice(name: str, model: str) -> dict[str, object]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"model": {"string": model}},
                                  "capacity": {"memory": {"value": "80Gi"}}}]}}


def test_devices_with_equal_attributes_and_capacity_share_them() -> None:
    a, b, c = (resource_slice_from_dict(_slice(n, m)).devices[0]
               for n, m in (("n1", "a100"), ("n2", "a100"), ("n3", "h100")))
    assert a.attributes is b.attributes
    assert a.capacity is b.capacity
    assert a.capacity_policies is b.capacity_policies
    assert c.attributes != a.attributes
    assert c.capacity is a.capacity
    r = Reader("ResourceSlice")
    fresh = _convert_dra._device(r, _slice("n1", "a100")["spec"]["devices"][0], "spec.devices[0]")  # type: ignore[index]
    assert fresh == a
    assert str(a.capacity["memory"]) == "80Gi"


def test_a_subtree_too_deep_for_a_key_is_read_unshared() -> None:
    deep: dict[str, object] = {}
    for _ in range(sys.getrecursionlimit() + 100):
        deep = {"x": deep}
    manifest = copy.deepcopy({k: v for k, v in _POD.items() if k != "spec"})
    manifest["spec"] = {**_POD["spec"], "affinity": {"podAffinity": {}, "unknown": deep}}  # type: ignore[dict-item]
    pod = pod_from_dict(manifest)
    assert pod.affinity is not None
    assert pod.affinity.pod_affinity is not None


def _container_pod(name: str, **container: object) -> dict[str, object]:
    return {"kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}, **container}]}}


def test_containers_that_differ_only_in_what_is_not_read_are_shared() -> None:
    """The key is what the reader reads: env, probes and mounts (large, often unique) are not part of it."""
    a = pod_from_dict(_container_pod("a", env=[{"name": "RUN", "value": "1"}], livenessProbe={"exec": {}}))
    b = pod_from_dict(_container_pod("b", env=[{"name": "RUN", "value": "2"}]))
    other = pod_from_dict(_container_pod("c", ports=[{"containerPort": 80, "hostPort": 80}]))
    assert a.containers is b.containers
    assert other.containers is not a.containers
    assert other.containers[0].ports
    assert not a.containers[0].ports


def test_shared_maps_refuse_writes_so_no_object_changes_another() -> None:
    a = pod_from_dict({"kind": "Pod", "metadata": {"name": "a", "labels": {"app": "web"}}, "spec": {"containers": []}})
    b = pod_from_dict({"kind": "Pod", "metadata": {"name": "b", "labels": {"app": "web"}}, "spec": {"containers": []}})
    assert a.labels is b.labels
    writes: list[Callable[[Any], object]] = [
        lambda m: m.__setitem__("team", "x"), lambda m: m.update(team="x"), lambda m: m.pop("app"),
        lambda m: m.setdefault("team", "x"), lambda m: m.clear(), lambda m: m.popitem(),
        lambda m: m.__delitem__("app"), lambda m: m.__ior__({"team": "x"}),
    ]
    for write in writes:
        with pytest.raises(TypeError, match="read-only"):
            write(a.labels)
        with pytest.raises(TypeError, match="read-only"):
            write(a.annotations)  # the one empty map every absent field reads as
    assert b.labels == {"app": "web"}
    assert b.annotations == {}
    assert b.containers == ()


def test_a_read_only_map_is_a_dict_for_everything_but_writes() -> None:
    m = shared.ReadOnlyMap({"a": "1", "b": "2"})
    assert isinstance(m, dict)
    assert m == {"a": "1", "b": "2"}
    assert json.loads(json.dumps(m)) == m
    for twin in (copy.copy(m), copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(twin) is shared.ReadOnlyMap
        assert twin == m
    writable = m.copy()
    writable["c"] = "3"
    assert m == {"a": "1", "b": "2"}
    assert (m | {"c": "3"}) == {"a": "1", "b": "2", "c": "3"}
