"""KubeSchedulerConfiguration read as kube-scheduler v1.30 reads it: strictly, with its error texts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kschedlib import Scheduler
from kschedlib._internal.documents import load_config
from kschedlib.errors import ConfigError
from kschedlib.framework.config import parse_config

INPUTS = Path(__file__).resolve().parents[1] / "data" / "inputs"
pytest.importorskip("yaml")

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def profile(**fields: Any) -> dict[str, Any]:
    return {**CONFIG, "profiles": [{"schedulerName": "default-scheduler", **fields}]}


def args(plugin: str, value: Any) -> dict[str, Any]:
    return profile(pluginConfig=[{"name": plugin, "args": value}])


def nested(index: int, plugin: str, field: str) -> str:
    return (f"strict decoding error: decoding .profiles[0].pluginConfig[{index}]: strict decoding error: "
            f'decoding args for plugin {plugin}: strict decoding error: unknown field "{field}"')


def test_every_known_field_is_accepted() -> None:
    config = load_config(INPUTS / "config-every-field.yaml")
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler", "custom"]


@pytest.mark.parametrize(("doc", "text", "field"), [
    pytest.param({**CONFIG, "percentageOfNodeToScore": 50},
                 'strict decoding error: unknown field "percentageOfNodeToScore"', "", id="top-level-typo"),
    pytest.param(profile(plugin={}), 'strict decoding error: unknown field "profiles[0].plugin"', "profiles[0]",
                 id="plugin-for-plugins"),
    pytest.param(profile(plugins={"score": {"enable": []}}),
                 'strict decoding error: unknown field "profiles[0].plugins.score.enable"',
                 "profiles[0].plugins.score", id="enable-for-enabled"),
    pytest.param(profile(plugins={"score": {"enabled": [{"name": "X", "wieght": 1}]}}),
                 'strict decoding error: unknown field "profiles[0].plugins.score.enabled[0].wieght"',
                 "profiles[0].plugins.score.enabled[0]", id="plugin-entry"),
    pytest.param({**CONFIG, "leaderElection": {"leaderElection": True}},
                 'strict decoding error: unknown field "leaderElection.leaderElection"', "leaderElection",
                 id="leader-election"),
    pytest.param({**CONFIG, "extenders": [{"urlPrefix": "http://a", "tlsConfig": {"insecure": True, "ca": "x"}}]},
                 'strict decoding error: unknown field "extenders[0].tlsConfig.ca"', "extenders[0].tlsConfig",
                 id="extender-tls"),
    pytest.param(args("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated", "resource": []}}),
                 nested(0, "NodeResourcesFit", "scoringStrategy.resource"),
                 "profiles[0].pluginConfig[0].args.scoringStrategy", id="fit-resource-for-resources"),
    pytest.param(args("DefaultPreemption", {"minCandidateNodesPercent": 5}),
                 nested(0, "DefaultPreemption", "minCandidateNodesPercent"), "profiles[0].pluginConfig[0].args",
                 id="default-preemption"),
    pytest.param(args("PodTopologySpread", {"defaultConstraints": [{"maxSkew": 1, "topologykey": "zone"}]}),
                 nested(0, "PodTopologySpread", "defaultConstraints[0].topologykey"),
                 "profiles[0].pluginConfig[0].args.defaultConstraints[0]", id="spread-constraint"),
    pytest.param(args("NodeAffinity", {"addedAffinity": {"requiredDuringScheduling": {}}}),
                 nested(0, "NodeAffinity", "addedAffinity.requiredDuringScheduling"),
                 "profiles[0].pluginConfig[0].args.addedAffinity", id="node-affinity"),
    pytest.param(args("VolumeBinding", {"bindTimeout": 5}), nested(0, "VolumeBinding", "bindTimeout"),
                 "profiles[0].pluginConfig[0].args", id="volume-binding"),
    pytest.param(args("InterPodAffinity", {"hardPodAffinityWeight": 1, "ignorePreferred": True}),
                 nested(0, "InterPodAffinity", "ignorePreferred"), "profiles[0].pluginConfig[0].args",
                 id="inter-pod-affinity"),
    pytest.param(args("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weigth": 1}]}),
                 nested(0, "NodeResourcesBalancedAllocation", "resources[0].weigth"),
                 "profiles[0].pluginConfig[0].args.resources[0]", id="balanced-allocation"),
    pytest.param({**profile(pluginConfig=[{"name": "VolumeBinding", "args": {"x": 1}}]), "foo": 1},
                 'strict decoding error: unknown field "foo", ' + nested(0, "VolumeBinding", "x").removeprefix(
                     "strict decoding error: "), "", id="outer-and-nested-flattened"),
])
def test_unknown_fields_are_refused_with_kubes_text(doc: dict[str, Any], text: str, field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(doc)
    assert str(caught.value) == text
    assert caught.value.field == field


def test_out_of_tree_plugin_args_are_not_checked() -> None:
    parse_config(args("MyPlugin", {"whatever": {"deep": 1}}))


@pytest.mark.parametrize(("file", "text"), [
    pytest.param("config-unknown-fields.yaml",
                 'strict decoding error: unknown field "percentageOfNodeToScore", unknown field "profiles[0].plugin"',
                 id="unknown-fields"),
    pytest.param("config-plugin-args-typo.yaml", nested(1, "NodeResourcesFit", "scoringStrategy.resource"),
                 id="plugin-args-typo"),
    pytest.param("config-default-preemption-zero.yaml",
                 "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at "
                 "the same time as minCandidateNodesAbsolute, profiles[0].pluginConfig[0].args."
                 "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                 "minCandidateNodesPercentage]", id="default-preemption-both-zero"),
])
def test_config_files_refused_as_kube_scheduler_refuses_them(file: str, text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(INPUTS / file)
    assert str(caught.value) == text


@pytest.mark.parametrize("value", [{"minCandidateNodesPercentage": 0}, {"minCandidateNodesAbsolute": 0},
                                   {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}])
def test_default_preemption_one_zero_is_fine(value: dict[str, int]) -> None:
    Scheduler(args("DefaultPreemption", value))


def test_configmap_is_unwrapped() -> None:
    config = load_config(INPUTS / "scheduler-configmap.yaml")
    assert config.percentage_of_nodes_to_score == 40
    assert config.profiles[0].plugin_config["NodeResourcesFit"] == {"scoringStrategy": {"type": "MostAllocated"}}


@pytest.mark.parametrize(("doc", "message"), [
    pytest.param({"kind": "ConfigMap", "data": {"other": "x"}}, "exactly one KubeSchedulerConfiguration",
                 id="configmap-without-config"),
    pytest.param({"kind": "ConfigMap", "data": {"a": "kind: KubeSchedulerConfiguration", "b":
                  "kind: KubeSchedulerConfiguration"}}, "exactly one KubeSchedulerConfiguration", id="two-configs"),
    pytest.param({"kind": "ConfigMap", "data": {"policy.cfg": '{"kind": "Policy", "apiVersion": "v1"}'}},
                 "Policy API was removed", id="policy-in-configmap"),
    pytest.param({"kind": "Policy", "apiVersion": "v1"}, "Policy API was removed", id="policy"),
    pytest.param({"kind": "ConfigMap", "data": {"c.yaml": "kind: KubeSchedulerConfiguration\n  bad: [\n"}},
                 "invalid YAML", id="configmap-with-broken-yaml"),
])
def test_config_documents(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(doc)


def test_legacy_policy_file() -> None:
    with pytest.raises(ConfigError, match=r"Policy API was removed in Kubernetes v1\.23; write a "
                                          "KubeSchedulerConfiguration"):
        load_config(INPUTS / "policy.json")


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("[1, 2]", "expected one KubeSchedulerConfiguration document", id="not-an-object"),
    pytest.param('{"a": 1}\n{"b": 2}', "expected one KubeSchedulerConfiguration document", id="two-documents"),
    pytest.param("{{ .Values.config }}", "unrendered Helm template", id="helm"),
])
def test_config_file_shapes(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "config.yaml"
    file.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(file)
