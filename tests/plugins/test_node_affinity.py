"""NodeAffinity: nodeSelector, required/preferred affinity, addedAffinity, PreFilter narrowing, args."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.errors import ConfigError
from kschedlib.framework import Code, CycleState, NodeInfo, PreFilterResult, Status
from kschedlib.model import Affinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod
from kschedlib.model import objects as model
from kschedlib.plugins.node_affinity import (
    NodeAffinity,
    NodeAffinityArgs,
    RequiredNodeAffinity,
    decode_args,
    required_node_affinity_matches,
)
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
POD_REASON = "node(s) didn't match Pod's node affinity/selector"
ENFORCED_REASON = "node(s) didn't match scheduler-enforced node affinity"
WEIGHT = 2  # the default profile's weight for NodeAffinity

Spec = model.NodeAffinity
Pref = model.PreferredSchedulingTerm
Req = NodeSelectorRequirement
Term = NodeSelectorTerm


def plugin(added: Spec | None = None) -> NodeAffinity:
    return NodeAffinity(NodeAffinityArgs(added), FakeHandle(kube_version="1.30"))


def expr(key: str, op: str, *values: str) -> Term:
    return Term(match_expressions=(Req(key, op, values),))


def pod_with(
    *,
    required: Sequence[Term] | None = None,
    preferred: Sequence[Pref] = (),
    node_selector: Mapping[str, str] | None = None,
) -> Pod:
    affinity = None
    if required is not None or preferred:
        selector = NodeSelector(tuple(required)) if required is not None else None
        affinity = Affinity(node_affinity=Spec(selector, tuple(preferred)))
    return make_pod("p", affinity=affinity, node_selector=node_selector)


def filter_status(pl: NodeAffinity, pod: Pod, labels: Mapping[str, str], name: str = "n1") -> Status:
    state = CycleState()
    pl.pre_filter(state, pod)
    return pl.filter(state, pod, node_info(make_node(name, labels=labels)))


# --- Filter: required matching ------------------------------------------------------------------------

MATCH_CASES: list[tuple[Pod, dict[str, str], bool]] = [
    (pod_with(node_selector={"zone": "a"}), {"zone": "a", "x": "y"}, True),
    (pod_with(node_selector={"zone": "a"}), {"zone": "b"}, False),
    (pod_with(node_selector={"zone": "a", "disk": "ssd"}), {"zone": "a"}, False),
    (pod_with(node_selector={"zone": ""}), {}, False),
    (pod_with(node_selector={}), {}, True),
    (pod_with(required=[expr("zone", "In", "a", "b")]), {"zone": "b"}, True),
    (pod_with(required=[expr("zone", "In", "a")]), {}, False),
    (pod_with(required=[expr("zone", "NotIn", "a")]), {}, True),
    (pod_with(required=[expr("zone", "NotIn", "a")]), {"zone": "a"}, False),
    (pod_with(required=[expr("gpu", "Exists")]), {"gpu": ""}, True),
    (pod_with(required=[expr("gpu", "DoesNotExist")]), {"gpu": "1"}, False),
    (pod_with(required=[expr("cores", "Gt", "4")]), {"cores": "8"}, True),
    (pod_with(required=[expr("cores", "Gt", "4")]), {"cores": "4"}, False),
    (pod_with(required=[expr("cores", "Lt", "4")]), {"cores": "3"}, True),
    (pod_with(required=[expr("cores", "Lt", "4")]), {"cores": "x"}, False),
    (pod_with(required=[expr("cores", "Gt", "x")]), {"cores": "8"}, False),
    (pod_with(required=[expr("cores", "Gt", "-1")]), {"cores": "8"}, False),
    (pod_with(required=[expr("zone", "NotIn", "a b")]), {"zone": "c"}, False),
    (pod_with(required=[expr("zone", "In", "a"), expr("zone", "In", "b")]), {"zone": "b"}, True),
    (pod_with(required=[expr("zone", "Gt", "x"), expr("zone", "In", "b")]), {"zone": "b"}, True),
    (
        pod_with(required=[Term((Req("zone", "In", ("a",)), Req("disk", "In", ("ssd",))))]),
        {"zone": "a"},
        False,
    ),
    (pod_with(required=[Term()]), {"zone": "a"}, False),
    (pod_with(required=[]), {"zone": "a"}, False),
    (pod_with(required=[Term(match_fields=(Req("metadata.name", "In", ("n1",)),))]), {}, True),
    (pod_with(required=[Term(match_fields=(Req("metadata.name", "NotIn", ("n1",)),))]), {}, False),
    (pod_with(required=[expr("zone", "In", "a")], node_selector={"disk": "ssd"}), {"zone": "a"}, False),
    (
        pod_with(required=[expr("zone", "In", "a")], node_selector={"disk": "ssd"}),
        {"zone": "a", "disk": "ssd"},
        True,
    ),
    (pod_with(preferred=[Pref(1, expr("zone", "In", "a"))]), {}, True),
]
MATCH_IDS = [
    "selector-match",
    "selector-wrong-value",
    "selector-all-keys-needed",
    "selector-empty-value-needs-key",
    "selector-empty-map-matches",
    "in",
    "in-missing-key",
    "notin-missing-key-matches",
    "notin-value",
    "exists",
    "doesnotexist",
    "gt",
    "gt-strict",
    "lt",
    "lt-label-not-integer",
    "gt-operand-not-integer-term-invalid",
    "gt-negative-operand-invalid-label-value",
    "notin-invalid-label-value-term-invalid",
    "terms-ored",
    "invalid-term-skipped-other-matches",
    "expressions-anded",
    "empty-term-matches-nothing",
    "no-terms-match-nothing",
    "match-fields-name-in",
    "match-fields-name-notin",
    "selector-and-affinity-both-needed",
    "selector-and-affinity-both-hold",
    "preferred-only-never-filters",
]


@pytest.mark.parametrize(("pod", "labels", "fits"), MATCH_CASES, ids=MATCH_IDS)
def test_filter_required(pod: Pod, labels: dict[str, str], fits: bool) -> None:
    status = filter_status(plugin(), pod, labels)
    assert (status.code, status.reasons) == (
        (Code.SUCCESS, ()) if fits else (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (POD_REASON,))
    )
    node = make_node("n1", labels=labels)
    assert required_node_affinity_matches(pod, node) is fits
    assert RequiredNodeAffinity.of(pod).matches(node) is fits


ADDED = Spec(NodeSelector((expr("pool", "In", "batch"),)))


@pytest.mark.parametrize(
    ("pod", "labels", "reason"),
    [
        (make_pod("p"), {"pool": "batch"}, None),
        (make_pod("p"), {"pool": "web"}, ENFORCED_REASON),
        (pod_with(node_selector={"zone": "a"}), {"pool": "web", "zone": "b"}, ENFORCED_REASON),
        (pod_with(node_selector={"zone": "a"}), {"pool": "batch", "zone": "b"}, POD_REASON),
        (pod_with(node_selector={"zone": "a"}), {"pool": "batch", "zone": "a"}, None),
    ],
    ids=["added-matches", "added-fails", "added-checked-first", "pod-fails", "both-match"],
)
def test_filter_added_affinity(pod: Pod, labels: dict[str, str], reason: str | None) -> None:
    status = filter_status(plugin(ADDED), pod, labels)
    if reason is None:
        assert status.is_success
    else:
        assert (status.code, status.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (reason,))


def test_added_affinity_without_terms_matches_no_node() -> None:
    pl = plugin(Spec(NodeSelector(())))
    status = filter_status(pl, make_pod("p"), {"any": "thing"})
    assert status.reasons == (ENFORCED_REASON,)


def test_filter_without_pre_filter_parses_the_pod() -> None:
    pod = pod_with(node_selector={"zone": "a"})
    pl = plugin()
    assert pl.filter(CycleState(), pod, node_info(make_node("n", labels={"zone": "a"}))).is_success
    assert pl.filter(CycleState(), pod, node_info(make_node("n", labels={"zone": "b"}))).reasons == (
        POD_REASON,
    )


def test_filter_ghost_node_is_an_error() -> None:
    assert plugin().filter(CycleState(), make_pod("p"), NodeInfo.of(None)).code is Code.ERROR


# --- PreFilter ------------------------------------------------------------------------------------------


def names_term(*requirements: tuple[str, str, tuple[str, ...]]) -> Term:
    return Term(match_fields=tuple(Req(k, op, vals) for k, op, vals in requirements))


@pytest.mark.parametrize(
    ("pod", "added", "expected"),
    [
        (make_pod("p"), None, Status.skip()),
        (pod_with(preferred=[Pref(1, expr("a", "Exists"))]), None, Status.skip()),
        (make_pod("p"), ADDED, Status.success()),
        (pod_with(node_selector={}), None, Status.success()),
        (pod_with(required=[]), None, Status.success()),
        (pod_with(required=[expr("zone", "In", "a")]), None, Status.success()),
        (
            pod_with(required=[names_term(("metadata.name", "In", ("n1", "n2")))]),
            None,
            PreFilterResult.of(["n1", "n2"]),
        ),
        (
            pod_with(
                required=[
                    names_term(("metadata.name", "In", ("n1", "n2")), ("metadata.name", "In", ("n2", "n3")))
                ]
            ),
            None,
            PreFilterResult.of(["n2"]),
        ),
        (
            pod_with(
                required=[
                    names_term(("metadata.name", "In", ("n1",))),
                    names_term(("metadata.name", "In", ("n3",))),
                ]
            ),
            None,
            PreFilterResult.of(["n1", "n3"]),
        ),
        (
            pod_with(required=[names_term(("metadata.name", "In", ("n1",))), expr("zone", "In", "a")]),
            None,
            Status.success(),
        ),
        (pod_with(required=[names_term(("metadata.name", "NotIn", ("n1",)))]), None, Status.success()),
        (
            pod_with(
                required=[names_term(("metadata.name", "In", ("n1",)), ("metadata.name", "In", ("n2",)))]
            ),
            None,
            Status.unresolvable("pod affinity terms conflict"),
        ),
        (
            pod_with(required=[names_term(("metadata.name", "In", ("n1", "n2"))), Term()]),
            None,
            Status.success(),
        ),
    ],
    ids=[
        "nothing-required-skip",
        "preferred-only-skip",
        "added-affinity-no-skip",
        "empty-node-selector-no-skip",
        "required-without-terms",
        "no-name-pins",
        "names-from-in",
        "names-intersected-within-term",
        "names-united-across-terms",
        "a-term-without-pins-means-all-nodes",
        "notin-does-not-narrow",
        "empty-intersection-conflict",
        "empty-term-means-all-nodes",
    ],
)
def test_pre_filter(pod: Pod, added: Spec | None, expected: Status | PreFilterResult) -> None:
    assert plugin(added).pre_filter(CycleState(), pod) == expected


def test_pre_filter_narrowing_with_filter() -> None:
    """Filter still applies every term, so a pinned name must also satisfy the rest of its term."""
    term = Term((Req("zone", "In", ("a",)),), (Req("metadata.name", "In", ("n1",)),))
    pod = pod_with(required=[term])
    pl = plugin()
    state = CycleState()
    assert pl.pre_filter(state, pod) == PreFilterResult.of(["n1"])
    assert pl.filter(state, pod, node_info(make_node("n1", labels={"zone": "a"}))).is_success
    assert pl.filter(state, pod, node_info(make_node("n1", labels={"zone": "b"}))).reasons == (POD_REASON,)


# --- PreScore / Score / NormalizeScore -------------------------------------------------------------------


def score_nodes(
    pl: NodeAffinity, pod: Pod, labels: list[dict[str, str]]
) -> tuple[Status, list[int], list[int]]:
    infos = [node_info(make_node(f"n{i}", labels=lab)) for i, lab in enumerate(labels)]
    state = CycleState()
    pre = pl.pre_score(state, pod, infos)
    raw = [pl.score(state, pod, info) for info in infos]
    return pre, raw, pl.normalize_score(state, pod, infos, list(raw))


def test_reference_example_200_50_0() -> None:
    pod = pod_with(preferred=[Pref(60, expr("zone", "In", "a")), Pref(20, expr("disk", "Exists"))])
    pre, raw, normalized = score_nodes(plugin(), pod, [{"zone": "a", "disk": "ssd"}, {"disk": "hdd"}, {}])
    assert pre.is_success
    assert raw == [80, 20, 0]
    assert normalized == [100, 25, 0]
    assert [s * WEIGHT for s in normalized] == [200, 50, 0]


def test_added_preferred_terms_add_up_with_the_pods() -> None:
    added = Spec(preferred=(Pref(5, expr("pool", "In", "batch")), Pref(0, expr("zone", "In", "a"))))
    pod = pod_with(preferred=[Pref(10, expr("zone", "In", "a"))])
    _, raw, normalized = score_nodes(
        plugin(added), pod, [{"pool": "batch", "zone": "a"}, {"zone": "a"}, {"pool": "batch"}]
    )
    assert raw == [15, 10, 5]
    assert normalized == [100, 66, 33]


@pytest.mark.parametrize(
    ("pod", "added", "code"),
    [
        (make_pod("p"), None, Code.SKIP),
        (pod_with(required=[expr("zone", "In", "a")]), None, Code.SKIP),
        (pod_with(preferred=[Pref(1, expr("zone", "In", "a"))]), None, Code.SUCCESS),
        (make_pod("p"), Spec(preferred=(Pref(1, expr("zone", "In", "a")),)), Code.SUCCESS),
        (make_pod("p"), Spec(preferred=(Pref(0, expr("zone", "In", "a")),)), Code.SUCCESS),
        (make_pod("p"), Spec(NodeSelector((expr("zone", "In", "a"),))), Code.SKIP),
        (pod_with(preferred=[Pref(1, expr("cores", "Gt", "many"))]), None, Code.ERROR),
        (pod_with(preferred=[Pref(1, Term())]), None, Code.SUCCESS),
    ],
    ids=[
        "nothing-preferred-skip",
        "required-only-skip",
        "pod-preferred",
        "added-preferred",
        "added-weight-zero-still-no-skip",
        "added-required-only-skip",
        "unparsable-pod-term-error",
        "empty-preference-ignored",
    ],
)
def test_pre_score(pod: Pod, added: Spec | None, code: Code) -> None:
    assert plugin(added).pre_score(CycleState(), pod, [node_info(make_node("n"))]).code is code


def test_pre_score_error_text_is_kubes() -> None:
    pod = pod_with(preferred=[Pref(1, expr("zone", "In", "a")), Pref(1, expr("cores", "Gt", "many"))])
    status = plugin().pre_score(CycleState(), pod, [node_info(make_node("n"))])
    assert status.message() == (
        '[1].matchExpressions[0].values[0]: Invalid value: "many": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    )


def test_weight_zero_and_empty_terms_do_not_score() -> None:
    pod = pod_with(preferred=[Pref(0, expr("zone", "In", "a")), Pref(7, Term())])
    _, raw, normalized = score_nodes(plugin(), pod, [{"zone": "a"}, {}])
    assert raw == [0, 0]
    assert normalized == [0, 0]


def test_score_without_pre_score_falls_back_to_the_pod() -> None:
    pod = pod_with(preferred=[Pref(3, expr("zone", "In", "a"))])
    assert plugin().score(CycleState(), pod, node_info(make_node("n", labels={"zone": "a"}))) == 3


def test_plugin_identity() -> None:
    assert NodeAffinity.name == "NodeAffinity"


# --- args -------------------------------------------------------------------------------------------------


def term_json(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": op, "values": list(values)}]}


@pytest.mark.parametrize(
    "raw",
    [
        None,
        {},
        {"addedAffinity": None},
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeAffinityArgs"},
    ],
    ids=["none", "empty", "null-added", "type-meta-ignored"],
)
def test_decode_defaults(raw: dict[str, Any] | None) -> None:
    assert decode_args(raw) == NodeAffinityArgs(None)


def test_decode_added_affinity() -> None:
    raw = {
        "addedAffinity": {
            REQ: {
                "nodeSelectorTerms": [
                    term_json("zone", "In", "a", "b"),
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                ]
            },
            PREF: [{"weight": 3, "preference": term_json("disk", "Exists")}, {"weight": 0, "preference": {}}],
        }
    }
    expected = Spec(
        NodeSelector(
            (expr("zone", "In", "a", "b"), Term(match_fields=(Req("metadata.name", "In", ("n1",)),)))
        ),
        (Pref(3, expr("disk", "Exists")), Pref(0, Term())),
    )
    assert decode_args(raw) == NodeAffinityArgs(expected)


def test_decoded_args_drive_the_plugin() -> None:
    args = decode_args({"addedAffinity": {REQ: {"nodeSelectorTerms": [term_json("pool", "In", "batch")]}}})
    pl = NodeAffinity(args, FakeHandle(kube_version="1.30"))
    assert filter_status(pl, make_pod("p"), {"pool": "web"}).reasons == (ENFORCED_REASON,)


VALUES0 = f"addedAffinity.{REQ}.nodeSelectorTerms[0].matchExpressions[0]"


@pytest.mark.parametrize(
    ("added", "field", "message"),
    [
        (
            {REQ: {"nodeSelectorTerms": [term_json("cores", "Gt", "x")]}},
            f"{VALUES0}.values[0]",
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            {REQ: {"nodeSelectorTerms": [term_json("cores", "Gt")]}},
            f"{VALUES0}.values",
            "for 'Gt', 'Lt' operators, exactly one value is required",
        ),
        (
            {REQ: {"nodeSelectorTerms": [term_json("zone", "In")]}},
            f"{VALUES0}.values",
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {REQ: {"nodeSelectorTerms": [term_json("zone", "Exists", "a")]}},
            f"{VALUES0}.values",
            "values set must be empty for exists and does not exist",
        ),
        (
            {REQ: {"nodeSelectorTerms": [term_json("zone", "Like", "a")]}},
            f"{VALUES0}.operator",
            'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        ),
        (
            {REQ: {"nodeSelectorTerms": [term_json("bad key", "Exists")]}},
            f"{VALUES0}.key",
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        (
            {REQ: {"nodeSelectorTerms": [term_json("zone", "In", "a b")]}},
            f"{VALUES0}.values[0][zone]",
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
            "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        (
            {
                REQ: {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}
                    ]
                }
            },
            f"addedAffinity.{REQ}.nodeSelectorTerms[0].matchFields[0].values",
            "must have one element",
        ),
        (
            {REQ: {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}]}},
            f"addedAffinity.{REQ}.nodeSelectorTerms[0].matchFields[0].operator",
            'supported values: "In", "NotIn"',
        ),
        (
            {PREF: [{"weight": 1, "preference": term_json("cores", "Lt", "1.5")}]},
            f"addedAffinity.{PREF}[0].matchExpressions[0].values[0]",
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ],
    ids=[
        "gt-not-integer",
        "gt-no-value",
        "in-no-values",
        "exists-with-values",
        "unknown-operator",
        "bad-key",
        "bad-label-value",
        "match-fields-two-values",
        "match-fields-operator",
        "preferred-lt-not-integer",
    ],
)
def test_decode_validation_errors(added: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args({"addedAffinity": added})
    assert info.value.field == field
    assert info.value.message == message


@pytest.mark.parametrize(
    ("added", "field"),
    [
        ([], "addedAffinity"),
        ({REQ: []}, f"addedAffinity.{REQ}"),
        ({REQ: {"nodeSelectorTerms": {}}}, f"addedAffinity.{REQ}.nodeSelectorTerms"),
        (
            {REQ: {"nodeSelectorTerms": [{"matchExpressions": [{"key": 1, "operator": "Exists"}]}]}},
            f"{VALUES0}.key",
        ),
        ({PREF: [{"weight": True, "preference": {}}]}, f"addedAffinity.{PREF}[0].weight"),
        ({PREF: [{"weight": "1", "preference": {}}]}, f"addedAffinity.{PREF}[0].weight"),
        ({PREF: [{"weight": 1, "preference": []}]}, f"addedAffinity.{PREF}[0].preference"),
    ],
    ids=[
        "not-an-object",
        "required-not-an-object",
        "terms-not-an-array",
        "key-not-a-string",
        "weight-bool",
        "weight-string",
        "preference-not-an-object",
    ],
)
def test_decode_type_errors(added: object, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args({"addedAffinity": added})
    assert info.value.field == field


def test_weight_zero_terms_are_not_validated() -> None:
    args = decode_args(
        {"addedAffinity": {PREF: [{"weight": 0, "preference": term_json("cores", "Gt", "x")}]}}
    )
    assert args.added_affinity is not None


def test_constructor_validates_args_too() -> None:
    with pytest.raises(ConfigError, match="must be an integer"):
        plugin(Spec(NodeSelector((expr("cores", "Gt", "x"),))))


# --- properties ---------------------------------------------------------------------------------------------

ZONES = ["a", "b", "c"]
label_sets = st.dictionaries(st.sampled_from(["zone", "disk"]), st.sampled_from(ZONES), max_size=2)


@given(
    st.one_of(
        st.none(), st.dictionaries(st.sampled_from(["zone", "disk"]), st.sampled_from(ZONES), max_size=2)
    ),
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["zone", "disk"]),
                st.sampled_from(["In", "NotIn"]),
                st.lists(st.sampled_from(ZONES), min_size=1, max_size=2),
            ),
            min_size=1,
            max_size=2,
        ),
        max_size=2,
    ),
    label_sets,
)
def test_filter_matches_restatement(
    selector: dict[str, str] | None, terms: list[list[tuple[str, str, list[str]]]], labels: dict[str, str]
) -> None:
    def holds(key: str, op: str, values: list[str]) -> bool:
        return (labels.get(key) in values) if op == "In" else (labels.get(key) not in values)

    required = [Term(tuple(Req(k, op, tuple(v)) for k, op, v in term)) for term in terms] if terms else None
    pod = pod_with(required=required, node_selector=selector)
    expected = all(labels.get(k) == v for k, v in (selector or {}).items()) and (
        not terms or any(all(holds(*r) for r in term) for term in terms)
    )
    assert filter_status(plugin(), pod, labels).is_success is expected


@given(
    st.lists(st.tuples(st.integers(0, 100), st.sampled_from(ZONES)), min_size=1, max_size=4),
    st.lists(label_sets, min_size=1, max_size=6),
)
def test_normalized_scores_within_range(prefs: list[tuple[int, str]], labels: list[dict[str, str]]) -> None:
    pod = pod_with(preferred=[Pref(w, expr("zone", "In", z)) for w, z in prefs])
    _, raw, normalized = score_nodes(plugin(), pod, labels)
    assert raw == [sum(w for w, z in prefs if lab.get("zone") == z) for lab in labels]
    assert all(0 <= s <= 100 for s in normalized)
    top = max(raw)
    assert normalized == [100 * r // top if top else 0 for r in raw]


@pytest.mark.parametrize(
    ("term", "text"),
    [
        (
            expr("cores", "Gt", "1", "2"),
            '[0].matchExpressions[0].values: Invalid value: []string{"1", "2"}: '
            "for 'Gt', 'Lt' operators, exactly one value is required",
        ),
        (
            expr("zone", "NotIn"),
            "[0].matchExpressions[0].values: Invalid value: []string(nil): "
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            expr("zone", "Near", "a"),
            '[0].matchExpressions[0].operator: Unsupported value: "Near": '
            'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        ),
        (
            expr("a/b/c", "Exists"),
            '[0].matchExpressions[0].key: Invalid value: "a/b/c": a qualified name must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
        ),
        (
            expr("/zone", "Exists"),
            '[0].matchExpressions[0].key: Invalid value: "/zone": prefix part must be non-empty',
        ),
        (
            expr("Example.com/zone", "Exists"),
            '[0].matchExpressions[0].key: Invalid value: "Example.com/zone": prefix part a lowercase '
            "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        (
            Term(match_fields=(Req("metadata.name", "Exists"),)),
            '[0].matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
        ),
    ],
    ids=[
        "slice-value",
        "nil-slice",
        "unsupported-operator",
        "too-many-slashes",
        "empty-prefix",
        "bad-prefix",
        "fields-operator",
    ],
)
def test_pre_score_error_texts(term: Term, text: str) -> None:
    pod = pod_with(preferred=[Pref(1, term)])
    status = plugin().pre_score(CycleState(), pod, [node_info(make_node("n"))])
    assert status.code is Code.ERROR
    assert status.message() == text


def test_several_errors_are_aggregated_like_apimachinery() -> None:
    pod = pod_with(preferred=[Pref(1, expr("a", "Gt", "x")), Pref(1, expr("a", "Gt", "x"))])
    message = plugin().pre_score(CycleState(), pod, [node_info(make_node("n"))]).message()
    gt = "Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
    assert message == f"[[0].matchExpressions[0].values[0]: {gt}, [1].matchExpressions[0].values[0]: {gt}]"


def test_prefixed_keys_are_valid() -> None:
    pod = pod_with(required=[expr("topology.kubernetes.io/zone", "In", "a")])
    assert filter_status(plugin(), pod, {"topology.kubernetes.io/zone": "a"}).is_success


def test_states_are_immutable_and_shared_by_clones() -> None:
    pod = pod_with(node_selector={"zone": "a"}, preferred=[Pref(1, expr("zone", "In", "a"))])
    pl = plugin()
    state = CycleState()
    pl.pre_filter(state, pod)
    pl.pre_score(state, pod, [node_info(make_node("n"))])
    copy = state.clone()
    assert pl.filter(copy, pod, node_info(make_node("n", labels={"zone": "a"}))).is_success
    assert pl.score(copy, pod, node_info(make_node("n", labels={"zone": "a"}))) == 1


def test_pre_score_without_nodes_and_ghost_score() -> None:
    pod = pod_with(preferred=[Pref(1, expr("zone", "In", "a"))])
    assert plugin().pre_score(CycleState(), pod, []).is_success
    with pytest.raises(LookupError):
        plugin().score(CycleState(), pod, NodeInfo.of(None))



def test_normalization_truncates_toward_zero_like_go() -> None:
    # A negative raw score (possible with negative addedAffinity weights): Go gives -33, floor would give -34.
    from kschedlib.plugins._helpers.normalize import normalized_values

    assert normalized_values([-1, 3], reverse=False) == [-33, 100]
