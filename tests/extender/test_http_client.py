"""HTTPExtender against real HTTP servers on 127.0.0.1 (the deterministic stub), through the Scheduler.

Each case is what kube-scheduler v1.30 does with such an extender: filters and
weighted scores applied, binding by the extender, preemption consulting it, and
failures skipped for an ignorable extender and fatal (an error naming the URL)
for the others, while scheduling carries on with the next pod.
"""

from __future__ import annotations

import time

import pytest

from kschedlib import Code, Scheduler
from kschedlib.extender import ExtenderError, HTTPExtender
from kschedlib.framework import NodeInfo
from tests.extender.support import config, explained, nodes, pod, run_once, stubs, url
from tests.helpers import make_node, make_pod

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

SLOW = {"faults": {"*": {"kind": "slow", "delay": 3}}}
HTTP500 = {"faults": {"*": {"kind": "http500"}}}
MALFORMED = {"faults": {"*": {"kind": "malformed"}}}
FAIL_ODD = {"filter": {"fail": {"regex": "[13579]$"}, "reason": "odd node"}}


def test_filter_removes_nodes_and_explain_shows_them() -> None:
    with stubs(FAIL_ODD) as pool:
        cfg = config({"urlPrefix": url(pool), "filterVerb": "filter"})
        out = explained(cfg, [*nodes(4), pod()]).to_dict()
        result, _ = run_once(cfg, [*nodes(4), pod()])
    assert out["feasible"] == ["n-0", "n-2"]
    assert out["filtered"]["n-1"] == {"plugin": "", "code": "Unschedulable", "reasons": ["odd node"]}
    assert result.scheduled
    assert result.node_name in {"n-0", "n-2"}


def test_prioritize_scores_times_weight_times_ten() -> None:
    scores = {"prioritize": {"scores": {"n-0": 1, "n-1": 2, "n-2": 3, "n-3": 0}}}
    inverse = {"prioritize": {"scores": {"n-0": 3, "n-1": 0, "n-2": 0, "n-3": 0}}}
    with stubs(scores, inverse) as pool:
        cfg = config({"urlPrefix": url(pool, 0), "prioritizeVerb": "prioritize", "weight": 2},
                     {"urlPrefix": url(pool, 1) + "/", "prioritizeVerb": "prioritize", "weight": 5})
        out = explained(cfg, [*nodes(4), pod()]).to_dict()
    base = explained(None, [*nodes(4), pod()]).to_dict()["scores"]["n-0"]["total"]
    n0 = out["scores"]["n-0"]
    assert n0["extender_entries"] == [{"name": url(pool, 0), "score": 20}, {"name": url(pool, 1) + "/", "score": 150}]
    assert n0["total"] == base + 170
    assert out["scores"]["n-2"]["total"] == base + 60
    assert out["best"] == ["n-0"]


def test_extender_binds_instead_of_the_bind_plugins() -> None:
    with stubs({}) as pool:
        cfg = config({"urlPrefix": url(pool), "bindVerb": "bind"})
        result, scheduler = run_once(cfg, [*nodes(2), pod()])
        binds = [r for r in pool.requests(0) if r["action"] == "bind"]
    assert result.scheduled
    assert binds == [{"action": "bind", "path": "/bind", "PodName": "p", "PodNamespace": "default",
                      "PodUID": "default/p", "Node": result.node_name}]
    assert scheduler.bound_pods() == {"default/p": result.node_name}


@pytest.mark.parametrize(("ignorable", "bound"), [(False, False), (True, True)], ids=["fatal", "ignorable"])
def test_bind_error(ignorable: bool, bound: bool) -> None:
    with stubs({"bind": {"error": "50% busy"}}) as pool:
        cfg = config({"urlPrefix": url(pool), "bindVerb": "bind", "ignorable": ignorable})
        result, scheduler = run_once(cfg, [*nodes(2), pod()])
    assert result.scheduled is bound
    if not bound:
        assert result.status.code is Code.ERROR
        assert result.message == "50%!b(MISSING)usy"  # Go's fmt.Errorf(Error): the text is a format string
        assert scheduler.pending()["default/p"][0] in {"backoff", "unschedulable"}


def _preemption_cluster() -> list[object]:
    small = nodes(3, cpu="2")
    low = [make_pod(f"low-{i}", requests={"cpu": "2"}, node_name=f"n-{i}", priority=i + 1,
                    start_time=1_700_000_000.0 + i) for i in range(3)]
    return [*small, *low, make_pod("p", requests={"cpu": "2"}, priority=100)]


@pytest.mark.parametrize("cache", [True, False], ids=["meta-victims", "victims"])
def test_preemption_consults_the_extender(cache: bool) -> None:
    with stubs({"preempt": {"drop": {"names": ["n-0"]}}}) as pool:
        cfg = config({"urlPrefix": url(pool), "preemptVerb": "preempt", "nodeCacheCapable": cache})
        post = explained(cfg, _preemption_cluster()).to_dict()["postfilter"]
        request = pool.requests(0)[0]
    assert post["nominatedNode"] == "n-1"  # n-0 (the lowest victim) was dropped by the extender
    assert post["victims"] == ["default/low-1"]
    key = "NodeNameToMetaVictims" if cache else "NodeNameToVictims"
    assert request[key] == {"n-0": ["default/low-0"], "n-1": ["default/low-1"], "n-2": ["default/low-2"]}


@pytest.mark.parametrize(("rule", "message"), [
    ("empty", 'preemption: expected at least one victim pod on node "n-0"'),
    ("unknown_uid", "preemption: extender: {url} claims to preempt pod (UID: &{{no-such-uid}}) on node: n-0, "
                    "but the pod is not found on that node"),
])
def test_preemption_extender_errors(rule: str, message: str) -> None:
    with stubs({"preempt": {rule: {"names": ["n-0"]}}}) as pool:
        cfg = config({"urlPrefix": url(pool), "preemptVerb": "preempt", "nodeCacheCapable": True})
        post = explained(cfg, _preemption_cluster()).to_dict()["postfilter"]
    assert post["code"] == "Error"
    assert post["message"] == message.format(url=url(pool))


@pytest.mark.parametrize("behaviour", [SLOW, HTTP500, MALFORMED, "unreachable"],
                         ids=["timeout", "http500", "malformed", "unreachable"])
def test_ignorable_extender_failures_are_skipped(behaviour: object) -> None:
    with stubs(behaviour) as pool:
        cfg = config({"urlPrefix": url(pool), "filterVerb": "filter", "prioritizeVerb": "prioritize",
                      "weight": 1, "bindVerb": "bind", "ignorable": True, "httpTimeout": "300ms"})
        started = time.monotonic()
        result, _ = run_once(cfg, [*nodes(2), pod()])
    assert result.scheduled  # filter skipped, prioritize ignored, DefaultBinder bound it
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(("behaviour", "expected"), [
    (SLOW, 'Post "{url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'),
    (HTTP500, "failed filter with extender at URL {url}/filter, code 500"),
    (MALFORMED, "decoding the reply of filter from extender at URL {url}/filter: invalid JSON"),
    ({"faults": {"*": {"kind": "empty_body"}}}, "decoding the reply of filter from extender at URL {url}/filter: EOF"),
    ("unreachable", 'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'),
    ({"filter": {"error": "50% of nodes busy"}}, "50%!o(MISSING)f nodes busy"),
], ids=["timeout", "http500", "malformed", "empty-body", "unreachable", "error-field"])
def test_failures_of_a_non_ignorable_extender_fail_the_cycle(behaviour: object, expected: str) -> None:
    with stubs(behaviour) as pool:
        cfg = config({"urlPrefix": url(pool), "filterVerb": "filter", "httpTimeout": "300ms"})
        result, scheduler = run_once(cfg, [*nodes(2), pod(), pod("q")])
        following = scheduler.schedule_one()
    assert result.status.code is Code.ERROR
    assert result.message is not None
    assert result.message.startswith(expected.format(url=url(pool), port=pool.ports[0]))
    assert following is not None
    assert following.status.code is Code.ERROR


def test_prioritize_failure_is_ignored_even_when_not_ignorable() -> None:
    with stubs(HTTP500) as pool:
        cfg = config({"urlPrefix": url(pool), "prioritizeVerb": "prioritize", "weight": 3})
        out = explained(cfg, [*nodes(2), pod()]).to_dict()
    assert out["error"] is None
    assert out["selected"] is not None
    assert all("extender_entries" not in entry for entry in out["scores"].values())


def test_replies_are_decoded_case_insensitively() -> None:
    body = '{"nodenames": ["n-0", "n-2"], "FAILEDNODES": {"n-1": "no"}, "error": ""} trailing bytes are ignored'
    with stubs({"faults": {"filter": {"kind": "malformed", "body": body}}}) as pool:
        cfg = config({"urlPrefix": url(pool), "filterVerb": "filter", "nodeCacheCapable": True})
        out = explained(cfg, [*nodes(3), pod()]).to_dict()
    assert out["feasible"] == ["n-0", "n-2"]
    assert out["filtered"] == {"n-1": {"plugin": "", "code": "Unschedulable", "reasons": ["no"]}}


def test_oversized_reply_is_an_error() -> None:
    with stubs({}) as pool:
        extender = HTTPExtender.from_dict({"urlPrefix": url(pool), "filterVerb": "filter"})
        extender.max_response_bytes = 100
        infos = [NodeInfo.of(node) for node in nodes(3)]
        with pytest.raises(ExtenderError, match="over the limit of 100"):
            extender.filter(pod(), infos)


def test_node_names_outside_the_input_are_refused() -> None:
    with stubs({"filter": {"extra_names": ["ghost"]}}) as pool:
        cfg = config({"urlPrefix": url(pool), "filterVerb": "filter", "nodeCacheCapable": True})
        out = explained(cfg, [*nodes(2), pod()]).to_dict()
    assert out["error"] == (f'extender "{url(pool)}" claims a filtered node "ghost" which is not found in the '
                            "input node list")


def test_uninterested_extender_is_not_called() -> None:
    with stubs({"filter": {"fail": {"all": True}}}) as pool:
        cfg = config({"urlPrefix": url(pool), "filterVerb": "filter",
                      "managedResources": [{"name": "example.com/gpu"}]})
        result, _ = run_once(cfg, [*nodes(2), pod()])
        gpu_node = make_node("g", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110", "example.com/gpu": "1"})
        gpu_pod = make_pod("gp", requests={"cpu": "1", "example.com/gpu": "1"})
        refused, _ = run_once(cfg, [gpu_node, gpu_pod])
        calls = [r["pod"] for r in pool.requests(0)]
    assert result.scheduled
    assert not refused.scheduled
    assert calls == ["default/gp"]


def test_ignored_by_scheduler_replaces_node_resources_fit_ignored_resources() -> None:
    gpu_pod = make_pod("p", requests={"cpu": "1", "example.com/gpu": "2"})
    extender = {"urlPrefix": "http://127.0.0.1:9", "managedResources": [
        {"name": "example.com/gpu", "ignoredByScheduler": True}]}
    out = explained(config(extender), [*nodes(2), gpu_pod]).to_dict()
    plain = explained(config(), [*nodes(2), gpu_pod]).to_dict()
    assert out["feasible"] == ["n-0", "n-1"]
    assert plain["feasible"] == []


def test_config_builds_extenders_once_in_order() -> None:
    cfg = config({"urlPrefix": "http://127.0.0.1:9/a", "ignorable": True}, {"urlPrefix": "http://127.0.0.1:9/b"})
    scheduler = Scheduler(cfg)
    assert [e.name for e in scheduler._engine.extenders] == ["http://127.0.0.1:9/b", "http://127.0.0.1:9/a"]
