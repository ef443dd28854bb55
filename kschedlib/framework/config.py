"""Scheduler configuration: a KubeSchedulerConfiguration v1 document, validated.

Decoding is strict (unknown fields are refused, as kube-scheduler v1.30 refuses them).
Only what scheduling needs is read: profiles (their plugin sets per
extension point, ``multiPoint``, weights, ``pluginConfig``), node sampling,
backoff and extenders.  Process concerns (leader election, client
connection) are checked for unknown fields and otherwise ignored.  Every error names the offending field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.framework._config_fields import expect_type as _expect
from kschedlib.framework._config_fields import strict_decoding_errors
from kschedlib.framework.extension_points import POINT_BASES

__all__ = [
    "API_VERSION",
    "EXTENSION_POINTS",
    "PluginRef",
    "PluginSet",
    "ProfileConfig",
    "SchedulerConfig",
    "parse_config",
]

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
EXTENSION_POINTS: Final = tuple(POINT_BASES)
_PLUGIN_SETS: Final = ("multiPoint", *EXTENSION_POINTS)
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
_PERCENTAGE: Final = "minCandidateNodesPercentage"
_ABSOLUTE: Final = "minCandidateNodesAbsolute"


@final
@attrs.frozen(slots=True, repr=False)
class PluginRef(FieldsRepr):
    """An ``enabled`` entry: a plugin name and (for Score / multiPoint) an optional weight."""

    name: str
    weight: int | None = None


@final
@attrs.frozen(slots=True, repr=False)
class PluginSet(FieldsRepr):
    """The ``enabled`` and ``disabled`` lists of one extension point (or ``multiPoint``)."""

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


def _empty_sets() -> Mapping[str, PluginSet]:
    return {}


def _empty_args() -> Mapping[str, Mapping[str, Any] | None]:
    return {}


@final
@attrs.frozen(slots=True, repr=False)
class ProfileConfig(FieldsRepr):
    """One profile as written by the user (merged with the defaults when the scheduler is built)."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    percentage_of_nodes_to_score: int | None = None
    plugins: Mapping[str, PluginSet] | None = None
    plugin_config: Mapping[str, Mapping[str, Any] | None] = attrs.field(factory=_empty_args)


def _default_profiles() -> tuple[ProfileConfig, ...]:
    return (ProfileConfig(),)


@final
@attrs.frozen(slots=True, repr=False)
class SchedulerConfig(FieldsRepr):
    """The whole configuration; ``SchedulerConfig()`` is kube-scheduler's default."""

    profiles: tuple[ProfileConfig, ...] = attrs.field(factory=_default_profiles)
    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    parallelism: int = 16
    extenders: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> SchedulerConfig:
        """Read a KubeSchedulerConfiguration v1 dict (same as :func:`parse_config`)."""
        return parse_config(doc)


# --- parsing ---------------------------------------------------------------------------------


def _int(doc: Mapping[str, Any], key: str, field: str, default: int | None) -> int | None:
    value = doc.get(key)
    if value is None:
        return default
    return int(_expect(value, int, f"{field}.{key}" if field else key))


def _plugin_set(raw: Any, field: str) -> PluginSet:
    raw = _expect(raw or {}, dict, field)
    enabled = []
    for i, entry in enumerate(_expect(raw.get("enabled") or [], list, f"{field}.enabled")):
        where = f"{field}.enabled[{i}]"
        entry = _expect(entry, dict, where)
        name = _expect(entry.get("name"), str, f"{where}.name")
        weight = entry.get("weight")
        if weight is not None:
            _expect(weight, int, f"{where}.weight")
            if weight < 0:
                raise ConfigError("must not be negative", field=f"{where}.weight", value=weight)
        enabled.append(PluginRef(name, weight))
    disabled = []
    for i, entry in enumerate(_expect(raw.get("disabled") or [], list, f"{field}.disabled")):
        entry = _expect(entry, dict, f"{field}.disabled[{i}]")
        disabled.append(_expect(entry.get("name"), str, f"{field}.disabled[{i}].name"))
    return PluginSet(tuple(enabled), tuple(disabled))


def _profile(raw: Any, field: str, only: bool) -> ProfileConfig:
    raw = _expect(raw, dict, field)
    name = raw.get("schedulerName")
    if name is None or name == "":
        if not only:
            raise ConfigError("Required value", field=f"{field}.schedulerName")
        name = DEFAULT_SCHEDULER_NAME
    _expect(name, str, f"{field}.schedulerName")
    pct = _int(raw, "percentageOfNodesToScore", field, None)
    if pct is not None and not 0 <= pct <= 100:
        raise ConfigError("not in valid range [0-100]", field=f"{field}.percentageOfNodesToScore", value=pct)
    plugins = None
    if raw.get("plugins") is not None:
        plugins_raw = _expect(raw["plugins"], dict, f"{field}.plugins")
        plugins = {key: _plugin_set(plugins_raw.get(key), f"{field}.plugins.{key}") for key in _PLUGIN_SETS}
    args: dict[str, Mapping[str, Any] | None] = {}
    for i, entry in enumerate(_expect(raw.get("pluginConfig") or [], list, f"{field}.pluginConfig")):
        where = f"{field}.pluginConfig[{i}]"
        entry = _expect(entry, dict, where)
        plugin = _expect(entry.get("name"), str, f"{where}.name")
        if plugin in args:
            raise ConfigError(f"repeated config for plugin {plugin}", field=f"{where}.name", value=plugin)
        value = entry.get("args")
        args[plugin] = None if value is None else _expect(value, dict, f"{where}.args")
    return ProfileConfig(name, pct, plugins, args)


def _verbatim(text: str, field: str) -> ConfigError:
    """A ConfigError whose text is kube-scheduler's own, word for word (``field`` still names the place)."""
    error = ConfigError(text)
    error.field = field
    return error


def _check_default_preemption(profiles: tuple[ProfileConfig, ...], raw_profiles: list[Any]) -> None:
    """kube's ValidateDefaultPreemptionArgs rule that both minimums may not be zero, with its text."""
    for i, profile in enumerate(profiles):
        args = profile.plugin_config.get("DefaultPreemption")
        if args is None or args.get(_PERCENTAGE) != 0 or args.get(_ABSOLUTE) != 0:
            continue
        j = next(j for j, entry in enumerate(raw_profiles[i].get("pluginConfig") or ())
                 if entry.get("name") == "DefaultPreemption")
        path = f"profiles[{i}].pluginConfig[{j}].args"
        raise _verbatim(f"[{path}.{_PERCENTAGE}: Invalid value: 0: cannot be zero at the same time as {_ABSOLUTE}, "
                        f"{path}.{_ABSOLUTE}: Invalid value: 0: cannot be zero at the same time as {_PERCENTAGE}]",
                        f"{path}.{_PERCENTAGE}")


def parse_config(doc: Mapping[str, Any]) -> SchedulerConfig:
    """Read and validate a KubeSchedulerConfiguration v1 document (a dict from JSON or YAML).

    Decoding is strict, as in kube-scheduler v1.30: an unknown field anywhere (plugin args of the
    in-tree plugins included) is an error with kube's ``strict decoding error: unknown field`` text.
    """
    doc = _expect(doc, dict, "<config>")
    api_version = doc.get("apiVersion", API_VERSION)
    if api_version != API_VERSION:
        raise ConfigError(f"unsupported apiVersion, expected {API_VERSION}", field="apiVersion", value=api_version)
    kind = doc.get("kind", "KubeSchedulerConfiguration")
    if kind != "KubeSchedulerConfiguration":
        raise ConfigError("expected KubeSchedulerConfiguration", field="kind", value=kind)
    strict = strict_decoding_errors(doc)
    if strict is not None:
        raise _verbatim(*strict)
    raw_profiles = _expect(doc.get("profiles") or [{}], list, "profiles")
    profiles = tuple(_profile(p, f"profiles[{i}]", len(raw_profiles) == 1) for i, p in enumerate(raw_profiles))
    _check_default_preemption(profiles, raw_profiles)
    seen: set[str] = set()
    for i, profile in enumerate(profiles):
        if profile.scheduler_name in seen:
            raise ConfigError("Duplicate value", field=f"profiles[{i}].schedulerName", value=profile.scheduler_name)
        seen.add(profile.scheduler_name)
    pct = _int(doc, "percentageOfNodesToScore", "", 0)
    if pct is None or not 0 <= pct <= 100:
        raise ConfigError("not in valid range [0-100]", field="percentageOfNodesToScore", value=pct)
    parallelism = _int(doc, "parallelism", "", 16) or 0
    if parallelism <= 0:
        raise ConfigError("should be an integer value greater than zero", field="parallelism", value=parallelism)
    initial = _int(doc, "podInitialBackoffSeconds", "", 1) or 0
    if initial <= 0:
        raise ConfigError("must be greater than 0", field="podInitialBackoffSeconds", value=initial)
    maximum = _int(doc, "podMaxBackoffSeconds", "", 10) or 0
    if maximum < initial:
        raise ConfigError("must be greater than or equal to PodInitialBackoffSeconds",
                          field="podMaxBackoffSeconds", value=maximum)
    extenders = tuple(_expect(e, dict, f"extenders[{i}]")
                      for i, e in enumerate(_expect(doc.get("extenders") or [], list, "extenders")))
    return SchedulerConfig(profiles, pct, float(initial), float(maximum), parallelism, extenders)

