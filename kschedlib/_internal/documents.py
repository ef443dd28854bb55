"""Reading JSON and YAML documents (YAML needs the ``yaml`` extra)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike, fspath
from pathlib import Path
from typing import Any

from kschedlib.errors import ConfigError, ManifestError
from kschedlib.framework.config import SchedulerConfig, parse_config

__all__ = ["load_config", "parse_documents", "read_documents"]


def parse_documents(text: str, *, source: str = "<input>") -> list[Any]:
    """Every document of ``text``: one JSON value, or the documents of a (multi-document) YAML stream."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as exc:
            raise ManifestError(f"invalid JSON: {exc}", obj=source) from exc
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ManifestError("reading YAML needs PyYAML: pip install 'kschedlib[yaml]'", obj=source) from exc
    try:
        return [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {exc}", obj=source) from exc


def read_documents(path: str | PathLike[str]) -> list[Any]:
    """The documents of a JSON or YAML file."""
    file = Path(fspath(path))
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"cannot read file: {exc.strerror}", obj=str(file)) from exc
    return parse_documents(text, source=str(file))


def load_config(source: Any) -> SchedulerConfig:
    """A SchedulerConfig from ``None`` (defaults), a SchedulerConfig, a dict, or a JSON/YAML file path."""
    if source is None:
        return SchedulerConfig()
    if isinstance(source, SchedulerConfig):
        return source
    if isinstance(source, Mapping):
        return parse_config(source)
    if isinstance(source, str | PathLike):
        try:
            docs = read_documents(source)
        except ManifestError as exc:
            raise ConfigError(str(exc), field="<file>", value=fspath(source)) from exc
        if len(docs) != 1 or not isinstance(docs[0], Mapping):
            raise ConfigError("expected one KubeSchedulerConfiguration document", value=fspath(source))
        return parse_config(docs[0])
    raise ConfigError("expected a SchedulerConfig, a dict or a file path", value=type(source).__name__)
