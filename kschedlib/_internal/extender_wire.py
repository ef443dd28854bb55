"""The JSON of kube-scheduler's HTTP extender protocol (kube's ``extender/v1/types.go``), both directions.

The Go structs have no JSON tags, so keys are the Go field names (``Pod``,
``NodeNames``, ``FailedNodes``...).  Decoding follows Go's ``encoding/json``:
keys match case-insensitively (an exact match preferred, the last matching key
winning), unknown keys are ignored, ``null`` leaves a field at its zero value,
a wrong type is an error, and only the first JSON value of a body is read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kschedlib.errors import WireError
from kschedlib.model.convert import node_to_dict, pod_to_dict
from kschedlib.model.objects import Node, Pod

__all__ = [
    "WireError",
    "decode_body",
    "encode",
    "field",
    "int_field",
    "map_field",
    "node_wire",
    "pod_wire",
    "str_field",
    "str_list_field",
]

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def pod_wire(pod: Pod) -> dict[str, Any]:
    """A v1 Pod as sent to an extender (the ``uid`` always present: replies name victims by it)."""
    out = pod_to_dict(pod)
    out["metadata"]["uid"] = pod.uid
    return out


def node_wire(node: Node) -> dict[str, Any]:
    """A v1 Node as sent to an extender."""
    return node_to_dict(node)


def encode(message: object) -> bytes:
    """Compact JSON, keys in the order given (Go marshals struct fields in declaration order)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode_body(body: bytes) -> Any:
    """The first JSON value of ``body`` (trailing bytes are ignored, as Go's Decoder does)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WireError(f"invalid UTF-8 in JSON: {exc}") from exc
    stripped = text.lstrip(" \t\r\n")
    if not stripped:
        raise WireError("EOF")
    try:
        value, _ = json.JSONDecoder().raw_decode(stripped)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(stripped):
            raise WireError("unexpected EOF") from exc
        raise WireError(f"invalid JSON: {exc.msg} at offset {exc.pos}") from exc
    return value


def field(obj: Mapping[str, Any], name: str) -> Any:
    """The value of Go field ``name`` in a decoded object: keys match case-insensitively, the last one wins."""
    folded = name.casefold()
    found = None
    for key, value in obj.items():
        if key.casefold() == folded:
            found = value
    return found


def _type_error(kind: str, value: object, where: str) -> WireError:
    return WireError(f"json: cannot unmarshal {_json_kind(value)} into Go value of type {kind} ({where})")


def _json_kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def object_value(value: Any, where: str) -> Mapping[str, Any] | None:
    """A JSON object (``None`` for null); anything else is a type error."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _type_error("struct", value, where)
    return value


def str_field(obj: Mapping[str, Any], name: str) -> str:
    value = field(obj, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _type_error("string", value, name)
    return value


def int_field(obj: Mapping[str, Any], name: str) -> int:
    """An int64 field; fractions, strings and out-of-range numbers are errors, as in Go."""
    value = field(obj, name)
    if value is None:
        return 0
    return int_value(value, name)


def int_value(value: Any, where: str) -> int:
    """An int64: a JSON number without fraction or exponent (Go refuses ``7.0`` for an int64 too)."""
    if isinstance(value, float):
        raise WireError(f"json: cannot unmarshal number {value} into Go value of type int64 ({where})")
    if isinstance(value, bool) or not isinstance(value, int):
        raise _type_error("int64", value, where)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise WireError(f"json: cannot unmarshal number {value} into Go value of type int64 ({where})")
    return value


def str_list_field(obj: Mapping[str, Any], name: str) -> list[str] | None:
    """A ``[]string`` field: ``None`` when absent or null."""
    value = field(obj, name)
    if value is None:
        return None
    if not isinstance(value, list):
        raise _type_error("[]string", value, name)
    for item in value:
        if not isinstance(item, str):
            raise _type_error("string", item, name)
    return value


def map_field(obj: Mapping[str, Any], name: str) -> dict[str, str]:
    """A ``map[string]string`` field (empty when absent or null)."""
    value = field(obj, name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _type_error("map[string]string", value, name)
    for item in value.values():
        if not isinstance(item, str):
            raise _type_error("string", item, name)
    return dict(value)


def list_value(value: Any, where: str) -> Sequence[Any]:
    """A JSON array (empty for null)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _type_error("slice", value, where)
    return value
