"""``ValidateResourceClaim``, ``ValidateResourceClaimTemplate`` and ``ValidateDeviceClass``: requests,
their selectors (compiled as admission compiles them), counts, tolerations, constraints and configs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from kschedlib.errors import CelCompileError
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
    fully_qualified_name,
    identity,
    label_key,
    label_value,
    labels_and_annotations,
    metadata,
    name_key,
)
from kschedlib.model._field_errors import forbidden, invalid, not_supported, required, too_long
from kschedlib.model.resources import is_extended_resource

__all__ = ["compile_error", "device_class_errors", "resource_claim_errors", "resource_claim_template_errors"]

REQUESTS_MAX: Final = 32
CONSTRAINTS_MAX: Final = 32
CONFIG_MAX: Final = 32
SELECTORS_MAX: Final = 32
SUBREQUESTS_MAX: Final = 8
SELECTOR_MAX_LENGTH: Final = 10 * 1024
PARAMETERS_MAX_LENGTH: Final = 10 * 1024
_REQUEST_REF: Final = ("must be the name of a request in the claim or the name of a request and a subrequest "
                       "separated by '/'")
_TEMPLATE_META_FORBIDDEN: Final = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
                                   "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                                   "ownerReferences", "finalizers", "managedFields")
"""ObjectMeta's fields in its order, but labels and annotations: a template may set none of them."""
_V1BETA1_REQUEST_FIELDS: Final = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess",
                                  "tolerations")


class _RequestNames:
    """The requests a claim names, with their subrequests: what a constraint or config may refer to."""

    def __init__(self, requests: Sequence[Any]) -> None:
        self._names: dict[str, set[str] | None] = {}
        for request in requests:
            subs = field_list(request, "firstAvailable")
            self._names[field_str(request, "name")] = {field_str(sub, "name") for sub in subs} if subs else None

    def __contains__(self, ref: str) -> bool:
        parts = ref.split("/")
        if len(parts) > 2 or parts[0] not in self._names:
            return False
        subs = self._names[parts[0]]
        return len(parts) == 1 or (subs is not None and parts[1] in subs)


def _request_ref(names: _RequestNames) -> Check:
    def check(ref: object, path: str) -> Errors:
        if not isinstance(ref, str):
            return []
        parts = ref.split("/")
        if len(parts) > 2:
            return [invalid(path, ref, _REQUEST_REF)]
        errors = [error for part in parts for error in dns_label(part, path)]
        return errors + ([] if ref in names else [invalid(path, ref, _REQUEST_REF)])
    return check


def compile_error(expression: str) -> str | None:
    """Why ``expression`` does not compile as kube compiles a new selector, or ``None``."""
    from kschedlib.dra._cel import compile_selector  # the DRA layer's compiler (imported late: it imports the model)
    try:
        compile_selector(expression)
    except CelCompileError as exc:
        return exc.message
    return None


def _selector(selector: object, path: str) -> Errors:
    cel = field_map(selector, "cel")
    if cel is None:
        return [required(f"{path}.cel")]
    expression = cel.get("expression")
    at = f"{path}.cel.expression"
    if not isinstance(expression, str):
        return []
    if len(expression.encode()) > SELECTOR_MAX_LENGTH:
        return [too_long(at, SELECTOR_MAX_LENGTH)]
    error = compile_error(expression)
    return [invalid(at, expression, error)] if error is not None else []


def _allocation_mode(d: Mapping[str, Any], path: str) -> Errors:
    mode = field_str(d, "allocationMode") or "ExactCount"
    count = field_int(d, "count") or 0
    if mode == "ExactCount" and count == 0:
        count = 1  # the API server's default
    if mode == "All":
        return [invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")] if count else []
    if mode == "ExactCount":
        return [invalid(f"{path}.count", count, "must be greater than zero")] if count <= 0 else []
    return [not_supported(f"{path}.allocationMode", mode, ("All", "ExactCount"))]


def _toleration(toleration: object, path: str) -> Errors:
    if not isinstance(toleration, Mapping):
        return []
    key, value, effect = field_str(toleration, "key"), field_str(toleration, "value"), field_str(toleration, "effect")
    errors = label_key(key, f"{path}.key") if key else []
    operator = field_str(toleration, "operator") or "Equal"
    if operator == "Exists":
        if value:
            errors.append(invalid(f"{path}.value", value, "must be empty for operator `Exists`"))
    elif operator == "Equal":
        errors += label_value(value, f"{path}.value")
    else:
        errors.append(not_supported(f"{path}.operator", operator, ("Equal", "Exists")))
    if effect and effect not in TAINT_EFFECTS:
        errors.append(not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errors


def _device_choice(d: Mapping[str, Any], path: str) -> Errors:
    """What an exact request and a subrequest share: class, selectors, count, tolerations."""
    device_class = field_str(d, "deviceClassName")
    at = f"{path}.deviceClassName"
    errors = dns_subdomain(device_class, at) if device_class else [required(at)]
    errors += each(field_list(d, "selectors"), SELECTORS_MAX, _selector, f"{path}.selectors")
    errors += _allocation_mode(d, path)
    return errors + [e for i, t in enumerate(field_list(d, "tolerations"))
                     for e in _toleration(t, f"{path}.tolerations[{i}]")]


def _sub_request(sub: object, path: str) -> Errors:
    if not isinstance(sub, Mapping):
        return []
    return dns_label(field_str(sub, "name"), f"{path}.name") + _device_choice(sub, path)


def _exactly(request: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The request's ``exactly`` part (v1beta1 keeps its fields on the request itself)."""
    exactly = request.get("exactly")
    if exactly is not None:
        return exactly if isinstance(exactly, Mapping) else None
    if "firstAvailable" not in request and any(key in request for key in _V1BETA1_REQUEST_FIELDS):
        return {key: request[key] for key in _V1BETA1_REQUEST_FIELDS if key in request}
    return None


def _request(request: object, path: str) -> Errors:
    if not isinstance(request, Mapping):
        return []
    errors = dns_label(field_str(request, "name"), f"{path}.name")
    subs = field_list(request, "firstAvailable")
    exactly = _exactly(request)
    if not subs and exactly is None:
        errors.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif subs and exactly is not None:
        errors.append(invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                                          "fields are set"))
    elif subs:
        errors += each_unique(subs, SUBREQUESTS_MAX, _sub_request, name_key, f"{path}.firstAvailable")
    elif exactly is not None:
        errors += _device_choice(exactly, f"{path}.exactly")
    return errors


def _references(holder: Mapping[str, Any], names: _RequestNames, path: str) -> Errors:
    """The requests (or ``request/subrequest``) a constraint or config names: each once, each in the claim."""
    return each_unique(field_list(holder, "requests"), REQUESTS_MAX, _request_ref(names), identity, f"{path}.requests")


def _constraint(names: _RequestNames) -> Check:
    def check(constraint: object, path: str) -> Errors:
        if not isinstance(constraint, Mapping):
            return []
        errors = _references(constraint, names, path)
        match, distinct = constraint.get("matchAttribute"), constraint.get("distinctAttribute")
        if isinstance(match, str):
            errors += fully_qualified_name(match, f"{path}.matchAttribute")
        elif isinstance(distinct, str):
            errors += fully_qualified_name(distinct, f"{path}.distinctAttribute")
        elif match is None and distinct is None:
            errors.append(required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but '
                                         "multiple fields are set"))
        return errors
    return check


def _opaque(config: object, path: str) -> Errors:
    opaque = field_map(config, "opaque")
    if opaque is None:
        return [required(f"{path}.opaque")]
    at = f"{path}.opaque"
    errors = driver_name(field_str(opaque, "driver"), f"{at}.driver")
    parameters = opaque.get("parameters")
    if parameters is None:
        errors.append(required(f"{at}.parameters"))
    elif len(json.dumps(parameters, separators=(",", ":")).encode()) > PARAMETERS_MAX_LENGTH:
        errors.append(too_long(f"{at}.parameters", PARAMETERS_MAX_LENGTH))
    elif not isinstance(parameters, Mapping):
        errors.append(invalid(f"{at}.parameters", "<value omitted>", "must be a valid JSON object"))
    return errors


def _claim_config(names: _RequestNames) -> Check:
    def check(config: object, path: str) -> Errors:
        if not isinstance(config, Mapping):
            return []
        return _references(config, names, path) + _opaque(config, path)
    return check


def _claim_spec(spec: object, path: str) -> Errors:
    devices = field_map(spec, "devices") or {}
    at = f"{path}.devices"
    requests = field_list(devices, "requests")
    names = _RequestNames(requests)
    errors = each_unique(requests, REQUESTS_MAX, _request, name_key, f"{at}.requests")
    errors += each(field_list(devices, "constraints"), CONSTRAINTS_MAX, _constraint(names), f"{at}.constraints")
    return errors + each(field_list(devices, "config"), CONFIG_MAX, _claim_config(names), f"{at}.config")


def resource_claim_errors(d: Mapping[str, Any]) -> Errors:
    """``ValidateResourceClaim`` (its metadata and spec; a new claim's status is the API server's)."""
    return metadata(d, namespaced=True) + _claim_spec(field_map(d, "spec"), "spec")


def resource_claim_template_errors(d: Mapping[str, Any]) -> Errors:
    """``ValidateResourceClaimTemplate``: the claims' metadata may carry labels and annotations only."""
    spec = field_map(d, "spec") or {}
    template = field_map(spec, "metadata") or {}
    errors = metadata(d, namespaced=True) + labels_and_annotations(template, "spec.metadata")
    errors += [forbidden(f"spec.metadata.{key}", "cannot be set") for key in _TEMPLATE_META_FORBIDDEN
               if template.get(key) not in (None, "", 0, [], {})]
    return errors + _claim_spec(field_map(spec, "spec"), "spec.spec")


def device_class_errors(d: Mapping[str, Any]) -> Errors:
    """``ValidateDeviceClass``."""
    spec = field_map(d, "spec") or {}
    errors = metadata(d, namespaced=False)
    errors += each(field_list(spec, "selectors"), SELECTORS_MAX, _selector, "spec.selectors")
    errors += each(field_list(spec, "config"), CONFIG_MAX, _opaque, "spec.config")
    name = spec.get("extendedResourceName")
    if isinstance(name, str) and not is_extended_resource(name):
        errors.append(invalid("spec.extendedResourceName", name, "must be a valid extended resource name"))
    return errors
