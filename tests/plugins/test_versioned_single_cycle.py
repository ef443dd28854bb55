"""What one scheduling cycle reports, per kube-scheduler version: each switch of versions.CHANGES off and on.

Most cases replay a recorded v1.36.3 scenario (tests/data/conformance-v1.36) at the minor before a
change and at the minor that brought it, so that exactly one switch differs between the two runs.
"""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib import Scheduler, explain
from kschedlib._internal.extenders import filter_with_extenders
from kschedlib.errors import ConfigError
from kschedlib.extender import CallableExtender, HTTPExtender
from kschedlib.framework import CycleState, Handle, NodeInfo, QueuedPodInfo, QueueSortPlugin, Status
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code
from kschedlib.model import (
    Affinity,
    LabelSelector,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodDisruptionBudget,
    PodResourceClaim,
)
from kschedlib.plugins import in_tree_registry
from kschedlib.plugins._helpers.preemption_victims import Victims, budgets_of, select_victims_on_node
from kschedlib.plugins.dynamic_resources import DynamicResourcesArgs, decode_args
from kschedlib.plugins.priority_sort import less
from kschedlib.versions import resolve
from tests.extender.support import config, nodes, pod, stubs, url
from tests.helpers import make_node, make_pod, node_info
from tests.plugins.test_default_preemption import (
    StubHandle,
    as_handle,
    bound,
    preemptor,
    run_post_filter,
    small_node,
)
from tests.scenarios.conformance import DATA_BY_VERSION, load_case, scenario_cluster, scenario_config

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def replay(name: str, version: str) -> dict[str, Any]:
    """The explain output of the recorded v1.36 scenario ``name`` as kube-scheduler ``version``."""
    scenario = load_case(DATA_BY_VERSION["1.36"] / "explain" / f"{name}.json")["scenario"]
    out: dict[str, Any] = explain(scenario_cluster(scenario), scenario["pod"], scenario_config(scenario),
                                  kube_version=version).to_dict()
    return out


def reasons(out: dict[str, Any]) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    return {node: (s["plugin"], s["code"], tuple(s["reasons"])) for node, s in out["filtered"].items()}


# --- FitError: nodes a PreFilterResult left out -----------------------------------------------


def test_absent_nodes_in_fit_error() -> None:
    before, after = (replay("hand-nodeaffinity-matchfields-none", v) for v in ("1.31", "1.32"))
    assert before["message"] == "0/4 nodes are available:"
    assert before["filtered"] == {}
    assert after["message"] == "0/4 nodes are available: 4 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    absent = ("", "UnschedulableAndUnresolvable", ("node(s) didn't satisfy plugin(s) [NodeAffinity]",))
    assert reasons(after) == dict.fromkeys(("node-0", "node-1", "node-2", "node-3"), absent)
    assert after["evaluated_nodes"] == before["evaluated_nodes"] == 0


def test_prefilter_narrowing_rejects() -> None:
    """From 1.31 the plugin whose PreFilterResult named only missing nodes is a rejector (its events requeue
    the pod); the absent nodes' statuses come in 1.32 (recorded: loop-matchfields-missing-node-backoff)."""
    term = NodeSelectorTerm(match_fields=(NodeSelectorRequirement("metadata.name", "In", ("missing",)),))
    target = make_pod("p", affinity=Affinity(node_affinity=NodeAffinity(required=NodeSelector((term,)))))
    rejectors = {}
    for version in ("1.30", "1.31", "1.32"):
        outcome = explain([make_node("a"), make_node("b"), target], target, HEADER, kube_version=version).outcome
        assert outcome is not None
        assert outcome.diagnosis is not None
        rejectors[version] = set(outcome.diagnosis.unschedulable_plugins)
    assert rejectors == {"1.30": set(), "1.31": {"NodeAffinity"}, "1.32": {"NodeAffinity"}}


def test_absent_nodes_in_fit_error_preemption_counts_every_node() -> None:
    infos = [node_info(small_node("n1")), node_info(small_node("n2"))]
    statuses = {"n1": Status.unresolvable("x", plugin="X"), "n2": Status(Code.PENDING, ("waiting",))}
    old, _, _ = run_post_filter(StubHandle(infos, pending=[preemptor()]), preemptor(), statuses)
    new, _, _ = run_post_filter(StubHandle(infos, pending=[preemptor()], kube_version="1.32"), preemptor(),
                                statuses)
    assert old.message() == "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    assert new.message() == "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."


# --- reason strings and codes -----------------------------------------------------------------


def test_generic_taint_reason() -> None:
    before, after = (replay("hand-taints", v) for v in ("1.33", "1.34"))
    assert {r for _, _, rs in reasons(before).values() for r in rs} == {
        "node(s) had untolerated taint {dedicated: gpu}", "node(s) had untolerated taint {maint: }"}
    assert {rs for _, _, rs in reasons(after).values()} == {("node(s) had untolerated taint(s)",)}


def test_pv_node_affinity_reason() -> None:
    before, after = (replay("hand-volumebinding-node-affinity", v) for v in ("1.32", "1.33"))
    assert {rs for _, _, rs in reasons(before).values()} == {("node(s) had volume node affinity conflict",)}
    assert {rs for _, _, rs in reasons(after).values()} == {("node(s) didn't match PersistentVolume's node affinity",)}


def test_volume_binding_all_nodes() -> None:
    before, after = (replay("vol-binding-local-pv-and-nodeaffinity-result", v) for v in ("1.30", "1.31"))
    assert before["prefilter_nodes"] == ["node-1"]
    assert after["prefilter_nodes"] == ["node-0", "node-1"]


def test_rwop_in_use_reason() -> None:
    before, after = (replay("vol-restrictions-rwop-in-use-all-nodes", v) for v in ("1.33", "1.34"))
    assert {rs for _, _, rs in reasons(before).values()} == {
        ("node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode",)}
    assert {rs for _, _, rs in reasons(after).values()} == {
        ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by "
         "another pod",)}


def test_fit_unresolvable_over_allocatable() -> None:
    before, after = (replay("hand-fit-cpu", v) for v in ("1.33", "1.34"))
    assert {code for _, code, _ in reasons(before).values()} == {"Unschedulable"}
    assert {code for _, code, _ in reasons(after).values()} == {"UnschedulableAndUnresolvable"}
    assert "3 No preemption victims found for incoming pod" in before["postfilter"]["message"]
    assert "3 Preemption is not helpful for scheduling" in after["postfilter"]["message"]


@pytest.mark.parametrize(("requested", "code"), [
    ("3", "Unschedulable"),  # more than is free, less than the node has; the pod count never counts
    ("5", "UnschedulableAndUnresolvable"),  # more than the node has at all
], ids=["over-free", "over-total"])
def test_fit_unresolvable_over_allocatable_only_when_the_total_is_short(requested: str, code: str) -> None:
    full = make_node("n", allocatable={"cpu": "4", "memory": "8Gi", "pods": "1"})
    used = make_pod("used", node_name="n", requests={"cpu": "2"})
    cluster = [full, used]
    out = explain(cluster, make_pod("p", requests={"cpu": requested}), HEADER, kube_version="1.34").to_dict()
    status = out["filtered"]["n"]
    assert status["reasons"] == ["Too many pods", "Insufficient cpu"]
    assert status["code"] == code


# --- preemption -------------------------------------------------------------------------------


def test_preemption_victims_resorted() -> None:
    guarded = {"app": "guarded"}
    pods = [bound("g-low", "n1", "1", 1, labels=guarded), bound("free", "n1", "1", 5),
            bound("g-high", "n1", "1", 9, labels=guarded)]
    pdb = PodDisruptionBudget("guard", selector=LabelSelector({"app": "guarded"}), disruptions_allowed=1)
    info = node_info(small_node("n1", "3"), *pods)
    order = {}
    for version in ("1.30", "1.31"):
        stub = StubHandle([info], pdbs=[pdb], kube_version=version)
        outcome = select_victims_on_node(as_handle(stub), CycleState(), preemptor("3"), info, budgets_of([pdb]))
        assert isinstance(outcome, Victims)
        order[version] = ([p.name for p in outcome.pods], outcome.num_pdb_violations)
    assert order == {"1.30": (["g-low", "g-high", "free"], 1), "1.31": (["g-high", "free", "g-low"], 1)}


def test_terminating_victims_not_deleted() -> None:
    leaving = bound("leaving", "n1", "1", 1, deletion_timestamp=5.0)
    staying = bound("staying", "n1", "1", 2)
    infos = [node_info(small_node("n1"), leaving, staying)]
    statuses = {"n1": Status.unschedulable("Insufficient cpu", plugin="NodeResourcesFit")}
    victims = {}
    for version in ("1.34", "1.35"):
        stub = StubHandle(infos, pending=[preemptor("2")], kube_version=version)
        status, node, victims[version] = run_post_filter(stub, preemptor("2"), statuses)
        assert (status.code, node) == (Code.SUCCESS, "n1")
    assert victims == {"1.34": ("default/staying", "default/leaving"), "1.35": ("default/staying",)}


# --- extenders --------------------------------------------------------------------------------


def test_extender_status_replaces() -> None:
    rejecting = CallableExtender("x", filter=lambda pod, info: "busy")
    info = NodeInfo.of(make_node("a"))
    snapshot = Snapshot([info])
    merged = {}
    for replace in (False, True):
        statuses = {"a": Status.unschedulable("earlier", plugin="P")}
        assert filter_with_extenders([rejecting], make_pod("p"), [info], statuses, snapshot,
                                     replace_statuses=replace) == []
        merged[replace] = statuses["a"].all_reasons()
    assert merged == {False: ("earlier", "busy"), True: ("busy",)}
    assert resolve("1.31").switches.extender_status_replaces is False
    assert resolve("1.32").switches.extender_status_replaces is True


def test_extender_error_verbatim() -> None:
    messages = {}
    with stubs({"filter": {"error": "50% of nodes busy"}}) as pool:
        cfg = config({"urlPrefix": url(pool), "filterVerb": "filter"})
        for version in ("1.30", "1.31"):
            scheduler = Scheduler(cfg, seed=0, retry_unschedulable=False, kube_version=version)
            scheduler.add_objects([*nodes(2), pod()])
            result = scheduler.schedule_one()
            assert result is not None
            assert result.status.code is Code.ERROR
            messages[version] = result.message
    assert messages == {"1.30": "50%!o(MISSING)f nodes busy", "1.31": "50% of nodes busy"}  # errors.New from 1.31
    assert isinstance(scheduler._engine.extenders[0], HTTPExtender)


# --- configuration ----------------------------------------------------------------------------

INVALID = ('was invalid in version "kubescheduler.config.k8s.io/v1" '
           '(KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")')


@pytest.mark.parametrize(("profile", "field"), [
    ({"plugins": {"filter": {"enabled": [{"name": "EBSLimits"}]}}}, "profiles[0].plugins.filter.enabled[0]"),
    ({"plugins": {"preFilter": {"enabled": [{"name": "NodePorts"}, {"name": "AzureDiskLimits"}]}}},
     "profiles[0].plugins.preFilter.enabled[1]"),
    ({"pluginConfig": [{"name": "NodeAffinity", "args": {}}, {"name": "CinderLimits", "args": {}}]},
     "profiles[0].pluginConfig[1]"),
], ids=["filter", "prefilter-second", "plugin-config"])
def test_legacy_volume_limits_removed(profile: dict[str, Any], field: str) -> None:
    Scheduler({**HEADER, "profiles": [profile]}, kube_version="1.30")
    with pytest.raises(ConfigError) as refused:
        Scheduler({**HEADER, "profiles": [profile]}, kube_version="1.31")
    assert (refused.value.message, refused.value.field) == (INVALID, field)


def test_legacy_volume_limits_unregistered() -> None:
    multi = {**HEADER, "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "GCEPDLimits"}]}}}]}
    Scheduler(multi, kube_version="1.31")  # kube's validation looks at the extension points, not multiPoint
    with pytest.raises(ConfigError, match='plugin "GCEPDLimits" does not exist'):
        Scheduler(multi, kube_version="1.32")


def test_short_queue_sort_message() -> None:
    two = {**HEADER, "profiles": [
        {"schedulerName": "a"},
        {"schedulerName": "b", "plugins": {"queueSort": {"enabled": [{"name": "Custom"}],
                                                         "disabled": [{"name": "*"}]}}},
    ]}
    class Custom(QueueSortPlugin):
        """PrioritySort's order under another name: a second, different queue sort."""

        name = "Custom"

        def __init__(self, args: None, handle: Handle) -> None:
            pass

        def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
            return less(a, b)

    registry = in_tree_registry()
    registry.register("Custom", Custom)
    messages = {}
    for version in ("1.33", "1.34"):
        with pytest.raises(ConfigError) as refused:
            Scheduler(two, registry=registry, kube_version=version)
        messages[version] = refused.value.message
    assert messages == {"1.33": "queueSort must be the same for all profiles",
                        "1.34": "must be the same for all profiles"}


@pytest.mark.parametrize(("raw", "expected"), [
    (None, DynamicResourcesArgs(10.0, 600.0)),
    ({}, DynamicResourcesArgs(10.0, 600.0)),
    ({"filterTimeout": "0s"}, DynamicResourcesArgs(0.0, 600.0)),
    ({"filterTimeout": "1m30s", "bindingTimeout": "5m"}, DynamicResourcesArgs(90.0, 300.0)),
], ids=["none", "empty", "zero-disables", "both"])
def test_dynamic_resources_args_decode(raw: dict[str, Any] | None, expected: DynamicResourcesArgs) -> None:
    assert decode_args(raw) == expected


@pytest.mark.parametrize(("raw", "field", "message"), [
    ({"filterTimeout": "-1s"}, "filterTimeout", "must be zero or positive"),
    ({"bindingTimeout": "0s"}, "bindingTimeout", "must be positive"),
    ({"filterTimeout": 10}, "filterTimeout", "must be a duration string such as 10s"),
    ({"filterTimeout": "ten"}, "filterTimeout", 'time: invalid duration "ten"'),
], ids=["negative-filter", "zero-binding", "not-a-string", "not-a-duration"])
def test_dynamic_resources_args_refused(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        decode_args(raw)
    assert (refused.value.field, refused.value.message) == (field, message)


def test_dynamic_resources_args_in_a_configuration() -> None:
    cfg = {**HEADER, "profiles": [{"pluginConfig": [{"name": "DynamicResources",
                                                     "args": {"filterTimeout": "-5s"}}]}]}
    with pytest.raises(ConfigError, match="must be zero or positive") as refused:
        Scheduler(cfg, kube_version="1.36")
    assert refused.value.field == "profiles[0].pluginConfig[DynamicResources].args.filterTimeout"
    with pytest.raises(ConfigError, match="unknown field"):
        Scheduler({**HEADER, "profiles": [{"pluginConfig": [{"name": "DynamicResources",
                                                             "args": {"timeout": "5s"}}]}]}, kube_version="1.36")


# --- Dynamic Resource Allocation --------------------------------------------------------------


def test_dynamic_resources_holds_pods_whose_claims_do_not_exist() -> None:
    claimed = make_pod("p", resource_claims=(PodResourceClaim("gpu", resource_claim_template_name="t"),))
    cluster = [make_node("a"), make_node("b")]
    old = explain(cluster, claimed, HEADER, kube_version="1.33").to_dict()
    new = explain(cluster, claimed, HEADER, kube_version="1.36").to_dict()
    assert old["error"] is None
    assert old["selected"] in {"a", "b"}
    assert new["selected"] is None
    assert new["preenqueue"] == {"plugin": "DynamicResources", "code": "UnschedulableAndUnresolvable",
                                 "reasons": ['pod "default/p": ResourceClaim not created yet']}


def test_dynamic_resources_ignores_claims_with_the_gate_off() -> None:
    claimed = make_pod("p", resource_claims=(PodResourceClaim("gpu", resource_claim_name="c"),))
    cfg = {**HEADER, "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "DynamicResources"}]}}}]}
    out = explain([make_node("a")], claimed, cfg, kube_version="1.34",
                  feature_gates={"DynamicResourceAllocation": False}).to_dict()
    assert out["error"] is None
    assert out["selected"] == "a"


def test_topology_spread_per_constraint() -> None:
    """Two soft constraints on the zone key: shared counts up to v1.32, each its own from v1.33."""
    shared, apart = replay("gap-spread2soft-zone", "1.32"), replay("gap-spread2soft-zone", "1.33")
    spread = {node: entry["plugins"]["PodTopologySpread"] for node, entry in apart["scores"].items()}
    assert spread == {"n-0": 200, "n-1": 200, "n-2": 142, "n-3": 200, "n-4": 200, "n-5": 142}
    assert {node: entry["plugins"]["PodTopologySpread"] for node, entry in shared["scores"].items()} != spread
