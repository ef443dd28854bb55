"""The fields of KubeSchedulerConfiguration v1 and the in-tree plugin args, for strict decoding.

kube-scheduler v1.30 decodes its config strictly: a field it does not know (``plugin:`` for
``plugins:``, ``resource:`` inside plugin args) is an error, not a silent default.  A schema is
a dict of field name to the schema of its value: ``None`` for a scalar or a free-form map
(labels), a dict for an object, a one-item list for an array of such objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kschedlib.errors import ConfigError
from kschedlib.framework.extension_points import POINT_BASES

__all__ = ["PLUGIN_ARGS", "expect_type", "strict_decoding_errors"]

Schema = Mapping[str, Any]


def expect_type(value: Any, kind: type, field: str) -> Any:
    """``value`` if it is a ``kind`` (a bool counts only as a bool), else a ``ConfigError`` naming ``field``."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ConfigError(f"must be of type {kind.__name__}", field=field, value=value)
    return value


_TYPE_META: Final[Schema] = {"apiVersion": None, "kind": None}
_PLUGIN: Final[Schema] = {"name": None, "weight": None}
_PLUGIN_SET: Final[Schema] = {"enabled": [_PLUGIN], "disabled": [_PLUGIN]}
_POINTS: Final = ("multiPoint", *POINT_BASES)
_LABEL_SELECTOR: Final[Schema] = {
    "matchLabels": None,
    "matchExpressions": [{"key": None, "operator": None, "values": None}],
}
_NODE_SELECTOR_TERM: Final[Schema] = {
    "matchExpressions": [{"key": None, "operator": None, "values": None}],
    "matchFields": [{"key": None, "operator": None, "values": None}],
}
_NODE_AFFINITY: Final[Schema] = {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_NODE_SELECTOR_TERM]},
    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": None, "preference": _NODE_SELECTOR_TERM}],
}
_SPREAD_CONSTRAINT: Final[Schema] = {
    "maxSkew": None, "topologyKey": None, "whenUnsatisfiable": None, "labelSelector": _LABEL_SELECTOR,
    "minDomains": None, "nodeAffinityPolicy": None, "nodeTaintsPolicy": None, "matchLabelKeys": None,
}
_RESOURCE_SPEC: Final[Schema] = {"name": None, "weight": None}
_SHAPE: Final[Schema] = {"utilization": None, "score": None}

PLUGIN_ARGS: Final[Mapping[str, Schema]] = {
    "DefaultPreemption": {**_TYPE_META, "minCandidateNodesPercentage": None, "minCandidateNodesAbsolute": None},
    "DynamicResources": {**_TYPE_META, "filterTimeout": None, "bindingTimeout": None},
    "InterPodAffinity": {**_TYPE_META, "hardPodAffinityWeight": None, "ignorePreferredTermsOfExistingPods": None},
    "NodeResourcesFit": {
        **_TYPE_META, "ignoredResources": None, "ignoredResourceGroups": None,
        "scoringStrategy": {"type": None, "resources": [_RESOURCE_SPEC],
                            "requestedToCapacityRatio": {"shape": [_SHAPE]}},
    },
    "PodTopologySpread": {**_TYPE_META, "defaultConstraints": [_SPREAD_CONSTRAINT], "defaultingType": None},
    "NodeResourcesBalancedAllocation": {**_TYPE_META, "resources": [_RESOURCE_SPEC]},
    "VolumeBinding": {**_TYPE_META, "bindTimeoutSeconds": None, "shape": [_SHAPE]},
    "NodeAffinity": {**_TYPE_META, "addedAffinity": _NODE_AFFINITY},
}
"""The args kube-scheduler decodes strictly: the in-tree plugins that have an ``...Args`` type."""

_PROFILE: Final[Schema] = {
    "schedulerName": None,
    "percentageOfNodesToScore": None,
    "plugins": dict.fromkeys(_POINTS, _PLUGIN_SET),
    "pluginConfig": [{"name": None, "args": None}],  # args: checked per plugin, see below
}
_EXTENDER: Final[Schema] = {
    "urlPrefix": None, "filterVerb": None, "preemptVerb": None, "prioritizeVerb": None, "weight": None,
    "bindVerb": None, "enableHTTPS": None, "httpTimeout": None, "nodeCacheCapable": None, "ignorable": None,
    "managedResources": [{"name": None, "ignoredByScheduler": None}],
    "tlsConfig": {"insecure": None, "serverName": None, "certFile": None, "keyFile": None, "caFile": None,
                  "certData": None, "keyData": None, "caData": None},
}
_CONFIG: Final[Schema] = {
    **_TYPE_META,
    "parallelism": None,
    "leaderElection": {"leaderElect": None, "leaseDuration": None, "renewDeadline": None, "retryPeriod": None,
                       "resourceLock": None, "resourceName": None, "resourceNamespace": None},
    "clientConnection": {"kubeconfig": None, "acceptContentTypes": None, "contentType": None, "qps": None,
                         "burst": None},
    "enableProfiling": None,
    "enableContentionProfiling": None,
    "percentageOfNodesToScore": None,
    "podInitialBackoffSeconds": None,
    "podMaxBackoffSeconds": None,
    "profiles": [_PROFILE],
    "extenders": [_EXTENDER],
    "delayCacheUntilActive": None,
}


def _unknown(value: object, schema: Any, path: str, out: list[tuple[str, str]]) -> None:
    """Append ``(error, parent path)`` for every field of ``value`` that ``schema`` does not know."""
    if schema is None:
        return
    if isinstance(schema, list):
        if isinstance(value, list):
            for i, item in enumerate(value):
                _unknown(item, schema[0], f"{path}[{i}]", out)
        return
    if not isinstance(value, Mapping):
        return  # a wrong type is the parser's error, with its own message
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in schema:
            out.append((f'unknown field "{where}"', path))
        else:
            _unknown(item, schema[key], where, out)


def _strict(errors: list[str]) -> str:
    return "strict decoding error: " + ", ".join(errors)


def strict_decoding_errors(doc: Mapping[str, Any]) -> tuple[str, str] | None:
    """kube-scheduler's strict decoding error text for ``doc`` and the path of the object holding
    the first unknown field; ``None`` when every field is known.

    Plugin args of in-tree plugins are decoded again, each with its own error wrapped the way
    kube wraps nested objects; args of other plugins are not checked (kube keeps them raw).
    """
    found: list[tuple[str, str]] = []
    _unknown(doc, _CONFIG, "", found)
    errors = [text for text, _ in found]
    first = found[0][1] if found else None
    profiles = doc.get("profiles")
    for i, profile in enumerate(profiles if isinstance(profiles, list) else ()):
        entries = profile.get("pluginConfig") if isinstance(profile, Mapping) else None
        for j, entry in enumerate(entries if isinstance(entries, list) else ()):
            if not isinstance(entry, Mapping):
                continue
            schema = PLUGIN_ARGS.get(entry.get("name"))  # type: ignore[arg-type]
            if schema is None:
                continue
            inner: list[tuple[str, str]] = []
            _unknown(entry.get("args"), schema, "", inner)
            if inner:
                args_path = f"profiles[{i}].pluginConfig[{j}].args"
                first = first if first is not None else f"{args_path}.{inner[0][1]}".rstrip(".")
                texts = [text for text, _ in inner]
                errors.append(f"decoding .profiles[{i}].pluginConfig[{j}]: "
                              + _strict([f"decoding args for plugin {entry['name']}: " + _strict(texts)]))
    return (_strict(errors), first or "") if errors else None
