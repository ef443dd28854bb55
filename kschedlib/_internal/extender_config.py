"""The ``extenders`` section of a KubeSchedulerConfiguration v1, read and validated (kube's ``config/v1`` ``Extender``).

kube-scheduler's checks and messages are kept: a positive ``weight`` with a
``prioritizeVerb``, at most one extender with a ``bindVerb``, managed resources
that are valid, unique extended resource names.  kschedlib also refuses what
kube-scheduler would only discover when calling out: unknown keys, a
``urlPrefix`` that is not an http(s) URL, a malformed ``httpTimeout``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Final, final
from urllib.parse import urlsplit

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.framework._go_duration import parse_duration
from kschedlib.model.resources import is_extended_resource
from kschedlib.plugins._helpers.validation import qualified_name_errors

__all__ = [
    "DEFAULT_HTTP_TIMEOUT",
    "ExtenderConfig",
    "ManagedResource",
    "TLSConfig",
    "ignored_resources",
    "parse_duration",
    "parse_extenders",
]

DEFAULT_HTTP_TIMEOUT: Final = 5.0
_KEYS: Final = frozenset({
    "urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
    "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable",
})
_TLS_KEYS: Final = ("insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData")


@final
@attrs.frozen(slots=True, repr=False)
class ManagedResource(FieldsRepr):
    """An extended resource the extender handles; ``ignored_by_scheduler`` drops it from NodeResourcesFit."""

    name: str
    ignored_by_scheduler: bool = False


@final
@attrs.frozen(slots=True, repr=False)
class TLSConfig(FieldsRepr):
    """``tlsConfig``: client certificate, CA and server name for an HTTPS extender (``*_data`` win over files)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@final
@attrs.frozen(slots=True, repr=False)
class ExtenderConfig(FieldsRepr):
    """One ``extenders[]`` entry; ``http_timeout`` in seconds."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: TLSConfig | None = None
    http_timeout: float = DEFAULT_HTTP_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[ManagedResource, ...] = ()
    ignorable: bool = False

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], *, where: str = "extenders[0]") -> ExtenderConfig:
        """Read one entry (JSON names); per-entry checks only (see :func:`parse_extenders`)."""
        return _entry(raw, where)


def _get(raw: Mapping[str, Any], key: str, kind: type, where: str, default: Any) -> Any:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ConfigError(f"must be of type {kind.__name__}", field=f"{where}.{key}", value=value)
    return value


def _bytes(raw: Mapping[str, Any], key: str, where: str) -> bytes:
    text = _get(raw, key, str, where, "")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError("must be base64-encoded", field=f"{where}.{key}", value=text) from exc


def _tls(raw: Any, where: str) -> TLSConfig | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError("must be an object", field=where, value=raw)
    unknown = sorted(set(raw) - set(_TLS_KEYS))
    if unknown:
        raise ConfigError(f'unknown field "{unknown[0]}"', field=where)
    strings = {key: _get(raw, key, str, where, "") for key in ("serverName", "certFile", "keyFile", "caFile")}
    return TLSConfig(
        _get(raw, "insecure", bool, where, False), strings["serverName"], strings["certFile"],
        strings["keyFile"], strings["caFile"], _bytes(raw, "certData", where), _bytes(raw, "keyData", where),
        _bytes(raw, "caData", where),
    )


def _managed(raw: Any, where: str) -> tuple[ManagedResource, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError("must be a list", field=where, value=raw)
    out = []
    for index, entry in enumerate(raw):
        path = f"{where}[{index}]"
        if not isinstance(entry, Mapping):
            raise ConfigError("must be an object", field=path, value=entry)
        name = _get(entry, "name", str, path, "")
        for message in qualified_name_errors(name):
            raise ConfigError(message, field=f"{path}.name", value=name)
        if not is_extended_resource(name):
            raise ConfigError("is an invalid extended resource name", field=f"{path}.name", value=name)
        out.append(ManagedResource(name, _get(entry, "ignoredByScheduler", bool, path, False)))
    return tuple(out)


def _timeout(raw: Mapping[str, Any], where: str) -> float:
    text = _get(raw, "httpTimeout", str, where, "")
    if not text:
        return DEFAULT_HTTP_TIMEOUT
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise ConfigError(str(exc), field=f"{where}.httpTimeout", value=text) from exc
    if seconds < 0:
        raise ConfigError("must not be negative", field=f"{where}.httpTimeout", value=text)
    return seconds or DEFAULT_HTTP_TIMEOUT


def _entry(raw: Mapping[str, Any], where: str) -> ExtenderConfig:
    if not isinstance(raw, Mapping):
        raise ConfigError("must be an object", field=where, value=raw)
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(f'unknown field "{unknown[0]}"', field=where)
    url = _get(raw, "urlPrefix", str, where, "")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError("must be an http:// or https:// URL", field=f"{where}.urlPrefix", value=url)
    weight = _get(raw, "weight", int, where, 0)
    prioritize = _get(raw, "prioritizeVerb", str, where, "")
    if prioritize and weight <= 0:
        raise ConfigError("must have a positive weight applied to it", field=f"{where}.weight", value=weight)
    return ExtenderConfig(
        url_prefix=url,
        filter_verb=_get(raw, "filterVerb", str, where, ""),
        preempt_verb=_get(raw, "preemptVerb", str, where, ""),
        prioritize_verb=prioritize,
        weight=weight,
        bind_verb=_get(raw, "bindVerb", str, where, ""),
        enable_https=_get(raw, "enableHTTPS", bool, where, False),
        tls_config=_tls(raw.get("tlsConfig"), f"{where}.tlsConfig"),
        http_timeout=_timeout(raw, where),
        node_cache_capable=_get(raw, "nodeCacheCapable", bool, where, False),
        managed_resources=_managed(raw.get("managedResources"), f"{where}.managedResources"),
        ignorable=_get(raw, "ignorable", bool, where, False),
    )


def parse_extenders(raw: Sequence[Mapping[str, Any]]) -> tuple[ExtenderConfig, ...]:
    """Every entry, validated alone and together (one binder, managed resource names unique)."""
    configs = tuple(_entry(entry, f"extenders[{index}]") for index, entry in enumerate(raw))
    seen: set[str] = set()
    for index, config in enumerate(configs):
        for position, resource in enumerate(config.managed_resources):
            if resource.name in seen:
                raise ConfigError("duplicate extender managed resource name",
                                  field=f"extenders[{index}].managedResources[{position}].name", value=resource.name)
            seen.add(resource.name)
    binders = sum(1 for config in configs if config.bind_verb)
    if binders > 1:
        raise ConfigError("only one extender can implement bind", field="extenders",
                          value=f"found {binders} extenders implementing bind")
    return configs


def ignored_resources(configs: Sequence[ExtenderConfig]) -> tuple[str, ...]:
    """Managed resources marked ``ignoredByScheduler``, across extenders, in configured order."""
    return tuple(r.name for config in configs for r in config.managed_resources if r.ignored_by_scheduler)
