"""Which command a JSON result came from, told by the keys each command's JSON always has."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kschedlib.errors import ReportError

__all__ = ["KINDS", "SIGNATURES", "detect_kind", "require"]

SIGNATURES: Final[dict[str, frozenset[str]]] = {
    "explain": frozenset({"pod", "feasible", "filtered", "scores", "selected"}),
    "simulate": frozenset({"placements", "unschedulable", "gated", "summary"}),
    "capacity": frozenset({"replicas", "stopped_by", "placements", "templates"}),
    "drain": frozenset({"nodes", "pods", "unschedulable", "pdb_violations"}),
    "nodes-needed": frozenset({"nodes_needed", "template", "placements", "not_helped"}),
    "compare": frozenset({"configs", "differences", "runs"}),
}
"""The keys that name a command's JSON object (``sweep`` is a list of rows, see :data:`SWEEP_ROW`)."""

SWEEP_ROW: Final = frozenset({"index", "scenario", "ok", "result"})
KINDS: Final = (*SIGNATURES, "sweep")


def detect_kind(data: object) -> str:
    """The command whose ``--format json`` output ``data`` is; :class:`~kschedlib.errors.ReportError`
    when it is none of them."""
    if isinstance(data, list):
        if data and all(isinstance(row, Mapping) and row.keys() >= SWEEP_ROW for row in data):
            return "sweep"
        raise ReportError("a list is a sweep's output only when every item is a scenario row "
                          f"({', '.join(sorted(SWEEP_ROW))})", field="<top level>",
                          value=f"a list of {len(data)} items")
    if not isinstance(data, Mapping):
        raise ReportError("expected the JSON object or list a kschedlib command prints", field="<top level>",
                          value=type(data).__name__)
    found = [kind for kind, keys in SIGNATURES.items() if keys <= data.keys()]
    if len(found) != 1:
        keys = ", ".join(sorted(map(str, data))[:8])
        kube_kind = data.get("kind") if "apiVersion" in data else None
        hint = (f"; this is a Kubernetes {kube_kind}, not a result: run a command such as simulate with --format html"
                if isinstance(kube_kind, str) else "")
        raise ReportError("not the output of simulate, explain, capacity, drain, nodes-needed, compare or sweep"
                          + hint, field="<top level>", value=f"keys {keys}" if keys else "an empty object")
    return found[0]


def require(data: object, kind: str) -> Any:
    """``data`` checked to be a ``kind`` result (a known kind whose keys are all there)."""
    if kind not in KINDS:
        raise ReportError(f"unknown kind; known: {', '.join(KINDS)}", field="kind", value=kind)
    if kind == "sweep":
        if detect_kind(data) != "sweep":  # pragma: no cover - detect_kind raises for any other list
            raise ReportError("not a sweep's rows", field="<top level>")
        return data
    if not isinstance(data, Mapping):
        raise ReportError(f"a result of {kind} is a JSON object", field="<top level>", value=type(data).__name__)
    missing = sorted(SIGNATURES[kind] - data.keys())
    if missing:
        raise ReportError(f"not a result of {kind}: no {', '.join(missing)}", field=missing[0])
    return data
