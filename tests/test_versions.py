"""kube-scheduler versions and feature gates: parsing, gate rules and the switch table."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from kschedlib import versions
from kschedlib.errors import ConfigError
from kschedlib.versions import CHANGES, GATES, Switches, changes_between, parse_kube_version, resolve

DOCS = Path(__file__).resolve().parent.parent / "docs" / "reference" / "versions.md"


@pytest.mark.parametrize(("given", "expected"), [
    ("1.30", "1.30"), ("v1.36", "1.36"), ("1.36.3", "1.36"), (" v1.33.0 ", "1.33"), ("1.31", "1.31"),
], ids=str)
def test_versions_are_normalized_to_their_minor(given: str, expected: str) -> None:
    assert parse_kube_version(given) == expected


@pytest.mark.parametrize("given", ["1.29", "1.37", "2.36", "1.36.x", "", "latest", 136, None, "1.\uff13\uff16",
                                   "1.036", "01.36", "1.36.03", "1.3\u0666", "\u00a01.36"], ids=ascii)
def test_unsupported_versions_are_refused_with_the_list(given: object) -> None:
    with pytest.raises(ConfigError, match=r"supported: 1\.30, 1\.31, 1\.32, 1\.33, 1\.34, 1\.35, 1\.36"):
        parse_kube_version(given)


def test_every_switch_is_named_by_exactly_one_change() -> None:
    fields = {f.name for f in attrs.fields(Switches)}
    named = [change.switch for change in CHANGES]
    assert sorted(named) == sorted(fields)
    assert all(change.gate is None or change.gate in GATES for change in CHANGES)


def test_v130_has_no_change_and_v136_has_all_with_default_gates() -> None:
    old, new = resolve("1.30").switches, resolve("1.36").switches
    assert not any(attrs.asdict(old).values())
    assert all(attrs.asdict(new).values())


@pytest.mark.parametrize(("version", "switch", "expected"), [
    ("1.31", "legacy_volume_limits_removed", True),
    ("1.31", "absent_nodes_in_fit_error", False),
    ("1.32", "absent_nodes_in_fit_error", True),
    ("1.32", "queueing_hints", True),
    ("1.31", "queueing_hints", False),
    ("1.32", "async_preemption", False),
    ("1.33", "async_preemption", True),
    ("1.33", "in_place_resize_requests", True),
    ("1.33", "pod_level_resources", False),
    ("1.34", "pod_level_resources", True),
    ("1.34", "dynamic_resources", True),
    ("1.34", "dynamic_resources_score", False),
    ("1.35", "node_declared_features", False),
    ("1.36", "node_declared_features", True),
    ("1.35", "balanced_allocation_change_score", False),
    ("1.30", "volume_binding_all_nodes", False),
    ("1.31", "volume_binding_all_nodes", True),
    ("1.31", "sidecar_nonzero_requests", False),
    ("1.32", "sidecar_nonzero_requests", True),
    ("1.31", "volume_attachments_counted", False),
    ("1.32", "volume_attachments_counted", True),
    ("1.32", "balanced_allocation_skips_best_effort", False),
    ("1.33", "balanced_allocation_skips_best_effort", True),
    ("1.33", "volume_attributes_class", False),
    ("1.34", "volume_attributes_class", True),
    ("1.35", "image_volume_locality", False),
    ("1.36", "image_volume_locality", True),
    ("1.34", "nominated_node_name_before_prebind", False),
    ("1.35", "nominated_node_name_before_prebind", True),
    ("1.35", "pod_level_resize_requests", False),
    ("1.36", "pod_level_resize_requests", True),
    ("1.30", "prefilter_narrowing_rejects", False),
    ("1.31", "prefilter_narrowing_rejects", True),
    ("1.30", "extender_error_verbatim", False),
    ("1.31", "extender_error_verbatim", True),
    ("1.31", "csi_limits_from_csinode", False),
    ("1.32", "csi_limits_from_csinode", True),
    ("1.32", "nominated_pod_delete_requeues", False),
    ("1.33", "nominated_pod_delete_requeues", True),
    ("1.34", "binding_is_not_a_nominated_delete", False),
    ("1.35", "binding_is_not_a_nominated_delete", True),
    ("1.32", "affinity_node_hint_by_domain", False),
    ("1.33", "affinity_node_hint_by_domain", True),
    ("1.35", "affinity_pod_hint_fixes", False),
    ("1.36", "affinity_pod_hint_fixes", True),
    ("1.33", "short_queue_sort_message", False),
    ("1.34", "short_queue_sort_message", True),
    ("1.33", "dynamic_resources", False),
    ("1.34", "dra_claimless_post_filter_reason", True),
    ("1.34", "dra_incomplete_pools_skipped", False),
    ("1.35", "dra_incomplete_pools_skipped", True),
    ("1.35", "claim_owner_reason_capitalized", False),
    ("1.36", "claim_owner_reason_capitalized", True),
], ids=lambda v: str(v))
def test_intermediate_versions_compose_the_same_switches(version: str, switch: str, expected: bool) -> None:
    assert getattr(resolve(version).switches, switch) is expected


def test_gates_turn_their_change_off_and_on() -> None:
    assert resolve("1.30", {"SchedulerQueueingHints": True}).switches.queueing_hints
    assert not resolve("1.33", "SchedulerQueueingHints=false").switches.queueing_hints
    assert not resolve("1.36", {"SchedulerPopFromBackoffQ": False}).switches.pop_from_backoff_queue
    settings = resolve("1.36", "PodLevelResources=false, NodeDeclaredFeatures=false")
    assert not settings.switches.pod_level_resources
    assert not settings.switches.node_declared_features
    assert settings.to_dict() == {"kube_version": "1.36",
                                  "feature_gates": {"NodeDeclaredFeatures": False, "PodLevelResources": False}}


@pytest.mark.parametrize(("version", "gates", "message"), [
    ("1.36", {"SchedulerQueueingHints": False},
     "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true"),
    ("1.35", {"DynamicResourceAllocation": False},
     "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
    ("1.36", {"NoSuchGate": True}, "unrecognized feature gate: NoSuchGate"),
    ("1.31", {"SchedulerPopFromBackoffQ": True}, "unrecognized feature gate: SchedulerPopFromBackoffQ"),
    ("1.34", {"PodDisruptionConditions": True}, "unrecognized feature gate: PodDisruptionConditions"),
    ("1.36", "SchedulerQueueingHints", "expected Name=true|false"),
    ("1.36", "A=yes", "expected Name=true|false"),
    ("1.36", {"SchedulerAsyncPreemption": "false"}, "maps a name to true or false"),
    ("1.36", ["SchedulerAsyncPreemption"], "must be a mapping"),
], ids=lambda v: str(v)[:40])
def test_gate_overrides_are_refused_as_kube_refuses_them(version: str, gates: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("|", r"\|")):
        resolve(version, gates)  # type: ignore[arg-type]


def test_dynamic_resource_allocation_is_modelled_on_from_1_32() -> None:
    assert resolve("1.32", {"DynamicResourceAllocation": True}).switches.dynamic_resources
    assert resolve("1.33", {"DynamicResourceAllocation": True}).switches.dra_incomplete_pools_skipped is False
    with pytest.raises(ConfigError, match=r"1\.31 run an alpha API") as refused:
        resolve("1.31", {"DynamicResourceAllocation": True})
    assert (refused.value.field, refused.value.value) == ("feature_gates", "DynamicResourceAllocation")


def test_a_locked_gate_may_be_set_to_its_lock() -> None:
    assert resolve("1.36", {"SchedulerQueueingHints": True}).switches.queueing_hints


def test_environment_sets_the_default_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(versions.ENV_VAR, "v1.33.2")
    assert resolve().version == "1.33"
    assert resolve("1.30").version == "1.30"  # chosen in code wins
    monkeypatch.setenv(versions.ENV_VAR, "1.99")
    with pytest.raises(ConfigError, match=versions.ENV_VAR):
        resolve()
    monkeypatch.delenv(versions.ENV_VAR)
    assert resolve().version == versions.DEFAULT_KUBE_VERSION


def test_changes_between_lists_what_differs() -> None:
    between = changes_between("1.33", "1.35")
    assert {c.since for c in between} == {34, 35}
    assert "generic_taint_reason" in {c.switch for c in between}
    assert changes_between("1.36", "1.36") == []


def test_the_versions_page_is_generated_from_the_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert versions.markdown_table() in text
    assert versions.verification_table() in text


_KINDS = {"single cycles": ("explain", "scale"), "loop timelines": ("loop",), "extender cases": ("extenders",),
          "scheduling sequences": ("sequences",), "DRA cases": ("dra",)}


@pytest.mark.parametrize("check", versions.VERIFICATIONS, ids=lambda c: f"1.{c.minor}")
def test_the_versions_page_counts_the_cases_the_suite_replays(check: versions.Verification) -> None:
    data = Path(__file__).resolve().parent / "data"
    root = data / ("conformance" if check.minor == 30 else f"conformance-v1.{check.minor}")
    counted = {kind: sum(len(list((root / folder).glob("*.json"))) for folder in folders)
               for kind, folders in _KINDS.items()}
    assert {kind: count for kind, count in counted.items() if count} == dict(check.samples)
    answered = list((data / "conformance-oracle" / f"v1.{check.minor}").glob("*/*.json"))
    assert len(answered) == check.answered
    first = next(root.glob("loop/*.json"))
    assert json.loads(first.read_text()).get("kube_version", "v1.30.6") == check.release
    assert [f"1.{c.minor}" for c in versions.VERIFICATIONS] == list(versions.SUPPORTED_VERSIONS)


NODE_33 = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
           "status": {"allocatable": {"cpu": "2", "memory": "2Gi", "pods": "10"},
                      "nodeInfo": {"kubeletVersion": "v1.33.4"}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "x"}]}}


def test_results_name_the_version_and_note_other_kubelet_minors(monkeypatch: pytest.MonkeyPatch) -> None:
    import kschedlib
    from kschedlib.simulation.report import explanation_text, simulation_text

    monkeypatch.delenv(versions.ENV_VAR, raising=False)
    explained = kschedlib.explain([NODE_33, POD], "default/p")
    assert explained.to_dict()["kube_version"] == versions.DEFAULT_KUBE_VERSION
    assert len(explained.notes) == 1
    assert "kubelet 1.33" in explained.notes[0]
    assert explanation_text(explained).splitlines()[:2] == [
        f"pod default/p (kube-scheduler {versions.DEFAULT_KUBE_VERSION})", f"note: {explained.notes[0]}"]
    simulated = kschedlib.simulate([NODE_33, POD], feature_gates={"SchedulerPopFromBackoffQ": False})
    assert simulated.to_dict()["notes"] == [explained.notes[0]]
    assert simulation_text(simulated).splitlines()[0] == (
        f"kube-scheduler {versions.DEFAULT_KUBE_VERSION}, feature gates SchedulerPopFromBackoffQ=false")
    # a version chosen in code, or in the environment, is not second-guessed
    assert kschedlib.explain([NODE_33, POD], "default/p", kube_version="1.30").notes == ()
    monkeypatch.setenv(versions.ENV_VAR, "1.31")
    assert kschedlib.simulate([NODE_33, POD]).notes == []
    # the same minor is no news
    assert kschedlib.explain([NODE_33, POD], "default/p", kube_version="1.33").notes == ()
    assert versions.kubelet_note(resolve("1.33"), ["v1.33.0", "garbage"]) is None
