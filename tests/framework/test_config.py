"""parse_config (reference §13): every field of a KubeSchedulerConfiguration v1, and errors naming the field."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.errors import ConfigError, KschedError
from kschedlib.framework import PluginRef, PluginSet, ProfileConfig, SchedulerConfig, parse_config
from kschedlib.framework.config import API_VERSION, EXTENSION_POINTS

POINTS = ("multiPoint", *EXTENSION_POINTS)


def test_empty_document_is_the_default_configuration() -> None:
    config = parse_config({})
    assert config == SchedulerConfig()
    assert config.profiles == (ProfileConfig(),)
    assert config.profiles[0].scheduler_name == "default-scheduler"
    assert config.profiles[0].plugins is None
    assert config.profiles[0].percentage_of_nodes_to_score is None
    assert config.percentage_of_nodes_to_score == 0
    assert config.parallelism == 16
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1.0, 10.0)
    assert config.extenders == ()


def test_every_field() -> None:
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "parallelism": 4,
        "percentageOfNodesToScore": 35,
        "podInitialBackoffSeconds": 2,
        "podMaxBackoffSeconds": 30,
        "leaderElection": {"leaderElect": False},  # process concerns: accepted and ignored
        "clientConnection": {"qps": 50},
        "extenders": [{"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter"}],
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "percentageOfNodesToScore": 70,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Custom", "weight": 4}],
                                   "disabled": [{"name": "ImageLocality"}]},
                    "score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}], "disabled": [{"name": "*"}]},
                    "filter": {"disabled": [{"name": "TaintToleration"}]},
                    "bind": {"enabled": [{"name": "MyBinder"}]},
                },
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                    {"name": "Custom"},
                ],
            },
            {"schedulerName": "batch"},
        ],
    }
    config = parse_config(doc)
    assert config.parallelism == 4
    assert config.percentage_of_nodes_to_score == 35
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (2.0, 30.0)
    assert config.extenders == ({"urlPrefix": "http://127.0.0.1:8888", "filterVerb": "filter"},)
    first, second = config.profiles
    assert first.scheduler_name == "default-scheduler"
    assert first.percentage_of_nodes_to_score == 70
    assert first.plugins is not None
    assert set(first.plugins) == set(POINTS)
    assert first.plugins["multiPoint"] == PluginSet((PluginRef("Custom", 4),), ("ImageLocality",))
    assert first.plugins["score"] == PluginSet((PluginRef("NodeResourcesFit", 5),), ("*",))
    assert first.plugins["filter"] == PluginSet((), ("TaintToleration",))
    assert first.plugins["bind"] == PluginSet((PluginRef("MyBinder"),), ())
    assert first.plugins["permit"] == PluginSet()
    assert first.plugin_config == {"NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}},
                                   "Custom": None}
    assert second == ProfileConfig("batch")


def test_from_dict_is_parse_config() -> None:
    doc = {"profiles": [{"schedulerName": "a"}]}
    assert SchedulerConfig.from_dict(doc) == parse_config(doc)


def test_one_unnamed_profile_gets_the_default_name() -> None:
    assert parse_config({"profiles": [{"schedulerName": ""}]}).profiles[0].scheduler_name == "default-scheduler"
    assert parse_config({"profiles": [{}]}).profiles[0].scheduler_name == "default-scheduler"


def test_weight_is_optional_and_zero_is_kept_for_the_builder() -> None:
    enabled = [{"name": "A"}, {"name": "B", "weight": 0}]
    sets = parse_config({"profiles": [{"plugins": {"score": {"enabled": enabled}}}]})
    plugins = sets.profiles[0].plugins
    assert plugins is not None
    assert plugins["score"].enabled == (PluginRef("A", None), PluginRef("B", 0))


def test_null_plugin_sets_and_lists_are_empty() -> None:
    config = parse_config({"profiles": [{"plugins": {"filter": None, "score": {"enabled": None, "disabled": None}}}]})
    plugins = config.profiles[0].plugins
    assert plugins is not None
    assert plugins["filter"] == PluginSet()
    assert plugins["score"] == PluginSet()


ERRORS = [
    # id, document, field, message fragment
    ("not-a-dict", [], "<config>", "must be of type dict"),
    ("api-version", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}, "apiVersion", "unsupported apiVersion"),
    ("kind", {"kind": "Pod"}, "kind", "expected KubeSchedulerConfiguration"),
    ("profiles-not-a-list", {"profiles": {"schedulerName": "x"}}, "profiles", "must be of type list"),
    ("profile-not-a-dict", {"profiles": ["x"]}, "profiles[0]", "must be of type dict"),
    ("second-profile-unnamed", {"profiles": [{"schedulerName": "a"}, {}]}, "profiles[1].schedulerName",
     "Required value"),
    ("scheduler-name-type", {"profiles": [{"schedulerName": 3}]}, "profiles[0].schedulerName", "must be of type str"),
    ("duplicate-profiles", {"profiles": [{"schedulerName": "a"}, {"schedulerName": "b"}, {"schedulerName": "a"}]},
     "profiles[2].schedulerName", "Duplicate value"),
    ("profile-percentage-range", {"profiles": [{"percentageOfNodesToScore": 101}]},
     "profiles[0].percentageOfNodesToScore", "not in valid range [0-100]"),
    ("profile-percentage-negative", {"profiles": [{"percentageOfNodesToScore": -1}]},
     "profiles[0].percentageOfNodesToScore", "not in valid range [0-100]"),
    ("profile-percentage-type", {"profiles": [{"percentageOfNodesToScore": "50%"}]},
     "profiles[0].percentageOfNodesToScore", "must be of type int"),
    ("plugins-type", {"profiles": [{"plugins": []}]}, "profiles[0].plugins", "must be of type dict"),
    ("plugin-set-type", {"profiles": [{"plugins": {"filter": ["NodeName"]}}]}, "profiles[0].plugins.filter",
     "must be of type dict"),
    ("enabled-type", {"profiles": [{"plugins": {"filter": {"enabled": {"name": "X"}}}}]},
     "profiles[0].plugins.filter.enabled", "must be of type list"),
    ("enabled-entry-type", {"profiles": [{"plugins": {"score": {"enabled": ["X"]}}}]},
     "profiles[0].plugins.score.enabled[0]", "must be of type dict"),
    ("enabled-name-missing", {"profiles": [{"plugins": {"score": {"enabled": [{"name": "A"}, {"weight": 2}]}}}]},
     "profiles[0].plugins.score.enabled[1].name", "must be of type str"),
    ("weight-type", {"profiles": [{"plugins": {"score": {"enabled": [{"name": "A", "weight": "2"}]}}}]},
     "profiles[0].plugins.score.enabled[0].weight", "must be of type int"),
    ("weight-bool", {"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "A", "weight": True}]}}}]},
     "profiles[0].plugins.multiPoint.enabled[0].weight", "must be of type int"),
    ("weight-negative", {"profiles": [{"plugins": {"score": {"enabled": [{"name": "A", "weight": -1}]}}}]},
     "profiles[0].plugins.score.enabled[0].weight", "must not be negative"),
    ("disabled-type", {"profiles": [{"plugins": {"filter": {"disabled": "*"}}}]},
     "profiles[0].plugins.filter.disabled", "must be of type list"),
    ("disabled-entry-type", {"profiles": [{"plugins": {"filter": {"disabled": ["*"]}}}]},
     "profiles[0].plugins.filter.disabled[0]", "must be of type dict"),
    ("disabled-name", {"profiles": [{"plugins": {"postBind": {"disabled": [{"name": 1}]}}}]},
     "profiles[0].plugins.postBind.disabled[0].name", "must be of type str"),
    ("plugin-config-type", {"profiles": [{"pluginConfig": {"name": "A"}}]}, "profiles[0].pluginConfig",
     "must be of type list"),
    ("plugin-config-entry-type", {"profiles": [{"pluginConfig": ["A"]}]}, "profiles[0].pluginConfig[0]",
     "must be of type dict"),
    ("plugin-config-name", {"profiles": [{"pluginConfig": [{"args": {}}]}]}, "profiles[0].pluginConfig[0].name",
     "must be of type str"),
    ("plugin-config-repeated", {"profiles": [{"pluginConfig": [{"name": "A"}, {"name": "A"}]}]},
     "profiles[0].pluginConfig[1].name", "repeated config for plugin A"),
    ("plugin-config-args-type", {"profiles": [{"pluginConfig": [{"name": "A", "args": [1]}]}]},
     "profiles[0].pluginConfig[0].args", "must be of type dict"),
    ("percentage-range", {"percentageOfNodesToScore": 101}, "percentageOfNodesToScore", "not in valid range [0-100]"),
    ("percentage-negative", {"percentageOfNodesToScore": -5}, "percentageOfNodesToScore",
     "not in valid range [0-100]"),
    ("parallelism-zero", {"parallelism": 0}, "parallelism", "should be an integer value greater than zero"),
    ("parallelism-negative", {"parallelism": -2}, "parallelism", "should be an integer value greater than zero"),
    ("initial-backoff-zero", {"podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds", "must be greater than 0"),
    ("max-backoff-below-initial", {"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 4},
     "podMaxBackoffSeconds", "must be greater than or equal to PodInitialBackoffSeconds"),
    ("max-backoff-default-below-initial", {"podInitialBackoffSeconds": 11}, "podMaxBackoffSeconds",
     "must be greater than or equal to PodInitialBackoffSeconds"),
    ("extenders-type", {"extenders": {"urlPrefix": "x"}}, "extenders", "must be of type list"),
    ("extender-entry-type", {"extenders": [{}, "x"]}, "extenders[1]", "must be of type dict"),
]


@pytest.mark.parametrize(("doc", "field", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_validation_error_names_the_field(doc: Any, field: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(doc)
    error = caught.value
    assert error.field == field
    assert message in error.message
    assert str(error).startswith(f"{field}: ")
    assert isinstance(error, ValueError)
    assert isinstance(error, KschedError)


TOP_LEVEL_INTS = ["percentageOfNodesToScore", "parallelism", "podInitialBackoffSeconds", "podMaxBackoffSeconds"]


@pytest.mark.parametrize("key", TOP_LEVEL_INTS)
def test_top_level_type_error_names_the_field(key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({key: "x"})
    assert caught.value.field == key


def test_error_message_shows_the_bad_value() -> None:
    with pytest.raises(ConfigError, match=r"^parallelism: should be an integer value greater than zero \(got 0\)$"):
        parse_config({"parallelism": 0})


@given(st.integers(0, 100), st.integers(1, 50), st.integers(0, 50), st.integers(1, 64))
def test_valid_numbers_round_trip(pct: int, initial: int, extra: int, parallelism: int) -> None:
    config = parse_config({"percentageOfNodesToScore": pct, "podInitialBackoffSeconds": initial,
                           "podMaxBackoffSeconds": initial + extra, "parallelism": parallelism,
                           "apiVersion": API_VERSION})
    assert config.percentage_of_nodes_to_score == pct
    assert config.pod_initial_backoff_seconds == initial
    assert config.pod_max_backoff_seconds == initial + extra
    assert config.parallelism == parallelism


@given(st.integers().filter(lambda n: not 0 <= n <= 100))
def test_out_of_range_percentages_are_refused(pct: int) -> None:
    with pytest.raises(ConfigError, match="not in valid range"):
        parse_config({"profiles": [{"percentageOfNodesToScore": pct}]})
