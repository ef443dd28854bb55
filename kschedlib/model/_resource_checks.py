"""The API server's checks of a pod's resource requirements, in kube-apiserver's words.

A pod the API server refuses never reaches kube-scheduler, so kschedlib refuses it when it is read
(``pkg/apis/core/validation``: ``validateResourceRequirements``, ``ValidateResourceQuantityValue``,
``validateContainerResourceName``; the cases and their messages are recorded from a real
kube-apiserver v1.36.3 in ``tests/data/apiserver/``).  The checks run on the defaulted requirements
(a limit without a request has already given the request), per container and for the pod-level
``spec.resources``:

* a resource that cannot be overcommitted — an extended resource such as ``nvidia.com/gpu``, and
  hugepages — needs a limit, and its request must equal it;
* any other request must not exceed its limit;
* an extended resource is a whole number; a hugepages amount a whole number of pages, and hugepages
  need a cpu or memory request or limit beside them;
* a container's resource without a ``/`` is cpu, memory, ephemeral-storage or hugepages, one with a
  ``/`` a kubernetes.io or extended resource name; pod-level ``spec.resources`` take cpu, memory and
  hugepages only.

The first failing check is raised (kube-apiserver lists them all), limits before requests, by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kschedlib.model._convert_base import Reader, join
from kschedlib.model.quantity import Quantity, parse_quantity
from kschedlib.model.resources import is_extended_resource, is_overcommit_allowed, is_pod_level_resource

__all__ = ["check_container_resources", "check_pod_resources"]

_HUGEPAGES: Final = "hugepages-"
_CONTAINER_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES: Final = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"})
"""kube's ``standardResources`` (any resource name without a ``/`` must be one, or hugepages)."""


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _invalid(value: object, message: str) -> str:
    return f'Invalid value: "{value}": {message}'


def _name_problem(name: str, pod_level: bool) -> str | None:
    if pod_level:
        if is_pod_level_resource(name):
            return None
        return f'Unsupported value: "{name}": supported values: "cpu", "hugepages-", "memory"'
    if "/" in name:
        if _native(name) or is_extended_resource(name):
            return None
        return _invalid(name, "doesn't follow extended resource name standard")
    if name not in _STANDARD_RESOURCES and not name.startswith((_HUGEPAGES, "requests.hugepages-")):
        return _invalid(name, "must be a standard resource type or fully qualified")
    if name not in _CONTAINER_RESOURCES and not name.startswith(_HUGEPAGES):
        return _invalid(name, "must be a standard resource for containers")
    return None


def _page_size(name: str) -> Quantity | None:
    try:
        return parse_quantity(name.removeprefix(_HUGEPAGES))
    except ValueError:
        return None


def _value_problem(name: str, quantity: Quantity) -> str | None:
    if is_extended_resource(name) and quantity.milli_value() % 1000:
        return _invalid(quantity, "must be an integer")
    if name.startswith(_HUGEPAGES):
        page = _page_size(name)
        if page is None or page.milli_value() <= 0 or page.milli_value() % 1000 or quantity.value() % page.value():
            return _invalid(quantity, f"{quantity} is not positive integer multiple of {name}")
    return None


def _request_within_limit(r: Reader, path: str, name: str, request: Quantity, limit: Quantity) -> None:
    if request > limit:
        r.fail(join(path, "requests"), _invalid(request, f"must be less than or equal to {name} limit of {limit}"))


def _check(r: Reader, path: str, requests: Mapping[str, Quantity], limits: Mapping[str, Quantity],
           pod_level: bool) -> None:
    if not pod_level and requests.keys() <= _CONTAINER_RESOURCES and limits.keys() <= _CONTAINER_RESOURCES:
        for name, ceiling in limits.items():  # the common case, on every pod read: cpu, memory, storage only
            _request_within_limit(r, path, name, requests[name], ceiling)
        return
    for key, amounts in (("limits", limits), ("requests", requests)):
        for name in sorted(amounts):
            at = f"{join(path, key)}[{name}]"
            problem = _name_problem(name, pod_level) or _value_problem(name, amounts[name])
            if problem is not None:
                r.fail(at, problem)
    for name in sorted(requests):
        request = requests[name]
        limit = limits.get(name)
        if limit is None:
            if not is_overcommit_allowed(name):
                r.fail(join(path, "limits"), "Required value: Limit must be set for non overcommitable resources")
        elif request != limit and not is_overcommit_allowed(name):
            r.fail(join(path, "requests"), _invalid(request, f"must be equal to {name} limit of {limit}"))
        else:
            _request_within_limit(r, path, name, request, limit)
    names = {*requests, *limits}
    if any(name.startswith(_HUGEPAGES) for name in names) and not names & {"cpu", "memory"}:
        r.fail(path, "Forbidden: HugePages require cpu or memory")


def check_container_resources(r: Reader, path: str, requests: Mapping[str, Quantity],
                              limits: Mapping[str, Quantity]) -> None:
    """Refuse what the API server refuses in a container's defaulted ``resources`` at ``path``."""
    if requests or limits:
        _check(r, path, requests, limits, pod_level=False)


def check_pod_resources(r: Reader, requests: Mapping[str, Quantity] | None,
                        limits: Mapping[str, Quantity] | None) -> None:
    """Refuse what the API server refuses in a pod's defaulted ``spec.resources``."""
    if requests or limits:
        _check(r, "spec.resources", requests or {}, limits or {}, pod_level=True)
