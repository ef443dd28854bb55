"""Grid files: clusters x workloads x configs x kube versions x parameter matrix, one question.

Every file a grid names is read here, where the grid is, so that workers anywhere need nothing
but the scenario (clusters and workloads go once per worker, configs as parsed documents).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from os import PathLike, fspath
from pathlib import Path
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.documents import load_config, read_config_document, read_documents
from kschedlib.errors import ConfigError
from kschedlib.simulation.cluster import Cluster, load_cluster
from kschedlib.sweeps.questions import QUESTIONS
from kschedlib.sweeps.scenario import Scenario

__all__ = ["Grid", "load_grid"]

KEYS: Final = frozenset({"question", "clusters", "workloads", "configs", "kube_versions", "params", "matrix"})
DEFAULT: Final = "default"
EACH_NODE: Final = "@nodes"
"""A matrix value standing for the name of each node of the scenario's cluster (a drain of every node)."""


@final
@attrs.frozen(slots=True, repr=False)
class Grid(FieldsRepr):
    """The scenarios of a grid file, in order, with the axis values that name each one."""

    question: str
    scenarios: tuple[Scenario, ...]
    labels: tuple[Mapping[str, Any], ...]

    def __len__(self) -> int:
        return len(self.scenarios)


def _named(doc: Mapping[str, Any], key: str, *, required: bool = False) -> dict[str, Any]:
    """An axis: a mapping of name -> value, or a list (each value names itself)."""
    value = doc.get(key)
    if value is None:
        if required:
            raise ConfigError("is required", field=key)
        return {}
    if isinstance(value, Mapping):
        if not value:
            raise ConfigError("must not be empty", field=key)
        return {str(name): item for name, item in value.items()}
    if isinstance(value, list) and value:
        return {str(item): item for item in value}
    raise ConfigError("expected a mapping of name to value, or a non-empty list", field=key, value=value)


def _files(value: Any, base: Path, field: str) -> list[Path]:
    paths = value if isinstance(value, list) else [value]
    if not paths or not all(isinstance(p, str) for p in paths):
        raise ConfigError("expected a file or a list of files", field=field, value=value)
    return [base / p for p in paths]


def _read(value: Any, base: Path, field: str) -> Cluster:
    return load_cluster([fspath(p) for p in _files(value, base, field)])


def _config(value: Any, base: Path, field: str) -> Any:
    """A config: null (the default profile), an inline document, or a file read now; checked here, so
    that a bad config stops the grid before any scenario runs."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        doc = value
    elif isinstance(value, str):
        doc = read_config_document(base / value)
    else:
        raise ConfigError("expected a file, an inline KubeSchedulerConfiguration or null", field=field, value=value)
    try:
        load_config(doc)
    except ConfigError as exc:
        raise ConfigError(str(exc), field=field) from exc
    return dict(doc)


def _matrix(doc: Mapping[str, Any]) -> dict[str, Any]:
    matrix = doc.get("matrix") or {}
    if not isinstance(matrix, Mapping) or not all((isinstance(v, list) and v) or v == EACH_NODE
                                                  for v in matrix.values()):
        raise ConfigError(f"expected a mapping of parameter to a non-empty list of values or {EACH_NODE!r}",
                          field="matrix", value=matrix)
    return dict(matrix)


def _rows(matrix: Mapping[str, Any], cluster: Cluster) -> list[dict[str, Any]]:
    """Every combination of the matrix values, ``@nodes`` standing for each node of ``cluster``."""
    axes = [[node.name for node in cluster.nodes] if values == EACH_NODE else values for values in matrix.values()]
    return [dict(zip(matrix, combo, strict=True)) for combo in itertools.product(*axes)]


def load_grid(source: str | PathLike[str] | Mapping[str, Any], *, base: str | PathLike[str] | None = None,
              clusters: Mapping[str, Cluster] | None = None) -> Grid:
    """Read a grid (a JSON or YAML file, or its document); files it names are relative to ``base``
    (default: the grid file's folder).  ``clusters`` (a live cluster) replaces the grid's own."""
    if isinstance(source, Mapping):
        doc: Any = source
        folder = Path(base) if base is not None else Path.cwd()
    else:
        docs = read_documents(source)
        if len(docs) != 1:
            raise ConfigError(f"expected one grid document, found {len(docs)}", field=fspath(source))
        doc = docs[0]
        folder = Path(base) if base is not None else Path(fspath(source)).parent
    if not isinstance(doc, Mapping):
        raise ConfigError("expected a mapping", field="grid", value=type(doc).__name__)
    unknown = sorted(set(doc) - KEYS)
    if unknown:
        raise ConfigError(f"unknown key; known: {', '.join(sorted(KEYS))}", field=unknown[0])
    name = doc.get("question", "simulate")
    if name not in QUESTIONS:
        raise ConfigError(f"unknown question; known: {', '.join(sorted(QUESTIONS))}", field="question", value=name)
    params = doc.get("params") or {}
    if not isinstance(params, Mapping):
        raise ConfigError("expected a mapping of keyword arguments", field="params", value=params)
    configs = {key: _config(value, folder, f"configs.{key}")
               for key, value in _named(doc, "configs").items()} or {"": None}
    versions = _named(doc, "kube_versions") or {"": None}
    for version in versions.values():
        if version is not None and not isinstance(version, str):
            raise ConfigError("expected a string (quote it in YAML: '1.30', not 1.30)", field="kube_versions",
                              value=version)
    matrix = _matrix(doc)
    cluster_files, workload_files = _named(doc, "clusters", required=clusters is None), _named(doc, "workloads")
    if clusters is None:
        clusters = {key: _read(value, folder, f"clusters.{key}") for key, value in cluster_files.items()}
    workloads: dict[str, Cluster | None] = {key: _read(value, folder, f"workloads.{key}")
                                            for key, value in workload_files.items()} or {"": None}
    return _expand(str(name), dict(params), clusters, workloads, configs, versions, matrix)


def _expand(name: str, params: dict[str, Any], clusters: Mapping[str, Cluster],
            workloads: Mapping[str, Cluster | None], configs: Mapping[str, Any], versions: Mapping[str, Any],
            matrix: Mapping[str, Any]) -> Grid:
    scenarios: list[Scenario] = []
    labels: list[Mapping[str, Any]] = []
    combos = ((c_name, cluster, w_name, workload, k_name, config, v_name, version, row)
              for (c_name, cluster), (w_name, workload), (k_name, config), (v_name, version) in itertools.product(
                  clusters.items(), workloads.items(), configs.items(), versions.items())
              for row in _rows(matrix, cluster))
    for c_name, cluster, w_name, workload, k_name, config, v_name, version, row in combos:
        label: dict[str, Any] = {"cluster": c_name, "workload": w_name or None, "config": k_name or DEFAULT,
                                 "kube_version": version, **row}
        parts = [c_name, w_name, k_name, v_name, *(f"{key}={value}" for key, value in row.items())]  # axes given
        scenario_params = {**params, **row, "config": config, "kube_version": version}
        scenarios.append(Scenario(cluster, workload, scenario_params, "/".join(p for p in parts if p)))
        labels.append(label)
    return Grid(name, tuple(scenarios), tuple(labels))
