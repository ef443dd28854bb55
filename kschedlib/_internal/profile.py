"""Turning a profile configuration into plugin lists per extension point.

Follows kube-scheduler v1.30: the user's plugin sets are merged into the
default ones (``*`` disables every default), ``multiPoint`` expands to every
extension point a plugin implements, explicit entries override multiPoint
ones, score weights come from ``score`` then ``multiPoint`` (0 means 1), and
the result is validated with messages that name the plugin and the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.framework.config import EXTENSION_POINTS, PluginRef, PluginSet, ProfileConfig
from kschedlib.framework.extension_points import (
    MAX_NODE_SCORE,
    POINT_BASES,
    Plugin,
)
from kschedlib.framework.handle import Handle
from kschedlib.framework.registry import Registry
from kschedlib.plugins import LEGACY_VOLUME_LIMITS
from kschedlib.versions import Switches

__all__ = ["BuiltProfile", "build_profile", "merge_plugin_sets"]

_MAX_TOTAL_SCORE: Final = 2**63 - 1


@final
@attrs.frozen(slots=True, repr=False)
class BuiltProfile(FieldsRepr):
    """A profile's instantiated plugins and their order at each extension point."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Mapping[str, Plugin]
    points: Mapping[str, tuple[str, ...]]
    score_weights: Mapping[str, int]
    plugin_args: Mapping[str, Any]


def _merge_set(default: PluginSet, user: PluginSet) -> PluginSet:
    """kube-scheduler's mergePluginSet: a user entry (the last of its name) replaces the default in place."""
    disabled = tuple(user.disabled) + tuple(default.disabled)
    last_index = {ref.name: index for index, ref in enumerate(user.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for ref in default.enabled:
            if ref.name in disabled:
                continue
            index = last_index.get(ref.name)
            if index is not None:
                ref = user.enabled[index]
                replaced.add(index)
            enabled.append(ref)
    enabled.extend(ref for index, ref in enumerate(user.enabled) if index not in replaced)
    return PluginSet(tuple(enabled), disabled)


def merge_plugin_sets(
    defaults: Mapping[str, PluginSet], user: Mapping[str, PluginSet] | None
) -> dict[str, PluginSet]:
    """kube's ``mergePlugins``: the user's sets merged into the defaults, per extension point and multiPoint."""
    keys = ("multiPoint", *EXTENSION_POINTS)
    empty = PluginSet()
    if user is None:
        return {key: defaults.get(key, empty) for key in keys}
    return {key: _merge_set(defaults.get(key, empty), user.get(key, empty)) for key in keys}


def _interface(point: str) -> str:
    return POINT_BASES[point].__name__


def _expand_point(
    point: str, explicit: PluginSet, multi: Sequence[PluginRef], plugins: Mapping[str, Plugin], where: str
) -> tuple[str, ...]:
    """Step B (kube's ``expandMultiPointPlugins``) for one extension point."""
    base = POINT_BASES[point]
    explicit_names = [ref.name for ref in explicit.enabled]
    for index, name in enumerate(explicit_names):
        if not isinstance(plugins[name], base):
            raise ConfigError(f'plugin "{name}" does not extend {_interface(point)} plugin',
                              field=f"{where}.plugins.{point}.enabled[{index}].name", value=name)
    overrides: list[str] = []
    from_multi: list[str] = []
    if "*" not in explicit.disabled:
        seen: set[str] = set()
        for ref in multi:
            if not isinstance(plugins[ref.name], base) or ref.name in explicit.disabled:
                continue
            if ref.name in seen:
                raise ConfigError(f'plugin "{ref.name}" already registered as "{_interface(point)}"',
                                  field=f"{where}.plugins.multiPoint.enabled", value=ref.name)
            seen.add(ref.name)
            if ref.name not in explicit_names:
                from_multi.append(ref.name)
        overrides = [name for name in explicit_names if name in seen]
    others = [name for name in explicit_names if name not in overrides]
    final_order = overrides + from_multi + others
    duplicates = {name for name in final_order if final_order.count(name) > 1}
    if duplicates:
        name = sorted(duplicates)[0]
        raise ConfigError(f'plugin "{name}" already registered as "{_interface(point)}"',
                          field=f"{where}.plugins.{point}.enabled", value=name)
    return tuple(final_order)


def _weights(score_names: Sequence[str], merged: Mapping[str, PluginSet]) -> dict[str, int]:
    weights: dict[str, int] = {}
    for ref in (*merged["score"].enabled, *merged["multiPoint"].enabled):
        if ref.name in score_names and ref.name not in weights:
            weights[ref.name] = ref.weight or 1
    return {name: weights.get(name, 1) for name in score_names}


def _user_field(profile: ProfileConfig, key: str, name: str, where: str) -> str:
    """Where the user wrote ``name`` in the plugin set ``key`` (the merged list also holds defaults)."""
    user = profile.plugins.get(key) if profile.plugins is not None else None
    names = [ref.name for ref in user.enabled] if user is not None else []
    if name in names:
        return f"{where}.plugins.{key}.enabled[{names.index(name)}].name"
    return f"{where}.plugins.{key}.enabled"


def _instantiate(
    merged: Mapping[str, PluginSet], profile: ProfileConfig, registry: Registry, handle: Handle, where: str
) -> tuple[dict[str, Plugin], dict[str, Any]]:
    plugins: dict[str, Plugin] = {}
    args: dict[str, Any] = {}
    for key, plugin_set in merged.items():
        for ref in plugin_set.enabled:
            if ref.name in plugins:
                continue
            if ref.name not in registry:
                kind = "plugin" if key == "multiPoint" else _interface(key)
                raise ConfigError(f'{kind} "{ref.name}" does not exist',
                                  field=_user_field(profile, key, ref.name, where), value=ref.name)
            entry = registry.get(ref.name)
            try:
                args[ref.name] = entry.args_from(profile.plugin_config.get(ref.name))
            except ConfigError as exc:
                raise ConfigError(exc.message, field=f"{where}.pluginConfig[{ref.name}].args.{exc.field}".rstrip("."),
                                  value=exc.value) from exc
            plugins[ref.name] = entry.factory(args[ref.name], handle)
    for name in profile.plugin_config:
        if name not in registry:
            raise ConfigError(f'plugin "{name}" does not exist', field=f"{where}.pluginConfig", value=name)
    return plugins, args


CONFIG_API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
INVALID_PLUGIN_MESSAGE: Final = (f'was invalid in version "{CONFIG_API_VERSION}" '
                                 f'(KubeSchedulerConfiguration is version "{CONFIG_API_VERSION}")')
"""kube-scheduler's refusal of a plugin its configuration API version no longer accepts (v1.31+)."""


def _refuse_invalid_plugins(profile: ProfileConfig, switches: Switches, where: str) -> None:
    """The legacy volume-limit plugins, refused as kube's config validation and registry refuse them.

    Per extension point and in ``pluginConfig`` they "were invalid" (v1.31); in ``multiPoint``, which
    that validation does not look at, they no longer exist once the registry dropped them (v1.32).
    """
    if not switches.legacy_volume_limits_removed:
        return
    for point, plugin_set in (profile.plugins or {}).items():
        for index, ref in enumerate(plugin_set.enabled):
            if ref.name not in LEGACY_VOLUME_LIMITS:
                continue
            if point != "multiPoint":
                raise ConfigError(INVALID_PLUGIN_MESSAGE, field=f"{where}.plugins.{point}.enabled[{index}]",
                                  value=ref.name)
            if switches.legacy_volume_limits_unregistered:
                raise ConfigError(f'plugin "{ref.name}" does not exist',
                                  field=f"{where}.plugins.multiPoint.enabled[{index}].name", value=ref.name)
    for index, name in enumerate(profile.plugin_config):
        if name in LEGACY_VOLUME_LIMITS:
            raise ConfigError(INVALID_PLUGIN_MESSAGE, field=f"{where}.pluginConfig[{index}]", value=name)


def build_profile(
    profile: ProfileConfig,
    registry: Registry,
    handle: Handle,
    defaults: Mapping[str, PluginSet],
    *,
    where: str = "profiles[0]",
) -> BuiltProfile:
    """Instantiate the profile's plugins (each once) and order them per extension point."""
    _refuse_invalid_plugins(profile, handle.switches, where)
    merged = merge_plugin_sets(defaults, profile.plugins)
    plugins, args = _instantiate(merged, profile, registry, handle, where)
    points = {
        point: _expand_point(point, merged[point], merged["multiPoint"].enabled, plugins, where)
        for point in EXTENSION_POINTS
    }
    name = profile.scheduler_name
    if len(points["queueSort"]) != 1:
        raise ConfigError(
            f'only one queue sort plugin required for profile with scheduler name "{name}", '
            f"but got {len(points['queueSort'])}", field=f"{where}.plugins.queueSort")
    if not points["bind"]:
        raise ConfigError(f'at least one bind plugin is needed for profile with scheduler name "{name}"',
                          field=f"{where}.plugins.bind")
    weights = _weights(points["score"], merged)
    if sum(weights.values()) * MAX_NODE_SCORE > _MAX_TOTAL_SCORE:
        raise ConfigError("total score of Score plugins could overflow", field=f"{where}.plugins.score")
    used = {n for names in points.values() for n in names}
    return BuiltProfile(
        name,
        profile.percentage_of_nodes_to_score,
        {n: p for n, p in plugins.items() if n in used},
        points,
        weights,
        args,
    )
