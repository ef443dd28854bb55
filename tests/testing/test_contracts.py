"""The plugin contract kit: every in-tree plugin keeps the contracts; each broken plugin is caught, readably."""

from __future__ import annotations

import pickle
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument

from kschedlib import in_tree_registry
from kschedlib.framework import NodeLocalFilter, NodeLocalScore, PluginEntry, Status
from kschedlib.framework.registry import PluginFactory
from kschedlib.model import (
    Affinity,
    Container,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    parse_quantity,
)
from kschedlib.plugins.inter_pod_affinity import InterPodAffinity
from kschedlib.plugins.node_affinity import NodeAffinity
from kschedlib.plugins.node_ports import NodePorts
from kschedlib.plugins.node_resources_fit import NodeResourcesFit
from kschedlib.plugins.pod_topology_spread import PodTopologySpread
from kschedlib.plugins.taint_toleration import TaintToleration
from kschedlib.simulation import Cluster
from kschedlib.testing import (
    ALL_CHECKS,
    CONTRACTS,
    Check,
    ContractViolation,
    FakeHandle,
    Scenario,
    check_add_remove_inverse,
    check_contracts,
    check_determinism,
    check_memo_keys,
    check_no_mutation,
    check_plugin,
    check_score_range,
    check_state_clone,
)
from kschedlib.testing import strategies as ks
from tests.testing import broken_plugins as broken

REGISTRY = in_tree_registry()
ENTRIES = [REGISTRY.get(name) for name in REGISTRY.names()]
# The default profile's Filter plugins: DefaultPreemption's dry run runs them through the FakeHandle.
PROFILE_FILTERS: tuple[PluginFactory, ...] = (NodeResourcesFit, NodePorts, TaintToleration, NodeAffinity,
                                              PodTopologySpread, InterPodAffinity)


def _filters_for(entry: PluginEntry) -> tuple[PluginFactory, ...]:
    return PROFILE_FILTERS if entry.name == "DefaultPreemption" else ()


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry.name for entry in ENTRIES])
def test_in_tree_plugin_keeps_the_contracts(entry: PluginEntry) -> None:
    check_plugin(entry.factory, args=entry.args_from(None), filter_plugins=_filters_for(entry), max_examples=8)


NODE_LOCAL = [entry for entry in ENTRIES  # what the factory builds (DynamicResources' depends on the version)
              if isinstance(entry.factory(entry.args_from(None), FakeHandle()), NodeLocalFilter | NodeLocalScore)]


def test_the_node_local_plugins_are_the_ones_expected() -> None:
    assert sorted(entry.name for entry in NODE_LOCAL) == [
        "DynamicResources", "ImageLocality", "NodeAffinity", "NodeName", "NodePorts", "NodeResourcesBalancedAllocation",
        "NodeResourcesFit", "NodeUnschedulable", "TaintToleration"]


@pytest.mark.parametrize("entry", NODE_LOCAL, ids=[entry.name for entry in NODE_LOCAL])
def test_in_tree_memo_keys_keep_their_promise(entry: PluginEntry) -> None:
    """More scenarios for the memo-key check alone: a wrong key would make the runtime reuse wrong answers."""
    check_plugin(entry.factory, args=entry.args_from(None), checks=[check_memo_keys], max_examples=30)


@settings(max_examples=60)
@given(ks.scenarios())
def test_every_in_tree_plugin_keeps_the_contracts_on_shared_scenarios(scenario: Scenario) -> None:
    """The same property over more scenarios, each checked against every plugin (one generation, many checks)."""
    for entry in ENTRIES:
        check_contracts(entry.factory, scenario, args=entry.args_from(None), filter_plugins=_filters_for(entry))


# --- broken plugins are caught, with the shrunk scenario as YAML ---------------------------------

BROKEN: list[tuple[type[Any], str, str]] = [
    (broken.MutatesNodeInfo, "no-mutation",
     'Filter on node "node-0" changed the NodeInfo of node "node-0":\n'
     "    node_info.node.labels['seen-by']: <absent> -> 'MutatesNodeInfo'"),
    (broken.MutatesPod, "no-mutation",
     "PreFilter changed the pod:\n    pod.labels['considered-by']: <absent> -> 'MutatesPod'"),
    (broken.ScoresOutOfRange, "score-range",
     'Score on node "node-0" returned 200, outside [0, 100], and the plugin has no NormalizeScore'),
    (broken.Nondeterministic, "deterministic", "a second attempt of the same plugin instance answered differently"),
    (broken.SharedClone, "state-clone",
     'AddPod of default/pending-1 on node "node-0" on the original CycleState changed the CycleState, its clone:\n'
     "    state[StateKey('PreFilterSharedClone')].counts['node-0']: 0 -> 1"),
    (broken.ForgetfulRemovePod, "add-remove-inverse",
     'AddPod then RemovePod of default/pending-1 on node "node-0" changed Filter\'s verdicts:\n'
     '    node "node-0": Success before, Unschedulable: node(s) had too many pods after'),
    (broken.LeakyReserve, "reserve-unreserve",
     "Reserve then Unreserve on node \"node-0\" changed the plugin's attributes:\n"
     "    .reserved_milli_cpu['node-0']: <absent> -> 0"),
    (broken.KeyMissesRequests, "memo-key", "filter_key gave pods default/pending-0 and "),
    (broken.FilterReturnsNone, "no-mutation", 'Filter on node "node-0" returned None (NoneType), not a Status'),
]


@pytest.mark.parametrize(("plugin", "contract", "detail"), BROKEN, ids=[b[0].__name__ for b in BROKEN])
def test_a_broken_plugin_fails_with_a_readable_counterexample(plugin: type[Any], contract: str, detail: str) -> None:
    with pytest.raises(ContractViolation) as caught:
        check_plugin(plugin, max_examples=50)
    violation = caught.value
    assert (violation.contract, violation.plugin) == (contract, plugin.name)
    message = str(violation)
    assert message.startswith(f"plugin {plugin.name} breaks the contract {contract!r}: {CONTRACTS[contract]}.\n")
    assert detail in message
    # the shrunk counterexample: one bare node, the pod to schedule first in a comment, Kubernetes YAML
    assert "\n\nCounterexample (Scenario(pod='default/pending-0', nodes=1, bound_pods=0, " in message
    yaml = message.split("):\n", 1)[1]
    assert yaml == violation.scenario.to_yaml()
    assert yaml.startswith("# the pod to schedule: default/pending-0\n---\napiVersion: v1\nkind: Namespace\n")
    assert "kind: Node\nmetadata:\n  name: node-0\n" in yaml
    assert "seen-by" not in yaml
    assert "considered-by" not in yaml


def test_a_violation_is_an_assertion_error_that_pytest_reports() -> None:
    assert issubclass(ContractViolation, AssertionError)


# --- the check functions, one scenario at a time ------------------------------------------------


def _scenario(*, bound: bool = True) -> Scenario:
    four = {"cpu": parse_quantity("4"), "memory": parse_quantity("8Gi"), "pods": parse_quantity("110")}
    node = Node("node-0", labels={"kubernetes.io/hostname": "node-0"}, allocatable=four, capacity=four)
    web = Container("app", requests={"cpu": parse_quantity("1")})
    bound_pod = Pod("web-0", labels={"app": "web"}, node_name="node-0", phase="Running", containers=(web,))
    pending = Pod("web-1", labels={"app": "web"}, containers=(web,))
    other = Pod("web-2", labels={"app": "web"}, containers=(web,))
    namespace = Namespace("default", {"kubernetes.io/metadata.name": "default"})
    pods = (bound_pod, pending, other) if bound else (pending, other)
    return Scenario(Cluster((namespace, node, *pods)), pending)


def test_checks_run_on_one_hand_written_scenario() -> None:
    scenario = _scenario()
    for entry in ENTRIES:
        check_contracts(entry.factory, scenario, args=entry.args_from(None), filter_plugins=_filters_for(entry))
    with pytest.raises(ContractViolation, match="changed the NodeInfo of node"):
        check_no_mutation(broken.MutatesNodeInfo, scenario)
    with pytest.raises(ContractViolation, match="returned 300, outside"):
        check_score_range(broken.ScoresOutOfRange, scenario)
    with pytest.raises(ContractViolation, match="its clone"):
        check_state_clone(broken.SharedClone, scenario)
    check_add_remove_inverse(broken.ForgetfulRemovePod, scenario)  # the node is full either way: no change seen
    with pytest.raises(ContractViolation, match="Filter's verdicts"):
        check_add_remove_inverse(broken.ForgetfulRemovePod, _scenario(bound=False))


SMALL_BREAKAGES: list[tuple[Check, type[Any], str]] = [
    (check_score_range, broken.ScoresAFloat, 'Score on node "node-0" returned 0.5 (float), not an int'),
    (check_score_range, broken.NormalizesOutOfRange,
     'NormalizeScore left node "node-0" at 150 (raw score 10), outside [0, 100]'),
    (check_score_range, broken.NormalizeDropsNodes, "NormalizeScore returned 0 scores for 1 nodes: []"),
    (check_score_range, broken.NormalizeFails, "NormalizeScore raised ValueError: no scores to normalize"),
    (check_determinism, broken.NumberedInstances,
     "a second plugin instance built the same way answered differently:\n  first: Score: {'node-0': "),
    (check_state_clone, broken.AddPodFails,
     'AddPod of default/web-2 on node "node-0" returned Error: cannot count'),
    (check_memo_keys, broken.UnhashableKey, "filter_key of default/web-1 returned ['app'], which is not hashable "
                                            "(unhashable type: 'list')"),
    (check_score_range, broken.PreScoreReturnsNone, "PreScore returned None (NoneType), not a Status"),
    (check_no_mutation, broken.FilterReturnsNone, 'Filter on node "node-0" returned None (NoneType), not a Status'),
]


@pytest.mark.parametrize(("check", "plugin", "detail"), SMALL_BREAKAGES,
                         ids=[b[1].__name__ for b in SMALL_BREAKAGES])
def test_smaller_breakages_are_named_precisely(check: Check, plugin: type[Any], detail: str) -> None:
    with pytest.raises(ContractViolation) as caught:
        check(plugin, _scenario())
    assert caught.value.detail.startswith(detail)


def test_a_normalize_key_that_misses_what_normalizing_reads_is_caught() -> None:
    scenario = _scenario(bound=False)
    four = scenario.cluster.nodes[0].allocatable
    node = Node("node-1", labels={"kubernetes.io/hostname": "node-1"}, allocatable=four, capacity=four)
    idle = attrs.evolve(scenario.pod, name="idle", uid="idle", containers=(Container("app"),))
    scenario = Scenario(Cluster((*scenario.cluster.objects, node, idle)), scenario.pod)
    with pytest.raises(ContractViolation) as caught:
        check_memo_keys(broken.NormalizesByNodeName, scenario)
    assert caught.value.detail == (
        "normalize_key gave default/web-1 the key (), yet NormalizeScore of [0, 0] answered [100, 0] for the nodes "
        "in order and [0, 100] in reverse")
    with pytest.raises(ContractViolation) as caught:
        check_memo_keys(broken.NormalizeKeyMissesRequests, scenario)
    assert caught.value.detail.startswith(
        "normalize_key gave pods default/web-1 and default/idle the same key (), yet NormalizeScore of [7, 7] answered "
        "[3, 3] for default/web-1 and [7, 7] for default/idle")


def test_a_key_that_misses_what_the_answer_depends_on_is_caught_on_near_twins() -> None:
    idle = attrs.evolve(_scenario(bound=False).pod, name="idle", uid="idle", containers=(Container("app"),))
    scenario = _scenario(bound=False)
    scenario = Scenario(Cluster((*scenario.cluster.objects, idle)), scenario.pod)
    with pytest.raises(ContractViolation) as caught:
        check_memo_keys(broken.ScoreKeyMissesRequests, scenario)
    assert caught.value.contract == "memo-key"
    assert caught.value.detail == (
        "score_key gave pods default/web-1 and default/idle the same key 'default', yet Score on node "
        '"node-0" answered 50 for default/web-1 and 10 for default/idle')
    with pytest.raises(ContractViolation, match="filter_key gave pods default/web-1 and default/idle the same key"):
        check_memo_keys(broken.KeyMissesRequests, scenario)
    check_memo_keys(NodeResourcesFit, scenario)


def test_label_keys_that_miss_what_filter_reads_are_caught() -> None:
    scenario = _scenario(bound=False)
    four = scenario.cluster.nodes[0].allocatable
    node = Node("node-1", labels={"kubernetes.io/hostname": "node-1"}, allocatable=four, capacity=four)
    scenario = Scenario(Cluster((*scenario.cluster.objects, node)), scenario.pod)
    with pytest.raises(ContractViolation) as caught:
        check_memo_keys(broken.LabelKeysMissTheHost, scenario)
    assert caught.value.contract == "memo-key"
    assert caught.value.detail.startswith(
        "filter_label_keys gave default/web-1 the keys ('topology.kubernetes.io/zone',), on which nodes \"node-0\" "
        'and "node-1" agree, yet Filter answered ')


def _spread_scenario() -> Scenario:
    """Two zones, the first holding two web pods, and a node without a zone: three different verdicts."""
    four = {"cpu": parse_quantity("4"), "memory": parse_quantity("8Gi"), "pods": parse_quantity("110")}
    zone = "topology.kubernetes.io/zone"
    nodes = [Node(f"node-{i}", labels={"kubernetes.io/hostname": f"node-{i}", **({zone: z} if z else {})},
                  allocatable=four, capacity=four) for i, z in enumerate(["a", "a", "b", "b", ""])]
    web = {"app": "web"}
    bound = [Pod(f"web-{i}", labels=web, node_name="node-0", phase="Running") for i in range(2)]
    spread = (TopologySpreadConstraint(1, zone, "DoNotSchedule", LabelSelector(web)),)
    pending = Pod("web-9", labels=web, topology_spread_constraints=spread)
    namespace = Namespace("default", {"kubernetes.io/metadata.name": "default"})
    return Scenario(Cluster((namespace, *nodes, *bound, pending)), pending)


def test_in_tree_label_keys_keep_their_promise() -> None:
    """PodTopologySpread's verdict reads its constraints' topology labels alone (the node search relies on it)."""
    check_memo_keys(PodTopologySpread, _spread_scenario())
    check_plugin(PodTopologySpread, checks=[check_memo_keys], max_examples=40)


def test_spread_label_keys_that_miss_the_zone_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PodTopologySpread, "filter_label_keys", lambda self, state, pod: ())
    with pytest.raises(ContractViolation, match="filter_label_keys gave default/web-9 the keys \\(\\), on which"):
        check_memo_keys(PodTopologySpread, _spread_scenario())


def test_a_batch_score_that_differs_from_score_is_caught() -> None:
    with pytest.raises(ContractViolation) as caught:
        check_memo_keys(broken.BatchForgetsTheNode, _spread_scenario())
    assert caught.value.detail == (
        "score_nodes of default/web-9 on nodes ['node-0', 'node-2', 'node-4', 'node-1', 'node-3'] answered "
        "[10, 10, 10, 10, 10], yet Score answered [50, 10, 10, 10, 10] node by node")


def _anti_affinity_scenario() -> Scenario:
    """Web pods on two of three hosts; the pending one prefers hosts without web pods (weight 100)."""
    scenario = _spread_scenario()
    host = "kubernetes.io/hostname"
    term = PodAffinityTerm(host, LabelSelector({"app": "web"}))
    affinity = Affinity(pod_anti_affinity=PodAffinity(preferred=(WeightedPodAffinityTerm(100, term),)))
    pod = attrs.evolve(scenario.pod, affinity=affinity, topology_spread_constraints=())
    others = [o for o in scenario.cluster.objects if not (isinstance(o, Pod) and o.name == pod.name)]
    return Scenario(Cluster((*others, pod)), pod)


def test_inter_pod_affinity_scores_alike_in_a_batch() -> None:
    """InterPodAffinity's score_nodes is its Score node by node (the runtime scores it in one call)."""
    check_memo_keys(InterPodAffinity, _anti_affinity_scenario())
    check_plugin(InterPodAffinity, checks=[check_memo_keys], max_examples=40)


def test_scores_that_are_bools_are_not_ints() -> None:
    class ScoresABool(broken.PreScoreReturnsNone):
        name = "ScoresABool"

        def pre_score(self, *args: object) -> Status:
            return Status.success()

    with pytest.raises(ContractViolation) as caught:
        check_score_range(ScoresABool, _scenario())
    assert caught.value.detail == 'Score on node "node-0" returned True (bool), not an int'


def test_a_violation_survives_pickling() -> None:
    with pytest.raises(ContractViolation) as caught:
        check_score_range(broken.ScoresAFloat, _scenario())
    again = pickle.loads(pickle.dumps(caught.value))
    assert str(again) == str(caught.value)


def test_checks_that_do_not_apply_pass() -> None:
    scenario = _scenario()
    check_state_clone(broken.MutatesPod, scenario)  # no PreFilterExtensions
    check_score_range(broken.SharedClone, scenario)  # no Score
    check_contracts(broken.LeakyReserve, scenario, checks=[check_score_range])


@settings(max_examples=20)
@given(ks.scenarios())
def test_checks_compose_with_given(scenario: Scenario) -> None:
    check_score_range(NodeResourcesFit, scenario)
    check_state_clone(PodTopologySpread, scenario)


class _Raises(broken.MutatesNodeInfo):
    """Raises on every node."""

    name = "Raises"

    def filter(self, *args: object) -> Any:
        raise KeyError("zone")


class _Unbuildable(broken.MutatesNodeInfo):
    name = "Unbuildable"

    def __init__(self, args: None, handle: object) -> None:
        raise ValueError("bad args")


def test_exceptions_are_violations_that_name_the_point() -> None:
    with pytest.raises(ContractViolation, match=r"Filter on node \"node-0\" raised KeyError: 'zone'"):
        check_score_range(_Raises, _scenario())
    with pytest.raises(ContractViolation, match="building the plugin raised ValueError: bad args"):
        check_no_mutation(_Unbuildable, _scenario())


def test_bad_arguments_of_check_plugin_fail_at_once() -> None:
    with pytest.raises(InvalidArgument):
        check_plugin(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        check_plugin(NodeResourcesFit, checks=())
    with pytest.raises(InvalidArgument):
        check_contracts(NodeResourcesFit, _scenario(), checks=[check_score_range, len])  # type: ignore[list-item]
    assert len(ALL_CHECKS) == len(CONTRACTS)
