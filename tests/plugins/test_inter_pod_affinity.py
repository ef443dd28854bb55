"""InterPodAffinity: required terms as a filter, preferred terms as a score (reference §9.12)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kschedlib.errors import ConfigError, SelectorError
from kschedlib.framework import CycleState, Handle, NodeInfo, PodInfo, Status
from kschedlib.framework.pod_info import AffinityTerm
from kschedlib.framework.status import Code
from kschedlib.model import (
    Affinity,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    Requirement,
    WeightedPodAffinityTerm,
)
from kschedlib.plugins.inter_pod_affinity import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    PRE_FILTER_KEY,
    InterPodAffinity,
    InterPodAffinityArgs,
    PreFilterState,
    decode_args,
)
from kschedlib.plugins.inter_pod_affinity.scoring import PRE_SCORE_KEY, PreScoreState
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
EVERYTHING = LabelSelector()
NO_TEAM = Requirement("team", "DoesNotExist")
IGNORE = "ignorePreferredTermsOfExistingPods"
NAMESPACES = (
    Namespace("default", {"kubernetes.io/metadata.name": "default"}),
    Namespace("other", {"team": "a", "env": "prod"}),
    Namespace("third", {"team": "b", "env": "dev"}),
)


# --- builders -------------------------------------------------------------------------------


def sel(**labels: str) -> LabelSelector:
    return LabelSelector(labels)


def term(
    key: str = ZONE,
    selector: LabelSelector | None = EVERYTHING,
    *,
    namespaces: tuple[str, ...] = (),
    ns_selector: LabelSelector | None = None,
) -> PodAffinityTerm:
    return PodAffinityTerm(key, selector, namespaces, ns_selector)


def weighted(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(weight, t)


def pod(
    name: str,
    node: str = "",
    *,
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    required: Sequence[PodAffinityTerm] = (),
    anti: Sequence[PodAffinityTerm] = (),
    preferred: Sequence[WeightedPodAffinityTerm] = (),
    preferred_anti: Sequence[WeightedPodAffinityTerm] = (),
) -> Pod:
    """A pod, bound to ``node`` when given, with the pod (anti-)affinity terms given."""
    pod_affinity = PodAffinity(tuple(required), tuple(preferred)) if required or preferred else None
    pod_anti = PodAffinity(tuple(anti), tuple(preferred_anti)) if anti or preferred_anti else None
    affinity = None
    if pod_affinity is not None or pod_anti is not None:
        affinity = Affinity(pod_affinity=pod_affinity, pod_anti_affinity=pod_anti)
    return make_pod(
        name, namespace=namespace, labels=labels, node_name=node, affinity=affinity, uid=f"{namespace}/{name}"
    )


def nodes_abcd() -> list[Node]:
    """n1, n2 in zone-a, n3 in zone-b, n4 with no zone label."""
    return [
        make_node("n1", labels={HOST: "n1", ZONE: "zone-a"}),
        make_node("n2", labels={HOST: "n2", ZONE: "zone-a"}),
        make_node("n3", labels={HOST: "n3", ZONE: "zone-b"}),
        make_node("n4", labels={HOST: "n4"}),
    ]


def cluster(pods: Iterable[Pod], nodes: Sequence[Node] | None = None) -> FakeHandle:
    nodes = nodes_abcd() if nodes is None else nodes
    pods = list(pods)
    infos = [node_info(n, *(p for p in pods if p.node_name == n.name)) for n in nodes]
    return FakeHandle(infos, namespaces=NAMESPACES, kube_version="1.30")


def filter_all(handle: FakeHandle, incoming: Pod) -> dict[str, Status]:
    plugin = InterPodAffinity(None, handle)
    state = CycleState()
    result = plugin.pre_filter(state, incoming)
    assert isinstance(result, Status)
    if result.is_skip:
        return {info.name: Status.success() for info in handle.snapshot}
    assert result.is_success, result
    return {info.name: plugin.filter(state, incoming, info) for info in handle.snapshot}


def outcome(status: Status) -> str:
    """A short name for a filter result, checked against the exact code and reason."""
    table = {
        (Code.SUCCESS, ()): "ok",
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_AFFINITY_RULES_NOT_MATCH,)): "affinity",
        (Code.UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,)): "anti",
        (Code.UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,)): "existing",
    }
    return table.get((status.code, status.reasons), f"unexpected {status}")


def raw_and_normalized(
    handle: FakeHandle, incoming: Pod, args: InterPodAffinityArgs | None = None
) -> tuple[dict[str, int], dict[str, int]] | None:
    """Raw and normalized scores over every node, or None when PreScore skips."""
    plugin = InterPodAffinity(args, handle)
    state = CycleState()
    nodes = list(handle.snapshot)
    status = plugin.pre_score(state, incoming, nodes)
    if status.is_skip:
        return None
    assert status.is_success, status
    raw = [plugin.score(state, incoming, n) for n in nodes]
    normalized = plugin.normalize_score(state, incoming, nodes, list(raw))
    names = [n.name for n in nodes]
    return dict(zip(names, raw, strict=True)), dict(zip(names, normalized, strict=True))


# --- args -----------------------------------------------------------------------------------


def test_args_defaults() -> None:
    assert InterPodAffinityArgs() == InterPodAffinityArgs(1, False)
    assert decode_args(None) == InterPodAffinityArgs(1, False)
    assert decode_args({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs"}) == (
        InterPodAffinityArgs(1, False)
    )
    assert decode_args({"hardPodAffinityWeight": None, "ignorePreferredTermsOfExistingPods": None}) == (
        InterPodAffinityArgs(1, False)
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"hardPodAffinityWeight": 0}, InterPodAffinityArgs(0, False)),
        ({"hardPodAffinityWeight": 100}, InterPodAffinityArgs(100, False)),
        ({"ignorePreferredTermsOfExistingPods": True}, InterPodAffinityArgs(1, True)),
        ({"hardPodAffinityWeight": 7, IGNORE: False}, InterPodAffinityArgs(7, False)),
    ],
    ids=["weight-0", "weight-100", "ignore-true", "both"],
)
def test_args_decoded(raw: dict[str, Any], expected: InterPodAffinityArgs) -> None:
    assert decode_args(raw) == expected


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight", "not in valid range [0, 100]"),
        ({"hardPodAffinityWeight": 101}, "hardPodAffinityWeight", "not in valid range [0, 100]"),
        ({"hardPodAffinityWeight": "5"}, "hardPodAffinityWeight", "must be an integer"),
        ({"hardPodAffinityWeight": True}, "hardPodAffinityWeight", "must be an integer"),
        ({IGNORE: "yes"}, IGNORE, "must be a boolean"),
    ],
    ids=["weight-negative", "weight-101", "weight-string", "weight-bool", "ignore-string"],
)
def test_args_invalid(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args(raw)
    assert info.value.field == field
    assert info.value.message == message


def test_constructor_validates_args() -> None:
    with pytest.raises(ConfigError, match=r"not in valid range \[0, 100\]"):
        InterPodAffinity(InterPodAffinityArgs(hard_pod_affinity_weight=101), cluster([]))
    assert InterPodAffinity(None, cluster([])).args == InterPodAffinityArgs()


# --- PreFilter Skip -------------------------------------------------------------------------


class _NoScanSnapshot:
    """A snapshot that fails the test if the plugin walks every node."""

    have_pods_with_required_anti_affinity: tuple[NodeInfo, ...] = ()
    have_pods_with_affinity: tuple[NodeInfo, ...] = ()

    @property
    def node_infos(self) -> tuple[NodeInfo, ...]:
        raise AssertionError("walked every node")


class _NoScanHandle:
    snapshot = _NoScanSnapshot()


def test_plain_pod_on_plain_cluster_skips_without_scanning() -> None:
    plugin = InterPodAffinity(None, cast(Handle, _NoScanHandle()))
    state = CycleState()
    assert plugin.pre_filter(state, pod("p")) == Status.skip()
    assert state.get(PRE_FILTER_KEY) is None
    assert plugin.pre_score(state, pod("p"), [node_info(make_node("n1"))]) == Status.skip()


@pytest.mark.parametrize(
    ("existing", "incoming", "skipped"),
    [
        ([pod("e", "n1", labels={"app": "web"})], pod("p"), True),
        ([], pod("p", preferred=[weighted(5, term(selector=sel(app="web")))]), True),
        ([pod("e", "n1", anti=[term(selector=sel(app="db"))])], pod("p", labels={"app": "web"}), True),
        ([pod("e", "n1", anti=[term(selector=sel(app="web"))])], pod("p", labels={"app": "web"}), False),
        ([], pod("p", required=[term(selector=sel(app="web"))]), False),
        ([], pod("p", anti=[term(selector=sel(app="web"))]), False),
    ],
    ids=[
        "no-affinity-anywhere",
        "only-preferred-terms",
        "existing-anti-not-matching",
        "existing-anti-matching",
        "own-required-affinity",
        "own-required-anti-affinity",
    ],
)
def test_pre_filter_skip(existing: list[Pod], incoming: Pod, skipped: bool) -> None:
    state = CycleState()
    result = InterPodAffinity(None, cluster(existing)).pre_filter(state, incoming)
    assert result == (Status.skip() if skipped else Status.success())
    assert (state.get(PRE_FILTER_KEY) is None) is skipped


def test_parse_error_is_unresolvable(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(cls: type[AffinityTerm], t: PodAffinityTerm, namespace: str) -> AffinityTerm:
        raise SelectorError("bad selector")

    monkeypatch.setattr(AffinityTerm, "parse", classmethod(broken))
    plugin = InterPodAffinity(None, cluster([]))
    one = pod("p", required=[term()])
    expected = Status.unresolvable("parsing pod: requiredAffinityTerms: bad selector")
    assert plugin.pre_filter(CycleState(), one) == expected
    two = pod("p", required=[term()], preferred_anti=[weighted(1, term())])
    assert plugin.pre_filter(CycleState(), two) == Status.unresolvable(
        "parsing pod: [requiredAffinityTerms: bad selector, preferredAntiAffinityTerms: bad selector]"
    )
    status = plugin.pre_score(CycleState(), two, list(cluster([]).snapshot))
    assert status == Status.from_error(
        "failed to parse pod: [requiredAffinityTerms: bad selector, preferredAntiAffinityTerms: bad selector]"
    )


# --- Filter ---------------------------------------------------------------------------------

WEB = {"app": "web"}
CACHE, DB = {"app": "cache"}, {"app": "db"}
FILTER_CASES: list[tuple[str, list[Pod], Pod, str]] = [
    # (id, existing pods, incoming pod, expected outcomes of n1 n2 n3 n4)
    (
        "affinity-zone",
        [pod("e", "n1", labels=WEB)],
        pod("p", required=[term(ZONE, sel(app="web"))]),
        "ok ok affinity affinity",
    ),
    (
        "affinity-hostname",
        [pod("e", "n1", labels=WEB)],
        pod("p", required=[term(HOST, sel(app="web"))]),
        "ok affinity affinity affinity",
    ),
    (
        "affinity-one-pod-must-match-all-terms",
        [pod("e1", "n1", labels=WEB), pod("e2", "n3", labels={"tier": "front"})],
        pod("p", required=[term(ZONE, sel(app="web")), term(ZONE, sel(tier="front"))]),
        "affinity affinity affinity affinity",
    ),
    (
        "affinity-two-terms-each-domain-checked",
        [pod("e1", "n1", labels={"app": "web", "tier": "front"})],
        pod("p", required=[term(ZONE, sel(app="web")), term(HOST, sel(tier="front"))]),
        "ok affinity affinity affinity",
    ),
    (
        "first-pod-of-group-accepted-where-keys-exist",
        [pod("e", "n1", labels={"app": "db"})],
        pod("p", labels=WEB, required=[term(ZONE, sel(app="web"))]),
        "ok ok ok affinity",
    ),
    (
        "first-pod-exception-needs-self-match",
        [],
        pod("p", labels={"app": "api"}, required=[term(ZONE, sel(app="web"))]),
        "affinity affinity affinity affinity",
    ),
    (
        "first-pod-exception-off-once-a-pod-matches",
        [pod("e", "n3", labels=WEB)],
        pod("p", labels=WEB, required=[term(ZONE, sel(app="web"))]),
        "affinity affinity ok affinity",
    ),
    (
        "nil-label-selector-matches-nothing",
        [pod("e", "n1", labels=WEB)],
        pod("p", labels=WEB, required=[term(ZONE, None)]),
        "affinity affinity affinity affinity",
    ),
    (
        "empty-label-selector-matches-every-pod",
        [pod("e", "n3", labels={"x": "y"})],
        pod("p", required=[term(ZONE, EVERYTHING)]),
        "affinity affinity ok affinity",
    ),
    (
        "anti-affinity-hostname",
        [pod("e", "n1", labels={"app": "db"})],
        pod("p", anti=[term(HOST, sel(app="db"))]),
        "anti ok ok ok",
    ),
    (
        "anti-affinity-zone-node-without-key-passes",
        [pod("e", "n1", labels={"app": "db"})],
        pod("p", anti=[term(ZONE, sel(app="db"))]),
        "anti anti ok ok",
    ),
    (
        "existing-anti-affinity",
        [pod("e", "n1", anti=[term(ZONE, sel(app="web"))])],
        pod("p", labels=WEB),
        "existing existing ok ok",
    ),
    (
        "existing-anti-affinity-other-labels",
        [pod("e", "n1", anti=[term(ZONE, sel(app="web"))])],
        pod("p", labels={"app": "api"}),
        "ok ok ok ok",
    ),
    (
        "affinity-checked-first",
        [pod("db", "n1", labels=DB, anti=[term(ZONE, sel(app="web"))]), pod("c", "n3", labels={"app": "c"})],
        pod("p", labels=WEB, required=[term(HOST, sel(app="c"))], anti=[term(ZONE, sel(app="db"))]),
        "affinity affinity ok affinity",
    ),
    (
        "anti-checked-before-existing",
        [pod("db", "n1", labels=DB, anti=[term(ZONE, sel(app="web"))])],
        pod("p", labels=WEB, anti=[term(ZONE, sel(app="db"))]),
        "anti anti ok ok",
    ),
    # namespaces of the incoming pod's terms
    (
        "term-defaults-to-own-namespace",
        [pod("e", "n1", labels=WEB, namespace="other")],
        pod("p", required=[term(ZONE, sel(app="web"))]),
        "affinity affinity affinity affinity",
    ),
    (
        "term-namespaces-list",
        [pod("e", "n1", labels=WEB, namespace="other")],
        pod("p", required=[term(ZONE, sel(app="web"), namespaces=("other",))]),
        "ok ok affinity affinity",
    ),
    (
        "namespace-selector-adds-matching-namespaces",
        [pod("e1", "n1", labels=WEB, namespace="other"), pod("e3", "n3", labels=WEB, namespace="third")],
        pod("p", anti=[term(ZONE, sel(app="web"), ns_selector=sel(team="a"))]),
        "anti anti ok ok",
    ),
    (
        "namespace-selector-union-with-list",
        [pod("e1", "n1", labels=WEB, namespace="other"), pod("e3", "n3", labels=WEB, namespace="third")],
        pod("p", anti=[term(ZONE, sel(app="web"), namespaces=("third",), ns_selector=sel(team="a"))]),
        "anti anti anti ok",
    ),
    (
        "empty-namespace-selector-is-every-namespace",
        [pod("e", "n3", labels=WEB, namespace="third")],
        pod("p", anti=[term(ZONE, sel(app="web"), ns_selector=EVERYTHING)]),
        "ok ok anti ok",
    ),
    (
        "empty-namespace-selector-even-unlisted-namespace",
        [pod("e", "n3", labels=WEB, namespace="unlisted")],
        pod("p", anti=[term(ZONE, sel(app="web"), ns_selector=EVERYTHING)]),
        "ok ok anti ok",
    ),
    (
        "namespace-selector-never-selects-unlisted-namespace",
        [pod("e", "n3", labels=WEB, namespace="unlisted")],
        pod("p", anti=[term(ZONE, sel(app="web"), ns_selector=LabelSelector(match_expressions=(NO_TEAM,)))]),
        "ok ok ok ok",
    ),
    (
        "namespace-selector-leaves-out-own-namespace",
        [],
        pod("p", labels=WEB, required=[term(ZONE, sel(app="web"), ns_selector=sel(team="a"))]),
        "affinity affinity affinity affinity",
    ),
    (
        "empty-namespace-selector-self-match",
        [],
        pod("p", labels=WEB, required=[term(ZONE, sel(app="web"), ns_selector=EVERYTHING)]),
        "ok ok ok affinity",
    ),
    # existing pods' terms use the incoming pod's namespace labels
    (
        "existing-term-namespace-selector-matches-incoming-namespace",
        [pod("e", "n3", namespace="third", anti=[term(ZONE, sel(app="web"), ns_selector=sel(env="prod"))])],
        pod("p", labels=WEB, namespace="other"),
        "ok ok existing ok",
    ),
    (
        "existing-term-namespace-selector-other-namespace",
        [pod("e", "n3", namespace="third", anti=[term(ZONE, sel(app="web"), ns_selector=sel(env="prod"))])],
        pod("p", labels=WEB, namespace="default"),
        "ok ok ok ok",
    ),
    (
        "existing-term-defaults-to-its-own-namespace",
        [pod("e", "n3", namespace="third", anti=[term(ZONE, sel(app="web"))])],
        pod("p", labels=WEB, namespace="other"),
        "ok ok ok ok",
    ),
]


@pytest.mark.parametrize(
    ("existing", "incoming", "expected"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_filter(existing: list[Pod], incoming: Pod, expected: str) -> None:
    results = filter_all(cluster(existing), incoming)
    assert " ".join(outcome(results[name]) for name in ("n1", "n2", "n3", "n4")) == expected


def test_filter_and_add_pod_without_pre_filter_state_are_errors() -> None:
    plugin = InterPodAffinity(None, cluster([]))
    info = node_info(make_node("n1"))
    message = 'error reading "PreFilterInterPodAffinity" from cycleState: not found'
    assert plugin.filter(CycleState(), pod("p"), info) == Status.from_error(message)
    assert plugin.add_pod(CycleState(), pod("p"), PodInfo.of(pod("q")), info) == Status.from_error(message)
    assert plugin.remove_pod(CycleState(), pod("p"), PodInfo.of(pod("q")), info) == Status.from_error(message)


# --- AddPod / RemovePod ---------------------------------------------------------------------


def _pre_filtered(handle: FakeHandle, incoming: Pod) -> tuple[InterPodAffinity, CycleState]:
    plugin = InterPodAffinity(None, handle)
    state = CycleState()
    assert plugin.pre_filter(state, incoming) == Status.success()
    return plugin, state


def test_add_pod_then_remove_pod() -> None:
    handle = cluster([])
    incoming = pod("p", anti=[term(HOST, sel(app="db"))])
    plugin, state = _pre_filtered(handle, incoming)
    n1 = handle.snapshot.get("n1")
    db = PodInfo.of(pod("db", "n1", labels={"app": "db"}))
    assert plugin.add_pod(state, incoming, db, n1).is_success
    assert outcome(plugin.filter(state, incoming, n1)) == "anti"
    assert state.read(PRE_FILTER_KEY).anti_affinity == {(HOST, "n1"): 1}
    assert plugin.remove_pod(state, incoming, db, n1).is_success
    assert state.read(PRE_FILTER_KEY).anti_affinity == {}
    assert outcome(plugin.filter(state, incoming, n1)) == "ok"


def test_removing_the_only_match_reopens_first_pod_exception() -> None:
    existing = pod("e", "n3", labels=WEB)
    handle = cluster([existing])
    incoming = pod("p", labels=WEB, required=[term(ZONE, sel(app="web"))])
    plugin, state = _pre_filtered(handle, incoming)
    n1, n3 = handle.snapshot.get("n1"), handle.snapshot.get("n3")
    assert outcome(plugin.filter(state, incoming, n1)) == "affinity"
    assert plugin.remove_pod(state, incoming, PodInfo.of(existing), n3).is_success
    assert state.read(PRE_FILTER_KEY).affinity == {}
    assert outcome(plugin.filter(state, incoming, n1)) == "ok"


def test_add_pod_with_anti_affinity_against_incoming() -> None:
    handle = cluster([])
    incoming = pod("p", labels=WEB, required=[term(ZONE, sel(app="web"))])
    plugin, state = _pre_filtered(handle, incoming)
    n3 = handle.snapshot.get("n3")
    guard = PodInfo.of(pod("g", "n3", anti=[term(ZONE, sel(app="web"))]))
    assert plugin.add_pod(state, incoming, guard, n3).is_success
    assert outcome(plugin.filter(state, incoming, n3)) == "existing"


def test_clone_is_independent() -> None:
    handle = cluster([pod("e", "n1", labels={"app": "db"})])
    incoming = pod("p", anti=[term(HOST, sel(app="db"))])
    plugin, state = _pre_filtered(handle, incoming)
    copy = state.clone()
    n2 = handle.snapshot.get("n2")
    plugin.add_pod(copy, incoming, PodInfo.of(pod("db2", "n2", labels={"app": "db"})), n2)
    assert outcome(plugin.filter(copy, incoming, n2)) == "anti"
    assert outcome(plugin.filter(state, incoming, n2)) == "ok"
    assert state.read(PRE_FILTER_KEY).anti_affinity == {(HOST, "n1"): 1}


# --- scoring --------------------------------------------------------------------------------


def _normalize(raw: Sequence[int]) -> list[int]:
    """NormalizeScore's result."""
    plugin = InterPodAffinity(None, cluster([]))
    state = CycleState()
    state.write(PRE_SCORE_KEY, PreScoreState(((ZONE, {"zone-a": 1}, 1),)))
    nodes = [node_info(make_node(f"n{i}")) for i in range(len(raw))]
    return plugin.normalize_score(state, pod("p"), nodes, list(raw))


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ([10, -5, 0], [100, 0, 33]),
        ([0, 29, 50], [0, 57, 100]),
        ([7, 7, 7], [0, 0, 0]),
        ([-3, -1], [0, 100]),
        ([], []),
    ],
    ids=["reference-example", "divide-first-57-not-58", "all-equal", "all-negative", "empty"],
)
def test_normalize_score(raw: list[int], normalized: list[int]) -> None:
    assert _normalize(raw) == normalized


def test_reference_example_weighted() -> None:
    assert [2 * s for s in _normalize([10, -5, 0])] == [200, 0, 66]


def test_normalize_without_topology_scores_leaves_scores() -> None:
    plugin = InterPodAffinity(None, cluster([]))
    state = CycleState()
    state.write(PRE_SCORE_KEY, PreScoreState(()))
    nodes = [node_info(make_node("a")), node_info(make_node("b"))]
    assert plugin.normalize_score(state, pod("p"), nodes, [5, -5]) == [5, -5]


def test_score_without_pre_score_state() -> None:
    plugin = InterPodAffinity(None, cluster([]))
    message = 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'
    with pytest.raises(LookupError, match=message):
        plugin.score(CycleState(), pod("p"), node_info(make_node("n1")))
    with pytest.raises(LookupError, match=message):
        plugin.normalize_score(CycleState(), pod("p"), [], [])


ScoreCase = tuple[str, list[Pod], Pod, InterPodAffinityArgs | None, tuple[list[int], list[int]] | None]
PROD_PREFERENCE = weighted(3, term(ZONE, EVERYTHING, ns_selector=sel(env="prod")))
SCORE_CASES: list[ScoreCase] = [
    (
        "incoming-preferred-affinity-and-anti",
        [pod("c", "n1", labels=CACHE), pod("d1", "n1", labels=DB), pod("d3", "n3", labels=DB)],
        pod(
            "p",
            preferred=[weighted(10, term(ZONE, sel(app="cache")))],
            preferred_anti=[weighted(5, term(HOST, sel(app="db")))],
        ),
        None,
        ([5, 10, -5, 0], [66, 100, 0, 33]),
    ),
    (
        "existing-required-affinity-hard-weight-default",
        [pod("e", "n1", required=[term(ZONE, sel(app="web"))])],
        pod("p", labels=WEB),
        None,
        ([1, 1, 0, 0], [100, 100, 0, 0]),
    ),
    (
        "existing-required-affinity-hard-weight-7",
        [pod("e", "n1", required=[term(ZONE, sel(app="web"))])],
        pod("p", labels=WEB),
        InterPodAffinityArgs(hard_pod_affinity_weight=7),
        ([7, 7, 0, 0], [100, 100, 0, 0]),
    ),
    (
        "existing-required-affinity-hard-weight-0",
        [pod("e", "n1", required=[term(ZONE, sel(app="web"))])],
        pod("p", labels=WEB),
        InterPodAffinityArgs(hard_pod_affinity_weight=0),
        None,
    ),
    (
        "existing-preferred-terms",
        [
            pod(
                "e",
                "n3",
                preferred=[weighted(7, term(ZONE, sel(app="web")))],
                preferred_anti=[weighted(2, term(HOST, sel(app="web")))],
            )
        ],
        pod("p", labels=WEB),
        None,
        ([0, 0, 5, 0], [0, 0, 100, 0]),
    ),
    (
        "ignore-existing-preferred-skips-pod-without-preferences",
        [pod("e", "n3", preferred=[weighted(7, term(ZONE, sel(app="web")))])],
        pod("p", labels=WEB),
        InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
        None,
    ),
    (
        "ignore-existing-preferred-still-counts-them-for-pod-with-preferences",
        [pod("e", "n3", preferred=[weighted(7, term(ZONE, sel(app="web")))])],
        pod("p", labels=WEB, preferred=[weighted(1, term(HOST, sel(app="nothing")))]),
        InterPodAffinityArgs(ignore_preferred_terms_of_existing_pods=True),
        ([0, 0, 7, 0], [0, 0, 100, 0]),
    ),
    (
        "pods-without-affinity-ignored-unless-incoming-has-preferences",
        [pod("c", "n1", labels=CACHE)],
        pod("p", labels=WEB),
        None,
        None,
    ),
    (
        "incoming-preferred-namespace-selector",
        [pod("c1", "n1", labels=CACHE, namespace="other"), pod("c3", "n3", labels=CACHE, namespace="third")],
        pod("p", preferred=[weighted(4, term(ZONE, sel(app="cache"), ns_selector=sel(team="b")))]),
        None,
        ([0, 0, 4, 0], [0, 0, 100, 0]),
    ),
    (
        "existing-preferred-namespace-selector-uses-incoming-namespace",
        [pod("e", "n1", namespace="third", preferred=[PROD_PREFERENCE])],
        pod("p", namespace="other"),
        None,
        ([3, 3, 0, 0], [100, 100, 0, 0]),
    ),
    (
        "existing-preferred-namespace-selector-other-namespace",
        [pod("e", "n1", namespace="third", preferred=[PROD_PREFERENCE])],
        pod("p", namespace="default"),
        None,
        None,
    ),
    (
        "matched-terms-cancelling-out-still-score",
        [
            pod(
                "e",
                "n1",
                preferred=[weighted(3, term(ZONE, sel(app="web")))],
                preferred_anti=[weighted(3, term(ZONE, sel(app="web")))],
            )
        ],
        pod("p", labels=WEB),
        None,
        ([0, 0, 0, 0], [0, 0, 0, 0]),
    ),
]


@pytest.mark.parametrize(
    ("existing", "incoming", "args", "expected"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(
    existing: list[Pod],
    incoming: Pod,
    args: InterPodAffinityArgs | None,
    expected: tuple[list[int], list[int]] | None,
) -> None:
    got = raw_and_normalized(cluster(existing), incoming, args)
    if expected is None:
        assert got is None
        return
    assert got is not None
    raw, normalized = got
    names = ("n1", "n2", "n3", "n4")
    assert ([raw[n] for n in names], [normalized[n] for n in names]) == expected


def test_pre_score_without_nodes_skips() -> None:
    handle = cluster([pod("e", "n1", required=[term(ZONE, sel(app="web"))])])
    assert InterPodAffinity(None, handle).pre_score(CycleState(), pod("p", labels=WEB), []) == Status.skip()


def test_nodes_without_labels_contribute_nothing() -> None:
    bare = Node("bare", allocatable=make_node("x").allocatable)
    handle = cluster([pod("e", "bare", required=[term(ZONE, sel(app="web"))])], nodes=[bare, *nodes_abcd()])
    assert raw_and_normalized(handle, pod("p", labels=WEB)) is None


# --- properties -----------------------------------------------------------------------------

NODE_LABELS = st.fixed_dictionaries({}, optional={ZONE: st.sampled_from(["za", "zb"]), "rack": st.just("r1")})
APP = st.sampled_from(["x", "y", "z"])
POD_NAMESPACES = st.sampled_from(["default", "other", "third", "unknown"])
label_selectors = st.one_of(
    st.none(),
    st.just(EVERYTHING),
    st.builds(lambda app: sel(app=app), APP),
)
TEAM = st.sampled_from(["a", "b"])
ns_selectors = st.one_of(st.none(), st.just(EVERYTHING), st.builds(lambda team: sel(team=team), TEAM))
terms = st.builds(
    term,
    st.sampled_from([ZONE, HOST, "rack"]),
    label_selectors,
    namespaces=st.lists(POD_NAMESPACES, max_size=1).map(tuple),
    ns_selector=ns_selectors,
)
weighted_terms = st.builds(weighted, st.integers(1, 100), terms)


@st.composite
def pods(draw: st.DrawFn, name: str, node: str = "") -> Pod:
    return pod(
        name,
        node,
        labels=draw(st.fixed_dictionaries({}, optional={"app": APP})),
        namespace=draw(POD_NAMESPACES),
        required=draw(st.lists(terms, max_size=2)),
        anti=draw(st.lists(terms, max_size=2)),
        preferred=draw(st.lists(weighted_terms, max_size=2)),
        preferred_anti=draw(st.lists(weighted_terms, max_size=2)),
    )


@st.composite
def clusters(draw: st.DrawFn) -> tuple[FakeHandle, Pod]:
    count = draw(st.integers(1, 4))
    nodes = [make_node(f"n{i}", labels={HOST: f"n{i}", **draw(NODE_LABELS)}) for i in range(count)]
    hosts = st.integers(0, count - 1)
    existing = [draw(pods(f"e{i}", f"n{draw(hosts)}")) for i in range(draw(st.integers(0, 6)))]
    return cluster(existing, nodes), draw(pods("incoming"))


def _ns_labels(namespace: str) -> Mapping[str, str] | None:
    """Labels of a known namespace; None for a namespace the cluster does not list."""
    for ns in NAMESPACES:
        if ns.name == namespace:
            return ns.labels
    return None


def _incoming_selects(t: AffinityTerm, other: Pod) -> bool:
    """An incoming term, restated: a namespaceSelector selects only namespaces the cluster lists."""
    selector = t.namespace_selector
    labels = _ns_labels(other.namespace)
    in_namespace = other.namespace in t.namespaces or (
        selector is not None and (selector.is_empty() or (labels is not None and selector.matches(labels)))
    )
    return in_namespace and t.selector is not None and t.selector.matches(other.labels)


def _same_domain(key: str, a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    return key in a and key in b and a[key] == b[key]


def _placed(handle: FakeHandle) -> list[tuple[PodInfo, Mapping[str, str]]]:
    return [(p, info.node.labels) for info in handle.snapshot for p in info.pods if info.node is not None]


def _violates_anti_affinity(handle: FakeHandle, incoming: Pod, labels: Mapping[str, str]) -> bool:
    """Brute force: placing ``incoming`` on a node with ``labels`` breaks a required anti-affinity."""
    mine = PodInfo.of(incoming)
    own_ns_labels = _ns_labels(incoming.namespace) or {}
    for existing, where in _placed(handle):
        for t in mine.required_anti_affinity_terms:
            if _incoming_selects(t, existing.pod) and _same_domain(t.topology_key, labels, where):
                return True
        for t in existing.required_anti_affinity_terms:
            if t.matches(incoming, own_ns_labels) and _same_domain(t.topology_key, labels, where):
                return True
    return False


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_accepted_nodes_never_violate_anti_affinity(case: tuple[FakeHandle, Pod]) -> None:
    handle, incoming = case
    results = filter_all(handle, incoming)
    for info in handle.snapshot:
        status = results[info.name]
        assert info.node is not None
        violates = _violates_anti_affinity(handle, incoming, info.node.labels)
        if status.is_success:
            assert not violates
        elif status.code is Code.UNSCHEDULABLE:
            assert violates


def _brute_affinity_ok(handle: FakeHandle, incoming: Pod, labels: Mapping[str, str]) -> bool:
    wanted = PodInfo.of(incoming).required_affinity_terms
    if any(t.topology_key not in labels for t in wanted):
        return False
    if not wanted:
        return True

    def all_match(p: Pod) -> bool:
        return all(_incoming_selects(t, p) for t in wanted)

    placed = _placed(handle)
    def domain_has_match(t: AffinityTerm) -> bool:
        return any(all_match(p.pod) and _same_domain(t.topology_key, labels, w) for p, w in placed)

    if all(domain_has_match(t) for t in wanted):
        return True
    nobody = not any(all_match(p.pod) and any(t.topology_key in w for t in wanted) for p, w in placed)
    return nobody and all_match(incoming)


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_affinity_verdict_matches_brute_force(case: tuple[FakeHandle, Pod]) -> None:
    handle, incoming = case
    results = filter_all(handle, incoming)
    for info in handle.snapshot:
        assert info.node is not None
        rejected = results[info.name].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert rejected is not _brute_affinity_ok(handle, incoming, info.node.labels)


def _counts(state: PreFilterState) -> tuple[dict[Any, int], ...]:
    return dict(state.existing_anti_affinity), dict(state.affinity), dict(state.anti_affinity)


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.data())
def test_add_pod_matches_pre_filter_and_remove_pod_restores(
    case: tuple[FakeHandle, Pod], data: st.DataObject
) -> None:
    handle, incoming = case
    infos = list(handle.snapshot)
    target = data.draw(st.sampled_from(infos))
    added = data.draw(pods("added", target.name))
    plugin = InterPodAffinity(None, handle)
    state = CycleState()
    assume(plugin.pre_filter(state, incoming) == Status.success())
    before = _counts(state.read(PRE_FILTER_KEY))
    added_info = PodInfo.of(added)
    assert plugin.add_pod(state, incoming, added_info, target).is_success
    # the same counts as a PreFilter over a cluster that really holds the pod
    grown = FakeHandle([i.with_pod(added_info) if i is target else i for i in infos],
                       namespaces=NAMESPACES, kube_version="1.30")
    fresh = CycleState()
    assert InterPodAffinity(None, grown).pre_filter(fresh, incoming) == Status.success()
    assert _counts(state.read(PRE_FILTER_KEY)) == _counts(fresh.read(PRE_FILTER_KEY))
    assert plugin.remove_pod(state, incoming, added_info, target).is_success
    assert _counts(state.read(PRE_FILTER_KEY)) == before


def _brute_raw_score(handle: FakeHandle, incoming: Pod, labels: Mapping[str, str], hard: int) -> int:
    mine = PodInfo.of(incoming)
    own_ns_labels = _ns_labels(incoming.namespace) or {}
    total = 0
    for existing, where in _placed(handle):
        if not where:
            continue
        for w in mine.preferred_affinity_terms:
            if _incoming_selects(w.term, existing.pod) and _same_domain(w.term.topology_key, labels, where):
                total += w.weight
        for w in mine.preferred_anti_affinity_terms:
            if _incoming_selects(w.term, existing.pod) and _same_domain(w.term.topology_key, labels, where):
                total -= w.weight
        for t in existing.required_affinity_terms:
            if hard and t.matches(incoming, own_ns_labels) and _same_domain(t.topology_key, labels, where):
                total += hard
        for w in existing.preferred_affinity_terms:
            if w.term.matches(incoming, own_ns_labels) and _same_domain(w.term.topology_key, labels, where):
                total += w.weight
        for w in existing.preferred_anti_affinity_terms:
            if w.term.matches(incoming, own_ns_labels) and _same_domain(w.term.topology_key, labels, where):
                total -= w.weight
    return total


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 100))
def test_scores_match_brute_force_and_normalize_into_range(case: tuple[FakeHandle, Pod], hard: int) -> None:
    handle, incoming = case
    got = raw_and_normalized(handle, incoming, InterPodAffinityArgs(hard_pod_affinity_weight=hard))
    brute = {
        info.name: _brute_raw_score(handle, incoming, info.node.labels, hard)
        for info in handle.snapshot
        if info.node is not None
    }
    if got is None:
        assert set(brute.values()) <= {0}
        return
    raw, normalized = got
    assert raw == brute
    assert all(0 <= s <= 100 for s in normalized.values())
    if max(raw.values()) > min(raw.values()):
        assert max(normalized.values()) == 100
        assert min(normalized.values()) == 0


@given(st.lists(st.integers(-(2**40), 2**40), max_size=40))
def test_normalizing_once_per_distinct_raw_score_is_kube_formula_per_node(raw: list[int]) -> None:
    """NormalizeScore scales each distinct raw score once; the answer is kube's formula node by node."""
    from kschedlib.plugins.inter_pod_affinity.scoring import normalized_values

    if not raw or max(raw) == min(raw):
        expected = [0] * len(raw)
    else:
        lowest, span = min(raw), float(max(raw) - min(raw))
        expected = [int(100.0 * (float(score - lowest) / span)) for score in raw]
    assert normalized_values(list(raw)) == expected


@given(st.lists(st.tuples(st.sampled_from(["zone", "host", "rack"]),
                          st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(-50, 50), max_size=3),
                          st.integers(-100, 100)), max_size=4),
       st.lists(st.dictionaries(st.sampled_from(["zone", "host", "rack"]), st.sampled_from(["a", "b", "c", "d"])),
                max_size=12))
def test_scoring_a_batch_of_nodes_is_scoring_each(parts: list[tuple[str, dict[str, int], int]],
                                                  labels: list[dict[str, str]]) -> None:
    from kschedlib.plugins.inter_pod_affinity.scoring import score_node, score_nodes

    state = PreScoreState(tuple(parts))
    assert score_nodes(state, labels) == [score_node(state, node) for node in labels]
