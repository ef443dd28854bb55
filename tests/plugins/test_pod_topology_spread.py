"""PodTopologySpread: constraints, counting rules, Filter, scoring, defaults and args (§9.11, §13.4)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.errors import ConfigError
from kschedlib.framework import CycleState, NodeInfo, PodInfo, Snapshot, Status
from kschedlib.framework.status import Code
from kschedlib.model import (
    Affinity,
    LabelSelector,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    OwnerReference,
    OwnerSelector,
    Pod,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from kschedlib.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PRE_FILTER_KEY,
    PodTopologySpread,
    PodTopologySpreadArgs,
    decode_args,
)
from kschedlib.plugins.pod_topology_spread.scoring import round_half_away
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
APP = LabelSelector({"app": "web"})
WEB = {"app": "web"}


def hard(key: str = ZONE, skew: int = 1, selector: LabelSelector | None = APP, **kw: Any) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(skew, key, "DoNotSchedule", selector, **kw)


def soft(key: str = ZONE, skew: int = 1, selector: LabelSelector | None = APP, **kw: Any) -> TopologySpreadConstraint:
    return TopologySpreadConstraint(skew, key, "ScheduleAnyway", selector, **kw)


def incoming(*constraints: TopologySpreadConstraint, labels: Mapping[str, str] = WEB, **kw: Any) -> Pod:
    return make_pod("incoming", labels=labels, topology_spread_constraints=constraints, **kw)


def web_pods(node: str, count: int, labels: Mapping[str, str] = WEB, **kw: Any) -> list[Pod]:
    return [make_pod(f"{node}-p{i}", labels=labels, node_name=node, **kw) for i in range(count)]


def zoned(layout: Sequence[tuple[str, str | None, int]], **node_kw: Any) -> list[NodeInfo]:
    """NodeInfos from (node, zone or None for no zone label, number of app=web pods)."""
    infos = []
    for name, zone, count in layout:
        labels = {HOST: name} | ({ZONE: zone} if zone is not None else {})
        infos.append(node_info(make_node(name, labels=labels, **node_kw), *web_pods(name, count)))
    return infos


def plugin(infos: Sequence[NodeInfo], args: PodTopologySpreadArgs | None = None,
           owners: Sequence[OwnerSelector] = ()) -> PodTopologySpread:
    return PodTopologySpread(args, FakeHandle(infos, owners=owners, kube_version="1.30"))


def filter_all(pl: PodTopologySpread, pod: Pod, infos: Sequence[NodeInfo]) -> dict[str, Status]:
    state = CycleState()
    assert pl.pre_filter(state, pod) == Status.success()
    return {info.name: pl.filter(state, pod, info) for info in infos}


def passing(statuses: Mapping[str, Status]) -> set[str]:
    return {name for name, status in statuses.items() if status.is_success}


def scores(pl: PodTopologySpread, pod: Pod, feasible: Sequence[NodeInfo]) -> tuple[dict[str, int], dict[str, int]]:
    """(raw, normalized) scores of ``feasible``."""
    state = CycleState()
    assert pl.pre_score(state, pod, feasible) == Status.success()
    raw = [pl.score(state, pod, info) for info in feasible]
    normalized = pl.normalize_score(state, pod, feasible, list(raw))
    names = [info.name for info in feasible]
    return dict(zip(names, raw, strict=True)), dict(zip(names, normalized, strict=True))


ABC = [("a1", "A", 2), ("a2", "A", 1), ("b1", "B", 1), ("c1", "C", 0)]
PTS = "PodTopologySpread"  # the plugin names its rejections itself

# --- Filter -----------------------------------------------------------------------------------


def test_filter_worked_example() -> None:
    infos = zoned(ABC)
    statuses = filter_all(plugin(infos), incoming(hard()), infos)
    assert passing(statuses) == {"c1"}
    assert statuses["a1"] == Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin=PTS)
    assert statuses["b1"].code is Code.UNSCHEDULABLE


def test_filter_worked_example_min_domains_four_same_result() -> None:
    infos = zoned(ABC)
    assert passing(filter_all(plugin(infos), incoming(hard(min_domains=4)), infos)) == {"c1"}


@pytest.mark.parametrize(
    ("min_domains", "expected"),
    [(None, {"a1", "b1"}), (2, {"a1", "b1"}), (3, set())],
    ids=["default-1", "enough-domains", "too-few-domains-min-is-0"],
)
def test_min_domains(min_domains: int | None, expected: set[str]) -> None:
    infos = zoned([("a1", "A", 1), ("b1", "B", 1)])
    pod = incoming(hard(min_domains=min_domains))
    assert passing(filter_all(plugin(infos), pod, infos)) == expected


def test_constraints_checked_in_order_missing_label_first_per_constraint() -> None:
    racked = {"rack": "r1"}
    a1 = node_info(make_node("a1", labels={ZONE: "A"} | racked), *web_pods("a1", 5))
    b1 = node_info(make_node("b1", labels={ZONE: "B"} | racked))
    c1 = node_info(make_node("c1", labels={ZONE: "A"}))  # zone A is over-full, and no rack label
    x1 = node_info(make_node("x1", labels=racked))
    pod = incoming(hard(skew=1), hard(key="rack", skew=9))
    statuses = filter_all(plugin([a1, b1, c1, x1]), pod, [a1, b1, c1, x1])
    assert statuses == {
        "a1": Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin=PTS),
        "b1": Status.success(),
        "c1": Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH, plugin=PTS),
        "x1": Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH, plugin=PTS),
    }


def test_key_without_any_domain_is_ignored() -> None:
    # No node has both keys: no domain exists, so only the missing-label check remains.
    infos = zoned([("a1", "A", 5), ("b1", "B", 0)])
    rack = node_info(make_node("r1", labels={"rack": "r1"}))
    pod = incoming(hard(skew=1), hard(key="rack"))
    statuses = filter_all(plugin([*infos, rack]), pod, [*infos, rack])
    expected = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH, plugin=PTS)
    assert statuses == {"a1": expected, "b1": expected, "r1": expected}


def test_missing_label_reason_text() -> None:
    assert ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


def test_nodes_lacking_a_key_do_not_form_domains() -> None:
    # x1 holds many matching pods but has no zone label: it counts nowhere.
    infos = zoned([("a1", "A", 1), ("b1", "B", 1), ("x1", None, 9)])
    statuses = filter_all(plugin(infos), incoming(hard()), infos)
    assert passing(statuses) == {"a1", "b1"}
    assert statuses["x1"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        (APP, {"app": "other"}, {"a1", "b1", "c1"}),  # no self-match: 1 + 0 - 0 <= 1 everywhere
        (None, WEB, {"a1", "b1", "c1"}),  # nil selector: counts 0 and no self-match
        (LabelSelector(), WEB, {"a1", "b1", "c1"}),  # {}: counts 0, self-match 1 -> skew 1
    ],
    ids=["no-self-match", "nil-selector", "empty-selector-counts-zero"],
)
def test_selector_edge_cases(selector: LabelSelector | None, labels: Mapping[str, str], expected: set[str]) -> None:
    infos = zoned([("a1", "A", 1), ("b1", "B", 1), ("c1", "C", 0)])
    assert passing(filter_all(plugin(infos), incoming(hard(selector=selector), labels=labels), infos)) == expected


def test_empty_selector_self_match_still_counts() -> None:
    infos = zoned([("a1", "A", 3), ("b1", "B", 0)])
    pod = incoming(hard(skew=1, selector=LabelSelector()))
    state = CycleState()
    pl = plugin(infos)
    pl.pre_filter(state, pod)
    assert state.read(PRE_FILTER_KEY).counts == {ZONE: {"A": 0, "B": 0}}
    # maxSkew 0 would be invalid in the API; use it to observe the self-match of 1.
    pod0 = incoming(hard(skew=0, selector=LabelSelector()))
    assert passing(filter_all(pl, pod0, infos)) == set()


def test_counts_only_same_namespace_and_not_terminating() -> None:
    infos = zoned([("a1", "A", 0), ("b1", "B", 0)])
    a1 = node_info(
        make_node("a1", labels={HOST: "a1", ZONE: "A"}),
        *web_pods("a1", 3, namespace="other"),
        *web_pods("a1", 3, deletion_timestamp=1.0),
        make_pod("counted", labels=WEB, node_name="a1"),
    )
    infos[0] = a1
    state = CycleState()
    plugin(infos).pre_filter(state, incoming(hard()))
    assert state.read(PRE_FILTER_KEY).counts == {ZONE: {"A": 1, "B": 0}}


def test_domains_with_zero_pods_exist() -> None:
    infos = zoned([("a1", "A", 0), ("b1", "B", 0)])
    state = CycleState()
    plugin(infos).pre_filter(state, incoming(hard()))
    s = state.read(PRE_FILTER_KEY)
    assert s.counts == {ZONE: {"A": 0, "B": 0}}
    assert s.domains == {ZONE: 2}
    assert s.paths[ZONE].first_count == 0


def test_hostname_constraint_filter() -> None:
    infos = zoned([("n1", "A", 2), ("n2", "A", 1), ("n3", "A", 1)])
    assert passing(filter_all(plugin(infos), incoming(hard(key=HOST)), infos)) == {"n2", "n3"}


def test_two_hard_constraints_same_key_share_counts_last_wins() -> None:
    # kube counts each node once per (key, value): the last constraint's count overwrites the first's.
    a1 = node_info(make_node("a1", labels={ZONE: "A"}), *web_pods("a1", 2))
    b1 = node_info(make_node("b1", labels={ZONE: "B"}))
    pod = incoming(hard(selector=APP), hard(selector=LabelSelector({"tier": "y"})))
    statuses = filter_all(plugin([a1, b1]), pod, [a1, b1])
    assert passing(statuses) == {"a1", "b1"}


# --- node inclusion policies ------------------------------------------------------------------


def affinity_to(zone: str) -> Affinity:
    term = NodeSelectorTerm((NodeSelectorRequirement(ZONE, "In", (zone,)),))
    return Affinity(node_affinity=NodeAffinity(required=NodeSelector((term,))))


@pytest.mark.parametrize(
    ("policy", "expected_counts"),
    [(None, {"A": 0, "C": 1}), ("Honor", {"A": 0, "C": 1}), ("Ignore", {"A": 0, "B": 5, "C": 1})],
    ids=["default-honor", "honor", "ignore"],
)
def test_node_affinity_policy(policy: str | None, expected_counts: dict[str, int]) -> None:
    infos = zoned([("a1", "A", 0), ("b1", "B", 5), ("c1", "C", 1)])
    selector = NodeSelector((NodeSelectorTerm((NodeSelectorRequirement(ZONE, "In", ("A", "C")),)),))
    pod = incoming(hard(node_affinity_policy=policy), affinity=Affinity(node_affinity=NodeAffinity(selector)))
    state = CycleState()
    plugin(infos).pre_filter(state, pod)
    assert state.read(PRE_FILTER_KEY).counts[ZONE] == expected_counts


def test_node_affinity_policy_honors_node_selector() -> None:
    infos = zoned([("a1", "A", 0), ("b1", "B", 5)])
    pod = incoming(hard(), node_selector={ZONE: "A"})
    state = CycleState()
    plugin(infos).pre_filter(state, pod)
    assert state.read(PRE_FILTER_KEY).counts[ZONE] == {"A": 0}


@pytest.mark.parametrize(
    ("policy", "tolerations", "expected_counts"),
    [
        (None, (), {"A": 0, "B": 5}),
        ("Ignore", (), {"A": 0, "B": 5}),
        ("Honor", (), {"A": 0}),
        ("Honor", (Toleration("k", "Equal", "v", "NoSchedule"),), {"A": 0, "B": 5}),
    ],
    ids=["default-ignore", "ignore", "honor-untolerated", "honor-tolerated"],
)
def test_node_taints_policy(policy: str | None, tolerations: tuple[Toleration, ...],
                            expected_counts: dict[str, int]) -> None:
    a1 = node_info(make_node("a1", labels={ZONE: "A"}, taints=[Taint("soft", "PreferNoSchedule")]))
    b1 = node_info(make_node("b1", labels={ZONE: "B"}, taints=[Taint("k", "NoSchedule", "v")]), *web_pods("b1", 5))
    pod = incoming(hard(node_taints_policy=policy), tolerations=tolerations)
    state = CycleState()
    plugin([a1, b1]).pre_filter(state, pod)
    assert state.read(PRE_FILTER_KEY).counts[ZONE] == expected_counts


# --- matchLabelKeys -----------------------------------------------------------------------------


def test_match_label_keys_narrow_the_selector() -> None:
    v1 = {"app": "web", "pod-template-hash": "v1"}
    v2 = {"app": "web", "pod-template-hash": "v2"}
    a1 = node_info(make_node("a1", labels={ZONE: "A"}), *web_pods("a1", 3, labels=v1))
    b1 = node_info(make_node("b1", labels={ZONE: "B"}), *web_pods("b1", 1, labels=v2))
    infos = [a1, b1]
    with_keys = incoming(hard(match_label_keys=("pod-template-hash", "absent")), labels=v2)
    without = incoming(hard(), labels=v2)
    assert passing(filter_all(plugin(infos), with_keys, infos)) == {"a1"}
    assert passing(filter_all(plugin(infos), without, infos)) == {"b1"}


def test_match_label_keys_do_not_revive_a_nil_selector() -> None:
    infos = zoned([("a1", "A", 3), ("b1", "B", 0)])
    pod = incoming(hard(selector=None, match_label_keys=("app",)))
    state = CycleState()
    plugin(infos).pre_filter(state, pod)
    assert state.read(PRE_FILTER_KEY).counts[ZONE] == {"A": 0, "B": 0}


# --- Skip paths and errors ----------------------------------------------------------------------


def test_pre_filter_skips_without_hard_constraints() -> None:
    infos = zoned(ABC)
    pl = plugin(infos)
    assert pl.pre_filter(CycleState(), make_pod("plain", labels=WEB)) == Status.skip()
    assert pl.pre_filter(CycleState(), incoming(soft())) == Status.skip()


def test_pre_score_skips_without_soft_constraints_or_nodes() -> None:
    infos = zoned(ABC)
    assert plugin(infos).pre_score(CycleState(), incoming(hard()), infos) == Status.skip()
    assert plugin(infos).pre_score(CycleState(), make_pod("plain", labels=WEB), infos) == Status.skip()
    assert plugin([]).pre_score(CycleState(), incoming(soft()), []) == Status.skip()


def test_filter_without_pre_filter_state_is_an_error() -> None:
    infos = zoned(ABC)
    status = plugin(infos).filter(CycleState(), incoming(hard()), infos[0])
    assert status.code is Code.ERROR
    assert status.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


def test_score_without_pre_score_state_raises() -> None:
    infos = zoned(ABC)
    pl = plugin(infos)
    with pytest.raises(LookupError, match="error reading \"PreScorePodTopologySpread\" from cycleState"):
        pl.score(CycleState(), incoming(soft()), infos[0])
    with pytest.raises(LookupError, match="error reading \"PreScorePodTopologySpread\" from cycleState"):
        pl.normalize_score(CycleState(), incoming(soft()), [], [])


# --- scoring ------------------------------------------------------------------------------------


def test_score_worked_example() -> None:
    infos = zoned([("a1", "A", 2), ("a2", "A", 1), ("b1", "B", 1), ("c1", "C", 0)])
    raw, normalized = scores(plugin(infos), incoming(soft()), infos)
    assert raw == {"a1": 5, "a2": 5, "b1": 2, "c1": 0}  # round(3 ln 5) = round(4.83); round(ln 5) = 2
    assert normalized == {"a1": 0, "a2": 0, "b1": 60, "c1": 100}
    assert {name: 2 * score for name, score in normalized.items()} == {"a1": 0, "a2": 0, "b1": 120, "c1": 200}


def test_score_counts_all_nodes_but_registers_only_feasible_domains() -> None:
    # d1 (zone D) is not feasible: its domain is not registered; zone A's pods on infeasible a2 count.
    infos = zoned([("a1", "A", 0), ("a2", "A", 4), ("b1", "B", 1), ("d1", "D", 7)])
    feasible = [infos[0], infos[2]]
    raw, normalized = scores(plugin(infos), incoming(soft()), feasible)
    weight = math.log(2 + 2)
    assert raw == {"a1": round_half_away(4 * weight), "b1": round_half_away(weight)}
    assert raw == {"a1": 6, "b1": 1}
    assert normalized == {"a1": 100 * (6 + 1 - 6) // 6, "b1": 100}


def test_hostname_soft_constraint_counted_at_score() -> None:
    infos = zoned([("n0", "A", 3), ("n1", "A", 1), ("n2", "A", 1), ("n3", "A", 0)])
    raw, normalized = scores(plugin(infos), incoming(soft(key=HOST, skew=2)), infos)
    weight = math.log(4 + 2)
    assert raw == {name: round_half_away(n * weight + 1) for name, n in [("n0", 3), ("n1", 1), ("n2", 1), ("n3", 0)]}
    assert raw == {"n0": 6, "n1": 3, "n2": 3, "n3": 1}
    assert normalized == {"n0": 16, "n1": 66, "n2": 66, "n3": 100}


def test_explicit_constraints_ignore_nodes_without_every_key() -> None:
    infos = zoned([("a1", "A", 1), ("b1", "B", 0), ("x1", None, 0)])
    raw, normalized = scores(plugin(infos), incoming(soft()), infos)
    assert raw["x1"] == 0
    assert normalized == {"a1": 0, "b1": 100, "x1": 0}


def test_two_soft_constraints_on_one_key_share_domain_counters() -> None:
    a1 = node_info(make_node("a1", labels={ZONE: "A"}), *web_pods("a1", 1))
    b1 = node_info(make_node("b1", labels={ZONE: "B"}), *web_pods("b1", 2, labels={"tier": "y"}))
    pod = incoming(soft(selector=APP), soft(skew=3, selector=LabelSelector({"tier": "y"})))
    raw, normalized = scores(plugin([a1, b1]), pod, [a1, b1])
    # Domains A and B hold 1 and 2 pods for both constraints; sizes are 2 and 0 (weights ln 4, ln 2).
    assert raw == {"a1": round_half_away(math.log(4) + math.log(2) + 2),
                   "b1": round_half_away(2 * math.log(4) + 2 * math.log(2) + 2)}
    assert raw == {"a1": 4, "b1": 6}
    assert normalized == {"a1": 100, "b1": 66}


def test_normalize_all_zero_gives_max() -> None:
    infos = zoned([("a1", "A", 0), ("b1", "B", 0)])
    assert scores(plugin(infos), incoming(soft()), infos)[1] == {"a1": 100, "b1": 100}


@pytest.mark.parametrize(
    ("value", "rounded"),
    [(0.0, 0), (0.5, 1), (1.5, 2), (2.5, 3), (2.4999, 2), (0.49999999999999994, 0), (-2.5, -3)],
    ids=["zero", "half", "one-half", "two-half", "below-half", "just-below-half", "negative"],
)
def test_round_half_away(value: float, rounded: int) -> None:
    assert round_half_away(value) == rounded


# --- default constraints --------------------------------------------------------------------------


SERVICE = OwnerSelector("Service", "web-svc", selector=LabelSelector({"app": "web"}))


def test_system_defaults_with_a_service_owner() -> None:
    # Hostname (maxSkew 3) and zone (maxSkew 5) soft constraints; x1 lacks a zone yet is scored.
    infos = zoned([("a1", "A", 2), ("b1", "B", 0), ("x1", None, 1)])
    pod = make_pod("plain", labels=WEB)
    pl = plugin(infos, owners=[SERVICE, OwnerSelector("Service", "other", selector=LabelSelector({"app": "x"}))])
    assert pl.pre_filter(CycleState(), pod) == Status.skip()
    raw, _ = scores(pl, pod, infos)
    host_w, zone_w = math.log(3 + 2), math.log(3 + 2)  # 3 feasible hosts; zones A, B and "" (no label)
    assert raw == {
        "a1": round_half_away(2 * host_w + 2 + 2 * zone_w + 4),
        "b1": round_half_away(0 * host_w + 2 + 0 * zone_w + 4),
        "x1": round_half_away(1 * host_w + 2),
    }


def test_system_defaults_without_owners_skip() -> None:
    infos = zoned(ABC)
    pod = make_pod("plain", labels=WEB)
    assert plugin(infos).pre_score(CycleState(), pod, infos) == Status.skip()
    unrelated = OwnerSelector("Service", "s", selector=LabelSelector({"app": "db"}))
    assert plugin(infos, owners=[unrelated]).pre_score(CycleState(), pod, infos) == Status.skip()


def owned_pod(api_version: str, kind: str = "ReplicaSet", controller: bool = True) -> Pod:
    ref = OwnerReference(kind, "rs-1", api_version=api_version, controller=controller)
    return make_pod("owned", labels={"app": "web", "tier": "t"}, owner_references=(ref,))


@pytest.mark.parametrize(
    ("pod", "scored"),
    [
        (owned_pod("apps/v1"), True),
        (owned_pod("apps/v1", kind="StatefulSet"), True),
        (owned_pod("v1", kind="ReplicationController"), True),
        (owned_pod("extensions/v1beta1"), False),
        (owned_pod(""), False),
        (owned_pod("apps/v1", controller=False), False),
    ],
    ids=["replicaset", "statefulset", "replicationcontroller", "old-api-group", "no-api-version", "not-controller"],
)
def test_system_defaults_with_a_controller(pod: Pod, scored: bool) -> None:
    infos = zoned(ABC)
    owners = [OwnerSelector(kind, "rs-1", selector=LabelSelector({"tier": "t"}))
              for kind in ("ReplicaSet", "StatefulSet", "ReplicationController")]
    status = plugin(infos, owners=owners).pre_score(CycleState(), pod, infos)
    assert status == (Status.success() if scored else Status.skip())


def test_default_selector_ands_services_and_controller() -> None:
    # The ReplicaSet's selector joins even though it does not select the pod: nothing matches then.
    a1 = node_info(make_node("a1", labels={HOST: "a1", ZONE: "A"}), *web_pods("a1", 2))
    b1 = node_info(make_node("b1", labels={HOST: "b1", ZONE: "B"}))
    rs = OwnerSelector("ReplicaSet", "rs-1", selector=LabelSelector({"tier": "nope"}))
    pod = make_pod("owned", labels=WEB, owner_references=(OwnerReference("ReplicaSet", "rs-1", api_version="apps/v1",
                                                                          controller=True),))
    raw, _ = scores(plugin([a1, b1], owners=[SERVICE, rs]), pod, [a1, b1])
    assert raw == {"a1": 6, "b1": 6}  # no pod counted: only the maxSkew - 1 terms (2 + 4)


LIST_ARGS = PodTopologySpreadArgs(
    (TopologySpreadConstraint(1, ZONE, "DoNotSchedule"), TopologySpreadConstraint(2, HOST, "ScheduleAnyway")),
    "List",
)


def test_list_defaulting_filters_with_owner_selector() -> None:
    infos = zoned([("a1", "A", 2), ("b1", "B", 0), ("x1", None, 0)])
    pod = make_pod("plain", labels=WEB)
    statuses = filter_all(plugin(infos, LIST_ARGS, owners=[SERVICE]), pod, infos)
    assert passing(statuses) == {"b1"}
    assert statuses["x1"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_list_defaulting_requires_all_keys_for_scoring() -> None:
    infos = zoned([("a1", "A", 2), ("x1", None, 0)])
    pod = make_pod("plain", labels=WEB)
    args = PodTopologySpreadArgs((TopologySpreadConstraint(1, ZONE, "ScheduleAnyway"),), "List")
    raw, normalized = scores(plugin(infos, args, owners=[SERVICE]), pod, infos)
    assert raw["x1"] == 0
    assert normalized["x1"] == 0


def test_list_defaulting_without_owners_skips() -> None:
    infos = zoned(ABC)
    assert plugin(infos, LIST_ARGS).pre_filter(CycleState(), make_pod("plain", labels=WEB)) == Status.skip()


def test_own_constraints_replace_defaults() -> None:
    infos = zoned(ABC)
    pod = incoming(soft(key=HOST))
    assert plugin(infos, LIST_ARGS, owners=[SERVICE]).pre_filter(CycleState(), pod) == Status.skip()


# --- AddPod / RemovePod -----------------------------------------------------------------------------


def pre_filtered(infos: Sequence[NodeInfo], pod: Pod) -> tuple[PodTopologySpread, CycleState]:
    pl = plugin(infos)
    state = CycleState()
    assert pl.pre_filter(state, pod) == Status.success()
    return pl, state


def test_add_pod_counts_and_clone_is_deep() -> None:
    infos = zoned([("a1", "A", 0), ("b1", "B", 1)])
    pod = incoming(hard())
    pl, state = pre_filtered(infos, pod)
    copy = state.clone()
    assert pl.add_pod(copy, pod, PodInfo.of(make_pod("new", labels=WEB)), infos[0]).is_success
    assert copy.read(PRE_FILTER_KEY).counts[ZONE] == {"A": 1, "B": 1}
    assert copy.read(PRE_FILTER_KEY).paths[ZONE].first_count == 1
    assert state.read(PRE_FILTER_KEY).counts[ZONE] == {"A": 0, "B": 1}
    assert state.read(PRE_FILTER_KEY).paths[ZONE].first_count == 0
    assert pl.filter(copy, pod, infos[0]).is_success  # 1 + 1 - 1
    assert pl.filter(state, pod, infos[1]).code is Code.UNSCHEDULABLE  # 1 + 1 - 0


@pytest.mark.parametrize(
    "other",
    [
        make_pod("ns", namespace="other", labels=WEB),
        make_pod("unmatched", labels={"app": "db"}),
    ],
    ids=["other-namespace", "not-selected"],
)
def test_add_pod_ignores_unrelated_pods(other: Pod) -> None:
    infos = zoned([("a1", "A", 0), ("b1", "B", 1)])
    pod = incoming(hard())
    pl, state = pre_filtered(infos, pod)
    pl.add_pod(state, pod, PodInfo.of(other), infos[0])
    assert state.read(PRE_FILTER_KEY).counts[ZONE] == {"A": 0, "B": 1}


def test_add_pod_on_node_without_every_key_or_not_eligible_is_ignored() -> None:
    infos = zoned([("a1", "A", 0), ("b1", "B", 1), ("x1", None, 0)])
    pod = incoming(hard(), node_selector={ZONE: "B"})
    pl, state = pre_filtered(infos, pod)
    pl.add_pod(state, pod, PodInfo.of(make_pod("new", labels=WEB)), infos[2])
    pl.add_pod(state, pod, PodInfo.of(make_pod("new2", labels=WEB)), infos[0])  # fails the node selector
    assert state.read(PRE_FILTER_KEY).counts[ZONE] == {"B": 1}


def test_add_remove_without_state_is_an_error() -> None:
    infos = zoned(ABC)
    status = plugin(infos).remove_pod(CycleState(), incoming(hard()), PodInfo.of(make_pod("x")), infos[0])
    assert status.code is Code.ERROR


# --- brute-force restatement and properties ---------------------------------------------------------

ZONES = ("A", "B", "C", "D")


@st.composite
def clusters(draw: st.DrawFn) -> list[NodeInfo]:
    """Nodes in random zones (some without a zone) with pods of random app, namespace and state."""
    infos = []
    for i in range(draw(st.integers(1, 7))):
        name = f"n{i}"
        zone = draw(st.sampled_from((*ZONES, None)))
        labels = {HOST: name} | ({ZONE: zone} if zone else {})
        pods = [
            make_pod(f"{name}-{j}", labels={"app": draw(st.sampled_from(("web", "db")))}, node_name=name,
                     namespace=draw(st.sampled_from(("default", "default", "other"))),
                     deletion_timestamp=draw(st.sampled_from((None, None, None, 1.0))))
            for j in range(draw(st.integers(0, 4)))
        ]
        infos.append(node_info(make_node(name, labels=labels), *pods))
    return infos


def brute_counts(infos: Sequence[NodeInfo], selector: Mapping[str, str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for info in infos:
        assert info.node is not None
        zone = info.node.labels.get(ZONE)
        if zone is None:
            continue
        counts[zone] = counts.get(zone, 0) + sum(
            1 for p in info.pods
            if p.pod.namespace == "default" and p.pod.deletion_timestamp is None
            and all(p.pod.labels.get(k) == v for k, v in selector.items())
        )
    return counts


def global_min(counts: Mapping[str, int], min_domains: int) -> int:
    return 0 if len(counts) < min_domains else min(counts.values())


@given(clusters(), st.integers(1, 3), st.integers(1, 5), st.booleans())
@settings(max_examples=200)
def test_filter_matches_brute_force(infos: list[NodeInfo], max_skew: int, min_domains: int, self_match: bool) -> None:
    pod = incoming(hard(skew=max_skew, min_domains=min_domains), labels=WEB if self_match else {"app": "db"})
    statuses = filter_all(plugin(infos), pod, infos)
    counts = brute_counts(infos, WEB)
    for info in infos:
        assert info.node is not None
        zone = info.node.labels.get(ZONE)
        if zone is None:
            assert statuses[info.name].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
            continue
        skew = counts[zone] + int(self_match) - global_min(counts, min_domains)
        assert statuses[info.name].is_success == (skew <= max_skew)


@given(clusters(), st.integers(1, 3), st.integers(1, 5))
@settings(max_examples=200)
def test_placing_on_a_passing_node_keeps_skew_within_max(infos: list[NodeInfo], max_skew: int,
                                                         min_domains: int) -> None:
    pod = incoming(hard(skew=max_skew, min_domains=min_domains))
    before = brute_counts(infos, WEB)
    before_skew = max(before.values(), default=0) - global_min(before, min_domains)
    for name in passing(filter_all(plugin(infos), pod, infos)):
        after = [info.with_pod(PodInfo.of(pod)) if info.name == name else info for info in infos]
        counts = brute_counts(after, WEB)
        zone_skew = counts[before_zone(infos, name)] - global_min(counts, min_domains)
        assert zone_skew <= max_skew
        assert max(counts.values()) - global_min(counts, min_domains) <= max(max_skew, before_skew)


def before_zone(infos: Sequence[NodeInfo], name: str) -> str:
    node = next(info.node for info in infos if info.name == name)
    assert node is not None
    return node.labels[ZONE]


@given(clusters(), st.lists(st.tuples(st.integers(0, 6), st.sampled_from(("web", "db")),
                                      st.sampled_from(("default", "other"))), max_size=5))
@settings(max_examples=200)
def test_add_then_remove_restores_state(infos: list[NodeInfo], additions: list[tuple[int, str, str]]) -> None:
    pod = incoming(hard(), hard(key=HOST, skew=2))
    if not any(info.node is not None and ZONE in info.node.labels for info in infos):
        return
    pl, state = pre_filtered(infos, pod)
    original = state.read(PRE_FILTER_KEY)
    copy = state.clone()
    added = [(PodInfo.of(make_pod(f"x{i}", labels={"app": app}, namespace=ns)), infos[index % len(infos)])
             for i, (index, app, ns) in enumerate(additions)]
    for info, target in added:
        assert pl.add_pod(copy, pod, info, target).is_success
    for info, target in reversed(added):
        assert pl.remove_pod(copy, pod, info, target).is_success
    restored = copy.read(PRE_FILTER_KEY)
    # AddPod may create a domain PreFilter never saw; after RemovePod it is left holding 0.
    kept = {k: {v: n for v, n in c.items() if n or v in original.counts[k]} for k, c in restored.counts.items()}
    assert kept == original.counts
    minimums = {k: p.first_count for k, p in original.paths.items()}
    assert {k: p.first_count for k, p in restored.paths.items()} == minimums
    assert [pl.filter(copy, pod, i) for i in infos] == [pl.filter(state, pod, i) for i in infos]


@given(clusters(), st.data())
@settings(max_examples=200)
def test_normalized_scores_within_range(infos: list[NodeInfo], data: st.DataObject) -> None:
    feasible = data.draw(st.lists(st.sampled_from(infos), min_size=1, unique_by=lambda i: i.name))
    constraints = data.draw(st.lists(st.builds(soft, st.sampled_from((ZONE, HOST, "rack")), st.integers(1, 6),
                                               st.sampled_from((APP, None, LabelSelector()))), min_size=1, max_size=3))
    _, normalized = scores(plugin(infos), incoming(*constraints), feasible)
    assert all(0 <= score <= 100 for score in normalized.values())


# --- args -------------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert decode_args(None) == PodTopologySpreadArgs((), "System")
    assert decode_args({}) == PodTopologySpreadArgs((), "System")
    assert decode_args({"apiVersion": "x", "kind": "PodTopologySpreadArgs", "defaultingType": ""}) == \
        PodTopologySpreadArgs()


def test_args_list_decoded() -> None:
    args = decode_args({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3,
         "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor", "matchLabelKeys": ["a"]},
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway"},
    ]})
    assert args == PodTopologySpreadArgs(
        (TopologySpreadConstraint(2, ZONE, "DoNotSchedule", None, 3, "Ignore", "Honor", ("a",)),
         TopologySpreadConstraint(1, ZONE, "ScheduleAnyway")),
        "List",
    )


def constraint(**overrides: Any) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"} | overrides


QNAME = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
         "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


@pytest.mark.parametrize(
    ("raw", "field", "message", "value"),
    [
        ({"defaultingType": "Foo"}, "defaultingType", 'supported values: "System", "List"', "Foo"),
        ({"defaultConstraints": [constraint()]}, "defaultingType", "when .defaultConstraints are not empty",
         "System"),
        ({"defaultingType": "List", "defaultConstraints": [constraint(maxSkew=0)]},
         "defaultConstraints[0].maxSkew", "not in valid range (0, inf)", 0),
        ({"defaultingType": "List", "defaultConstraints": [constraint(maxSkew=-1, topologyKey="")]},
         "defaultConstraints[0].maxSkew", "not in valid range (0, inf)", -1),
        ({"defaultingType": "List", "defaultConstraints": [constraint(topologyKey="")]},
         "defaultConstraints[0].topologyKey", "can not be empty", None),
        ({"defaultingType": "List", "defaultConstraints": [constraint(topologyKey="-bad")]},
         "defaultConstraints[0].topologyKey", "name part " + QNAME, "-bad"),
        ({"defaultingType": "List", "defaultConstraints": [constraint(topologyKey="a/b/c")]},
         "defaultConstraints[0].topologyKey", "a qualified name " + QNAME
         + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", "a/b/c"),
        ({"defaultingType": "List", "defaultConstraints": [constraint(topologyKey="/zone")]},
         "defaultConstraints[0].topologyKey", "prefix part must be non-empty", "/zone"),
        ({"defaultingType": "List", "defaultConstraints": [constraint(topologyKey="Bad_Prefix/zone")]},
         "defaultConstraints[0].topologyKey", "prefix part " + SUBDOMAIN, "Bad_Prefix/zone"),
        ({"defaultingType": "List", "defaultConstraints": [constraint(topologyKey="example.com/")]},
         "defaultConstraints[0].topologyKey", "name part must be non-empty", "example.com/"),
        ({"defaultingType": "List", "defaultConstraints": [constraint(topologyKey="x" * 64)]},
         "defaultConstraints[0].topologyKey", "name part must be no more than 63 characters", "x" * 64),
        ({"defaultingType": "List", "defaultConstraints": [constraint(whenUnsatisfiable=None)]},
         "defaultConstraints[0].whenUnsatisfiable", "can not be empty", None),
        ({"defaultingType": "List", "defaultConstraints": [constraint(whenUnsatisfiable="Never")]},
         "defaultConstraints[0].whenUnsatisfiable", 'supported values: "DoNotSchedule", "ScheduleAnyway"', "Never"),
        ({"defaultingType": "List", "defaultConstraints": [constraint(labelSelector={"matchLabels": {"a": "b"}})]},
         "defaultConstraints[0].labelSelector", "constraint must not define a selector, as they deduced for each pod",
         None),
        ({"defaultingType": "List", "defaultConstraints": [constraint(labelSelector={})]},
         "defaultConstraints[0].labelSelector", "constraint must not define a selector, as they deduced for each pod",
         None),
        ({"defaultingType": "List", "defaultConstraints": [constraint(), constraint(maxSkew=3)]},
         "defaultConstraints[1]", "Duplicate value", "{topology.kubernetes.io/zone, DoNotSchedule}"),
        ({"defaultingType": "List", "defaultConstraints": [constraint(maxSkew="1")]},
         "defaultConstraints[0].maxSkew", "must be of type int", "1"),
        ({"defaultingType": "List", "defaultConstraints": {"maxSkew": 1}},
         "defaultConstraints", "must be of type list", {"maxSkew": 1}),
    ],
    ids=["defaulting-type-unsupported", "system-with-constraints", "max-skew-zero", "max-skew-checked-first",
         "topology-key-empty", "topology-key-bad-name", "topology-key-two-slashes", "topology-key-empty-prefix",
         "topology-key-bad-prefix", "topology-key-empty-name", "topology-key-too-long", "when-empty",
         "when-unsupported", "label-selector", "empty-label-selector", "duplicate", "max-skew-type", "list-type"],
)
def test_args_validation(raw: dict[str, Any], field: str, message: str, value: object) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args(raw)
    assert (info.value.field, info.value.message, info.value.value) == (field, message, value)


def test_duplicates_differ_by_action_are_allowed() -> None:
    decode_args({"defaultingType": "List",
                 "defaultConstraints": [constraint(), constraint(whenUnsatisfiable="ScheduleAnyway")]})


def test_constructor_validates_args() -> None:
    with pytest.raises(ConfigError, match=r"when \.defaultConstraints are not empty"):
        PodTopologySpread(PodTopologySpreadArgs((TopologySpreadConstraint(1, ZONE, "DoNotSchedule"),)),
                          FakeHandle(kube_version="1.30"))


# --- counts remembered across cycles ----------------------------------------------------------------


def pre_filter_counts(pl: PodTopologySpread, pod: Pod) -> dict[str, dict[str, int]]:
    state = CycleState()
    assert pl.pre_filter(state, pod) == Status.success()
    return state.read(PRE_FILTER_KEY).counts


def test_counts_follow_changed_nodes_across_cycles() -> None:
    infos = zoned([("a1", "A", 1), ("b1", "B", 0)])
    handle = FakeHandle(infos)
    pl = PodTopologySpread(None, handle)
    pod = incoming(hard())
    assert pre_filter_counts(pl, pod) == {ZONE: {"A": 1, "B": 0}}
    added = infos[1].with_pod(PodInfo.of(make_pod("new", labels=WEB, node_name="b1")))
    handle.set_snapshot(Snapshot([infos[0], added]))
    assert pre_filter_counts(pl, pod) == {ZONE: {"A": 1, "B": 1}}
    handle.set_snapshot(Snapshot([infos[0].with_image_states({}), infos[1]]))  # same pods, new NodeInfo
    assert pre_filter_counts(pl, pod) == {ZONE: {"A": 1, "B": 0}}


@given(clusters(), st.lists(st.tuples(st.integers(0, 6), st.booleans(), st.sampled_from(("web", "db"))), max_size=8))
@settings(max_examples=100)
def test_remembered_counts_equal_fresh_counts(infos: list[NodeInfo], changes: list[tuple[int, bool, str]]) -> None:
    pod = incoming(hard(), soft(skew=2))
    handle = FakeHandle(infos)
    long_lived = PodTopologySpread(None, handle)
    for step, (index, add, app) in enumerate(changes):
        target = infos[index % len(infos)]
        if add:
            changed = target.with_pod(PodInfo.of(make_pod(f"s{step}", labels={"app": app}, node_name=target.name)))
        elif target.pods:
            changed = target.without_pod(target.pods[0].pod)
        else:
            continue
        infos = [changed if info.name == target.name else info for info in infos]
        handle.set_snapshot(Snapshot(infos))
        fresh = PodTopologySpread(None, FakeHandle(infos, kube_version="1.30"))
        if any(info.node is not None and ZONE in info.node.labels for info in infos):
            assert pre_filter_counts(long_lived, pod) == pre_filter_counts(fresh, pod)
        assert scores(long_lived, pod, infos) == scores(fresh, pod, infos)
