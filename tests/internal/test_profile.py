"""Building a profile (reference §2.2, §8, §13.3): merging with the defaults, multiPoint, weights, errors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib._internal.profile import BuiltProfile, build_profile, merge_plugin_sets
from kschedlib.errors import ConfigError
from kschedlib.framework import (
    BindPlugin,
    CycleState,
    FilterPlugin,
    Handle,
    NodeInfo,
    PluginRef,
    PluginSet,
    PreScorePlugin,
    Registry,
    ScorePlugin,
    Status,
    parse_config,
)
from kschedlib.framework.config import EXTENSION_POINTS
from kschedlib.model import Pod
from kschedlib.plugins import DEFAULT_MULTI_POINT, default_plugin_sets, in_tree_registry
from kschedlib.testing import FakeHandle

# kube-scheduler v1.30's default profile expanded per extension point (reference §8), in order.
KUBE_DEFAULT_POINTS: Mapping[str, tuple[str, ...]] = {
    "preEnqueue": ("SchedulingGates",),
    "queueSort": ("PrioritySort",),
    "preFilter": ("NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits", "GCEPDLimits",
                  "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                  "InterPodAffinity"),
    "filter": ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
               "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits",
               "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"),
    "postFilter": ("DefaultPreemption",),
    "preScore": ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                 "InterPodAffinity", "NodeResourcesBalancedAllocation"),
    "score": ("TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
              "InterPodAffinity", "NodeResourcesBalancedAllocation", "ImageLocality"),
    "reserve": ("VolumeBinding",),
    "permit": (),
    "preBind": ("VolumeBinding",),
    "bind": ("DefaultBinder",),
    "postBind": (),
}
KUBE_DEFAULT_WEIGHTS = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1,
                        "PodTopologySpread": 2, "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1,
                        "ImageLocality": 1}
IMPLEMENTED = frozenset(ref.name for ref in DEFAULT_MULTI_POINT)


def build(profile: Mapping[str, Any] | None = None, registry: Registry | None = None,
          defaults: Mapping[str, PluginSet] | None = None) -> BuiltProfile:
    config = parse_config({"profiles": [profile or {}]})
    return build_profile(config.profiles[0], registry or in_tree_registry(), cast(Handle, FakeHandle(
                             kube_version="1.30")),
                         default_plugin_sets() if defaults is None else defaults)


def kube_default(point: str) -> tuple[str, ...]:
    """kube's default list at ``point`` restricted to the plugins kschedlib implements."""
    return tuple(name for name in KUBE_DEFAULT_POINTS[point] if name in IMPLEMENTED)


def without(names: Sequence[str], removed: str) -> tuple[str, ...]:
    return tuple(name for name in names if name != removed)


# --- the default profile ----------------------------------------------------------------------


@pytest.mark.parametrize("point", EXTENSION_POINTS)
def test_default_profile_matches_kube_scheduler(point: str) -> None:
    assert build().points[point] == kube_default(point)


def test_default_weights() -> None:
    built = build()
    assert built.score_weights == {name: KUBE_DEFAULT_WEIGHTS[name] for name in kube_default("score")}


def test_each_plugin_is_instantiated_once_and_shared_between_points() -> None:
    built = build()
    assert set(built.plugins) == IMPLEMENTED
    fit = built.plugins["NodeResourcesFit"]
    assert isinstance(fit, FilterPlugin)
    assert isinstance(fit, ScorePlugin)


def test_default_args_are_decoded() -> None:
    built = build()
    assert built.plugin_args["NodeResourcesFit"].scoring_strategy.type == "LeastAllocated"
    assert built.plugin_args["PrioritySort"] is None


# --- §13.3 examples ---------------------------------------------------------------------------


def test_example_score_weight_override_moves_the_plugin_first() -> None:
    built = build({"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}})
    assert built.points["score"] == ("NodeResourcesFit", *without(kube_default("score"), "NodeResourcesFit"))
    assert built.score_weights["NodeResourcesFit"] == 5
    assert {k: v for k, v in built.score_weights.items() if k != "NodeResourcesFit"} == \
        {name: KUBE_DEFAULT_WEIGHTS[name] for name in kube_default("score") if name != "NodeResourcesFit"}
    assert built.points["filter"] == kube_default("filter")


def test_example_disable_all_score_plugins_but_one() -> None:
    built = build({"plugins": {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": "ImageLocality"}]}}})
    assert built.points["score"] == ("ImageLocality",)
    assert built.score_weights == {"ImageLocality": 1}
    assert built.points["preScore"] == kube_default("preScore")


def test_example_multi_point_disable_removes_from_every_point() -> None:
    built = build({"plugins": {"multiPoint": {"disabled": [{"name": "TaintToleration"}]}}})
    for point in EXTENSION_POINTS:
        assert built.points[point] == without(kube_default(point), "TaintToleration"), point
    assert "TaintToleration" not in built.plugins
    assert "TaintToleration" not in built.score_weights


def test_example_filter_disable_removes_from_filter_only() -> None:
    built = build({"plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}})
    assert built.points["filter"] == without(kube_default("filter"), "TaintToleration")
    assert "TaintToleration" in built.points["preScore"]
    assert built.points["score"] == kube_default("score")
    assert built.score_weights["TaintToleration"] == 3


def test_disable_star_at_a_point_keeps_other_points() -> None:
    built = build({"plugins": {"preScore": {"disabled": [{"name": "*"}]}}})
    assert built.points["preScore"] == ()
    assert built.points["score"] == kube_default("score")


def test_multi_point_weight_override_keeps_the_position() -> None:
    built = build({"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 9}]}}})
    assert built.points["score"] == kube_default("score")
    assert built.score_weights["ImageLocality"] == 9


def test_score_weight_wins_over_multi_point_weight() -> None:
    built = build({"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 9}]},
                               "score": {"enabled": [{"name": "ImageLocality", "weight": 4}]}}})
    assert built.score_weights["ImageLocality"] == 4


WEIGHTS = [("zero-means-one", 0, 1), ("absent-means-one", None, 1), ("explicit", 7, 7)]


@pytest.mark.parametrize(("weight", "expected"), [w[1:] for w in WEIGHTS], ids=[w[0] for w in WEIGHTS])
def test_weight_zero_or_absent_becomes_one(weight: int | None, expected: int) -> None:
    entry: dict[str, Any] = {"name": "TaintToleration"}
    if weight is not None:
        entry["weight"] = weight
    built = build({"plugins": {"score": {"enabled": [entry]}}})
    assert built.score_weights["TaintToleration"] == expected


# --- step A: merging plugin sets --------------------------------------------------------------

A, B, C, D = (PluginRef(n) for n in "ABCD")
MERGES = [
    # id, default set, user set, merged enabled, merged disabled
    ("no-user-set", PluginSet((A, B, C)), PluginSet(), (A, B, C), ()),
    ("user-entry-in-default-position", PluginSet((A, B, C)), PluginSet((PluginRef("B", 5), D)),
     (A, PluginRef("B", 5), C, D), ()),
    ("disable-one", PluginSet((A, B, C)), PluginSet((), ("B",)), (A, C), ("B",)),
    ("disable-all-then-enable", PluginSet((A, B, C)), PluginSet((D, B), ("*",)), (D, B), ("*",)),
    ("append-in-user-order", PluginSet((A,)), PluginSet((D, C)), (A, D, C), ()),
    ("duplicates-kept-for-later-rejection", PluginSet((A,)), PluginSet((D, D)), (A, D, D), ()),
    ("defaults-disabled-carried", PluginSet((A, B), ("X",)), PluginSet((), ("A",)), (B,), ("A", "X")),
    ("disabled-default-re-enabled-by-user", PluginSet((A, B)), PluginSet((B,), ("B",)), (A, B), ("B",)),
]


@pytest.mark.parametrize(("default", "user", "enabled", "disabled"), [m[1:] for m in MERGES],
                         ids=[m[0] for m in MERGES])
def test_merge_plugin_sets(default: PluginSet, user: PluginSet, enabled: tuple[PluginRef, ...],
                           disabled: tuple[str, ...]) -> None:
    merged = merge_plugin_sets({"filter": default}, {"filter": user})
    assert merged["filter"].enabled == enabled
    assert set(merged["filter"].disabled) == set(disabled)


def test_merge_without_user_plugins_is_the_defaults() -> None:
    defaults = default_plugin_sets()
    merged = merge_plugin_sets(defaults, None)
    assert merged["multiPoint"] == defaults["multiPoint"]
    assert merged["filter"] == PluginSet()
    assert set(merged) == {"multiPoint", *EXTENSION_POINTS}


# --- step B: multiPoint expansion with custom plugins -----------------------------------------


def _plugin_class(class_name: str, bases: tuple[type, ...]) -> type:
    def filter_(self: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.success()

    def score(self: Any, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return 0

    def pre_score(self: Any, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        return Status.success()

    def bind(self: Any, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status.success()

    def init(self: Any, args: Any, handle: Handle) -> None:
        self.args = args

    namespace = {"name": class_name, "__init__": init, "filter": filter_, "score": score, "pre_score": pre_score,
                 "bind": bind}
    return type(class_name, bases, namespace)


def custom_registry() -> Registry:
    registry = in_tree_registry()
    for name in ("F1", "F2", "F3"):
        registry.register(name, _plugin_class(name, (FilterPlugin,)))
    for name in ("FS1", "FS2"):
        registry.register(name, _plugin_class(name, (FilterPlugin, PreScorePlugin, ScorePlugin)))
    registry.register("OtherBinder", _plugin_class("OtherBinder", (BindPlugin,)))
    return registry


BASE: tuple[dict[str, Any], ...] = ({"name": "PrioritySort"}, {"name": "DefaultBinder"})


def custom(plugins: Mapping[str, Any]) -> BuiltProfile:
    return build({"plugins": plugins}, custom_registry(), defaults={})


def test_multi_point_expands_to_every_point_a_plugin_implements() -> None:
    built = custom({"multiPoint": {"enabled": [*BASE, {"name": "F1"}, {"name": "FS1", "weight": 3}]}})
    assert built.points["filter"] == ("F1", "FS1")
    assert built.points["preScore"] == ("FS1",)
    assert built.points["score"] == ("FS1",)
    assert built.points["preFilter"] == ()
    assert built.points["bind"] == ("DefaultBinder",)
    assert built.score_weights == {"FS1": 3}


def test_order_is_overrides_then_multi_point_then_other_explicit() -> None:
    built = custom({
        "multiPoint": {"enabled": [*BASE, {"name": "F1"}, {"name": "F2"}, {"name": "FS1"}]},
        "filter": {"enabled": [{"name": "F3"}, {"name": "FS1"}, {"name": "F2"}]},
    })
    # overrides (explicit entries also in multiPoint, explicit order) + multiPoint rest + explicit rest
    assert built.points["filter"] == ("FS1", "F2", "F1", "F3")


def test_disabled_at_a_point_skips_the_multi_point_entry() -> None:
    built = custom({"multiPoint": {"enabled": [*BASE, {"name": "FS1"}, {"name": "FS2"}]},
                    "score": {"disabled": [{"name": "FS1"}]}})
    assert built.points["score"] == ("FS2",)
    assert built.points["filter"] == ("FS1", "FS2")


def test_star_at_a_point_takes_nothing_from_multi_point() -> None:
    built = custom({"multiPoint": {"enabled": [*BASE, {"name": "FS1"}, {"name": "F1"}]},
                    "filter": {"disabled": [{"name": "*"}], "enabled": [{"name": "F2"}]}})
    assert built.points["filter"] == ("F2",)
    assert built.points["score"] == ("FS1",)


def test_only_referenced_plugins_are_built() -> None:
    built = custom({"multiPoint": {"enabled": [*BASE, {"name": "F1"}]}})
    assert set(built.plugins) == {"PrioritySort", "DefaultBinder", "F1"}


def test_explicit_binder_runs_after_multi_point_ones() -> None:
    built = custom({"multiPoint": {"enabled": list(BASE)}, "bind": {"enabled": [{"name": "OtherBinder"}]}})
    assert built.points["bind"] == ("DefaultBinder", "OtherBinder")


def test_plugin_args_reach_the_factory() -> None:
    built = build({"plugins": {"multiPoint": {"enabled": [*BASE, {"name": "F1"}]}},
                   "pluginConfig": [{"name": "F1", "args": {"x": 1}}]}, custom_registry(), defaults={})
    assert built.plugins["F1"].args == {"x": 1}  # type: ignore[attr-defined]
    assert built.plugin_args["F1"] == {"x": 1}


# --- build errors -----------------------------------------------------------------------------

ERRORS: list[tuple[str, dict[str, Any], str, str]] = [
    ("unknown-filter-plugin", {"filter": {"enabled": [{"name": "Foo"}]}},
     'FilterPlugin "Foo" does not exist', "profiles[0].plugins.filter.enabled[0].name"),
    ("unknown-score-plugin", {"score": {"enabled": [{"name": "ImageLocality"}, {"name": "Bar"}]}},
     'ScorePlugin "Bar" does not exist', "profiles[0].plugins.score.enabled[1].name"),
    ("unknown-multi-point-plugin", {"multiPoint": {"enabled": [{"name": "Foo"}]}},
     '"Foo" does not exist', "profiles[0].plugins.multiPoint.enabled"),
    ("not-implementing-the-point", {"filter": {"enabled": [{"name": "PrioritySort"}]}},
     'plugin "PrioritySort" does not extend FilterPlugin plugin', "profiles[0].plugins.filter.enabled[0].name"),
    ("not-a-score-plugin", {"score": {"enabled": [{"name": "NodeName"}]}},
     'plugin "NodeName" does not extend ScorePlugin plugin', "profiles[0].plugins.score.enabled[0].name"),
    ("duplicate-at-a-point", {"filter": {"enabled": [{"name": "NodeName"}, {"name": "NodeName"}]}},
     'plugin "NodeName" already registered as "FilterPlugin"', "profiles[0].plugins.filter.enabled"),
    ("duplicate-in-multi-point", {"multiPoint": {"enabled": [{"name": "F1"}, {"name": "F1"}]}},
     'plugin "F1" already registered as "FilterPlugin"', "profiles[0].plugins.multiPoint.enabled"),
    ("no-queue-sort", {"queueSort": {"disabled": [{"name": "*"}]}},
     'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0',
     "profiles[0].plugins.queueSort"),
    ("no-queue-sort-via-multi-point", {"multiPoint": {"disabled": [{"name": "PrioritySort"}]}},
     'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0',
     "profiles[0].plugins.queueSort"),
    ("no-binder", {"bind": {"disabled": [{"name": "DefaultBinder"}]}},
     'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
     "profiles[0].plugins.bind"),
    ("weight-overflow", {"score": {"enabled": [{"name": "ImageLocality", "weight": 2**63 // 100}]}},
     "total score of Score plugins could overflow", "profiles[0].plugins.score"),
]


@pytest.mark.parametrize(("plugins", "message", "field"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_build_errors(plugins: dict[str, Any], message: str, field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build({"plugins": plugins}, custom_registry())
    assert message in caught.value.message
    assert caught.value.field.startswith(field)


def test_two_queue_sort_plugins() -> None:
    registry = custom_registry()
    registry.register("OtherSort", in_tree_registry().get("PrioritySort").factory)
    with pytest.raises(ConfigError, match=r"only one queue sort plugin required .* but got 2"):
        build({"plugins": {"queueSort": {"enabled": [{"name": "OtherSort"}]}}}, registry)


def test_largest_weights_without_overflow_are_accepted() -> None:
    others = sum(KUBE_DEFAULT_WEIGHTS[name] for name in kube_default("score") if name != "ImageLocality")
    weight = (2**63 - 1) // 100 - others
    built = build({"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": weight}]}}})
    assert built.score_weights["ImageLocality"] == weight
    with pytest.raises(ConfigError, match="overflow"):
        build({"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": weight + 1}]}}})


def test_bad_plugin_args_name_the_plugin_and_field() -> None:
    with pytest.raises(ConfigError) as caught:
        build({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Foo"}}}]})
    assert "pluginConfig" in caught.value.field
    assert "NodeResourcesFit" in caught.value.field
    assert caught.value.field.endswith("scoringStrategy.type")


def test_plugin_config_for_an_unknown_plugin() -> None:
    with pytest.raises(ConfigError, match='"Nope" does not exist'):
        build({"pluginConfig": [{"name": "Nope", "args": {}}]})


# --- property: any subset of disabled default plugins -----------------------------------------

OPTIONAL = sorted(IMPLEMENTED - {"PrioritySort", "DefaultBinder"})


@given(st.lists(st.sampled_from(OPTIONAL), unique=True), st.sampled_from(["multiPoint", "filter", "score"]))
def test_disabling_keeps_the_relative_default_order(disabled: list[str], where: str) -> None:
    built = build({"plugins": {where: {"disabled": [{"name": n} for n in disabled]}}})
    for point in EXTENSION_POINTS:
        expected = kube_default(point)
        if where == "multiPoint" or where == point:
            expected = tuple(n for n in expected if n not in disabled)
        assert built.points[point] == expected


def test_a_default_plugin_enabled_twice_by_the_user_is_rejected() -> None:
    merged = merge_plugin_sets({"multiPoint": PluginSet((A, B))},
                               {"multiPoint": PluginSet((PluginRef("B", 5), PluginRef("B", 2)))})
    assert merged["multiPoint"].enabled == (A, PluginRef("B", 2), PluginRef("B", 5))
    with pytest.raises(ConfigError, match='plugin "ImageLocality" already registered'):
        build({"plugins": {"multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 5},
                                                      {"name": "ImageLocality", "weight": 2}]}}})
