"""What every DRA object's checks share: reading a raw object leniently (a field of the wrong type is the
converter's to refuse), lists and sets as kube checks them, names, metadata and node selectors."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kschedlib.errors import QuantityError
from kschedlib.model._field_errors import (
    FieldError,
    c_identifier_errors,
    dns_label_errors,
    dns_subdomain_errors,
    duplicate,
    forbidden,
    invalid,
    label_key_errors,
    label_value_errors,
    required,
    too_long,
    too_many,
)
from kschedlib.model.quantity import Quantity, parse_quantity

__all__ = ["TAINT_EFFECTS", "Check", "Errors", "c_identifier", "dns_label", "dns_subdomain", "driver_name", "each",
           "each_unique",
           "field_int", "field_list", "field_map", "field_str", "formatted", "fully_qualified_name",
           "go_node_selector_terms", "identity", "label_key", "label_value", "labels_and_annotations", "metadata",
           "name_key", "node_selector", "pool_name", "qualified_name", "quantity", "shown_key"]

Errors = list[FieldError]
Check = Callable[[Any, str], Errors]

DEVICE_ID_MAX_LENGTH: Final = 32
DRIVER_MAX_LENGTH: Final = 63
POOL_NAME_MAX_LENGTH: Final = 253
TAINT_EFFECTS: Final = ("NoExecute", "NoSchedule", "None")
MAP_KEY_MAX_SHOWN: Final = 63 + 1 + 32
"""Longer attribute and capacity names are shortened in the middle where a path shows them."""


def field_map(d: object, key: str) -> Mapping[str, Any] | None:
    value = d.get(key) if isinstance(d, Mapping) else None
    return value if isinstance(value, Mapping) else None


def field_list(d: object, key: str) -> list[Any]:
    value = d.get(key) if isinstance(d, Mapping) else None
    return value if isinstance(value, list) else []


def field_str(d: object, key: str) -> str:
    value = d.get(key) if isinstance(d, Mapping) else None
    return value if isinstance(value, str) else ""


def field_int(d: object, key: str) -> int | None:
    value = d.get(key) if isinstance(d, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def quantity(value: object) -> Quantity | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def shown_key(key: str) -> str:
    """A map key as a path shows it (``truncateIfTooLong``)."""
    if len(key) <= MAP_KEY_MAX_SHOWN:
        return key
    keep = MAP_KEY_MAX_SHOWN - 3
    return key[: (keep + 1) // 2] + "..." + key[len(key) - keep // 2:]


def each(items: Sequence[Any], limit: int, check: Check, path: str) -> Errors:
    """``validateSlice``: too many short-circuits; else each item's errors."""
    if 0 <= limit < len(items):
        return [too_many(path, len(items), limit)]
    return [error for i, item in enumerate(items) for error in check(item, f"{path}[{i}]")]


def each_unique(items: Sequence[Any], limit: int, check: Check, key: Callable[[Any], object], path: str) -> Errors:
    """``validateSet``: :func:`each`, then each repeated key."""
    if 0 <= limit < len(items):
        return [too_many(path, len(items), limit)]
    errors = each(items, -1, check, path)
    seen: set[object] = set()
    for i, item in enumerate(items):
        k = key(item)
        if k in seen:
            errors.append(duplicate(f"{path}[{i}]", k))
        else:
            seen.add(k)
    return errors


def name_key(item: object) -> object:
    return field_str(item, "name")


def formatted(value: str, path: str, checks: Callable[[str], list[str]]) -> Errors:
    return [invalid(path, value, message) for message in checks(value)]


def dns_label(value: str, path: str) -> Errors:
    return formatted(value, path, dns_label_errors)


def dns_subdomain(value: str, path: str) -> Errors:
    return formatted(value, path, dns_subdomain_errors)


def label_key(value: str, path: str) -> Errors:
    return formatted(value, path, label_key_errors)


def label_value(value: str, path: str) -> Errors:
    return formatted(value, path, label_value_errors)


def driver_name(name: str, path: str) -> Errors:
    """``ValidateCSIDriverName``."""
    if not name:
        return [required(path)]
    errors = [too_long(path, DRIVER_MAX_LENGTH)] if len(name.encode()) > DRIVER_MAX_LENGTH else []
    return errors + [invalid(path, name, message) for message in dns_subdomain_errors(name.lower())]


def pool_name(name: str, path: str) -> Errors:
    if not name:
        return [required(path)]
    errors = [too_long(path, POOL_NAME_MAX_LENGTH)] if len(name.encode()) > POOL_NAME_MAX_LENGTH else []
    return errors + [error for part in name.split("/") for error in dns_subdomain(part, path)]


def c_identifier(value: str, path: str) -> Errors:
    errors = [too_long(path, DEVICE_ID_MAX_LENGTH)] if len(value.encode()) > DEVICE_ID_MAX_LENGTH else []
    return errors + formatted(value, path, c_identifier_errors)


def qualified_name(name: str, path: str) -> Errors:
    """An attribute or capacity name: a C identifier, optionally after a driver-name domain and ``/``."""
    parts = name.split("/")
    if len(parts) == 1:
        return c_identifier(name, path)
    if len(parts) > 2:
        return []  # kube v1.36 lets these through
    domain, ident = parts
    errors = driver_name(domain, path) if domain else [invalid(path, "", "the domain must not be empty")]
    return errors + (c_identifier(ident, path) if ident else [invalid(path, "", "the name must not be empty")])


def fully_qualified_name(name: str, path: str) -> Errors:
    errors = qualified_name(name, path)
    if "/" not in name:
        errors.append(invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"))
    return errors


def labels_and_annotations(meta: Mapping[str, Any], path: str) -> Errors:
    errors: Errors = []
    for key, value in (field_map(meta, "labels") or {}).items():
        errors += label_key(str(key), f"{path}.labels")
        if isinstance(value, str):
            errors += label_value(value, f"{path}.labels")
    for key in field_map(meta, "annotations") or {}:
        errors += [invalid(f"{path}.annotations", key, message) for message in label_key_errors(str(key).lower())]
    return errors


def metadata(d: Mapping[str, Any], *, namespaced: bool) -> Errors:
    meta = field_map(d, "metadata") or {}
    errors = dns_subdomain(field_str(meta, "name"), "metadata.name")
    namespace = field_str(meta, "namespace")
    if namespaced and namespace:
        errors += dns_label(namespace, "metadata.namespace")
    return errors + labels_and_annotations(meta, "metadata")


def identity(item: object) -> object:
    return item


def go_node_selector_terms(terms: Sequence[Any]) -> list[dict[str, Any]]:
    """Node selector terms as the API server prints them in an error (its internal types' JSON)."""
    def requirements(raw: object) -> list[dict[str, Any]] | None:
        if not isinstance(raw, list):
            return None
        return [{"Key": field_str(r, "key"), "Operator": field_str(r, "operator"),
                 "Values": r.get("values") if isinstance(r, Mapping) and isinstance(r.get("values"), list) else None}
                for r in raw]
    return [{"MatchExpressions": requirements(t.get("matchExpressions")) if isinstance(t, Mapping) else None,
             "MatchFields": requirements(t.get("matchFields")) if isinstance(t, Mapping) else None}
            for t in terms]


def node_selector(selector: Mapping[str, Any], path: str) -> Errors:
    """``ValidateNodeSelector``."""
    terms_path = f"{path}.nodeSelectorTerms"
    terms = field_list(selector, "nodeSelectorTerms")
    if not terms:
        return [required(terms_path, "must have at least one node selector term")]
    errors: Errors = []
    for i, term in enumerate(terms):
        for j, requirement in enumerate(field_list(term, "matchExpressions")):
            errors += _node_requirement(requirement, f"{terms_path}[{i}].matchExpressions[{j}]")
        for j, requirement in enumerate(field_list(term, "matchFields")):
            errors += _node_field_requirement(requirement, f"{terms_path}[{i}].matchFields[{j}]")
    return errors


def _node_requirement(requirement: object, path: str) -> Errors:
    operator, values = field_str(requirement, "operator"), field_list(requirement, "values")
    errors: Errors = []
    if operator in ("In", "NotIn"):
        if not values:
            errors.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errors.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or "
                                                      "'DoesNotExist'"))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errors.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or "
                                                     "'Gt'"))
    else:
        errors.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errors += label_key(field_str(requirement, "key"), f"{path}.key")
    return errors + _each_value(values, path, label_value)


def _each_value(values: Sequence[Any], path: str, check: Callable[[str, str], Errors]) -> Errors:
    return [error for i, value in enumerate(values) if isinstance(value, str)
            for error in check(value, f"{path}.values[{i}]")]


def _node_field_requirement(requirement: object, path: str) -> Errors:
    operator, values = field_str(requirement, "operator"), field_list(requirement, "values")
    key = field_str(requirement, "key")
    errors: Errors = []
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            errors.append(required(f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' for "
                                                     "node field selector"))
    else:
        errors.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    if key != "metadata.name":
        return [*errors, invalid(f"{path}.key", key, "not a valid field selector key")]
    return errors + _each_value(values, path, dns_subdomain)
