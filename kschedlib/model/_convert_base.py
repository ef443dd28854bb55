"""Typed reading of Kubernetes v1 dicts: the primitives :mod:`kschedlib.model.convert` builds on.

Every getter checks the type of one field and, when it is wrong, raises a
:class:`~kschedlib.errors.ManifestError` naming the object, the JSON field
path and the bad value.  Paths are only formatted on the error path, so the
normal path costs a dict lookup and a type check per field: clusters with a
hundred thousand pods are read through here (quantity strings are memoized by
:func:`~kschedlib.model.quantity.parse_quantity`).  JSON ``null`` reads as absent,
as it does for the API server.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final, NoReturn, TypeVar, final

from kschedlib.errors import ManifestError, QuantityError, SelectorError
from kschedlib.model import _shared as shared
from kschedlib.model.labels import (
    LABEL_OPERATORS,
    NODE_OPERATORS,
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Requirement,
)
from kschedlib.model.quantity import Quantity, parse_quantity

__all__ = [
    "EMPTY",
    "Json",
    "Reader",
    "format_timestamp",
    "join",
    "label_selector",
    "node_selector",
    "node_selector_term",
    "open_object",
    "section",
]

Json = Mapping[str, Any]
"""A JSON object as decoded from JSON or YAML: the one place ``Any`` is allowed."""

T = TypeVar("T")

EMPTY: Final[Json] = {}
"""What an absent section reads as (never mutated)."""

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def join(path: str, key: str) -> str:
    """``path.key``, or ``key`` at the top level."""
    return f"{path}.{key}" if path else key


@final
class Reader:
    """Reads the fields of one object; ``obj`` (``Pod default/web-1``) names it in errors."""

    __slots__ = ("obj",)

    def __init__(self, obj: str) -> None:
        self.obj = obj

    def fail(self, path: str, message: str, value: object = None) -> NoReturn:
        """Raise the ManifestError for ``path``."""
        raise ManifestError(message, obj=self.obj, field=path, value=value)

    def as_map(self, value: object, path: str) -> Json:
        """``value`` as a JSON object (the field at ``path`` must be one)."""
        if type(value) is not dict and not isinstance(value, Mapping):
            self.fail(path, "expected an object", value)
        return value

    def getmap(self, d: Json, key: str, path: str) -> Json | None:
        """An optional object field."""
        value = d.get(key)
        if value is not None and type(value) is not dict and not isinstance(value, Mapping):
            self.fail(join(path, key), "expected an object", value)
        return value

    def getlist(self, d: Json, key: str, path: str) -> list[Any] | tuple[Any, ...]:
        """An optional array field; absent reads as empty."""
        value = d.get(key)
        if value is None:
            return ()
        if type(value) is not list and not isinstance(value, (list, tuple)):
            self.fail(join(path, key), "expected an array", value)
        return value

    def each(self, d: Json, key: str, path: str, read: Callable[[Reader, Any, str], T]) -> tuple[T, ...]:
        """``read(self, item, "path.key[i]")`` for every item of an optional array field.

        Absent and empty arrays cost one lookup, which matters: most pods have no
        tolerations, volumes, init containers, ...
        """
        value = d.get(key)
        if not value:
            if value is None or type(value) is list:
                return ()
            self.getlist(d, key, path)  # raises unless an empty tuple
            return ()
        items = self.getlist(d, key, path)
        base = join(path, key)
        return tuple([read(self, item, f"{base}[{i}]") for i, item in enumerate(items)])

    def getstr(self, d: Json, key: str, path: str, default: str = "") -> str:
        """An optional string field."""
        value = d.get(key)
        if value is None:
            return default
        if type(value) is not str and not isinstance(value, str):
            self.fail(join(path, key), "expected a string", value)
        return value

    def optstr(self, d: Json, key: str, path: str) -> str | None:
        """A string field whose absence is meaningful (``None``)."""
        value = d.get(key)
        if value is not None and type(value) is not str and not isinstance(value, str):
            self.fail(join(path, key), "expected a string", value)
        return value

    def reqstr(self, d: Json, key: str, path: str) -> str:
        """A string field that must be present and non-empty."""
        value = self.getstr(d, key, path)
        if not value:
            self.fail(join(path, key), "is required")
        return value

    def optint(self, d: Json, key: str, path: str) -> int | None:
        """An optional integer field (booleans and floats are not integers, as in Go)."""
        value = d.get(key)
        if value is None or type(value) is int:
            return value
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(join(path, key), "expected an integer", value)
        return int(value)

    def getint(self, d: Json, key: str, path: str, default: int = 0) -> int:
        """An integer field with a default."""
        value = self.optint(d, key, path)
        return default if value is None else value

    def getbool(self, d: Json, key: str, path: str) -> bool:
        """An optional boolean field; absent reads as false."""
        value = d.get(key)
        if value is None:
            return False
        if type(value) is not bool:
            self.fail(join(path, key), "expected a boolean", value)
        return value

    def strlist(self, d: Json, key: str, path: str) -> tuple[str, ...]:
        """An optional array of strings."""
        items = self.getlist(d, key, path)
        for i, item in enumerate(items):
            if type(item) is not str and not isinstance(item, str):
                self.fail(f"{join(path, key)}[{i}]", "expected a string", item)
        return tuple(items)

    def strmap(self, d: Json, key: str, path: str) -> dict[str, str] | None:
        """An optional string-to-string map (labels, annotations, nodeSelector), copied."""
        value = self.checked_strmap(d, key, path)
        return None if value is None else dict(value)

    def shared_strmap(self, d: Json, key: str, path: str) -> Mapping[str, str] | None:
        """An optional string-to-string map, shared with equal ones (:mod:`~kschedlib.model._shared`)."""
        value = self.checked_strmap(d, key, path)
        return None if value is None else shared.str_map(value)

    def checked_strmap(self, d: Json, key: str, path: str) -> Mapping[str, str] | None:
        """An optional string-to-string map, checked and returned as read (not copied)."""
        value = self.getmap(d, key, path)
        if value is None:
            return None
        for name, item in value.items():
            if type(item) is not str and not isinstance(item, str):
                self.fail(f"{join(path, key)}.{name}", "expected a string", item)
            if type(name) is not str and not isinstance(name, str):
                self.fail(join(path, key), "keys must be strings", name)
        return value

    def resources(self, d: Json, key: str, path: str) -> Mapping[str, Quantity] | None:
        """An optional ResourceList, shared with equal ones (:mod:`~kschedlib.model._shared`); a bad
        quantity keeps the Kubernetes message and gains the path."""
        value = self.getmap(d, key, path)
        if value is None:
            return None
        out: dict[str, Quantity] = {}
        for name, text in value.items():
            try:
                quantity = out[name] = parse_quantity(text)
            except QuantityError as err:
                raise QuantityError(err.message, obj=self.obj, field=f"{join(path, key)}.{name}",
                                    value=text) from err
            if quantity.amount.numerator < 0:  # the API server refuses negative resource amounts, in these words
                raise QuantityError(f'Invalid value: "{quantity}": must be greater than or equal to 0', obj=self.obj,
                                    field=f"{join(path, key)}[{name}]")
        return shared.resource_map(out)

    def timestamp(self, d: Json, key: str, path: str) -> float | None:
        """An optional RFC 3339 time as seconds since the epoch (a time without zone is UTC)."""
        text = self.optstr(d, key, path)
        if text is None:
            return None
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            self.fail(join(path, key), "expected an RFC 3339 time", text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return (parsed - _EPOCH).total_seconds()


def format_timestamp(seconds: float) -> str:
    """The RFC 3339 text of an epoch time, to the microsecond, so that reading it back is lossless.

    The whole seconds are split off first (exactly), so rounding the fraction to microseconds
    cannot be disturbed by the float error of a large ``seconds * 10**6``.
    """
    whole = math.floor(seconds)
    micros = whole * 1_000_000 + round((seconds - whole) * 1_000_000)
    moment = (_EPOCH + timedelta(microseconds=micros)).replace(tzinfo=None)
    return moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds") + "Z"


# --- selectors ---------------------------------------------------------------------------------


def _requirement_parts(r: Reader, raw: object, path: str) -> tuple[str, str, tuple[str, ...]]:
    expr = r.as_map(raw, path)
    return r.getstr(expr, "key", path), r.getstr(expr, "operator", path), r.strlist(expr, "values", path)


def label_selector(r: Reader, raw: object, path: str) -> LabelSelector | None:
    """A metav1.LabelSelector; ``None`` (absent) stays ``None``, the nil selector that matches nothing."""
    if raw is None:
        return None
    d = r.as_map(raw, path)
    match_labels = r.checked_strmap(d, "matchLabels", path) or EMPTY
    return shared.selector(match_labels, r.each(d, "matchExpressions", path, _label_requirement))


def _label_requirement(r: Reader, raw: object, path: str) -> Requirement:
    key, op, values = _requirement_parts(r, raw, path)
    if op not in LABEL_OPERATORS:
        r.fail(join(path, "operator"), "not a valid label selector operator "
               "(In, NotIn, Exists, DoesNotExist)", op)
    try:
        return Requirement(key, op, values)
    except SelectorError as err:
        r.fail(join(path, "values"), str(err), list(values))


def _check_node_requirement(r: Reader, req: NodeSelectorRequirement, path: str, *, field: bool) -> None:
    """The API server's validation of a node selector requirement (operator and value count).

    Values of ``Gt``/``Lt`` that are not integers pass, as they do in Kubernetes; such a
    requirement simply matches no node.
    """
    op, count = req.operator, len(req.values)
    if field:
        if req.key != "metadata.name":
            r.fail(join(path, "key"), "matchFields supports only metadata.name", req.key)
        if op not in ("In", "NotIn"):
            r.fail(join(path, "operator"), "matchFields supports only In and NotIn", op)
    elif op not in NODE_OPERATORS:
        r.fail(join(path, "operator"), "not a valid node selector operator "
               "(In, NotIn, Exists, DoesNotExist, Gt, Lt)", op)
    elif (op in ("In", "NotIn") and not count) or (op in ("Exists", "DoesNotExist") and count) or (
        op in ("Gt", "Lt") and count != 1
    ):
        r.fail(join(path, "values"), f"wrong number of values for operator {op}", list(req.values))


def _node_expression(r: Reader, raw: object, path: str) -> NodeSelectorRequirement:
    req = NodeSelectorRequirement(*_requirement_parts(r, raw, path))
    _check_node_requirement(r, req, path, field=False)
    return req


def _node_field(r: Reader, raw: object, path: str) -> NodeSelectorRequirement:
    req = NodeSelectorRequirement(*_requirement_parts(r, raw, path))
    _check_node_requirement(r, req, path, field=True)
    return req


def node_selector_term(r: Reader, raw: object, path: str) -> NodeSelectorTerm:
    """A NodeSelectorTerm (``matchExpressions`` on labels, ``matchFields`` on the node name)."""
    d = r.as_map(raw, path)
    return NodeSelectorTerm(
        r.each(d, "matchExpressions", path, _node_expression),
        r.each(d, "matchFields", path, _node_field),
    )


def node_selector(r: Reader, raw: object, path: str) -> NodeSelector:
    """A NodeSelector: its ``nodeSelectorTerms``, ORed."""
    return NodeSelector(r.each(r.as_map(raw, path), "nodeSelectorTerms", path, node_selector_term))


def open_object(d: object, kind: str, *, namespaced: bool) -> tuple[Reader, Json, str, str]:
    """Check an object's shape, kind and name; a Reader naming it, its metadata, name and namespace.

    An absent ``kind`` is fine: some dumps omit kinds by position.
    """
    if not isinstance(d, Mapping):
        raise ManifestError(f"a {kind} must be an object", obj=kind, value=type(d).__name__)
    declared = d.get("kind")
    if declared is not None and declared != kind:
        raise ManifestError(f"expected a {kind}", obj=kind, field="kind", value=declared)
    r = Reader(kind)
    meta = r.getmap(d, "metadata", "") or EMPTY
    name = r.reqstr(meta, "name", "metadata")
    namespace = (r.getstr(meta, "namespace", "metadata") or "default") if namespaced else ""
    r.obj = f"{kind} {namespace}/{name}" if namespaced else f"{kind} {name}"
    return r, meta, name, namespace


def section(r: Reader, d: Json, key: str) -> Json:
    """A top-level section (``spec``, ``status``), empty when absent."""
    return r.getmap(d, key, "") or EMPTY
