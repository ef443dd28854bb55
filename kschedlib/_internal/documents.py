"""Reading JSON and YAML documents (YAML needs the ``yaml`` extra), as kubectl writes them.

kubectl output reaches files in more shapes than one JSON value: ``>>`` appends a second
document, PowerShell's ``>`` writes UTF-16 with a byte-order mark, editors add a UTF-8 BOM,
and older kubectl/oc print timestamps unquoted in YAML.  All of them read here; JSON (with or
without a BOM) stays on the C JSON parser.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from functools import cache
from os import PathLike, fspath
from typing import Any, Final

from kschedlib.errors import ConfigError, ManifestError, install_hint
from kschedlib.framework.config import SchedulerConfig, parse_config

__all__ = ["config_document", "load_config", "parse_documents", "read_documents"]

_BOMS: Final = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: its BOM starts with UTF-16 LE's
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_TABLE_HEADER: Final = re.compile(r"^(NAMESPACE {2,})?NAME {2,}[A-Z][A-Z0-9-]*( {2,}[A-Z][A-Z0-9-]*( [A-Z]+)?)*\s*$")
"""The header line of ``kubectl get``'s default output (``NAME   READY   STATUS   RESTARTS   AGE``)."""
_HELM_HINT: Final = ("looks like an unrendered Helm template ('{{ ... }}' placeholders); "
                     "render it first, e.g. helm template RELEASE CHART > rendered.yaml")


def decode(data: bytes, *, source: str = "<input>") -> str:
    """The text of a file: UTF-8, or whatever its byte-order mark says (UTF-16 from PowerShell)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding).lstrip("\ufeff")
            except UnicodeDecodeError as exc:
                raise ManifestError(f"cannot decode {encoding} text: {exc.reason}", obj=source) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"not UTF-8 text (byte {exc.start}); save it as UTF-8", obj=source) from exc


def _json_documents(text: str) -> list[Any]:
    """One JSON value, or several written one after another (``kubectl ... -o json >> file``)."""
    try:
        return [json.loads(text)]
    except json.JSONDecodeError as first:
        if first.msg != "Extra data":
            raise
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos].isspace():
            pos += 1
        if pos == end:
            return docs
        doc, pos = decoder.raw_decode(text, pos)
        docs.append(doc)


@cache
def _yaml_loader() -> type:
    """A safe YAML loader (libyaml's when PyYAML has it) that keeps timestamps as strings.

    kubectl's YAML reader turns ``creationTimestamp: 2019-08-09T05:12:19Z`` into the string
    ``"2019-08-09T05:12:19Z"``; PyYAML would make it a datetime.
    """
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    resolvers = {first: [(tag, regexp) for tag, regexp in entries if tag != "tag:yaml.org,2002:timestamp"]
                 for first, entries in base.yaml_implicit_resolvers.items()}
    return type("KubeYamlLoader", (base,), {"yaml_implicit_resolvers": resolvers})


def _yaml_documents(text: str, source: str) -> list[Any]:
    try:
        import yaml
    except ImportError as exc:
        raise ManifestError(f"reading YAML needs PyYAML: {install_hint('yaml')}; or give JSON "
                            "(kubectl get ... -o json)", obj=source) from exc
    try:
        return [doc for doc in yaml.load_all(text, Loader=_yaml_loader()) if doc is not None]
    except yaml.YAMLError as exc:
        raise ManifestError(_HELM_HINT if "{{" in text else f"invalid YAML: {exc}", obj=source) from exc


def _kubectl_table(text: str) -> bool:
    """Whether ``text`` is what ``kubectl get`` prints without ``-o`` (a header of capitalised columns)."""
    header = text.lstrip("\ufeff \t\r\n").split("\n", 1)[0]
    return _TABLE_HEADER.match(header) is not None


def parse_documents(text: str, *, source: str = "<input>") -> list[Any]:
    """Every document of ``text``: JSON values (one, or several in a row), or a (multi-document) YAML stream."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if _kubectl_table(stripped):
        raise ManifestError("this is kubectl's table output, not objects: ask kubectl for JSON, e.g. "
                            f"kubectl get nodes,pods -A -o json > {source if source != '<input>' else 'cluster.json'}",
                            obj=source)
    if stripped.startswith(("{", "[")):
        try:
            return _json_documents(stripped)
        except json.JSONDecodeError as exc:
            raise ManifestError(_HELM_HINT if "{{" in text else f"invalid JSON: {exc}", obj=source) from exc
    return _yaml_documents(text.lstrip("\ufeff"), source)


def read_documents(path: str | PathLike[str]) -> list[Any]:
    """The documents of a JSON or YAML file."""
    file = fspath(path)
    try:
        with open(file, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ManifestError(f"cannot read file: {exc.strerror}", obj=file) from exc
    return parse_documents(decode(data, source=file), source=file)


_CLUSTER_KINDS: Final = frozenset({"Node", "Pod", "Namespace", "PodDisruptionBudget", "Deployment", "ReplicaSet",
                                   "StatefulSet", "DaemonSet", "Job", "Service", "PersistentVolume",
                                   "PersistentVolumeClaim", "StorageClass", "ResourceSlice", "ResourceClaim"})
"""Kinds a cluster file holds (and a scheduler configuration never is)."""
_POLICY_REMOVED: Final = ("the scheduler Policy API was removed in Kubernetes v1.23; write a "
                          "KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1) with profiles, "
                          "plugins and pluginConfig instead: "
                          "https://kubernetes.io/docs/reference/scheduling/config/")


def _cluster_objects(doc: Any) -> str | None:
    """What a config file holds when it holds cluster objects instead (``a v1 List``, ``a Node``), else ``None``."""
    if isinstance(doc, list):
        return "a JSON array of them" if any(_cluster_objects(item) for item in doc) else None
    kind = doc.get("kind") if isinstance(doc, Mapping) else None
    if isinstance(kind, str) and (kind.endswith("List") or kind in _CLUSTER_KINDS):
        return f"a {'v1 ' if kind == 'List' else ''}{kind}"
    return None


def _given_as_config(what: str, source: str) -> ConfigError:
    return ConfigError(f"{source} holds cluster objects ({what}), not a KubeSchedulerConfiguration: give it as "
                       "the cluster (the command's file arguments), and a scheduler configuration with --config")


def config_document(doc: Any, source: str) -> Mapping[str, Any]:
    """The KubeSchedulerConfiguration of a config file's document, unwrapped from a ConfigMap if need be."""
    what = _cluster_objects(doc)
    if what is not None:
        raise _given_as_config(what, source)
    if not isinstance(doc, Mapping):
        raise ConfigError("expected one KubeSchedulerConfiguration document", value=source)
    kind = doc.get("kind")
    if kind == "Policy":
        raise ConfigError(_POLICY_REMOVED, field="kind", value=kind)
    if kind != "ConfigMap":
        return doc
    data = doc.get("data")
    found: list[tuple[str, Any]] = []
    for key, text in (data.items() if isinstance(data, Mapping) else ()):
        if not isinstance(text, str) or ("KubeSchedulerConfiguration" not in text and "Policy" not in text):
            continue
        try:
            docs = parse_documents(text, source=f"{source}: data.{key}")
        except ManifestError as exc:
            raise ConfigError(str(exc), field=f"data.{key}") from exc
        found.extend((key, inner) for inner in docs)
    if len(found) != 1:
        raise ConfigError("a ConfigMap must hold exactly one KubeSchedulerConfiguration in its data",
                          field="data", value=[key for key, _ in found] or source)
    return config_document(found[0][1], f"{source}: data.{found[0][0]}")


def load_config(source: Any) -> SchedulerConfig:
    """A SchedulerConfig from ``None`` (defaults), a SchedulerConfig, a dict, or a JSON/YAML file path.

    A ConfigMap holding a KubeSchedulerConfiguration (as clusters store it) is unwrapped.
    """
    if source is None:
        return SchedulerConfig()
    if isinstance(source, SchedulerConfig):
        return source
    if isinstance(source, Mapping):
        return parse_config(config_document(source, "<config>"))
    if isinstance(source, str | PathLike):
        return parse_config(read_config_document(source))
    raise ConfigError("expected a SchedulerConfig, a dict or a file path", value=type(source).__name__)


def read_config_document(path: str | PathLike[str]) -> Mapping[str, Any]:
    """The (unwrapped) KubeSchedulerConfiguration dict of a config file."""
    try:
        docs = read_documents(path)
    except ManifestError as exc:
        raise ConfigError(str(exc)) from exc  # the message names the file already
    if len(docs) != 1:
        what = next((found for doc in docs if (found := _cluster_objects(doc)) is not None), None)
        if what is not None:
            raise _given_as_config(what, fspath(path))
        raise ConfigError("expected one KubeSchedulerConfiguration document", value=fspath(path))
    return config_document(docs[0], fspath(path))
