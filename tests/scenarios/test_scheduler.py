"""End-to-end through the public API: ``kschedlib.Scheduler`` and ``kschedlib.explain``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kschedlib
from kschedlib.errors import ConfigError, KschedError, ManifestError, QuantityError, SelectorError
from kschedlib.framework import Code, CycleState, FilterPlugin, Handle, NodeInfo, Registry, Status
from kschedlib.model import Node, Pod, Requirement, Taint, Toleration, parse_quantity
from kschedlib.plugins.pod_topology_spread import PRE_FILTER_KEY
from tests.helpers import make_node, make_pod

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour

DEFAULT_WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                   "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
                   "ImageLocality": 1}


class Boom(FilterPlugin):
    """Raises for pods labelled ``boom``; refuses nodes labelled ``refuse``."""

    name: ClassVar[str] = "Boom"

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self.calls = 0

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        self.calls += 1
        if pod.labels.get("boom"):
            raise RuntimeError("kaput")
        assert node_info.node is not None
        if node_info.node.labels.get("refuse"):
            return Status.unschedulable("refused by Boom")
        return Status.success()


def with_boom() -> Registry:
    custom = Registry()
    custom.register("Boom", Boom)
    return kschedlib.in_tree_registry().merge(custom)


BOOM_FILTER = {"plugins": {"filter": {"enabled": [{"name": "Boom"}]}}}


# --- a plugin that raises ---------------------------------------------------------------------


def test_a_raising_plugin_is_an_error_for_that_pod_and_the_scheduler_goes_on() -> None:
    sched = kschedlib.Scheduler({"profiles": [BOOM_FILTER]}, registry=with_boom())
    sched.add_objects([make_node("n1"), make_node("n2")])
    sched.add_pod(make_pod("first", requests={"cpu": "1"}))
    sched.add_pod(make_pod("bad", labels={"boom": "yes"}))
    sched.add_pod(make_pod("last", requests={"cpu": "1"}))
    results = {r.pod.name: r for r in sched.run_until_idle()}
    assert set(results) == {"first", "bad", "last"}
    bad = results["bad"]
    assert not bad.scheduled
    assert bad.status.code is Code.ERROR
    assert bad.status.plugin == "Boom"
    assert bad.message == 'running "Boom" filter plugin: kaput'
    assert results["first"].scheduled
    assert results["last"].scheduled
    assert "default/bad" not in sched.bound_pods()
    assert sched.pending()["default/bad"][0] == "backoff"  # an error has no rejector: retried after backoff


def test_the_custom_filter_rejects_like_any_filter() -> None:
    sched = kschedlib.Scheduler({"profiles": [BOOM_FILTER]}, registry=with_boom())
    sched.add_objects([make_node("n1", labels={"refuse": "1"}), make_node("n2")])
    sched.add_pod(make_pod("p"))
    result = sched.schedule_one()
    assert result is not None
    assert result.node_name == "n2"


def test_the_failed_pod_is_retried_after_its_backoff() -> None:
    clock = kschedlib.FakeClock()
    sched = kschedlib.Scheduler({"profiles": [BOOM_FILTER]}, registry=with_boom(), clock=clock)
    sched.add_objects([make_node("n1")])
    sched.add_pod(make_pod("bad", labels={"boom": "1"}))
    first = sched.schedule_one()
    assert first is not None
    assert first.status.code is Code.ERROR
    assert sched.schedule_one() is None
    assert sched.next_wakeup() == 1.0
    clock.advance(1.0)
    again = sched.schedule_one()
    assert again is not None
    assert again.pod.name == "bad"
    assert again.attempts == 2
    assert again.status.code is Code.ERROR


# --- multiple profiles ------------------------------------------------------------------------

TWO_PROFILES = {"profiles": [{"schedulerName": "default-scheduler"},
                             {"schedulerName": "picky", **BOOM_FILTER}]}


def test_pods_go_to_the_profile_of_their_scheduler_name() -> None:
    sched = kschedlib.Scheduler(TWO_PROFILES, registry=with_boom())
    assert sched.profiles == ["default-scheduler", "picky"]
    sched.add_objects([make_node("n1", labels={"refuse": "1"})])
    sched.add_pod(make_pod("plain"))
    sched.add_pod(make_pod("picky", scheduler_name="picky"))
    results = {r.pod.name: r for r in sched.run_until_idle()}
    assert results["plain"].node_name == "n1"
    assert not results["picky"].scheduled
    assert results["picky"].message is not None
    assert results["picky"].message.startswith("0/1 nodes are available: 1 refused by Boom.")


def test_pods_for_no_profile_are_left_alone() -> None:
    sched = kschedlib.Scheduler(TWO_PROFILES, registry=with_boom())
    sched.add_objects([make_node("n1")])
    sched.add_pod(make_pod("other", scheduler_name="someone-else"))
    sched.add_pod(make_pod("mine"))
    results = sched.run_until_idle()
    assert [r.pod.name for r in results] == ["mine"]
    assert "default/other" not in sched.pending()
    assert "default/other" not in sched.bound_pods()


def test_bound_pods_of_other_schedulers_still_count() -> None:
    sched = kschedlib.Scheduler()
    sched.add_objects([make_node("n1", allocatable={"cpu": "2", "memory": "1Gi", "pods": "10"})])
    sched.add_pod(make_pod("theirs", scheduler_name="someone-else", node_name="n1", requests={"cpu": "2"}))
    sched.add_pod(make_pod("mine", requests={"cpu": "1"}))
    result = sched.schedule_one()
    assert result is not None
    assert result.message is not None
    assert result.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_profiles_must_share_the_queue_sort() -> None:
    with pytest.raises(ConfigError, match="queueSort"):
        kschedlib.Scheduler({"profiles": [{"schedulerName": "a"},
                                          {"schedulerName": "b",
                                           "plugins": {"queueSort": {"disabled": [{"name": "*"}],
                                                                     "enabled": [{"name": "Other"}]}}}]},
                            registry=_registry_with_other_sort())


def _registry_with_other_sort() -> Registry:
    registry = kschedlib.in_tree_registry()
    registry.register("Other", registry.get("PrioritySort").factory)
    return registry


# --- assume -----------------------------------------------------------------------------------


def test_a_scheduled_pods_resources_count_for_the_next_pod_immediately() -> None:
    sched = kschedlib.Scheduler()
    sched.add_objects([make_node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "110"})])
    sched.add_pod(make_pod("a", requests={"cpu": "3"}))
    sched.add_pod(make_pod("b", requests={"cpu": "3"}))
    first = sched.schedule_one()
    assert first is not None
    assert first.node_name == "n1"
    assert first.pod.node_name == "n1"
    assert sched.snapshot().get("n1").requested.milli_cpu == 3000
    second = sched.schedule_one()
    assert second is not None
    assert not second.scheduled
    assert second.message is not None
    assert second.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert sched.bound_pods() == {"default/a": "n1"}


def test_pod_count_limit_counts_assumed_pods() -> None:
    sched = kschedlib.Scheduler()
    sched.add_objects([make_node("n1", allocatable={"cpu": "4", "memory": "8Gi", "pods": "2"})])
    for name in "abc":
        sched.add_pod(make_pod(name))
    results = sched.run_until_idle()
    assert [r.scheduled for r in results] == [True, True, False]
    assert results[2].message is not None
    assert "1 Too many pods" in results[2].message


# --- bad input --------------------------------------------------------------------------------


def pod_doc(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c"}], **spec}}


BAD_MANIFESTS = [
    ("quantity", QuantityError,
     pod_doc(containers=[{"name": "c", "resources": {"requests": {"cpu": "1x"}}}]),
     "spec.containers[0].resources.requests.cpu", "1x"),
    ("node-quantity", QuantityError,
     {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"memory": "lots"}}},
     "status.allocatable.memory", "lots"),
    ("node-selector-operator", ManifestError,
     pod_doc(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Foo", "values": ["x"]}]}]}}}),
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].operator", "Foo"),
    ("label-selector-operator", ManifestError,
     pod_doc(affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
         {"topologyKey": "zone", "labelSelector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}]}}),
     "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector"
     ".matchExpressions[0].operator", "Near"),
    ("taint-effect", ManifestError,
     {"kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}},
     "spec.taints[0].effect", "Sometimes"),
    ("toleration-effect", ManifestError,
     pod_doc(tolerations=[{"key": "k", "operator": "Exists", "effect": "Sometimes"}]),
     "spec.tolerations[0].effect", "Sometimes"),
]


@pytest.mark.parametrize(("error", "doc", "field", "value"), [b[1:] for b in BAD_MANIFESTS],
                         ids=[b[0] for b in BAD_MANIFESTS])
def test_bad_manifests_name_the_object_and_field(error: type[ManifestError], doc: dict[str, Any], field: str,
                                                 value: str) -> None:
    with pytest.raises(error) as caught:
        kschedlib.load_cluster([doc])
    assert caught.value.field == field
    assert caught.value.value == value
    assert caught.value.obj in {"Pod default/p", "Node n1"}
    assert field in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_bad_manifest_is_refused_by_explain_too() -> None:
    bad = pod_doc(containers=[{"name": "c", "resources": {"requests": {"memory": "12 Gi"}}}])
    with pytest.raises(QuantityError):
        kschedlib.explain(kschedlib.load_cluster([make_node("n1")]), bad)


QUANTITIES = ["1x", "", "--1", "1.2.3", "1e", "1 m", "5Gb", "i"]


@pytest.mark.parametrize("text", QUANTITIES, ids=[repr(q) for q in QUANTITIES])
def test_malformed_quantity(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


SELECTORS = [("bad-operator", "a", "Near", ()), ("in-without-values", "a", "In", ()),
             ("exists-with-values", "a", "Exists", ("x",)), ("gt-two-values", "a", "Gt", ("1", "2"))]


@pytest.mark.parametrize(("key", "operator", "values"), [s[1:] for s in SELECTORS], ids=[s[0] for s in SELECTORS])
def test_malformed_selector_requirement(key: str, operator: str, values: tuple[str, ...]) -> None:
    with pytest.raises(SelectorError, match=f"{key!r}"):
        Requirement(key, operator, values)


BAD_CONFIGS = [
    ("config-field", {"percentageOfNodesToScore": 150}, "percentageOfNodesToScore", "not in valid range"),
    ("profile-field", {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}, "profiles[1].schedulerName",
     "Duplicate value"),
    ("unknown-plugin", {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Nope"}]}}}]},
     "profiles[0].plugins.filter.enabled[0].name", 'FilterPlugin "Nope" does not exist'),
    ("unknown-plugin-second-profile",
     {"profiles": [{"schedulerName": "a"}, {"schedulerName": "b", "plugins": {"score": {"enabled": [{"name": "X"}]}}}]},
     "profiles[1].plugins.score.enabled[0].name", 'ScorePlugin "X" does not exist'),
    ("plugin-args", {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
        "scoringStrategy": {"type": "Random"}}}]}]}, "scoringStrategy.type", "Random"),
]


@pytest.mark.parametrize(("config", "field", "message"), [b[1:] for b in BAD_CONFIGS], ids=[b[0] for b in BAD_CONFIGS])
def test_bad_configuration(config: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        kschedlib.Scheduler(config)
    assert field in caught.value.field
    assert message in str(caught.value)
    assert isinstance(caught.value, KschedError)


# --- properties over generated small clusters -------------------------------------------------

TAINTS = [Taint("dedicated", "NoSchedule", "gpu"), Taint("spot", "PreferNoSchedule"), Taint("maint", "NoExecute")]
TOLERATIONS = [Toleration("dedicated", "Equal", "gpu", "NoSchedule"), Toleration("spot", "Exists"),
               Toleration("maint", "Exists", effect="NoExecute"), Toleration(operator="Exists")]
CPU = ["0", "100m", "500m", "1", "1500m", "2"]
MEMORY = ["0", "128Mi", "512Mi", "1Gi"]


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    count = draw(st.integers(1, 5))
    out = []
    for i in range(count):
        labels = {"kubernetes.io/hostname": f"node-{i}",
                  "topology.kubernetes.io/zone": draw(st.sampled_from(["a", "b"]))}
        if draw(st.booleans()):
            labels["disk"] = draw(st.sampled_from(["ssd", "hdd"]))
        out.append(make_node(
            f"node-{i}", labels=labels,
            taints=draw(st.lists(st.sampled_from(TAINTS), unique=True, max_size=2)),
            unschedulable=draw(st.booleans().map(lambda b: b and draw(st.integers(0, 4)) == 0)),
            allocatable={"cpu": draw(st.sampled_from(["1", "2", "4"])),
                         "memory": draw(st.sampled_from(["1Gi", "2Gi", "4Gi"])),
                         "pods": draw(st.sampled_from(["2", "3", "110"]))},
        ))
    return out


@st.composite
def pods(draw: st.DrawFn) -> list[Pod]:
    count = draw(st.integers(1, 8))
    out = []
    for i in range(count):
        requests: dict[str, str] = {}
        if draw(st.booleans()):
            requests["cpu"] = draw(st.sampled_from(CPU))
        if draw(st.booleans()):
            requests["memory"] = draw(st.sampled_from(MEMORY))
        selector = draw(st.sampled_from([None, {"disk": "ssd"}, {"topology.kubernetes.io/zone": "a"},
                                         {"disk": "hdd", "topology.kubernetes.io/zone": "b"}]))
        out.append(make_pod(f"pod-{i}", requests=requests, node_selector=selector,
                            tolerations=tuple(draw(st.lists(st.sampled_from(TOLERATIONS), unique=True, max_size=2)))))
    return out


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    return toleration.operator == "Exists" or toleration.value == taint.value


def milli(value: str) -> int:
    return parse_quantity(value).milli_value()


def request(pod: Pod, resource: str) -> int:
    quantity = pod.containers[0].requests.get(resource)
    return quantity.milli_value() if quantity is not None else 0


def allocatable(node: Node, resource: str) -> int:
    return node.allocatable[resource].milli_value()


def fits(pod: Pod, node: Node, placed: Sequence[Pod]) -> bool:
    """An independent oracle for the default filters on these generated objects."""
    unschedulable = Taint("node.kubernetes.io/unschedulable", "NoSchedule")
    if node.unschedulable and not any(tolerates(t, unschedulable) for t in pod.tolerations):
        return False
    for taint in node.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(tolerates(t, taint) for t in pod.tolerations):
            return False
    if pod.node_selector and any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    if (len(placed) + 1) * 1000 > allocatable(node, "pods"):
        return False
    for resource in ("cpu", "memory"):
        wanted = request(pod, resource)
        used = sum(request(p, resource) for p in placed)
        if wanted > 0 and wanted > allocatable(node, resource) - used:
            return False
    return True


def run(cluster_nodes: list[Node], pending: list[Pod], seed: int) -> list[tuple[str, str | None, int, str | None]]:
    """Schedule every pod, checking each decision against the oracle; returns the decisions."""
    sched = kschedlib.Scheduler(seed=seed)
    sched.add_objects(cluster_nodes)
    for pod in pending:
        sched.add_pod(pod)
    placed: dict[str, list[Pod]] = {node.name: [] for node in cluster_nodes}
    by_name = {node.name: node for node in cluster_nodes}
    decisions = []
    while (result := sched.schedule_one()) is not None:
        pod = result.pod
        fitting = {name for name, node in by_name.items() if fits(pod, node, placed[name])}
        if result.scheduled:
            assert result.node_name in fitting, f"{pod.key} placed on {result.node_name}, oracle says {fitting}"
            placed[result.node_name].append(pod)
        else:
            assert result.status.code is Code.UNSCHEDULABLE
            assert not fitting, f"{pod.key} unschedulable, but fits {fitting}: {result.message}"
        decisions.append((pod.key, result.node_name, int(result.status.code), result.message))
    assert sched.pending().keys() <= {p.key for p in pending}
    for name, node in by_name.items():
        bound = [p for p in pending if sched.bound_pods().get(p.key) == name]
        assert {p.key for p in bound} == {p.key for p in placed[name]}
        assert len(bound) * 1000 <= allocatable(node, "pods")
        for resource in ("cpu", "memory"):
            assert sum(request(p, resource) for p in bound) <= allocatable(node, resource)
    return decisions


@settings(max_examples=60, deadline=None)
@given(nodes(), pods(), st.integers(0, 2**16))
def test_decisions_respect_every_filter_and_nothing_is_over_committed(
    cluster_nodes: list[Node], pending: list[Pod], seed: int
) -> None:
    run(cluster_nodes, pending, seed)


@settings(max_examples=30, deadline=None)
@given(nodes(), pods(), st.integers(0, 2**16))
def test_same_seed_same_decisions(cluster_nodes: list[Node], pending: list[Pod], seed: int) -> None:
    assert run(cluster_nodes, pending, seed) == run(cluster_nodes, pending, seed)


@settings(max_examples=40, deadline=None)
@given(nodes(), pods(), st.data())
def test_explain_agrees_with_the_oracle_and_scores_are_within_range(
    cluster_nodes: list[Node], pending: list[Pod], data: st.DataObject
) -> None:
    bound_count = data.draw(st.integers(0, len(pending) - 1), label="bound")
    placed: dict[str, list[Pod]] = {node.name: [] for node in cluster_nodes}
    objects: list[object] = list(cluster_nodes)
    for pod in pending[:bound_count]:  # some pods already bound where the oracle allows
        fitting = [n for n in cluster_nodes if fits(pod, n, placed[n.name])]
        if fitting:
            node = data.draw(st.sampled_from(fitting), label=f"{pod.name} on")
            placed[node.name].append(pod)
            objects.append(attrs.evolve(pod, node_name=node.name))
    pod = pending[-1]
    explanation = kschedlib.explain(kschedlib.load_cluster(objects), pod).to_dict()
    expected = sorted(n.name for n in cluster_nodes if fits(pod, n, placed[n.name]))
    assert explanation["feasible"] == expected
    assert set(explanation["filtered"]) == {n.name for n in cluster_nodes} - set(expected)
    assert explanation["num_all_nodes"] == explanation["evaluated_nodes"] == len(cluster_nodes)
    for node, entry in explanation["scores"].items():
        assert node in expected
        for plugin, weighted in entry["plugins"].items():
            weight = DEFAULT_WEIGHTS[plugin]
            assert weighted % weight == 0, (plugin, weighted)
            assert 0 <= weighted // weight <= 100, (plugin, weighted)
        assert entry["total"] == sum(entry["plugins"].values())
    if expected:
        top = max(entry["total"] for entry in explanation["scores"].values())
        assert explanation["best"] == sorted(n for n, e in explanation["scores"].items() if e["total"] == top)
        assert explanation["selected"] in explanation["best"]
        assert explanation["message"] is None
    else:
        assert explanation["selected"] is None
        assert explanation["message"].startswith(f"0/{len(cluster_nodes)} nodes are available: ")


def test_explain_does_not_change_the_cluster() -> None:
    cluster = kschedlib.load_cluster([make_node("n1", allocatable={"cpu": "1", "memory": "1Gi", "pods": "5"})])
    pod = make_pod("p", requests={"cpu": "1"})
    first = kschedlib.explain(cluster, pod).to_dict()
    second = kschedlib.explain(cluster, pod).to_dict()
    assert first == second
    assert first["selected"] == "n1"
    assert cluster.pods == []


def test_results_do_not_keep_the_cycles_plugin_state() -> None:
    """Embedders keep every result: the per-cycle plugin state (counts, parsed terms) stays behind."""
    sched = kschedlib.Scheduler()
    sched.add_objects([make_node("n1", labels={"zone": "a"}), make_node("n2", labels={"zone": "b"})])
    spread = ({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}},)
    pod = kschedlib.load_cluster([{"kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}},
                                   "spec": {"topologySpreadConstraints": list(spread),
                                            "containers": [{"name": "c"}]}}]).pods[0]
    sched.add_pod(pod)
    sched.add_pod(make_pod("huge", requests={"cpu": "64"}))
    results = sched.run_until_idle()
    assert [r.scheduled for r in results] == [True, False]
    for result in results:
        assert result.outcome is not None
        assert PRE_FILTER_KEY not in result.outcome.state
