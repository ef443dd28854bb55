"""``ValidateResourceSlice``: the pool, where its devices are, and each device's name, attributes,
capacities and their request policies, taints, counters and binding conditions."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kschedlib.model._dra_checks._common import (
    TAINT_EFFECTS,
    Check,
    Errors,
    dns_label,
    dns_subdomain,
    driver_name,
    each,
    each_unique,
    field_int,
    field_list,
    field_map,
    field_str,
    go_node_selector_terms,
    label_key,
    label_value,
    metadata,
    name_key,
    node_selector,
    pool_name,
    qualified_name,
    quantity,
    shown_key,
)
from kschedlib.model._field_errors import duplicate, forbidden, invalid, not_supported, required, too_long, too_many
from kschedlib.model.quantity import Quantity

__all__ = ["resource_slice_errors"]

DEVICES_MAX: Final = 128
DEVICES_MAX_ADVANCED: Final = 64
"""Devices in a slice once one of them has taints or consumes counters."""
COUNTER_SETS_MAX: Final = 8
COUNTERS_MAX: Final = 32
CONSUMPTIONS_MAX: Final = 2
ATTRIBUTES_AND_CAPACITIES_MAX: Final = 32
ATTRIBUTE_VALUE_MAX_LENGTH: Final = 64
TAINTS_MAX: Final = 16
BINDING_CONDITIONS_MAX: Final = 4
POLICY_OPTIONS_MAX: Final = 10
_NODE_SELECTION: Final = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
_DEVICE_NODE_SELECTION: Final = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                                 "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
_NOT_PER_DEVICE: Final = ("`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is "
                          "set to true in the ResourceSlice spec")
_NUMERIC: Final = r"(0|[1-9][0-9]*)"
_SEMVER: Final = re.compile(
    rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}"
    r"(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?")


def _go_attribute(attribute: Mapping[str, Any]) -> dict[str, Any]:
    """An attribute as the API server prints it in an error (its internal type's JSON; the list kinds are
    dropped on create while ``DRAListTypeAttributes`` is off, as in v1.36)."""
    return {"IntValue": attribute.get("int"), "BoolValue": attribute.get("bool"),
            "StringValue": attribute.get("string"), "VersionValue": attribute.get("version"),
            "IntValues": None, "BoolValues": None, "StringValues": None, "VersionValues": None}


def _attribute(attribute: object, path: str) -> Errors:
    if not isinstance(attribute, Mapping):
        return []
    errors: Errors = []
    given = 0
    for kind in ("bool", "int", "string", "version"):
        value = attribute.get(kind)
        if value is None:
            continue
        given += 1
        if kind in ("string", "version") and isinstance(value, str):
            errors += _attribute_text(kind, value, f"{path}.{kind}")
    if given == 0:
        errors.append(invalid(path, "", "exactly one value must be specified"))
    elif given > 1:
        errors.append(invalid(path, _go_attribute(attribute), "exactly one value must be specified"))
    return errors


def _attribute_text(kind: str, value: str, path: str) -> Errors:
    errors: Errors = []
    if kind == "version" and not (value.isascii() and _SEMVER.fullmatch(value)):
        errors.append(invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    if len(value.encode()) > ATTRIBUTE_VALUE_MAX_LENGTH:
        errors.append(too_long(path, ATTRIBUTE_VALUE_MAX_LENGTH))
    return errors


def _capacity(capacity: object, path: str, *, shared: bool) -> Errors:
    policy = field_map(capacity, "requestPolicy")
    if policy is None:
        return []
    at = f"{path}.requestPolicy"
    if not shared:
        return [forbidden(at, "allowMultipleAllocations must be true")]
    maximum = quantity(capacity.get("value")) if isinstance(capacity, Mapping) else None
    values = [q for q in (quantity(v) for v in field_list(policy, "validValues")) if q is not None]
    valid_range = field_map(policy, "validRange")
    if values and valid_range is not None:
        return [forbidden(at, 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at '
                              "the same time")]
    default = quantity(policy.get("default"))
    if maximum is None:
        return []
    if values:
        if default is None:
            return [required(f"{at}.default", "required when validValues is defined")]
        return _valid_values(default, maximum, values, f"{at}.validValues")
    if valid_range is not None:
        if default is None:
            return [required(f"{at}.default", "required when validRange is defined")]
        return _valid_range(default, maximum, valid_range, f"{at}.validRange")
    return []


def _valid_values(default: Quantity, maximum: Quantity, values: Sequence[Quantity], path: str) -> Errors:
    errors = [invalid(f"{path}[{i + 1}]", str(values[i + 1]), "values must be sorted in ascending order")
              for i in range(len(values) - 1) if values[i] > values[i + 1]]

    def option(value: Quantity, at: str) -> Errors:
        return [invalid(at, str(value), f"option is larger than capacity value: {maximum}")] if value > maximum else []

    errors += each_unique(values, POLICY_OPTIONS_MAX, option, lambda value: str(value.value()), path)
    if default not in values or len(values) > POLICY_OPTIONS_MAX:
        errors.append(invalid(path, str(default), "default value is not valid according to the requestPolicy"))
    return errors


def _valid_range(default: Quantity, maximum: Quantity, valid_range: Mapping[str, Any], path: str) -> Errors:
    low = quantity(valid_range.get("min"))
    if low is None:
        return [required(f"{path}.min", "required when validRange is defined")]
    high, step = quantity(valid_range.get("max")), quantity(valid_range.get("step"))
    errors: Errors = []
    if low > maximum:
        errors.append(invalid(f"{path}.min", str(low), f"min is larger than capacity value: {maximum}"))
    if default < low:
        errors.append(invalid(f"{path}.min", str(default), f"default is less than min: {low}"))
    if high is not None:
        if low > high:
            errors.append(invalid(f"{path}.max", str(low), f"min is larger than max: {high}"))
        if high > maximum:
            errors.append(invalid(f"{path}.max", str(high), f"max is larger than capacity value: {maximum}"))
        if default > high:
            errors.append(invalid(f"{path}.max", str(default), f"default is more than max: {high}"))
    if step is not None:
        one_step = Quantity(low.amount + step.amount, low.format)
        if one_step > maximum:
            errors.append(invalid(f"{path}.step", str(step),
                                  f"one step {one_step} is larger than capacity value: {maximum}"))
        for value in (default, high):
            if value is not None and step.value() and (value.value() - low.value()) % step.value():
                errors.append(invalid(f"{path}.step", str(value),
                                      f"value is not a multiple of a given step ({step}) from ({low})"))
    return errors


def _taint(taint: object, path: str) -> Errors:
    if not isinstance(taint, Mapping):
        return []
    key, value, effect = field_str(taint, "key"), field_str(taint, "value"), field_str(taint, "effect")
    errors = label_key(key, f"{path}.key") + (label_value(value, f"{path}.value") if value else [])
    if not effect:
        errors.append(required(f"{path}.effect"))
    elif effect not in TAINT_EFFECTS:
        errors.append(not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errors


def _counters(holder: Mapping[str, Any], path: str) -> Errors:
    counters = field_map(holder, "counters")
    if not counters:
        return [required(f"{path}.counters")]
    if len(counters) > COUNTERS_MAX:
        return [too_many(f"{path}.counters", len(counters), COUNTERS_MAX)]
    return [error for name in counters for error in dns_label(str(name), f"{path}.counters")]


def _named_counters(name_field: str) -> Check:
    """A counter set (its name in ``name``) or a device's use of one (``counterSet``): a name and counters."""
    def check(holder: object, path: str) -> Errors:
        if not isinstance(holder, Mapping):
            return []
        name = field_str(holder, name_field)
        at = f"{path}.{name_field}"
        return (dns_label(name, at) if name else [required(at)]) + _counters(holder, path)
    return check


_consumption: Final = _named_counters("counterSet")
_counter_set: Final = _named_counters("name")


def _binding_conditions(device: Mapping[str, Any], path: str) -> Errors:
    ready, failed = field_list(device, "bindingConditions"), field_list(device, "bindingFailureConditions")
    ready_at, failed_at = f"{path}.bindingConditions", f"{path}.bindingFailureConditions"
    errors = each(ready, BINDING_CONDITIONS_MAX, lambda c, at: label_key(c, at) if isinstance(c, str) else [],
                    ready_at)
    errors += each(failed, BINDING_CONDITIONS_MAX, lambda c, at: label_key(c, at) if isinstance(c, str) else [],
                     failed_at)
    seen: set[object] = set()
    for i, condition in enumerate(ready):
        if condition in seen:
            errors.append(duplicate(f"{ready_at}[{i}]", condition))
        seen.add(condition)
    seen_failed: set[object] = set()
    for i, condition in enumerate(failed):
        if condition in seen_failed:
            errors.append(duplicate(f"{failed_at}[{i}]", condition))
        seen_failed.add(condition)
        if condition in ready:
            errors.append(invalid(f"{failed_at}[{i}]", condition, "bindingFailureConditions must not overlap with "
                                                                    "bindingConditions"))
    if not ready and failed:
        errors.append(invalid(ready_at, device.get("bindingConditions"),
                              "bindingConditions are required to use bindingFailureConditions"))
    if not failed and ready:
        errors.append(invalid(failed_at, device.get("bindingFailureConditions"),
                              "bindingFailureConditions are required to use bindingConditions"))
    return errors


def _node_choice(holder: Mapping[str, Any], path: str, flags: tuple[str, ...], empty_name: str,
                 one_term: bool) -> tuple[list[str], Errors]:
    """Where a slice's or a device's devices are: the fields given (``nodeName``, ``nodeSelector`` and the
    true ``flags``) and what is wrong with them; a slice's selector must have ``one_term``."""
    errors: Errors = []
    chosen = []
    node_name = holder.get("nodeName")
    if isinstance(node_name, str):
        if node_name:
            chosen.append("`nodeName`")
            errors += dns_subdomain(node_name, f"{path}.nodeName")
        else:
            errors.append(invalid(f"{path}.nodeName", "", empty_name))
    selector = field_map(holder, "nodeSelector")
    if selector is not None:
        chosen.append("`nodeSelector`")
        errors += node_selector(selector, f"{path}.nodeSelector")
        terms = field_list(selector, "nodeSelectorTerms")
        if one_term and len(terms) != 1:
            shown = go_node_selector_terms(terms) if isinstance(selector.get("nodeSelectorTerms"), list) else None
            errors.append(invalid(f"{path}.nodeSelector.nodeSelectorTerms", shown,
                                  "must have exactly one node selector term"))
    for key in flags:
        flag = holder.get(key)
        if flag is True:
            chosen.append(f"`{key}`")
        elif flag is False:
            errors.append(invalid(f"{path}.{key}", False, "must be either unset or set to true"))
    return chosen, errors


def _exactly_one(chosen: list[str], path: str, message: str, several: str) -> Errors:
    if not chosen:
        return [required(path, message)]
    if len(chosen) > 1:
        return [invalid(path, "{" + ", ".join(chosen) + "}", several)]
    return []


def _device_nodes(device: Mapping[str, Any], path: str, per_device: bool) -> Errors:
    if not per_device:
        given = any(device.get(key) is not None for key in ("nodeName", "nodeSelector", "allNodes"))
        return [invalid(path, None, _NOT_PER_DEVICE)] if given else []
    chosen, errors = _node_choice(device, path, ("allNodes",), "must not be empty", one_term=False)
    return errors + _exactly_one(chosen, path, _DEVICE_NODE_SELECTION, _DEVICE_NODE_SELECTION)


def _device(per_device: bool) -> Check:
    def check(raw: object, path: str) -> Errors:
        if not isinstance(raw, Mapping):
            return []
        device = {**raw, **(field_map(raw, "basic") or {})}  # v1beta1 wraps the device in "basic"
        attributes, capacity = field_map(device, "attributes") or {}, field_map(device, "capacity") or {}
        errors = dns_label(field_str(device, "name"), f"{path}.name")
        if len(attributes) + len(capacity) > ATTRIBUTES_AND_CAPACITIES_MAX:
            errors.append(invalid(path, len(attributes) + len(capacity), "the total number of attributes and "
                                  f"capacities must not exceed {ATTRIBUTES_AND_CAPACITIES_MAX}"))
        for name, attribute in attributes.items():
            errors += qualified_name(str(name), f"{path}.attributes")
            errors += _attribute(attribute, f"{path}.attributes[{shown_key(str(name))}]")
        shared = device.get("allowMultipleAllocations") is True
        for name, amount in capacity.items():
            errors += qualified_name(str(name), f"{path}.capacity")
            errors += _capacity(amount, f"{path}.capacity[{shown_key(str(name))}]", shared=shared)
        errors += each(field_list(device, "taints"), TAINTS_MAX, _taint, f"{path}.taints")
        errors += each_unique(field_list(device, "consumesCounters"), CONSUMPTIONS_MAX, _consumption,
                       lambda c: field_str(c, "counterSet"), f"{path}.consumesCounters")
        errors += _device_nodes(device, path, per_device)
        return errors + _binding_conditions(device, path)
    return check


def _advanced(devices: Sequence[Any]) -> bool:
    """Whether a device has taints or consumes counters (a slice then holds fewer devices)."""
    for raw in devices:
        device = {**raw, **(field_map(raw, "basic") or {})} if isinstance(raw, Mapping) else {}
        if field_list(device, "taints") or field_list(device, "consumesCounters"):
            return True
    return False


def _slice_nodes(spec: Mapping[str, Any]) -> Errors:
    chosen, errors = _node_choice(spec, "spec", ("allNodes", "perDeviceNodeSelection"),
                                  "must be either unset or set to a non-empty string", one_term=True)
    return errors + _exactly_one(chosen, "spec", _NODE_SELECTION, f"{_NODE_SELECTION}, but multiple fields are set")


def resource_slice_errors(d: Mapping[str, Any]) -> Errors:
    """``ValidateResourceSlice``."""
    spec = field_map(d, "spec") or {}
    pool = field_map(spec, "pool") or {}
    errors = metadata(d, namespaced=False) + driver_name(field_str(spec, "driver"), "spec.driver")
    errors += pool_name(field_str(pool, "name"), "spec.pool.name")
    count, generation = field_int(pool, "resourceSliceCount"), field_int(pool, "generation")
    if count is None and "resourceSliceCount" not in pool:
        count = 0  # Go's zero value: there is no default
    if count is not None and count <= 0:
        errors.append(invalid("spec.pool.resourceSliceCount", count, "must be greater than zero"))
    if generation is not None and generation < 0:
        errors.append(invalid("spec.pool.generation", generation, "must be greater than or equal to zero"))
    errors += _slice_nodes(spec)
    devices = spec.get("devices")
    if spec.get("sharedCounters") is not None and devices is not None:
        errors.append(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    listed = field_list(spec, "devices")
    limit = DEVICES_MAX_ADVANCED if _advanced(listed) else DEVICES_MAX
    errors += each_unique(listed, limit, _device(spec.get("perDeviceNodeSelection") is True), name_key, "spec.devices")
    return errors + each_unique(field_list(spec, "sharedCounters"), COUNTER_SETS_MAX, _counter_set, name_key,
                         "spec.sharedCounters")
