"""The structured allocator against kube v1.36's shared allocator test table, case by case.

``data/allocator_upstream.yaml`` restates every case of the two tables in
``k8s.io/dynamic-resource-allocation`` ``structured/internal/allocatortesting`` (kubernetes-1.36.2,
the allocator kube-scheduler v1.36.3 ships; 215 in ``allocator_testing.go``, 4 in
``lexicographical_testing.go``): the allocator features the case turns on (every other one is off,
as upstream runs it), the node, the ``resource.k8s.io/v1`` DeviceClasses, ResourceSlices and claims
to allocate, the devices already allocated, and the outcome upstream expects.  Each case runs
kschedlib's :class:`~kschedlib.dra._allocator.Allocator` with the real CEL selectors.

Compared exactly, in upstream's terms: an error (kube's text must be contained in kschedlib's; the
table's claims have no namespace, kschedlib's claims live in ``default``, so ``claim claim-0`` reads
``claim default/claim-0``), no allocation, or per claim the allocation's node selector and its
devices (request, driver, pool, device, admin access, consumed capacity, whether a share ID is set),
order-insensitive like upstream's ``ConsistOf``.  Not compared: fields kschedlib's allocation result
does not carry (a result's tolerations and binding conditions, the allocation's device config).

Cases where kschedlib decides differently are strict xfails with the reason
(:data:`KNOWN_DIFFERENCES`); cases that turn on a feature kschedlib does not model are skipped
(:data:`NOT_MODELLED`).  Device identity is compared too: kube v1.36 searches pools sorted by driver
and name and slices by name, so its choice among several pools is fixed (before 1.36 it came from a
Go map).  Not checked: upstream's count of search steps (``expectNumAllocateOneInvocations``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from kschedlib.dra._allocator import AllocatedState, AllocationError, Allocator, Features
from kschedlib.dra._cel_bridge import compile_selector
from kschedlib.dra._selectors import SelectorCache
from kschedlib.model._convert_dra import (
    device_class_from_dict,
    resource_claim_from_dict,
    resource_slice_from_dict,
)
from kschedlib.model.dra import AllocationResult
from kschedlib.model.objects import Node
from kschedlib.model.quantity import Quantity, parse_quantity

DATA: Final = Path(__file__).parent / "data" / "allocator_upstream.yaml"

FEATURE_FIELDS: Final = {
    "AdminAccess": "admin_access",
    "PrioritizedList": "prioritized_list",
    "DeviceTaints": "device_taints",
    "PartitionableDevices": "partitionable_devices",
    "ConsumableCapacity": "consumable_capacity",
    "DeviceBindingAndStatus": "binding_conditions",
}
"""Upstream's allocator feature switches and kschedlib's :class:`Features` fields."""

NOT_COMPARED: Final = frozenset({"tolerations", "bindingConditions", "bindingFailureConditions"})

# --- reasons for the strict xfails, grouped ----------------------------------------------------------

READ_TIME: Final = ("kschedlib refuses the object when reading it (ManifestError), kube only when allocating "
                    "(\"{}\")")

KNOWN_DIFFERENCES: Final[dict[str, str]] = {
    "unknown-selector": READ_TIME.format("CEL expression empty (unsupported selector type?)"),
    "with-distinct-constraints-unknown-type-attribute": READ_TIME.format("unsupported attribute value"),
    "list-attributes-disabled-match-constraint-with-lists": READ_TIME.format("unsupported attribute value"),
    "list-attributes-disabled-distinct-constraint-with-lists": READ_TIME.format("unsupported attribute value"),
}
"""Upstream case name -> why kschedlib's outcome differs (a strict xfail)."""

NOT_MODELLED: Final = {"ListTypeAttributes": "list-type device attributes (DRAListTypeAttributes, alpha, off in v1.36) "
                                            "are not modelled"}
"""Upstream allocator features kschedlib has no switch for: cases that turn one on are skipped."""


def _load() -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with DATA.open(encoding="utf-8") as f:
        cases: list[dict[str, Any]] = yaml.load(f, Loader=loader)
    return cases


CASES: Final = _load()


def _features(names: Sequence[str]) -> Features:
    unknown = [n for n in names if n not in FEATURE_FIELDS]
    if unknown:
        pytest.fail(f"feature(s) {unknown} have no switch in kschedlib's Features")
    return Features(**{field: name in names for name, field in FEATURE_FIELDS.items()})


def _quantity_text(q: Quantity | str | int) -> str:
    """One spelling per amount, so ``"2"`` and a computed 2 compare equal."""
    amount = (q if isinstance(q, Quantity) else parse_quantity(q)).amount
    return str(amount)


def _canonical_selector(raw: Mapping[str, Any] | None) -> Any:
    if raw is None:
        return None
    terms = []
    for term in raw.get("nodeSelectorTerms") or []:
        terms.append({key: sorted((r["key"], r["operator"], tuple(sorted(r.get("values") or [])))
                                  for r in term.get(key) or [])
                      for key in ("matchExpressions", "matchFields")})
    return sorted(terms, key=repr)


def _canonical_device(d: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    out: dict[str, Any] = {k: v for k, v in d.items() if k not in NOT_COMPARED and v is not None}
    if out.get("adminAccess") is False:
        del out["adminAccess"]
    if "consumedCapacity" in out:
        out["consumedCapacity"] = tuple(sorted((k, _quantity_text(v)) for k, v in out["consumedCapacity"].items()))
    if "shareID" in out:
        out["shareID"] = True  # a fresh UID per allocation: upstream compares its presence only
    return tuple(sorted(out.items()))


def _canonical_allocation(selector: Any, devices: Sequence[Mapping[str, Any]]) -> str:
    return repr((_canonical_selector(selector), sorted(_canonical_device(d) for d in devices)))


def _expected(allocations: Sequence[Mapping[str, Any]]) -> list[str]:
    return sorted(_canonical_allocation(a.get("nodeSelector"), a["devices"]["results"]) for a in allocations)


def _actual(results: Sequence[AllocationResult]) -> list[str]:
    out = []
    for result in results:
        devices = [{"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device,
                    "adminAccess": d.admin_access, "consumedCapacity": d.consumed_capacity, "shareID": d.share_id}
                   for d in result.devices]
        out.append(_canonical_allocation(result.node_selector_raw, devices))
    return sorted(out)


def _allocated(case: Mapping[str, Any]) -> AllocatedState:
    devices = frozenset(tuple(d) for d in case.get("allocatedDevices") or ())
    capacity: dict[Any, dict[str, Quantity]] = {
        tuple(key.split("/")): {name: parse_quantity(q) for name, q in amounts.items()}
        for key, amounts in (case.get("allocatedCapacity") or {}).items()}
    for shared in case.get("allocatedSharedDevices") or ():  # shared, nothing consumed: an empty entry
        capacity.setdefault(tuple(shared["device"]), {})
    return AllocatedState(devices, capacity)


def _kube_error(text: str) -> str:
    return re.sub(r"\bclaim (claim-\d+)", r"claim default/\1", text)


def _param(case: dict[str, Any]) -> Any:
    reason = KNOWN_DIFFERENCES.get(case["name"])
    marks: list[pytest.MarkDecorator] = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    missing = [NOT_MODELLED[f] for f in case["features"] if f in NOT_MODELLED]
    if missing:
        marks = [pytest.mark.skip(reason="; ".join(missing))]
    return pytest.param(case, id=case["name"], marks=marks)


def test_every_upstream_case_is_listed_once() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names))
    assert Counter(case["table"] for case in CASES) == {"allocator": 215, "lexicographical": 4}
    assert set(KNOWN_DIFFERENCES) <= set(names)


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_upstream_case(case: dict[str, Any]) -> None:
    features = _features(case["features"])
    # kube's allocator tests hand their objects to the allocator without admission (names such as
    # "subReq-0" or "capacity-0", a count beside allocationMode All): read them as stored
    classes = {c.name: c for c in (device_class_from_dict(c, admission=False) for c in case["classes"])}
    slices = [resource_slice_from_dict(s, admission=False) for s in case["slices"]]
    claims = [resource_claim_from_dict(c, admission=False) for c in case["claims"]]
    node = Node(case["node"]["name"], labels=case["node"]["labels"])
    allocator = Allocator(features, _allocated(case), classes, slices, SelectorCache(compile_selector))
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(AllocationError) as caught:
            allocator.allocate(node, claims)
        assert _kube_error(expect["error"]) in str(caught.value)
        return
    results = allocator.allocate(node, claims)
    if not expect["allocations"]:
        assert not results
        return
    assert results is not None
    assert _actual(results) == _expected(expect["allocations"])
